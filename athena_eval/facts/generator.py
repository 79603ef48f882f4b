"""A seeded generator of multi-session conversations with planted user facts (issue 14 item 6).

Each generated user has facts in the SPEC S6.1 ontology (tools, a project and its client, a problem, an
interest, a trait, personal facts as RELATES_TO), each stated in one to three sessions (so its expected
`weight` is the number of sessions that state it), one change of tool ("I switched from A to B": both
values kept, A first, B current), and decoys that must never become the user's facts: a third party's
facts and the assistant's recommendations or first person. Half the users are stamped live (the last
hours), half historical (2023). Phrasings come from `phrasings`, tuning or held-out per fact, or from
`phrasings_fresh` (the "fresh" split, `fresh_share` of the facts; with it, each user also gets fresh decoys:
a third party's, the assistant's, and the user's own negation, hypothetical and question).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from athena_core.models.ontology import snake_id
from athena_eval.facts import phrasings as P
from athena_eval.facts import phrasings_fresh as F

TOOLS = ("Zed", "Neovim", "Flutter", "Figma", "Obsidian", "Postman", "Bun", "Svelte", "Terraform", "Docker",
         "Kubernetes", "PostgreSQL", "Redis", "Kotlin", "Elixir", "Grafana", "Emacs", "Tailwind", "Deno",
         "Rust", "TypeScript", "Django", "Kafka", "Notion")
DECOY_TOOLS = ("Java", "Redpanda", "Vue", "Jenkins", "Ansible", "Angular", "Cassandra", "Helm", "Scala",
               "MongoDB", "Airflow", "Spark")
PROJECTS = ("the billing dashboard", "the checkout service", "the mobile banking app", "the data pipeline",
            "the recommendation engine", "the onboarding portal", "the inventory service", "the search api")
CLIENTS = ("Northwind Traders", "Prescott Data", "Globex", "Initech", "Umbrella Health", "Acme Logistics",
           "Contoso", "Stark Freight")
PROBLEMS = ("building wheels", "Kafka consumer rebalancing", "flaky integration tests", "database migrations",
            "time zone handling", "memory leaks in the worker", "CSS grid layouts", "pgxpool settings")
INTERESTS = ("spaced repetition", "category theory", "woodworking", "compiler design", "distributed consensus",
             "sourdough baking", "type theory", "music production")
TRAITS = (("a night owl", "night owl"), ("an early riser", "early riser"), ("a perfectionist", "perfectionist"),
          ("methodical", "methodical"), ("detail-oriented", "detail_oriented"), ("impatient", "impatient"),
          ("a visual learner", "visual learner"), ("a procrastinator", "procrastinator"))
PLACES = ("Lisbon", "Porto", "Berlin", "Toronto", "Nairobi", "Osaka", "Valencia", "Krakow")
PEOPLE = ("Ana", "Tomas", "Ingrid", "Kofi", "Mei", "Rafael", "Lena", "Omar")
PETS = ("Biscuit", "Pepper", "Miso", "Noodle", "Juniper", "Waffles")
THIRD_PARTIES = ("Priya", "Marco", "Yuki", "Dana", "Femi", "Sven")
# objects of the fresh user-voiced decoys, per object kind: never among the planted pools above
DECOY_OBJECTS = {"problem": ("webpack builds", "OAuth token refresh", "Gradle caching", "race conditions"),
                 "interest": ("rock climbing", "chess openings", "origami", "astrophotography"),
                 "place": ("Madrid", "Dublin", "Seoul", "Denver"),
                 "project": ("the payroll service", "the loyalty app", "the partner portal")}
FRESH = {P.USES: F.USES, P.WORKS_ON: F.WORKS_ON, P.BUILT_FOR_CLIENT: F.BUILT_FOR_CLIENT,
         P.STRUGGLES_WITH: F.STRUGGLES_WITH, P.EXPRESSED_INTEREST: F.EXPRESSED_INTEREST, P.EXHIBITS: F.EXHIBITS,
         P.PLACE: F.PLACE, P.PERSON: F.PERSON, P.POSSESSION: F.POSSESSION, P.SWITCH: F.SWITCH}
HISTORICAL_START = datetime(2023, 3, 6, 9, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Turn:
    role: str  # "user" | "agent"
    text: str
    timestamp: datetime


@dataclass
class PlantedFact:
    """A fact the user states: expected in the graph as (subject, relation, object) with `weight` = the
    number of sessions stating it. `split` says which phrasings stated it ("tuning", "held_out", "fresh")."""

    subject: str
    relation: str
    obj: str  # object id, snake_case
    split: str
    sessions: set[int] = field(default_factory=set)
    mentioned_at: list[datetime] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.relation, self.obj)

    @property
    def weight(self) -> int:
        return len(self.sessions)


@dataclass(frozen=True)
class Change:
    """A (subject, relation) whose value changed: `initial` was stated first, `current` last."""

    subject: str
    relation: str
    initial: str
    current: str
    split: str


@dataclass(frozen=True)
class Decoy:
    """An object that is never the user's: stated by someone else ("third_party", "assistant") or by the
    user but not as a fact ("negation", "hypothetical", "question"). `split` "any" counts in every row."""

    obj: str
    kind: str
    split: str = "any"


@dataclass
class GeneratedUser:
    user_id: str
    stamps: str  # "live" | "historical"
    sessions: list[list[Turn]]
    facts: list[PlantedFact]
    changes: list[Change]
    decoys: list[Decoy]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def templates_for(phrasings: P.Phrasings, split: str) -> tuple[str, ...]:
    """The phrasings of one split for one relation."""
    if split == "fresh":
        return FRESH[phrasings]
    return phrasings.held_out if split == "held_out" else phrasings.tuning


def _fill(template: str, **slots: str) -> str:
    values = dict(slots)
    for key in list(slots):
        values[key.upper()] = _cap(slots[key])
    return template.format(**values)


class _UserBuilder:
    """One user's sessions: statements placed in sessions, each user turn answered by the agent."""

    def __init__(self, rng: random.Random, user_id: str, stamps: str, sessions: int, start: datetime,
                 held_out_share: float, fresh_share: float = 0.0) -> None:
        self.rng = rng
        self.user_id = user_id
        self.stamps = stamps
        self.held_out_share = held_out_share
        self.fresh_share = fresh_share
        # per session: (role, text, facts it states); a switch is kept after the first value's statement
        self.statements: list[list[tuple[str, str, list[PlantedFact], str]]] = [[] for _ in range(sessions)]
        self.facts: dict[tuple[str, str, str], PlantedFact] = {}
        self.changes: list[Change] = []
        self.decoys: list[Decoy] = []
        self.start = start

    def split(self) -> str:
        draw = self.rng.random()  # one draw whatever the shares: no fresh share, the same corpus as before
        if draw < self.held_out_share:
            return "held_out"
        return "fresh" if draw < self.held_out_share + self.fresh_share else "tuning"

    def fact(self, subject: str, relation: str, obj: str, split: str) -> PlantedFact:
        return self.facts.setdefault((subject, relation, obj), PlantedFact(subject, relation, obj, split))

    def plant(self, subject: str, relation: str, obj: str, split: str, phrasings: P.Phrasings,
              sessions: list[int], **slots: str) -> PlantedFact:
        fact = self.fact(subject, relation, obj, split)
        templates = list(templates_for(phrasings, split))
        self.rng.shuffle(templates)
        topic = slots.get("x") or slots.get("p", "that")
        for n, session in enumerate(sessions):
            self.say(session, _fill(templates[n % len(templates)], **slots), [fact], topic=topic)
        return fact

    def say(self, session: int, text: str, facts: list[PlantedFact] = (), role: str = "user",
            topic: str = "that") -> None:
        self.statements[session].append((role, text, list(facts), topic))
        for fact in facts:
            fact.sessions.add(session)

    def build(self) -> GeneratedUser:
        sessions: list[list[Turn]] = []
        gap = timedelta(minutes=50) if self.stamps == "live" else timedelta(days=6)
        for s, statements in enumerate(self.statements):
            at = self.start + s * gap
            turns = [Turn("user", self.rng.choice(P.SMALL_TALK[:4]), at),
                     Turn("agent", "Hi! What are we looking at today?", at + timedelta(seconds=20))]
            at += timedelta(minutes=1)
            for role, text, facts, topic in statements:
                # one short exchange per statement: the statement, the agent's reply on its topic, a
                # follow-up with no fact in it, an acknowledgement (a lone line is no topic worth a chain)
                if role == "agent":  # an assistant decoy answers the user's question
                    turns.append(Turn("user", _fill(self.rng.choice(P.ASKS), x=topic), at))
                    turns.append(Turn("agent", text, at + timedelta(seconds=30)))
                else:
                    turns.append(Turn("user", text, at))
                    turns.append(Turn("agent", _fill(self.rng.choice(P.AGENT_REPLIES), x=topic),
                                      at + timedelta(seconds=30)))
                    for fact in facts:
                        fact.mentioned_at.append(at)
                turns.append(Turn("user", self.rng.choice(P.FOLLOW_UPS), at + timedelta(seconds=60)))
                turns.append(Turn("agent", self.rng.choice(P.ACKS), at + timedelta(seconds=80)))
                at += timedelta(minutes=2)
            turns.append(Turn("user", self.rng.choice(P.SMALL_TALK[4:]), at))
            turns.append(Turn("agent", "Anytime.", at + timedelta(seconds=20)))
            sessions.append(turns)
        return GeneratedUser(self.user_id, self.stamps, sessions, list(self.facts.values()), self.changes,
                             self.decoys)


