"""What the offline extractor recognises: confidence bands, word lists and the trigger patterns of each
relation (a trigger's match ends where its object begins)."""
from __future__ import annotations

import re


# Honest confidences. Bands: an explicit pattern whose object is a gazetteer tool 0.8-0.9; a pattern
# whose object is not in the gazetteer 0.6-0.7; co-mention only 0.3-0.4, below the 0.5 retrieval floor
# (S6.4) by design, so it only becomes visible if an LLM extraction later states it.
CONFIDENCE: dict[str, float] = {
    "explicit_tool": 0.85,  # "I use Docker", "struggling with Kafka", "interested in Rust"
    "inferred_tool": 0.80,  # "rewriting the payments service in Go" (tool introduced by in/with/on)
    "strong_pattern": 0.70,  # "working on the payments service", "our client, Prescott Data,"
    "pattern": 0.65,  # "struggling with pgxpool settings", "I prefer small PRs", "I am patient"
    "weak_pattern": 0.60,  # "I'm building a chess engine for Maria", "working on my thesis"
    # Below the retrieval floor: readings that were mostly wrong on real chat (LoCoMo user turns): a habit
    # ("I usually walk", "I always feel") and "working on" an object that is neither a project nor a name
    # ("working on building up confidence"). Written, so a later surer observation can confirm them.
    "unsure_pattern": 0.45,
    "co_mention": 0.35,  # two tools named in one sentence
    "parsed_use": 0.55,  # a tool in a first-person clause no pattern read, judged a use by the parse
    "parsed_phrase": 0.55,  # a struggle, interest or project no pattern read, found in the speaker's clause by the parse
    "mention": 0.35,  # the speaker names a tool with no relation we can read: recorded, below the floor
}
PRONOUN_PENALTY = 0.1  # an object read through "it" ("I use it all day"): the antecedent is a guess
THIRD_PARTY_PENALTY = 0.05  # the subject is a named person, not the (first-person) speaker
HEDGED_CAP = 0.45  # questions and hedges ("maybe", "thinking about", "?") stay below the retrieval floor
MAX_OBJECT_WORDS = 5
MAX_NUANCE_CHARS = 240

