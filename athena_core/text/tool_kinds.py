"""What kind of thing a named tool is, in the words people ask with ("which editor do I use now?",
"what database do we keep?"): a fact about a tool is then found by its kind as well as by its name.

Keyed by the gazetteer's canonical names (`gazetteer.GAZETTEER`); every one of them is also a "tool".
"""
from __future__ import annotations

from athena_core.text.gazetteer import GAZETTEER

_MEMBERS: dict[str, tuple[str, ...]] = {
    "language programming": ("Python", "Go", "Rust", "Java", "Kotlin", "Scala", "Ruby", "Swift", "TypeScript",
                             "JavaScript", "SQL", "Elixir", "Dart"),
    "database db datastore store": ("PostgreSQL", "MySQL", "SQLite", "MongoDB", "Redis", "Cassandra", "DynamoDB",
                                    "BigQuery", "Snowflake", "ArangoDB", "Milvus", "Elasticsearch"),
    "queue broker messaging streaming": ("Kafka", "RabbitMQ", "Redpanda", "Celery"),
    "framework library": ("React", "Vue", "Angular", "FastAPI", "Django", "Flask", "Rails", "Svelte", "Tailwind",
                          "Flutter", "PyTorch", "TensorFlow", "NumPy", "pandas", "Celery", "pgx", "pgxpool",
                          "gRPC", "GraphQL", "Riverpod"),
    "editor ide": ("VS Code", "Vim", "Neovim", "Emacs", "Zed", "Helix", "IntelliJ", "PyCharm", "Xcode"),
    "runtime": ("Node.js", "Bun", "Deno", "Tokio"),
    "cloud": ("AWS", "GCP", "Azure", "S3", "EC2"),
    "ci pipeline": ("Jenkins", "GitHub", "GitLab", "CircleCI", "GitHub Actions", "GitLab CI"),
    "container orchestration": ("Docker", "Kubernetes", "Helm"),
    "infrastructure provisioning": ("Terraform", "Ansible"),
    "monitoring observability dashboard metrics": ("Prometheus", "Grafana"),
    "design": ("Figma",),
    "notes": ("Notion", "Obsidian"),
    "os system": ("Linux", "Ubuntu", "macOS"),
    "version control": ("Git", "GitHub", "GitLab"),
    "api client": ("Postman",),
    "workflow scheduler": ("Airflow",),
    "server proxy": ("Nginx",),
    "tracker tickets": ("Jira",),
    "data processing": ("Spark",),
    "ai model": ("OpenAI",),
}

KINDS: dict[str, tuple[str, ...]] = {}
for _words, _names in _MEMBERS.items():
    for _name in _names:
        KINDS[_name] = (*KINDS.get(_name, ()), *_words.split())
for _name in set(GAZETTEER.values()):
    KINDS[_name] = (*KINDS.get(_name, ()), "tool")


def kind_words(name: str) -> tuple[str, ...]:
    """The kind words of a tool named `name` (any surface form the gazetteer knows; () for anything else)."""
    return KINDS.get(GAZETTEER.get(name.lower(), name), ())
