// Run by the `arangodb-init` one-shot (compose/docker-compose.yml) with arangosh, as root on _system.
// Creates the `athena_ltm` database when missing and Athena's ArangoDB user, or resets its password:
// `rw` on that database and its collections (Athena creates its collections, indexes and graph there),
// `none` on _system and on every other database (a user has no access where none is granted).
// Idempotent, so it runs on every `docker compose up`. The user's credentials come from the environment.
const env = require("internal").env;
const db = require("@arangodb").db;
const users = require("@arangodb/users");

for (const name of ["APP_DATABASE", "APP_USERNAME", "APP_PASSWORD"]) {
  if (!env[name]) throw new Error(name + " is not set");
}
const database = env.APP_DATABASE, user = env.APP_USERNAME;
if (user === "root") throw new Error("ARANGO_ATHENA_USERNAME must not be root");
if (database === "_system") throw new Error("Athena's database must not be _system");

if (!db._databases().includes(database)) {
  db._createDatabase(database);
}
if (users.exists(user)) {
  users.update(user, env.APP_PASSWORD, true);
} else {
  users.save(user, env.APP_PASSWORD, true);
}
users.grantDatabase(user, database, "rw");
users.grantCollection(user, database, "*", "rw");
users.grantDatabase(user, "_system", "none");
users.reload();
print("user " + user + ": rw on " + database + ", none on _system");
