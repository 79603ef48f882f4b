"""Text primitives for the offline LLM provider (SPEC S8): sentences, tokens, stopwords, stems, gazetteer.

Everything here is pure and deterministic so the offline provider gives the same answer for the same
transcript on every machine, with no model download and no network.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

# A compact English stopword list (function words plus conversational filler). It serves both as RAKE
# phrase delimiters and as the "not a content word" filter, so it also holds words that carry no topic in
# a chat ("thanks", "want", "need", "today"; calendar words and decision/preference verbs are
# importance signals, matched separately, not topics).
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against ago all almost already also although always am among an and another
    any anybody anyone anything anyway anywhere are aren't around as ask asked asking at away back be
    became because become been before being below best better between both but by can can't cannot
    could couldn't did didn't do does doesn't doing don't done down during each either else enough etc
    even ever every everyone everything exactly few find first for from further get gets getting give go
    goes going gone good got great had hadn't has hasn't have haven't having he he'd he'll he's hello help
    her here here's hers herself hey hi him himself his how how's however i i'd i'll i'm i've if in indeed
    instead into is isn't it it's its itself just keep kind know last later least less let let's like
    likely look looking lot lots made make makes making many may maybe me mean might mine more most much
    must my myself need needed needs never new next nice no nope nor not nothing now of off often oh ok
    okay on once one only onto or other others otherwise our ours ourselves out over own perhaps please
    pretty quite rather re really right said same say says see seem seems shall she she'd she'll she's
    should shouldn't since so some somebody someone something sometimes somewhat soon still stuff such
    sure take tell than thank thanks that that's the their theirs them themselves then there there's these
    they they'd they'll they're they've thing things think this those though through thus to today
    together tomorrow too toward towards try trying two uh um under until up upon us use used using very
    via want wanted wants was wasn't way we we'd we'll we're we've well went were weren't what what's
    whatever when where where's whether which while who who's whom whose why will with within without
    won't would wouldn't yeah yes yet you you'd you'll you're you've your yours yourself yourselves bye
    cool awesome hmm yep question questions bit fine keeps kept put puts gets works
    monday tuesday wednesday thursday friday saturday sunday yesterday tonight january february march
    april june july august september october november december decide decided noted ping happen
    happens happened talked told prefer prefers preferred love loved loves hate hated hates enjoy
    enjoyed enjoys
    """.split()
)

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
    "jira": "Jira", "vscode": "VS Code", "vim": "Vim",
}

# Gazetteer words that are also everyday English ("go home", "rust on the bike", "react to").
# They count only when capitalised mid-sentence or next to a technical cue word.
AMBIGUOUS_TERMS: frozenset[str] = frozenset(
    {"go", "rust", "ruby", "swift", "react", "flask", "celery", "spark", "rails", "helm", "snowflake",
     "pandas", "jenkins", "cassandra", "prometheus", "vue", "angular", "mongo"}
)
TECH_CUES: frozenset[str] = frozenset(
    """service services microservice microservices code binary binaries module modules app apps lang
    language program programs server servers api apis library libraries lib backend frontend compiler
    toolchain runtime sdk package packages worker workers queue component components project projects
    chart charts cluster clusters version codebase framework client clients developer developers
    routine routines""".split()
)

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\s*\n+\s*")
_TOKEN = re.compile(r"[A-Za-z0-9@][A-Za-z0-9_'+#.@-]*")
_TRAILING = ".-'"
_VOWEL = re.compile(r"[aeiouy]")
# (suffix, replacement), longest first; one suffix is removed per word (a light, Porter-like step).
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ational", "ate"), ("ations", "ate"), ("ation", "ate"), ("ements", ""), ("ement", ""),
    ("ments", ""), ("ment", ""), ("ness", ""), ("ities", ""), ("ity", ""), ("ings", ""), ("ing", ""),
    ("sses", "ss"), ("ies", "y"), ("ied", "y"), ("ed", ""), ("ly", ""), ("s", ""),
)


@dataclass(frozen=True)
class Token:
    """A word as written (`text`), lowercased (`lower`), and whether it opens its sentence."""

    text: str
    lower: str
    start: int
    end: int
    sentence_initial: bool


def normalise(text: str) -> str:
    """Fold typographic quotes and dashes so one regex set handles chat text from any keyboard."""
    return (
        text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
        .replace("\u2014", " - ").replace("\u2013", " - ").replace("\u2026", "...")
    )


def split_sentences(text: str) -> list[str]:
    """Split on terminal punctuation followed by space, and on line breaks (chat turns rarely use both).

    Decimals ("3.5") and versions ("1.22") survive because no whitespace follows their dot.
    """
    parts = _SENTENCE_BREAK.split(normalise(text).strip())
    return [p.strip() for p in parts if p and p.strip() and re.search(r"[A-Za-z0-9]", p)]


def tokens(sentence: str) -> list[Token]:
    """Word tokens of one sentence with offsets; trailing dots/dashes/quotes are not part of a word."""
    out: list[Token] = []
    for match in _TOKEN.finditer(sentence):
        raw = match.group(0)
        word = raw.rstrip(_TRAILING)
        if not word:
            continue
        if word.lower().endswith("'s") and len(word) > 2:  # possessive: "Maria's" -> "Maria"
            word = word[:-2]
        out.append(Token(word, word.lower(), match.start(), match.start() + len(word), not out))
    return out


def words(text: str) -> list[str]:
    """Lowercased word tokens of any text (sentence boundaries ignored)."""
    return [t.lower for s in split_sentences(text) for t in tokens(s)]


def is_content_word(word: str) -> bool:
    """A word that can carry a topic: not a stopword, has a letter, and is not a lone character."""
    return word not in STOPWORDS and len(word) > 1 and any(c.isalpha() for c in word)


@lru_cache(maxsize=1 << 16)  # pure, and called per word of every candidate a search excerpts
def stem(word: str) -> str:
    """Light suffix stripping so "migration", "migrate" and "migrating" meet on one key ("migrat").

    Gazetteer aliases map to their canonical name first, so "postgres" and "postgresql" also meet.
    Deliberately conservative (one suffix, stem keeps a vowel and ≥ 3 letters): a wrong merge costs
    more than a missed one in topic arbitration.
    """
    if word in GAZETTEER:
        return GAZETTEER[word].lower()
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if not word.endswith(suffix):
            continue
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            break
        candidate = word[: len(word) - len(suffix)] + replacement
        if len(candidate) >= 3 and _VOWEL.search(candidate):
            word = candidate
            if suffix in {"ing", "ings", "ed"} and len(word) > 3 and word[-1] == word[-2] \
                    and word[-1] not in "lsz":
                word = word[:-1]  # running -> runn -> run
        break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def content_stems(text: str) -> set[str]:
    """The set of stemmed content words of a text: the unit of lexical topic overlap."""
    return {stem(w) for w in words(text) if is_content_word(w)}


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