PROJECT_WORDS = frozenset(
    """service services microservice project projects app apps application repo repository platform
    website site api apis library lib sdk cli bot pipeline pipelines dashboard backend frontend plugin
    extension engine system codebase monorepo product startup tool prototype mvp portal tracker game
    """.split()
)
RELATION_NOUNS = frozenset(
    """wife husband partner friend friends colleague colleagues coworker coworkers co-worker boss manager
    brother sister mom mum mother dad father son daughter kid kids children child teammate teammates
    roommate girlfriend boyfriend cousin neighbour neighbor mentor student students teacher team company
    family department neighbours neighbors parents siblings cousins brothers sisters sons daughters
    grandparents client clients customer customers""".split()
)
FIRST_PERSON_TOKENS = frozenset(
    """i i'm i've i'd i'll im ive we we're we've we'd we'll my our me us myself ourselves""".split()
)
OTHER_PARTY_TOKENS = frozenset(
    """you you're you've you'd you'll your yours assistant agent bot chatbot he she they he's she's
    they're his their him them it it's""".split()
)
NEGATORS = frozenset(
    """not no never don't dont doesn't didn't isn't aren't wasn't won't stopped quit longer without
    hardly barely""".split()
)
HEDGES = re.compile(
    r"\b(?:maybe|might|perhaps|possibly|considering|consider|wondering|whether|thinking about|"
    r"thinking of|not sure|unsure|should (?:i|we)|could (?:i|we)|would it|planning to evaluate|"
    # irrealis: a condition, a supposition, a plan or temptation to change tools is no fact yet
    # "if it helps", "if that matters": a courtesy, not a condition on the fact
    r"if(?!\s+(?:that|it|this)\s+(?:matters|helps|makes\s+a\s+difference)|\s+you\s+(?:need|want|care|ask|must))|"
    r"unless|suppose|supposing|hypothetically|in theory|what if|in case|could|tempted|debating|eyeing|"
    r"on the fence|toying with|weighing|imagine|assuming|in a world where|say\s+(?:i|we)\s+(?:was|were|used|had|did|switched|moved)|"
    r"(?:'d|would)\s+(?:love|like)\s+to\s+(?:use|try|switch|move|start)|wish\s+(?:i|we)|might\s+try|"
    r"(?:plan|plans|planning|going|want|wants|wanted|hoping|hope|need|needs)\s+to\s+(?:switch|move|migrate|"
    r"try\s+out|adopt|evaluate|look\s+at|start\s+using|use))\b",
    re.IGNORECASE,
)
# Where an object phrase ends: prepositions and clause words (after them comes context, not the object).
BOUNDARY_WORDS = frozenset(
    """for in at to because since when while so but which that who whom whose where with from by after
    before until if as than on into onto via during over under per like though although unless whereas
    now anymore lately recently again too also today currently nowadays daily every these right
    instead especially mostly mainly this last next all every lot directly heavily together yesterday
    tonight tomorrow ago anyway honestly properly better a an the there here tbh lol haha lmao imo imho btw
    fwiw ngl atm no person fan guy girl shop""".split()
) | FIRST_PERSON_TOKENS | OTHER_PARTY_TOKENS
ITEM_SEPARATORS = frozenset({"and", "or", "nor", "plus", "&"})
LEADING_FILLER = frozenset(
    """the a an my our your his her their its this that these those some more about any lots lot of
    much many how other new own certain is are was were""".split()
)
TRAITS = (
    "detail-oriented", "detail oriented", "self-taught", "hands-on", "risk-averse", "visual learner",
    "night owl", "early riser", "morning person", "easily distracted", "patient", "impatient",
    "methodical", "meticulous", "pragmatic", "curious", "perfectionist", "organised", "organized",
    "disorganised", "disorganized", "careful", "cautious", "impulsive", "introverted", "introvert",
    "extroverted", "extrovert", "shy", "anxious", "optimistic", "pessimistic", "skeptical", "sceptical",
    "stubborn", "ambitious", "competitive", "creative", "analytical", "procrastinator", "workaholic",
    "minimalist", "frugal", "vegan", "vegetarian", "forgetful", "persistent", "independent",
    "collaborative", "direct", "blunt", "left-handed", "colorblind", "colourblind",
)
IDENTIFIER = re.compile(r"^(?:[a-z]+[A-Z]\w*|\w+_\w+|[\w-]+\.[a-z]{1,4}|\w*\d\w*)$")
HARD_BREAK = re.compile(r"[;:!?()\[\]\"]|\.(?=\s|$)|\s-\s")
SOFT_BREAK = re.compile(r"[,/&]")


def ignorecase(pattern: str) -> re.Pattern[str]:
    """A case-blind pattern: the offline extractor's vocabularies and cue tables are written lower-case."""
    return re.compile(pattern, re.IGNORECASE)


_rx = ignorecase  # the short name the tables below (and the clause readers') use


