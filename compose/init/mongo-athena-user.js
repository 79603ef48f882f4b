// Run by the `mongodb-init` one-shot (compose/docker-compose.yml): `mongosh --nodb --file` this script.
// Creates Athena's MongoDB user, or resets its password and roles: `readWrite` on the Athena database and
// nothing else (no admin, no other database). Idempotent, so it runs on every `docker compose up`.
// Every credential comes from the environment; none is on a command line.
const env = process.env;
for (const name of ["MONGO_ROOT_USERNAME", "MONGO_ROOT_PASSWORD", "APP_DATABASE", "APP_USERNAME", "APP_PASSWORD"]) {
  if (!env[name]) throw new Error(`${name} is not set`);
}
if (env.APP_USERNAME === env.MONGO_ROOT_USERNAME) {
  throw new Error("MONGO_ATHENA_USERNAME must differ from the root user MONGO_ROOT_USERNAME");
}
const root = connect(
  `mongodb://${encodeURIComponent(env.MONGO_ROOT_USERNAME)}:${encodeURIComponent(env.MONGO_ROOT_PASSWORD)}` +
  "@mongodb:27017/admin?authSource=admin"
);
const athena = root.getSiblingDB(env.APP_DATABASE);
const roles = [{ role: "readWrite", db: env.APP_DATABASE }];
if (athena.getUser(env.APP_USERNAME) === null) {
  athena.createUser({ user: env.APP_USERNAME, pwd: env.APP_PASSWORD, roles: roles });
  print(`created user ${env.APP_USERNAME} (readWrite on ${env.APP_DATABASE})`);
} else {
  athena.updateUser(env.APP_USERNAME, { pwd: env.APP_PASSWORD, roles: roles });
  print(`updated user ${env.APP_USERNAME} (readWrite on ${env.APP_DATABASE})`);
}
