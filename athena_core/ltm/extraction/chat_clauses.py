"""Ordinary-chat clauses the trigger patterns miss (issue 14 item 3): object-first statements ("building
wheels is a struggle", "X is my daily driver"), work and interest idioms ("the project I spend most of my
week on is X", "I'd love to understand Y"), a change of value ("I switched from A to B": both edges, A
marked as the past), clients of a project ("the checkout service is for Northwind Traders"), personal facts
as RELATES_TO with their nuance (where the user lives, the people and pets they name), and "it" resolved
to the thing the turn just named ("I picked up Flutter. I use it all day.") or dropped.

Each rule is a regex over one sentence with a named group where its object (and for clients, its project)
is written; the phrase is cut and labelled by `SummarySentence`, so these rules share the extractor's
object boundaries and gazetteer. A rule's clause is spoken by the sentence's first-person speaker: a
sentence whose subject is someone else ("my colleague Priya", "you") yields nothing here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from athena_core.ltm.extraction.normalisation import PAST_PREFIX
from athena_core.ltm.extraction.offline_vocabulary import (
    ignorecase as _rx,
    BOUNDARY_WORDS,
    HARD_BREAK,
    LEADING_FILLER,
    MAX_OBJECT_WORDS,
    PROJECT_WORDS,
)
from athena_core.ltm.extraction.summary_sentence import PHRASE_RELATIONS, Node, SummarySentence, USER
from athena_core.models.ontology import snake_id
from athena_core.text.gazetteer import GAZETTEER
from athena_core.text.stopwords import STOPWORDS
from athena_core.text.tokens import Token

PRONOUNS = frozenset({"it", "that", "them", "this"})

# (relation, regex, base confidence, object-first?) — `obj` names the object's span.
_NAME = r"(?P<obj>[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*){0,3})"
_PHRASE = r"(?P<obj>(?:the\s+|my\s+|our\s+|a\s+)?[\w.+#'-]+(?:\s+[\w.+#'-]+){0,5}?)"


@dataclass(frozen=True)
class ClauseRule:
    relation: str
    regex: re.Pattern[str]
    base: float
    object_first: bool = False  # the object is written before the verb ("X is a struggle")
    tool_only: bool = False  # the object must look like a product (gazetteer or a capitalised name)


OBJECT_FIRST_END = r"(?=\s*(?:[,.;!?]|$|\s+(?:so|but|and)\b))"
RULES: tuple[ClauseRule, ...] = (
    # STRUGGLES_WITH
    ClauseRule("STRUGGLES_WITH", _rx(r"^" + _PHRASE + r"\s+(?:is|are|has\s+been|have\s+been)\s+(?:a\s+|an\s+)?"
               r"(?:real\s+|constant\s+|total\s+|huge\s+|big\s+)?(?:struggle|pain|headache|nightmare|mess|"
               r"battle|slog)\b"), 0.65, True),
    ClauseRule("STRUGGLES_WITH", _rx(r"^" + _PHRASE + r"\s+(?:is|are)\s+(?:something|what|the\s+thing)\s+I\s+"
               r"(?:keep\s+|always\s+|constantly\s+)?(?:fight(?:ing)?|struggl(?:e|ing)|battl(?:e|ing)|wrestl(?:e|ing))"
               r"\s+with\b"), 0.65, True),
    ClauseRule("STRUGGLES_WITH", _rx(r"^" + _PHRASE + r"\s+(?:keeps?|kept)\s+(?:tripping\s+me\s+up|biting\s+me|"
               r"breaking\s+on\s+me|failing\s+on\s+me)"), 0.6, True),
    ClauseRule("STRUGGLES_WITH", _rx(r"^" + _PHRASE + r"\s+(?:is|are)\s+driving\s+me\s+(?:up\s+the\s+wall|crazy|"
               r"nuts|mad)"), 0.6, True),
    ClauseRule("STRUGGLES_WITH", _rx(r"\b(?:I|we)\s+(?:keep|kept)\s+(?:fighting|struggling|wrestling)\s+with\s+"), 0.65),
    ClauseRule("STRUGGLES_WITH", _rx(r"\blost\s+(?:another\s+|a\s+whole\s+|an\s+|the\s+)?(?:afternoon|morning|"
               r"evening|day|week|hour|night)s?\s+to\s+"), 0.6),
    ClauseRule("STRUGGLES_WITH", _rx(r"\b(?:can't|cannot|can\s+not)\s+(?:wrap\s+my\s+head\s+around|get\s+my\s+"
               r"head\s+around|make\s+sense\s+of|get\s+(?:a\s+(?:real\s+)?handle\s+on|a\s+grip\s+on|the\s+hang\s+of))\s+"), 0.6),
    # EXPRESSED_INTEREST
    ClauseRule("EXPRESSED_INTEREST", _rx(r"(?:'d|\bwould)\s+(?:really\s+|also\s+)?love\s+to\s+(?:learn|understand|"
               r"explore|study|try|get\s+into|dig\s+into)(?:\s+more)?(?:\s+about)?\s+"), 0.7),
    ClauseRule("EXPRESSED_INTEREST", _rx(r"(?:'d|\bwould)\s+(?:really\s+|also\s+)?like\s+to\s+(?:learn|understand|"
               r"explore|study|try|get\s+into|dig\s+into)(?:\s+more)?(?:\s+about)?\s+"), 0.7),
    ClauseRule("EXPRESSED_INTEREST", _rx(r"\bwant\s+to\s+(?:\w+ly\s+)?(?:dig\s+into|get\s+into|understand|study)\s+"), 0.65),
    ClauseRule("EXPRESSED_INTEREST", _rx(r"\b(?:keep|kept)\s+meaning\s+to\s+(?:study|learn|explore|look\s+into|"
               r"read\s+up\s+on|try)\s+"), 0.6),
    ClauseRule("EXPRESSED_INTEREST", _rx(r"\breading\s+(?:a\s+lot\s+|a\s+bit\s+|more\s+)?(?:about|up\s+on)\s+"), 0.6),
    ClauseRule("EXPRESSED_INTEREST", _rx(r"^" + _PHRASE + r"\s+(?:really\s+)?(?:fascinates|intrigues|excites)\s+me\b"),
               0.65, True),
    ClauseRule("EXPRESSED_INTEREST", _rx(r"^" + _PHRASE + r"\s+is\s+on\s+my\s+(?:list|wishlist|bucket\s+list)\b"),
               0.6, True),
    # WORKS_ON
    ClauseRule("WORKS_ON", _rx(r"^" + _PHRASE + r"\s+is\s+(?:the|my)\s+(?:main\s+)?project\s+I\s+(?:spend|put)\s+"),
               0.7, True),
    ClauseRule("WORKS_ON", _rx(r"\b(?:the|my)\s+(?:main\s+)?project\s+I\s+(?:spend|put)\s+[\w\s]+?\s+on\s+is\s+"), 0.7),
    ClauseRule("WORKS_ON", _rx(r"\b(?:most|much|all|half)\s+of\s+my\s+(?:time|week|day|days|energy)\s+"
               r"(?:goes|go|went)\s+(?:into|to)\s+"), 0.65),
    ClauseRule("WORKS_ON", _rx(r"\bheads[-\s]down\s+on\s+"), 0.65),
    ClauseRule("WORKS_ON", _rx(r"\bknee[-\s]deep\s+in\s+"), 0.6),
    ClauseRule("WORKS_ON", _rx(r"\bmy\s+(?:main\s+)?focus(?:\s+at\s+work)?\s+(?:is|has\s+been)\s+"), 0.65),
    ClauseRule("WORKS_ON", _rx(r"\b(?:I'm|I\s+am)\s+(?:the\s+)?(?:lead|main|only|senior)?\s*(?:developer|engineer|"
               r"dev|maintainer|owner)\s+(?:on|of|for)\s+"), 0.65),
    ClauseRule("WORKS_ON", _rx(r"\bmy\s+job\s+is\s+(?:basically\s+|mostly\s+|mainly\s+)?"), 0.6),
    ClauseRule("WORKS_ON", _rx(r"\b(?:starting|started|start|kicking\s+off|leading|lead|finishing|doing|running)\s+"
               r"(?P<obj>(?:the|our|my|a)\s+[\w.-]+(?:\s+[\w.-]+){0,3}?)\s+(?:rewrite|migration|refactor|"
               r"port|overhaul|redesign)\b"), 0.7, True),
    ClauseRule("WORKS_ON", _rx(r"^(?:so\s+|ok\s+|okay\s+)?(?:back|still)\s+on\s+(?P<obj>(?:the|our|my)\s+[^,.;!?]+)"),
               0.6, True),
    # USES
    ClauseRule("USES", _rx(r"^(?:(?:yes|yeah|yep|ok|okay|sure|and)[,\s]+)?" + _PHRASE + r"\s+(?:stays|remains)\b"),
               0.65, True, True),
    ClauseRule("USES", _rx(r"\b(?:keep|keeping|kept|stick(?:ing)?\s+with|stay(?:ing)?\s+(?:with|on))\s+(?:using\s+)?"),
               0.6, False, True),
    ClauseRule("USES", _rx(r"^" + _PHRASE + r"\s+(?:is|has\s+been)\s+my\s+(?:daily\s+driver|go-to|main\s+tool|"
               r"favou?rite\s+tool|bread\s+and\s+butter)"), 0.7, True, True),
    ClauseRule("USES", _rx(r"^" + _PHRASE + r"\s+has\s+been\s+(?:part\s+of|in)\s+my\s+(?:setup|toolbox|stack|"
               r"workflow)"), 0.65, True, True),
    ClauseRule("USES", _rx(r"\bmy\s+(?:go-to|daily\s+driver|main\s+tool)(?:\s+these\s+days|\s+right\s+now|\s+now)?"
               r"\s+is\s+"), 0.7, False, True),
    ClauseRule("USES", _rx(r"\b(?:can't|cannot|couldn't)\s+imagine\s+(?:working|coding|living|doing\s+my\s+job)\s+"
               r"without\s+"), 0.65, False, True),
    ClauseRule("USES", _rx(r"\b(?:most|much|all)\s+of\s+my\s+(?:day|days|time|work)\s+is\s+spent\s+in\s+"), 0.65, False, True),
    ClauseRule("USES", _rx(r"\bI\s+spend\s+(?:most|much|all)\s+of\s+my\s+(?:day|days|time)\s+in\s+"), 0.65, False, True),
    ClauseRule("USES", _rx(r"\beverything\s+I\s+do(?:\s+at\s+the\s+moment|\s+these\s+days|\s+now)?\s+goes\s+through\s+"),
               0.6, False, True),
    ClauseRule("USES", _rx(r"\b(?:I|we)\s+(?:do|did)\s+(?:nearly\s+|almost\s+|pretty\s+much\s+)?everything\s+(?:with|in)\s+"),
               0.65, False, True),
    ClauseRule("USES", _rx(r"\b(?:I|we)\s+lean\s+(?:heavily\s+)?on\s+"), 0.65, False, True),
    ClauseRule("USES", _rx(r"\b(?:picked\s+up|started\s+(?:using|with)|got\s+into|swear\s+by)\s+"), 0.65, False, True),
    ClauseRule("USES", _rx(r"\ba\s+(?:heavy|big|daily|longtime|long-time)\s+" + _NAME + r"\s+user\b"), 0.65, True, True),
    # EXHIBITS
    ClauseRule("EXHIBITS", _rx(r"\b(?:call|consider)\s+myself\s+(?:a\s+|an\s+)?"), 0.6),
    ClauseRule("EXHIBITS", _rx(r"^being\s+(?:a\s+|an\s+)?" + _PHRASE + r"\s+is\s+(?:just\s+)?(?:how|who)\s+I\s+am"),
               0.6, True),
)

PRONOUN_USE = ClauseRule("USES", _rx(r"\b(?:I|we)\s+(?:use|used|rely\s+on|live\s+in|work\s+in|code\s+in)\s+"
                                     r"(?=(?:it|them)\b)"), 0.65)

# A project's client: groups p (the project) and c (the client's name).
_CLIENT = r"(?P<c>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,3})"
_PROJECT = r"(?P<p>(?:the\s+|our\s+|my\s+)?[\w.-]+(?:\s+[\w.-]+){0,4}?)"
_PROJECT_END = r"(?P<p>[^,.;!?]+)"  # a project written last: cut by the object boundaries
CLIENT_RULES: tuple[re.Pattern[str], ...] = (
    _rx(r"^" + _PROJECT + r"\s+(?:is|was|are)\s+(?:being\s+built\s+|built\s+|made\s+|a\s+contract\s+(?:job|gig)\s+|"
        r"a\s+project\s+|done\s+)?for\s+" + _CLIENT),
    _rx(r"\b(?:our|my|the)\s+(?:client|customer)\s+(?:for|on|behind)\s+" + _PROJECT + r"\s+is\s+" + _CLIENT),
    re.compile(r"^" + _CLIENT + r"\s+(?:is|was)\s+(?:the|our|my)\s+(?:client|customer)\s+(?:behind|for|on)\s+" + _PROJECT_END),
    re.compile(r"^" + _CLIENT + r"\s+(?:pays|paid|is\s+paying)\s+(?:us\s+|me\s+)?for\s+" + _PROJECT_END),
    _rx(r"^" + _PROJECT + r"\s+(?:was|is|has\s+been)\s+(?:commissioned|ordered|funded|sponsored)\s+by\s+" + _CLIENT),
    re.compile(r"^" + _CLIENT + r"\s+is\s+(?:who|whom)\s+" + _PROJECT + r"\s+is\s+for\b"),
)

# A client named by its relation to a project rather than by a fixed phrasing (`_client_by_cue`).
CLIENT_CUE = _rx(r"\b(?:clients?|customers?|contract(?:ed|s)?|belongs?\s+to|owned\s+by|on\s+behalf\s+of|"
                 r"commissioned|paid\s+(?:for\s+)?by|pays?\s+(?:us\s+|me\s+)?for|funded\s+by|sponsored\s+by|"
                 r"ordered\s+by|built\s+for|made\s+for|deliver(?:s|ed|ing)?\s+(?:it\s+)?(?:to|for)|billed\s+to|"
                 r"account|hired\s+(?:us|me)|engaged\s+(?:us|me)|brought\s+(?:us|me)\s+in|paying\s+(?:us\s+|me\s+)?for|"
                 r"owns|owned|ordered|engagement|on\s+retainer)\b|[A-Z][\w&-]*'s\s+(?:\w+\s+)?(?:project|app|service|"
                 r"product|platform|dashboard|pipeline|portal)\b")

CLIENT_NAMED = re.compile(r"\b(?:[Cc]lient|[Cc]ustomer)s?\s*,?\s+[A-Z]")


def _project_phrase(s: SummarySentence) -> list[Token] | None:
    """The first "<up to three words> <project word>" phrase of the sentence ("the checkout service")."""
    toks = s.toks
    for i, tok in enumerate(toks):
        if i == 0 or tok.lower not in PROJECT_WORDS:
            continue
        j = i
        while j > 0 and i - j < 3 and toks[j - 1].lower not in STOPWORDS and not s.gap(j).strip() \
                and toks[j - 1].lower not in PROJECT_WORDS and toks[j - 1].start not in s.gaz:
            j -= 1
        if j < i:
            return toks[j: i + 1]
    return None


# A change of value: (regex with groups a and b).
SWITCHES: tuple[re.Pattern[str], ...] = (
    _rx(r"\b(?:switched|switching|moved|moving|migrated|migrating|changed|went)\s+(?:(?:everything|my\s+\w+|it\s+all|"
        r"all\s+my\s+\w+)\s+)?(?:over\s+|on\s+|away\s+)?from\s+(?P<a>.+?)\s+(?:to|over\s+to|onto)\s+(?P<b>.+)"),
    _rx(r"\b(?:traded|swapped|exchanged|ditched|dropped|abandoned)\s+(?P<a>.+?)\s+for\s+(?P<b>.+)"),
    re.compile(r"\b(?P<a>[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*)?)\s+(?:is|'s)\s+out,?\s+(?:and\s+)?(?P<b>[A-Z][\w.+#-]*"
               r"(?:\s+[A-Z][\w.+#-]*)?)\s+(?:is|'s)\s+in\b"),
    _rx(r"\breplaced\s+(?P<a>.+?)\s+with\s+(?P<b>.+)"),
    _rx(r"\b(?:dropped|ditched|abandoned|left)\s+(?P<a>.+?)\s+(?:and|for)\s+(?:went\s+with|switched\s+to|"
        r"moved\s+to|picked|chose|(?=[A-Z]))(?P<b>.+)"),
    _rx(r"\bafter\s+(?:years|months|a\s+year|a\s+decade|ages)\s+(?:on|with|of)\s+(?P<a>.+?),\s*(?:I|we)(?:'ve|\s+have)?"
        r"\s+(?:moved|switched|gone|migrated)\s+(?:over\s+)?(?:to|onto)\s+(?P<b>.+)"),
    _rx(r"\bused\s+to\s+use\s+(?P<a>.+?),?\s+but\s+(?:now\s+(?:it's|I\s+use)|these\s+days\s+(?:it's|I\s+use))\s+(?P<b>.+)"),
)

# Personal facts: where the user lives, people and pets they name. (nuance, regex with group obj)
PLACE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("lives in", re.compile(r"\b(?:[Ii]|[Ww]e)\s+(?:live|lived|am\s+living|'m\s+living)\s+in\s+" + _NAME)),
    ("moved to", re.compile(r"\b(?:[Ii]|[Ww]e)\s+(?:moved|relocated)\s+to\s+" + _NAME)),
    ("home is", re.compile(r"\b[Hh]ome\s+for\s+(?:me|us)\s+is\s+" + _NAME)),
    ("home is", re.compile(r"\b[Hh]ome(?:'s|\s+is)\s+(?:(?:for\s+(?:me|us)|now|these\s+days)\s+)?" + _NAME)),
    ("based in", re.compile(r"\b(?:[Ii]'m|[Ii]\s+am|[Ww]e're|[Ww]e\s+are)\s+(?:based|located|situated)\s+(?:out\s+of|in)\s+" + _NAME)),
    ("based in", re.compile(r"\b(?:[Ii]'m|[Ii]\s+am|[Ww]e're|[Ww]e\s+are)\s+based\s+in\s+" + _NAME)),
    ("settled in", re.compile(r"\b(?:[Ii]'ve|[Ww]e've|[Ii]\s+have|[Ww]e\s+have)\s+settled\s+in\s+" + _NAME)),
    ("lives in", re.compile(r"\b(?:[Ii]'ve|[Ww]e've|[Ii]\s+have|[Ww]e\s+have)\s+(?:been\s+living|lived)\s+in\s+" + _NAME)),
    ("lives in", re.compile(r"\b(?:[Ii]'m|[Ii]\s+am|[Ww]e're|[Ww]e\s+are)\s+(?:currently\s+|now\s+)?(?:living|staying)\s+"
                            r"in\s+" + _NAME)),
    ("lives in", re.compile(r"\b[Mm]y\s+(?:apartment|flat|house|home|place|room|office)\s+is\s+(?:in|near)\s+" + _NAME)),
    ("home is", re.compile(r"\b(?:[Ii]|[Ww]e)\s+(?:now\s+)?call\s+" + _NAME + r"\s+home\b")),
    ("from", re.compile(r"\b(?:[Ii]'m|[Ii]\s+am|[Ww]e're|[Ww]e\s+are)\s+(?:originally\s+)?from\s+" + _NAME)),
    ("grew up in", re.compile(r"\b(?:[Ii]|[Ww]e)\s+grew\s+up\s+in\s+" + _NAME)),
    ("lives near", re.compile(r"\b(?:[Ii]|[Ww]e)\s+(?:live|lived|am\s+living|'m\s+living)\s+(?:just\s+)?(?:outside|near|"
                              r"close\s+to|on\s+the\s+outskirts\s+of)\s+" + _NAME)),
    ("home is", re.compile(r"\b(?:[Ii]|[Ww]e)(?:'ve|\s+have)?\s+made\s+" + _NAME + r"\s+(?:my|our)\s+home\b")),
    ("lives in", re.compile(_NAME + r"\s+is\s+where\s+(?:[Ii]|we)\s+(?:live|call\s+home|have\s+settled)\b")),
    ("lives in", re.compile(r"\b(?:[Ii]'m|[Ii]\s+am|[Ww]e're|[Ww]e\s+are)\s+(?:currently\s+|now\s+)?(?:out\s+|over\s+|down\s+|up\s+)?"
                            r"in\s+" + _NAME + r"\s+(?:these\s+days|now|for\s+now|at\s+the\s+moment|nowadays)\b")),
    ("home is", re.compile(_NAME + r"\s+is\s+(?:my\s+|our\s+)?home\b")),
    ("lives in", re.compile(r"\b(?:[Mm]y|[Oo]ur)\s+(?:place|flat|apartment|house|home)\s+in\s+" + _NAME)),
    ("lives in", re.compile(r"\b(?:rent|own|bought|have|share)\s+(?:a|an|my|our)\s+(?:\w+\s+)?(?:flat|apartment|house|place|"
                            r"room|condo)\s+in\s+" + _NAME)),
    ("local of", re.compile(r"\b(?:I'm|I\s+am)\s+(?:a|an)\s+" + _NAME + r"\s+(?:local|native|resident)\b")),
    ("lives in", re.compile(r"^(?:(?:ngl|tbh|honestly|so|yeah|well|but)[,\s]+)?[Ll]iving\s+in\s+" + _NAME)),
    ("grew up in", re.compile(r"\b(?:born\s+and\s+)?raised\s+in\s+" + _NAME)),
)
PEOPLE_NOUNS = ("kid", "grandmother", "grandfather", "stepmom", "stepdad", "bestie", "buddy", "pal", "flatmate",
                "housemate", "classmate", "sister", "brother", "partner", "wife", "husband", "friend", "cousin", "mom", "mum", "mother",
                "dad", "father", "son", "daughter", "girlfriend", "boyfriend", "roommate", "neighbour",
                "neighbor", "aunt", "uncle", "niece", "nephew", "grandma", "grandpa", "fiancee", "fiance",
                "colleague", "coworker", "teammate", "manager", "boss", "mentor")
PET_NOUNS = ("dog", "cat", "kitten", "puppy", "parrot", "rabbit", "hamster", "horse", "bike", "car", "boat", "terrier",
             "retriever", "labrador", "poodle", "beagle", "spaniel", "collie", "husky", "pug", "corgi", "dachshund",
             "tabby", "greyhound", "budgie", "tortoise", "turtle", "lizard", "gecko")
_KIN = "|".join(PEOPLE_NOUNS)
_PET = "|".join(PET_NOUNS)
# Capitalised words that open a sentence and are no name ("Yeah, my mom loved flowers").
NOT_NAMES = frozenset("""yeah yes yep no nope well oh hey ok okay so wow haha sure thanks honestly anyway sorry
    hi hello right anyway also and but then today yesterday""".split()) | STOPWORDS
PERSON_RULES: tuple[tuple[re.Pattern[str], bool], ...] = (  # (regex with groups kind and obj, is a pet)
    (re.compile(r"\b[Mm]y\s+(?:best\s+|old\s+|oldest\s+|closest\s+|dear\s+|good\s+|childhood\s+|twin\s+|baby\s+|"
                r"big\s+|little\s+|older\s+|younger\s+)?(?P<kind>" + _KIN + r"),?\s+(?P<obj>[A-Z][a-z]+)\b"), False),
    (re.compile(r"\b(?P<obj>[A-Z][a-z]+)\s+and\s+[Ii]\s+(?:have\s+been|'ve\s+been|are|were)\s+(?:best\s+|close\s+|good\s+|"
                r"old\s+)?(?P<kind>friend)s\b"), False),
    (re.compile(r"\b(?P<obj>[A-Z][a-z]+),\s+(?:who\s+is\s+|who's\s+)?my\s+(?P<kind>" + _KIN + r")\b"), False),
    (re.compile(r"\b(?P<obj>[A-Z][a-z]+)\s+\((?:my\s+)?(?P<kind>" + _KIN + r")\)"), False),
    (re.compile(r"\b(?P<obj>[A-Z][a-z]+)\s+(?:is|has\s+been|was)\s+my\s+(?:best\s+|oldest\s+|closest\s+|"
                r"older\s+|younger\s+|little\s+|big\s+)?(?P<kind>" + _KIN + r")\b"), False),
    (re.compile(r"\b[Mm]y\s+(?:best\s+|old\s+|little\s+|older\s+|younger\s+)?(?P<kind>" + _KIN + r")(?:'s\s+name)?"
                r"\s+(?:is\s+)?(?:called|named)\s+(?P<obj>[A-Z][a-z]+)\b"), False),
    (re.compile(r"\b(?:a|my|our)\s+(?P<kind>" + _PET + r")\s+(?:named|called)\s+(?P<obj>[A-Z][a-z]+)\b"), True),
    (re.compile(r"\b(?:[Mm]y|[Oo]ur)\s+(?:\w+\s+)?(?P<kind>" + _PET + r"),?\s+(?P<obj>[A-Z][a-z]+)\b"), True),
    (re.compile(r"\b(?P<obj>[A-Z][a-z]+)\s+(?:is|was)\s+(?:my|our)\s+(?:\w+\s+)?(?P<kind>" + _PET + r")\b"), True),
    (re.compile(r"\b(?P<obj>[A-Z][a-z]+)\s+\((?:my|our)\s+(?P<kind>" + _PET + r")\)"), True),
    (re.compile(r"\b(?:a|my|our)\s+(?:\w+\s+)?(?P<kind>" + _PET + r")\b[^.;!?]{0,40}?\b(?:her|his|its|their)\s+name"
                r"\s+is\s+(?P<obj>[A-Z][a-z]+)\b"), True),
    (re.compile(r"\b(?:[Mm]y|[Oo]ur)\s+(?:\w+\s+)?(?P<kind>" + _PET + r")(?:'s)?\s+name\s+is\s+(?P<obj>[A-Z][a-z]+)\b"),
     True),
    (re.compile(r"\b(?:have|has|had|got|adopted)\s+(?:a|an)\s+(?:\w+\s+){0,2}(?P<kind>" + _PET + r")\s+(?:named|called)\s+"
                r"(?P<obj>[A-Z][a-z]+)\b"), True),
    (re.compile(r"\b(?P<obj>[A-Z][a-z]+),\s+my\s+(?P<kind>" + _PET + r")\b"), True),
    (re.compile(r"\b(?:adopted|got|bought|rescued)\s+(?:a|an)\s+(?:\w+\s+)?(?P<kind>" + _PET + r")[\s,]+(?:[\w'-]+\s+){0,3}?"
                r"(?:and|we|I|i)\s+(?:called|named)\s+"
                r"(?:her|him|it|them)\s+(?P<obj>[A-Z][a-z]+)\b"), True),
)


@dataclass(frozen=True)
class Clause:
    """One fact a rule found: subject, relation, object, base confidence and a nuance prefix."""

    subject: Node
    relation: str
    obj: Node
    base: float
    note: str = ""
    tokens: tuple[int, ...] = ()  # token starts the object used (claimed from the other rules)


def _phrase_item(s: SummarySentence, start: int, end: int) -> list[Token]:
    """The object phrase written in [start, end): leading filler dropped, cut at the first boundary word or
    hard break, at most MAX_OBJECT_WORDS words (longer means we did not find where the object ends)."""
    item: list[Token] = []
    for tok in s.toks:
        if tok.start < start or tok.end > end:
            continue
        if item and HARD_BREAK.search(s.text[item[-1].end: tok.start]):
            break
        if not item and tok.lower in LEADING_FILLER and tok.start not in s.gaz:
            continue
        if tok.lower in BOUNDARY_WORDS and tok.start not in s.gaz:
            break
        item.append(tok)
    return item if 0 < len(item) <= MAX_OBJECT_WORDS else []


def _is_tool_like(s: SummarySentence, item: list[Token]) -> bool:
    if s.lowercase and len(item) == 1 and item[0].lower in GAZETTEER:
        return True  # "i traded vim for bun": typed small, an ambiguous term in a change's slot is the tool
    return any(t.start in s.gaz for t in item) or all(s.is_name_word(t) or t.text[:1].isupper() for t in item)


class ClauseReader:
    """Reads one sentence's chat clauses; `antecedent` is what "it" refers to (the turn's last named thing)."""

    def __init__(self, s: SummarySentence, antecedent: Node | None) -> None:
        self.s = s
        self.antecedent = antecedent

    def speaker_subject(self, offset: int) -> Node | None:
        """The user when the clause at `offset` is the speaker's own (no other party named before it)."""
        subject, third, _ = self.s.subject_before(offset)
        if subject is USER or (subject is not None and subject.id == USER.id and not third):
            return USER
        if subject is None and not any(c.start < offset for c in self.s.candidates):
            return USER  # "Building wheels is a struggle": nobody else named, the speaker says it
        return None

    def object_at(self, start: int, end: int | None, relation: str, tool_only: bool) -> tuple[Node, list[Token]] | None:
        s = self.s
        word = s.text[start:].split(None, 1)[0].strip(".,;!?").lower() if s.text[start:].strip() else ""
        if word in PRONOUNS:
            return (self.antecedent, []) if self.antecedent is not None else None
        if end is None:
            items = s.object_items(start)
            item = items[0] if items else []
        else:
            item = _phrase_item(s, start, end)
        if not item or any(t.lower in ("i", "me", "my", "you", "your") for t in item):
            return None
        if relation in PHRASE_RELATIONS:
            item = s.topic_tail(item, end)
        if tool_only and not _is_tool_like(s, item):
            return None
        return s.object_node(item, relation), item

    def clauses(self) -> list[Clause]:
        out: list[Clause] = []
        s = self.s
        for rule in RULES:
            for match in rule.regex.finditer(s.text):
                if s.negated(0, match.start()) and not rule.object_first:
                    continue
                subject = self.speaker_subject(match.start())
                if subject is None:
                    continue
                if rule.object_first:
                    found = self.object_at(match.start("obj"), match.end("obj"), rule.relation, rule.tool_only)
                else:
                    found = self.object_at(match.end(), None, rule.relation, rule.tool_only)
                if found is None:
                    continue
                obj, item = found
                if rule.relation == "EXHIBITS":
                    obj = Node(obj.id, "Concepts", obj.name.lower())
                out.append(Clause(subject, rule.relation, obj, rule.base, tokens=tuple(t.start for t in item)))
        for match in PRONOUN_USE.regex.finditer(s.text):
            if self.antecedent is not None and self.speaker_subject(match.start()) is not None:
                out.append(Clause(USER, "USES", self.antecedent, PRONOUN_USE.base))
        out += self._clients()
        out += self._switches()
        out += self._personal()
        return out

    def _clients(self) -> list[Clause]:
        """"The checkout service is for Northwind Traders": the project, not the user, is the subject."""
        s = self.s
        for regex in CLIENT_RULES:
            match = regex.search(s.text)
            if match is None:
                continue
            item = _phrase_item(s, match.start("p"), match.end("p"))
            client = match.group("c").strip()
            if not item or not client or client.lower() in GAZETTEER or \
                    not (item[-1].lower in PROJECT_WORDS or all(s.is_name_word(t) for t in item)):
                continue
            project = s.object_node(item, "WORKS_ON")
            return [Clause(project, "BUILT_FOR_CLIENT", Node(snake_id(client), "Identities", client), 0.7,
                           tokens=self._starts(match.start("c"), match.end("c")))]
        return self._client_by_cue()

    def _client_by_cue(self) -> list[Clause]:
        """The general reading: a sentence with a client cue ("customer", "under contract with", "belongs
        to", "paid for by"), a project phrase and a name: the name nearest the cue is the project's client."""
        s = self.s
        cue = CLIENT_CUE.search(s.text)
        if cue is None or CLIENT_NAMED.search(s.text):  # "our client, Prescott Data,": the extractor's own rule
            return []
        project = _project_phrase(s)
        if project is None:
            return []
        taken = {t.start for t in project}
        runs: list[list[Token]] = []
        i = 0
        while i < len(s.toks):
            run = s.name_run(i)
            if run and not taken & {t.start for t in run} and run[0].lower not in NOT_NAMES:
                runs.append(run)
            i += max(1, len(run))
        if not runs:
            return []
        run = min(runs, key=lambda r: min(abs(r[0].start - cue.end()), abs(r[-1].end - cue.start())))
        name = s.span_text(run)
        if name.lower() in GAZETTEER:
            return []
        return [Clause(s.object_node(project, "WORKS_ON"), "BUILT_FOR_CLIENT",
                       Node(snake_id(name), "Identities", s.entities.get(name.lower(), name)), 0.6,
                       tokens=tuple(t.start for t in run))]

    def _switch_item(self, start: int, end: int) -> tuple[Node, list[Token]] | None:
        s = self.s
        item = _phrase_item(s, start, end)
        if not item or not _is_tool_like(s, item):
            return None
        return s.object_node(item, "USES"), item

    def _switches(self) -> list[Clause]:
        out: list[Clause] = []
        for regex in SWITCHES:
            for match in regex.finditer(self.s.text):
                if self.speaker_subject(match.start()) is None:
                    continue
                old = self._switch_item(match.start("a"), match.end("a"))
                new = self._switch_item(match.start("b"), match.end("b"))
                if old is None or new is None or old[0].id == new[0].id:
                    continue
                out.append(Clause(USER, "USES", new[0], 0.8, f"switched from {old[0].name}",
                                  tuple(t.start for t in new[1])))
                out.append(Clause(USER, "USES", old[0], 0.7, f"{PAST_PREFIX}, switched to {new[0].name}",
                                  tuple(t.start for t in old[1])))
                return out
        return out

    def _personal(self) -> list[Clause]:
        out: list[Clause] = []
        s = self.s
        for nuance, regex in PLACE_RULES:
            for match in regex.finditer(s.text):
                name = match.group("obj")
                if name.lower() in GAZETTEER or self.speaker_subject(match.start()) is None:
                    continue
                out.append(Clause(USER, "RELATES_TO", Node(snake_id(name), "Concepts", name), 0.65, nuance,
                                  self._starts(match.start("obj"), match.end("obj"))))
        for regex, pet in PERSON_RULES:
            for match in regex.finditer(s.text):
                name, kind = match.group("obj"), match.group("kind").lower()
                if name.lower() in GAZETTEER or name.lower() in NOT_NAMES:
                    continue
                label = "Concepts" if pet else "Identities"
                out.append(Clause(USER, "RELATES_TO", Node(snake_id(name), label, name), 0.65,
                                  f"{'has a ' if pet else ''}{kind}" if pet else f"{kind}",
                                  self._starts(match.start("obj"), match.end("obj"))))
        return out

    def _starts(self, start: int, end: int) -> tuple[int, ...]:
        return tuple(t.start for t in self.s.toks if start <= t.start < end)