def _fresh_decoys(rng: random.Random, b: _UserBuilder, tools: list[str], used_name: str, sessions: int) -> None:
    """The fresh split's decoys: a third party's and the assistant's tool, then one negation, one
    hypothetical and one question of the user's, each about an object of its phrasing's kind."""
    third, advised = rng.sample(tools, 2)
    template, name = rng.choice(F.THIRD_PARTY), rng.choice([n for n in THIRD_PARTIES if n != used_name])
    knows = [b.fact("user", "RELATES_TO", snake_id(name), "fresh")] if template.lower().startswith("my ") else []
    b.say(rng.randrange(sessions), _fill(template, n=name, x=third), knows, topic=third)
    b.decoys.append(Decoy(snake_id(third), "third_party", "fresh"))
    b.say(rng.randrange(sessions), _fill(rng.choice(F.ASSISTANT), x=advised), role="agent",
          topic=rng.choice(("the build", "our tooling", "the backend")))
    b.decoys.append(Decoy(snake_id(advised), "assistant", "fresh"))
    pools = {"tool": [t for t in tools if t not in (third, advised)], **{k: list(v) for k, v in DECOY_OBJECTS.items()}}
    for kind in ("negation", "hypothetical", "question"):
        object_kind, template = rng.choice(F.USER_DECOYS[kind])
        obj = rng.choice(pools[object_kind])
        pools[object_kind].remove(obj)
        obj_id = snake_id(obj.removeprefix("the ")) if object_kind == "project" else snake_id(obj)
        b.say(rng.randrange(sessions), _fill(template, x=obj), topic=obj)
        b.decoys.append(Decoy(obj_id, kind, "fresh"))