# Triggers: (relation, regex, kind). A trigger's match ends where its object begins.
STRUGGLE = _rx(
    r"\b(?:struggl(?:e|es|ed|ing)\s+with|stuck\s+(?:on|with)|(?:problems?|issues?|trouble|difficulty|"
    r"a\s+hard\s+time)\s+(?:with|getting)|(?<![\w-])fighting(?:\s+with)?|confused\s+(?:by|about)|"
    r"(?:can't|cannot|can\s+not|couldn't|could\s+not)\s+(?:get(?!\s+(?:a\s+|the\s+)?(?:handle|hang|grip)\b)|"
    r"figure\s+out|make))\s+"
)
INTEREST = _rx(
    r"(?:\b(?:want(?:s|ed)?|would\s+(?:really\s+)?like|hop(?:e|es|ing)|keen|eager|excited|plan(?:s|ning)?)|"
    r"'d\s+(?:really\s+)?like|'m\s+(?:keen|eager))\s+to\s+(?:learn|study|explore|try(?:\s+out)?|understand|"
    r"dig\s+into|get\s+into|get\s+better\s+at)(?:\s+more)?(?:\s+about)?\s+|"
    r"\b(?:interested\s+in|curious\s+about|fascinated\s+by|intrigued\s+by|learning\s+about|"
    r"reading\s+up\s+on|getting\s+into|learning(?!\s+(?:about|to)\b))\s+"
)
PREFER = _rx(r"\b(?:prefer|prefers|preferred|preferring)\s+(?:to\s+)?")
HABIT = re.compile(r"(?:\bI|\b[Ww]e|\b[Tt]he\s+user)\s+(always|never|usually|tend\s+to)\s+")
TRAIT = _rx(
    r"(?:\bam|'m|\bis|\bare|'re|\bbeen|\bbe|\bconsider\s+myself|\bconsiders\s+(?:him|her|them)sel(?:f|ves))"
    r"\s+(?:(?:a|an|very|quite|really|pretty|fairly|extremely|super|naturally|generally|usually|"
    r"always|rather|somewhat|bit|of|kind)\s+)*(" + "|".join(re.escape(t) for t in sorted(TRAITS, key=len, reverse=True))
    + r")\b(?!\s+(?:about|to|how|whether|if|why|what)\b)"
)
USED_TO = ignorecase(r"\bused\s+to\b")  # "I used to use Jenkins": a past use, for the change rules
SET_ASIDE = ignorecase(r"\b(?:instead\s+of|rather\s+than)\s+$")  # right before a trigger: not the speaker's
USES = _rx(  # "I could use some help" is a need, not a use
    r"\b(?<!could\s)(?<!would\s)(?<!can\s)(?<!might\s)(?:use|uses|using|used(?!\s+to\b)|utili[sz]e|utili[sz]es|utili[sz]ing|rel(?:y|ies|ying)\s+on|"
    r"built\s+(?:with|on|in)|build(?:s|ing)?\s+with|written\s+in|writ(?:e|es|ing)\s+(?:it\s+)?in|"
    r"wrote\s+(?:it\s+)?in|cod(?:e|es|ed|ing)\s+in|programm?(?:ing)?\s+in|"
    r"switch(?:ed|ing)?\s+to|mov(?:e|ed|ing)\s+to|migrat(?:e|ed|ing)\s+to|run(?:s|ning)?\s+on|"
    r"deploy(?:s|ed|ing)?\s+(?:on|to)|adopt(?:ed|ing)?|went\s+with|going\s+with|cho(?:se|osing)|picked)\s+"
)
# Triggers that are ordinary English too ("moved to Berlin"): they only count with a gazetteer object.
USES_NEEDS_TOOL = _rx(r"^(?:switch|mov|migrat|run|deploy|adopt|went|going|cho|picked)")
WORK = _rx(
    r"\b(?:work(?:s|ed|ing)?\s+on|build(?:s|ing)?|built|develop(?:s|ed|ing)?|rewrit(?:e|es|ing)|rewrote|"
    r"refactor(?:s|ed|ing)?|maintain(?:s|ed|ing)?|ship(?:s|ped|ping)?|launch(?:es|ed|ing)?|"
    r"design(?:s|ed|ing)?|implement(?:s|ed|ing)?|prototyp(?:e|es|ed|ing)|creat(?:e|es|ed|ing)|"
    r"migrat(?:e|es|ed|ing))\s+"
)
WORK_ON = _rx(r"^work")
CLIENT_EXPLICIT = _rx(r"\b(?:client|customer)s?\s*,?\s+")
CLIENT_FOR = _rx(r"\b(?:for|on\s+behalf\s+of)\s+")
TOOL_PREPOSITIONS = frozenset({"in", "with", "on", "using", "via", "onto", "into"})
DETERMINERS = frozenset("the a an this that these those my our your his her their its".split())
OBJECT_MARKERS = frozenset(
    """in with on for to at from by about into onto of via over under use uses write writes build builds
    learn learns like likes love loves prefer prefers try tries chose picked adopted told met hired called
    asked helped off left quit ditched dropped replaced than""".split()
)
