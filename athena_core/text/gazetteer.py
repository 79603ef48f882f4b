"""Tools, languages and databases worth naming as entities, and how to spot them in a sentence."""
from __future__ import annotations

from collections.abc import Iterator

from athena_core.text.tokens import Token

# Tools, languages and databases worth naming as entities: surface form (lowercase) -> canonical name.
# Aliases share a canonical name so "postgres" and "PostgreSQL" deduplicate to one entity.
GAZETTEER: dict[str, str] = {
    "python": "Python", "go": "Go", "golang": "Go", "rust": "Rust", "java": "Java", "kotlin": "Kotlin",
    "scala": "Scala", "ruby": "Ruby", "swift": "Swift", "typescript": "TypeScript",
    "javascript": "JavaScript", "node.js": "Node.js", "nodejs": "Node.js", "sql": "SQL",
    "postgres": "PostgreSQL", "postgresql": "PostgreSQL", "mysql": "MySQL", "sqlite": "SQLite",
    "mongodb": "MongoDB", "mongo": "MongoDB", "redis": "Redis", "kafka": "Kafka", "rabbitmq": "RabbitMQ",
    "elasticsearch": "Elasticsearch", "cassandra": "Cassandra", "dynamodb": "DynamoDB",
    "bigquery": "BigQuery", "snowflake": "Snowflake", "arangodb": "ArangoDB", "milvus": "Milvus",
    "docker": "Docker", "kubernetes": "Kubernetes", "k8s": "Kubernetes", "helm": "Helm",
    "celery": "Celery", "airflow": "Airflow", "spark": "Spark", "react": "React", "vue": "Vue",
    "angular": "Angular", "fastapi": "FastAPI", "django": "Django", "flask": "Flask", "rails": "Rails",
    "graphql": "GraphQL", "grpc": "gRPC", "nginx": "Nginx", "aws": "AWS", "s3": "S3", "ec2": "EC2",
    "gcp": "GCP", "azure": "Azure", "terraform": "Terraform", "ansible": "Ansible", "git": "Git",
    "github": "GitHub", "gitlab": "GitLab", "jenkins": "Jenkins", "linux": "Linux", "ubuntu": "Ubuntu",
    "macos": "macOS", "prometheus": "Prometheus", "grafana": "Grafana", "openai": "OpenAI",
    "pytorch": "PyTorch", "tensorflow": "TensorFlow", "numpy": "NumPy", "pandas": "pandas",
    "jira": "Jira", "vscode": "VS Code", "vim": "Vim", "pgx": "pgx", "pgxpool": "pgxpool",
    # editors, apps and runtimes people name in ordinary chat
    "neovim": "Neovim", "nvim": "Neovim", "emacs": "Emacs", "zed": "Zed", "figma": "Figma", "notion": "Notion",
    "obsidian": "Obsidian", "postman": "Postman", "flutter": "Flutter", "svelte": "Svelte", "bun": "Bun",
    "deno": "Deno", "elixir": "Elixir", "tailwind": "Tailwind", "redpanda": "Redpanda",
    "helix": "Helix", "intellij": "IntelliJ", "pycharm": "PyCharm", "xcode": "Xcode", "tokio": "Tokio",
    "circleci": "CircleCI", "dart": "Dart", "riverpod": "Riverpod",
}

# Gazetteer words that are also everyday English ("go home", "rust on the bike", "react to").
# They count only when capitalised mid-sentence or next to a technical cue word.
AMBIGUOUS_TERMS: frozenset[str] = frozenset(
    {"go", "rust", "ruby", "swift", "react", "flask", "celery", "spark", "rails", "helm", "snowflake",
     "pandas", "jenkins", "cassandra", "prometheus", "vue", "angular", "mongo", "notion", "obsidian",
     "postman", "flutter", "svelte", "bun", "elixir", "tailwind", "zed", "helix", "dart"}
)
TECH_CUES: frozenset[str] = frozenset(
    """service services microservice microservices code binary binaries module modules app apps lang
    language program programs server servers api apis library libraries lib backend frontend compiler
    toolchain runtime sdk package packages worker workers queue component components project projects
    chart charts cluster clusters version codebase framework client clients developer developers
    routine routines""".split()
)


def gazetteer_hits(sentence_tokens: list[Token]) -> Iterator[tuple[Token, str]]:
    """Yield (token, canonical name) for gazetteer terms, filtering everyday uses of ambiguous words."""
    for i, tok in enumerate(sentence_tokens):
        canonical = GAZETTEER.get(tok.lower)
        if canonical is None:
            continue
        if tok.lower in AMBIGUOUS_TERMS and tok.lower != "golang":
            neighbours = {t.lower for t in sentence_tokens[max(0, i - 1): i + 2]} - {tok.lower}
            capitalised_mid_sentence = tok.text[0].isupper() and not tok.sentence_initial
            if not (capitalised_mid_sentence or neighbours & TECH_CUES):
                continue
        yield tok, canonical