def _sessions_for(rng: random.Random, n_sessions: int) -> list[int]:
    """One to three distinct sessions, in order: a fact's repetitions across sessions."""
    count = rng.choice((1, 1, 2, 2, 3))
    return sorted(rng.sample(range(n_sessions), min(count, n_sessions)))


def generate_user(rng: random.Random, user_id: str, stamps: str, *, sessions: int = 4,
                  now: datetime | None = None, held_out_share: float = 0.4,
                  fresh_share: float = 0.0) -> GeneratedUser:
    now = now or datetime.now(timezone.utc)
    start = now - timedelta(minutes=50 * sessions + 30) if stamps == "live" else \
        HISTORICAL_START + timedelta(days=rng.randrange(0, 200))
    b = _UserBuilder(rng, user_id, stamps, sessions, start, held_out_share, fresh_share)
    user = "user"
    tools = rng.sample(TOOLS, 4)
    for tool in tools[:2]:
        b.plant(user, "USES", snake_id(tool), b.split(), P.USES, _sessions_for(rng, sessions), x=tool)
    # a change: the old tool stated in an early session, the switch in a later one
    old, new = tools[2], tools[3]
    split = b.split()
    first = rng.randrange(0, sessions - 1)
    later = rng.randrange(first + 1, sessions)
    b.plant(user, "USES", snake_id(old), split, P.USES, [first], x=old)
    switch = rng.choice(templates_for(P.SWITCH, split))
    # the switch states both: the old value as the past (one more observation of it), the new one as now
    b.say(later, _fill(switch, a=old, b=new),
          [b.fact(user, "USES", snake_id(old), split), b.fact(user, "USES", snake_id(new), split)], topic=new)
    b.changes.append(Change(user, "USES", snake_id(old), snake_id(new), split))

    project, client = rng.choice(PROJECTS), rng.choice(CLIENTS)
    project_id = snake_id(project.removeprefix("the "))
    b.plant(user, "WORKS_ON", project_id, b.split(), P.WORKS_ON, _sessions_for(rng, sessions), x=project)
    b.plant(project_id, "BUILT_FOR_CLIENT", snake_id(client), b.split(), P.BUILT_FOR_CLIENT,
            [rng.randrange(sessions)], p=project, c=client)
    problem = rng.choice(PROBLEMS)
    b.plant(user, "STRUGGLES_WITH", snake_id(problem), b.split(), P.STRUGGLES_WITH,
            _sessions_for(rng, sessions), x=problem)
    interest = rng.choice(INTERESTS)
    b.plant(user, "EXPRESSED_INTEREST", snake_id(interest), b.split(), P.EXPRESSED_INTEREST,
            _sessions_for(rng, sessions), x=interest)
    written, trait = rng.choice(TRAITS)
    b.plant(user, "EXHIBITS", snake_id(trait), b.split(), P.EXHIBITS, [rng.randrange(sessions)], x=written)
    place, person, pet = rng.choice(PLACES), rng.choice(PEOPLE), rng.choice(PETS)
    b.plant(user, "RELATES_TO", snake_id(place), b.split(), P.PLACE, [rng.randrange(sessions)], x=place)
    b.plant(user, "RELATES_TO", snake_id(person), b.split(), P.PERSON, [rng.randrange(sessions)], x=person)
    b.plant(user, "RELATES_TO", snake_id(pet), b.split(), P.POSSESSION, [rng.randrange(sessions)], x=pet)

    decoy_tools = rng.sample(DECOY_TOOLS, 3)
    template, name, session = rng.choice(P.THIRD_PARTY), rng.choice(THIRD_PARTIES), rng.randrange(sessions)
    # "My colleague Priya uses Java": Java is Priya's, but that Priya is the user's colleague is the user's fact
    knows = [b.fact(user, "RELATES_TO", snake_id(name), "tuning")] if template.startswith("My ") else []
    b.say(session, _fill(template, n=name, x=decoy_tools[0]), knows, topic=decoy_tools[0])
    b.decoys.append(Decoy(snake_id(decoy_tools[0]), "third_party"))
    for tool in decoy_tools[1:]:
        b.say(rng.randrange(sessions), _fill(rng.choice(P.ASSISTANT), x=tool), role="agent",
              topic=rng.choice(("deployments", "the build", "monitoring", "the data layer")))
        b.decoys.append(Decoy(snake_id(tool), "assistant"))
    if fresh_share > 0:
        _fresh_decoys(rng, b, [t for t in DECOY_TOOLS if t not in decoy_tools], name, sessions)
    for statements in b.statements:  # a seeded order within each session; a switch stays after its first value
        switches = [st for st in statements if len(st[2]) == 2]
        rng.shuffle(statements)
        for st in switches:
            statements.remove(st)
            statements.append(st)
    return b.build()


def generate(users: int = 24, *, seed: int = 14, sessions: int = 4, now: datetime | None = None,
             held_out_share: float = 0.4, fresh_share: float = 0.0) -> list[GeneratedUser]:
    """`users` users, alternately live and historical, from one seed (the same seed, the same corpus)."""
    rng = random.Random(seed)
    return [generate_user(rng, f"u{n:03d}", "live" if n % 2 == 0 else "historical", sessions=sessions, now=now,
                          held_out_share=held_out_share, fresh_share=fresh_share) for n in range(users)]
