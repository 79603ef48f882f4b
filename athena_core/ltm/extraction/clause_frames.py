"""A light clause reader for the offline extractor: generalises beyond the phrasings its chat rules name.

A sentence is cut into clauses (at ; : dashes, and commas that open a new subject). In each clause a
cue from a verb-class lexicon (`CUES`: use, work on / own, struggle, learn / like, leave / replace) names
the relation, and the object is chunked where the cue's class says it is:

* `after`: the noun phrase right after the cue, up to a clause boundary ("I've standardised on Zed for
  everything new", "I always get tangled up in time zone handling"); the clause's subject must be the
  speaker (the nearest subject before the cue: not "you", "my colleague Priya", "he").
* `front`: the clause's fronted noun phrase, before its first verb, when the cue sits in the predicate
  ("Go is what I write everything in", "Flaky tests give me a lot of trouble", "Zed is open on my screen
  all the time", "Category theory is something I'd really like to explore"). A pronoun there ("it") is
  the turn's antecedent, written lower.

Negated clauses ("I don't use", "X isn't a struggle anymore") and hypotheticals ("if I ever use X") yield
nothing; questions and hedges are capped by the caller. Each relation checks its object's shape (a tool
is a gazetteer term or a name; a project ends in a project word or is a name; a problem or interest is a
short noun phrase with no person in it), which is what keeps precision on real chat. Readings here are
written at `FRAME_CONFIDENCE`, below the named patterns: a generalised reading is a surer guess than a
mention, a weaker one than a phrasing we wrote a rule for.

A clause that leaves one tool ("I gave up on A", "I'm done with A") beside a clause that uses another
("B is what I use now", "it's all B from here"), or "B replaced A", is a change of value: both edges,
the old one marked `PAST_PREFIX` (stamped just before its turn).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from athena_core.ltm.extraction.normalisation import PAST_PREFIX
from athena_core.ltm.extraction.offline_vocabulary import (
    ignorecase as _rx,
    FIRST_PERSON_TOKENS,
    IDENTIFIER,
    NEGATORS,
    OTHER_PARTY_TOKENS,
    PROJECT_WORDS,
    SET_ASIDE,
    RELATION_NOUNS,
    TRAITS,
    USED_TO,
)
from athena_core.ltm.extraction.summary_sentence import Node, SummarySentence, USER
from athena_core.models.ontology import snake_id
from athena_core.text.gazetteer import GAZETTEER
from athena_core.text.stopwords import STOPWORDS
from athena_core.text.tokens import Token

FRAME_CONFIDENCE = 0.6  # a generalised reading: above the retrieval floor, below the named patterns
SWITCH_NEW_CONFIDENCE = 0.75
SWITCH_OLD_CONFIDENCE = 0.65
LONE_LEAVE_CONFIDENCE = 0.45  # "I gave up on Jenkins" alone: a past use, recorded below the floor
PRONOUN_PENALTY = 0.1
MAX_FRONT_WORDS = 5
MAX_TOPIC_WORDS = 5


@dataclass(frozen=True)
class Cue:
    """A verb-class cue: its relation, where its object is (`after` the cue or `front` of the clause)."""

    relation: str
    regex: re.Pattern[str]
    position: str
    strict: bool = False  # a cue people take as objects too ("stick with Jon"): a USES object must be a known tool


_ME = r"(?:me|us)"
_MY = r"(?:my|our)"
_SOME = r"(?:[\w'-]+\s+){0,3}?"  # up to three filler words ("really", "a lot of", "pretty much")


def _cleft(verbs: str) -> re.Pattern[str]:
    """A pseudo-cleft whose object follows its copula: "the thing I keep coming back to is X", "something
    I'm drawn to lately is X", "the project I'm currently on is X"."""
    return _rx(r"\b(?:the\s+(?:\w+\s+)?(?:thing|things|tool|project|one|part|area|topic|subject|app|editor|stuff|bit)|"
               r"something|what|one\s+thing|the\s+only\s+thing)\s+(?:that\s+)?(?:I|I'm|I've|I'd|I\s+am|I\s+have|we|"
               r"we're)\s+(?:\w+\s+){0,3}?(?:" + verbs + r")\s+(?:[\w'-]+\s+){0,4}?(?:is\s+(?:probably|likely|definitely)"
               r"(?:\s+going\s+to\s+be)?|is|has\s+been|would\s+be|will\s+be)\s+")


# Relation cues. USES / WORKS_ON objects are checked for shape (tool / project); topics are free phrases.
CUES: tuple[Cue, ...] = (
    Cue("USES", _cleft(r"use|using|used|reach\s+for|rely\s+on|depend\s+on|live\s+in|work\s+in|work\s+with|open|"
                       r"(?:keep\s+)?(?:coming|going)\s+back\s+to|come\s+back\s+to|go\s+back\s+to"), "after"),
    Cue("WORKS_ON", _cleft(r"work(?:ing)?\s+on|on|building|build|responsible\s+for|own|lead|maintain|assigned\s+to|"
                           r"spend\s+(?:most\s+of\s+)?my\s+\w+\s+on"), "after"),
    Cue("STRUGGLES_WITH", _cleft(r"struggle\s+with|struggling\s+with|fight(?:ing)?\s+with|get\s+right|"
                                 r"bad\s+at(?:\s+dealing\s+with)?|hate|dread|stuck\s+on|figure\s+out|trip\s+over|"
                                 r"wrap\s+my\s+head\s+around"), "after"),
    Cue("EXPRESSED_INTEREST", _cleft(r"drawn\s+to|curious\s+about|interested\s+in|want\s+to\s+(?:learn|study|explore)|"
                                     r"dying\s+to\s+learn|keen\s+on|fascinated\s+by|love\s+to\s+learn|into"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:my|our)\s+(?:\w+\s+)?(?:pain\s+point|headache|struggle|problem|nemesis|weak\s+spot|"
                              r"bottleneck|frustration|bugbear)\s+(?:\w+\s+){0,2}?(?:is|has\s+been|are)\s+|"
                              r"\bwhat(?:'s|\s+has)\s+been\s+(?:killing|bugging|annoying|frustrating|tripping\s+up|"
                              r"driving\s+me\s+(?:nuts|crazy|mad)|eating)\s+(?:me\s+)?(?:\w+\s+)?is\s+|\bwhat\s+(?:kills|bugs|"
                              r"annoys|frustrates|trips\s+up|drives\s+me\s+(?:nuts|crazy|mad))\s+(?:me\s+)?(?:\w+\s+)?is\s+"),
        "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:lost|clueless|hopeless|useless|helpless)\s+when\s+it\s+comes\s+to\s+|"
                              r"\b(?:losing|lose|lost)\s+my\s+mind\s+(?:over|with)\s+|\b(?:pulling|tearing)\s+my\s+hair\s+"
                              r"out\s+(?:over|about|with)\s+|\bbanging\s+my\s+head\s+against\s+(?:the\s+wall\s+)?"
                              r"(?:over|with|on)\s+"), "after"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:my|our)\s+(?:next|latest|current|new)\s+(?:rabbit\s+hole|obsession|hobby|"
                                  r"side\s+quest|thing\s+to\s+learn|learning\s+project)\s+(?:is\s+(?:probably\s+|likely\s+)?going\s+to\s+be|"
                                  r"will\s+(?:probably\s+)?be|might\s+be|could\s+be|is)\s+"),
        "after"),
    Cue("WORKS_ON", _rx(r"\b(?:been\s+)?(?:working|worked)\s+on\s+|\bbuilding\s+out\s+"), "after"),
    # USES, object after
    Cue("USES", _rx(r"\b(?:use|uses|using|used)\b(?!\s+to\b)\s*"), "after"),
    Cue("USES", _rx(r"\b(?:rel(?:y|ies|ied|ying)|depend(?:s|ed|ing)?|count(?:s|ed|ing)?|lean(?:s|ed|ing)?)\s+"
                    r"(?:heavily\s+|mostly\s+|entirely\s+)?on\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:standardi[sz](?:e|es|ed|ing)|settled|consolidated|converged)\s+on\s+"), "after"),
    Cue("USES", _rx(r"\b(?:been\s+)?living\s+in\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:run|runs|running|ran)\s+(?:entirely\s+|mostly\s+)?on\s+"), "after"),
    Cue("USES", _rx(r"\b(?:do|does|did|doing|write|writes|wrote|writing|code|build|keep|keeps|manage|run|track|"
                    r"draft|design|edit|take|plan|host|deploy)\s+(?:basically\s+|pretty\s+much\s+|literally\s+)?(?:all|most|nearly\s+all|almost\s+all|pretty\s+much\s+all|"
                    r"much|everything)\s+(?:of\s+)?(?:my\s+|our\s+)?(?:[\w'-]+\s+){0,3}?(?:in|with|on|using)\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:everything|all\s+(?:of\s+)?my\s+(?:[\w'-]+\s+)?[\w'-]+|my\s+whole\s+[\w'-]+|our\s+whole\s+[\w'-]+)\s+"
                    r"(?:runs|lives|live|run|happens|is\s+done|gets\s+done|is\s+built|goes|is)\s+(?:\w+\s+)?(?:on|in|with|through|"
                    r"around)\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:I've|I\s+have|we've|we\s+have)\s+been\s+(?:on|with|using)\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:reach(?:es|ed|ing)?\s+for|comfortable\s+(?:with|in)|fluent\s+in|at\s+home\s+in|"
                    r"(?:built|centred|centered|based|organi[sz]ed)\s+around)\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:basically|practically|pretty\s+much|literally|more\s+or\s+less)\s+live\s+in\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:I|we)\s+(?:\w+\s+)?live\s+in\s+"), "after", True),  # a known tool only: "I live in Lisbon" is a place
    # a known tool only: "I'm in Lisbon", "I work in Berlin" are places
    Cue("USES", _rx(r"\b(?:I|we)\s+(?:\w+\s+)?(?:work|code|write|build|program)\s+in\s+|\b(?:I'm|I\s+am|I've\s+been|"
                    r"I'll\s+be|we're)\s+(?:\w+\s+)?(?:stuck\s+|deep\s+|mostly\s+|always\s+)?(?:in|inside)\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:is|are|gets|get|got|was|were)\s+(?:\w+\s+)?(?:managed|run|built|done|handled|written|deployed|"
                    r"automated|provisioned|orchestrated|tracked)\s+(?:with|in|on|through|using)\s+"), "after", True),
    Cue("USES", _rx(r"\bnothing\s+(?:beats|comes\s+close\s+to|compares\s+to|tops)\s+|\b(?:love|enjoy|like)\s+"
                    r"(?:working|coding|writing|building)\s+(?:in|with)\s+|\bcan't\s+imagine\s+(?:[\w'-]+\s+){0,4}?"
                    r"without\s+|\b(?:sits|built|running|runs)\s+on\s+top\s+of\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:most|all|much)\s+of\s+(?:what\s+I\s+do|my\s+(?:work|day|time|coding))\s+(?:[\w'-]+\s+){0,2}?"
                    r"(?:happens|is\s+done|goes\s+on|lives|takes\s+place)\s+in\s+|\b" + _MY + r"\s+(?:setup|stack|toolkit|"
                    r"toolchain|workflow)\s+is\s+(?:basically\s+|mostly\s+|just\s+|pretty\s+much\s+)?"), "after", True),
    Cue("USES", _rx(r"\b(?:handle|manage|run|do|build|deploy|track|write|automate|provision)\s+(?:all\s+)?" + _MY +
                    r"\s+(?:[\w'-]+\s+){0,2}?(?:with|in|on|using|through)\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:it's|it\s+is)\s+(?=\S+(?:\s+\S+)?\s+(?:all\s+the\s+way|for\s+(?:me|everything|now)|now|"
                    r"these\s+days)\b)"), "after", True),
    # arriving at a tool: the new value of a change when a clause beside it leaves the old one
    Cue("USES", _rx(r"\b(?:moved|moving|switched|switching|migrated|migrating|jumped|went|gone|going|came|come|"
                    r"changed|converted|defected|transitioned|ported)\s+(?:(?:everything|all\s+my\s+\w+|my\s+\w+|it\s+all|"
                    r"all\s+of\s+it|the\s+whole\s+\w+)\s+)?(?:over\s+|across\s+|back\s+)?(?:to|onto)\s+|"
                    r"\bmade\s+the\s+(?:jump|switch|move|leap|change)\s+(?:over\s+)?to\s+|\b(?:went|go|going)\s+with\s+|"
                    r"\band\s+onto\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:I'm|I\s+am|we're|we\s+are)\s+(?:fully\s+|now\s+|all\s+|firmly\s+|happily\s+)?on\s+"),
        "after", True),
    Cue("USES", _rx(r"\b(?:I'm|I\s+am|we're|we\s+are)\s+(?:now\s+|really\s+|totally\s+)?all\s+about\s+|"
                    r"\bday\s+in,?\s+day\s+out,?\s+(?:it's|it\s+is|I'm\s+(?:in|on|using)|I\s+use)\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:can't|cannot|couldn't)\s+(?:really\s+|honestly\s+)?(?:do\s+my\s+job|get\s+(?:anything|much)\s+done|"
                    r"work|function|code|survive|live|ship\s+anything|get\s+through\s+(?:a|the|my)\s+(?:work\s*)?day)\s+without\s+"),
        "after", True),
    Cue("USES", _rx(r"\b(?:I'm|I\s+am|I've\s+been)\s+(?:basically\s+|mostly\s+|always\s+)?in\s+(?=\S+(?:\s+\S+)?\s+"
                    r"(?:(?:pretty\s+much|basically|nearly|almost|literally|practically)\s+)?(?:all\s+day|"
                    r"every\s+(?:single\s+)?day|most\s+of\s+the\s+day|all\s+the\s+time|day\s+and\s+night))"), "after", True),
    Cue("USES", _rx(r"\beverything\s+I\s+(?:build|write|make|do|ship|run)\s+(?:is|gets\s+built|is\s+written|runs|lives|goes)\s+"
                    r"(?:\w+\s+)?(?:in|on|with|through)\s+"), "after", True),
    Cue("USES", re.compile(r"\b(?:[Ii]'m|[Ii]\s+am|[Ii]'ve\s+been|[Ii]'ve\s+always\s+been|[Ww]e're|[Ww]e\s+are)\s+(?:a|an)\s+(?:huge\s+|big\s+|total\s+|"
                           r"longtime\s+|long-time\s+|devoted\s+|loyal\s+|die-hard\s+|heavy\s+|daily\s+|regular\s+|committed\s+)?" + r"(?P<obj>[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*){0,2})"
                           r"\s+(?:person|guy|girl|fan|user|shop|developer|dev|nerd|devotee|convert|loyalist)\b"), "after"),
    Cue("USES", re.compile(r"\b(?:got|have|keep|leave)\s+" + r"(?P<obj>[A-Z][\w.+#-]*(?:\s+[A-Z][\w.+#-]*){0,2})" + r"\s+open\b"), "after"),
    Cue("USES", _rx(r"\b(?:open|launch|fire\s+up|start\s+up)\s+(?=\S+(?:\s+\S+)?\s+(?:first\s+thing|every\s+(?:morning|day)|"
                    r"the\s+moment))"), "after", True),
    Cue("USES", _rx(r"\b(?:now|these\s+days|nowadays)\s+(?:it's|it\s+is|I'm\s+on|I\s+am\s+on|I'm\s+using)\s+"), "after", True),
    Cue("USES", _rx(r"\b(?:work|works|working|worked|code|coding|write|writing|wrote|build|building)\s+"
                    r"(?:everything|all\s+day|mostly|exclusively|only|daily|full[-\s]time)\s+(?:in|with|on)\s+"), "after"),
    Cue("USES", _rx(r"\b(?:swear(?:s|ing)?\s+by|stick(?:ing)?\s+with|stay(?:ing|ed)?\s+(?:with|on)|"
                    r"(?:went|gone|going)\s+all[-\s]in\s+on|all[-\s]in\s+on|hooked\s+on)\s+"), "after", True),
    Cue("USES", _rx(r"\b" + _MY + r"\s+(?:main|primary|default|usual|favou?rite|preferred|daily|trusty)\s+"
                    r"(?:tool|editor|ide|language|stack|setup|database|db|framework|platform|app|driver|"
                    r"weapon)\s+(?:is|has\s+been|these\s+days\s+is|right\s+now\s+is)\s+"), "after"),
    Cue("USES", _rx(r"\b" + _MY + r"\s+go-to\s+(?:[\w'-]+\s+){0,5}?(?:is|has\s+been)\s+"), "after"),
    Cue("USES", _rx(r"\b(?:mostly|mainly|primarily|usually|largely)\s+(?:work|code|write|build)\s+(?:in|with)\s+"), "after", True),
    Cue("USES", _rx(r"\b" + _MY + r"\s+(?:tool|editor|language|weapon|stack|framework)\s+of\s+choice\s+"
                    r"(?:is|has\s+been)\s+"), "after"),
    Cue("USES", _rx(r"\b(?:it's|it\s+is|it'll\s+be|everything\s+is)\s+(?:all|only|just|nothing\s+but)\s+"), "after", True),
    # USES, object in front: "X is open on my screen", "X is what I use", "X never leaves my dock"
    Cue("USES", _rx(r"\b(?:open|running|up)\s+on\s+" + _MY + r"\s+(?:screen|machine|laptop|desktop|monitor|"
                    r"computer|phone|dock)"), "front"),
    Cue("USES", _rx(r"\b(?:what|the\s+(?:tool|thing|one|language|editor|app|stack))\s+(?:that\s+)?(?:I|we)"
                    r"(?:'ve|\s+have)?\s+(?:\w+\s+)?(?:use|used|using|reach\s+for|rely\s+on|depend\s+on|live\s+in|"
                    r"work\s+in|work\s+with|write|code\s+in|build\s+with|run|go\s+with|pick)\b"), "front"),
    Cue("USES", _rx(r"\bthe\s+(?:first|last)\s+thing\s+(?:that\s+)?I\s+(?:open|launch|start|fire\s+up|check|reach\s+for)\b"),
        "front"),
    Cue("USES", _rx(r"\b(?:all|everything|the\s+only\s+thing|something|a\s+thing|one\s+thing)\s+(?:that\s+)?I\s+"
                    r"(?:\w+\s+)?(?:use|need|run|touch|open)\b"),
        "front"),
    Cue("USES", _rx(r"\b(?:is|has\s+been|became|become|becomes|remains|stays)\s+(?:\w+\s+)?" + _MY + r"\s+(?:daily\s+driver|"
                    r"go-to|go\s+to|main\s+tool|bread\s+and\s+butter|workhorse|default|weapon\s+of\s+choice|"
                    r"tool\s+of\s+choice)"), "front"),
    Cue("USES", _rx(r"\b(?:part\s+of|in|central\s+to|core\s+to|at\s+the\s+(?:core|heart|centre|center)\s+of|"
                    r"a\s+fixture\s+in|a\s+staple\s+(?:of|in))\s+" + _MY + r"\s+(?:\w+\s+)?(?:setup|toolbox|"
                    r"toolkit|stack|workflow|toolchain)s?\b"), "front"),
    Cue("USES", _rx(r"\b(?:never|rarely|hardly\s+ever)\s+(?:leaves|closes|gets\s+closed\s+on)\s+" + _MY +
                    r"\s+(?:\w+\s+)?(?:dock|taskbar|screen|laptop|machine|toolbar|desktop|computer)"), "front"),
    Cue("USES", _rx(r"\b(?:I|we)\s+(?:can't|cannot|couldn't)\s+(?:work|function|code)\s+without\b"), "front"),
    Cue("USES", _rx(r"\bis\s+the\s+(?:backbone|foundation|heart|core)\s+of\s+(?:everything|all|most|much)\s+(?:of\s+)?"
                    r"(?:what\s+)?(?:that\s+)?(?:I|we)\b|\band\s+(?:I|me)\s+go\s+(?:way\s+)?back\b"), "front", True),
    Cue("USES", _rx(r"\b(?:does|handles|powers|runs)\s+(?:everything|all\s+of\s+my|most\s+of\s+my|the\s+job|"
                    r"it\s+all)\b"), "front"),
    Cue("USES", _rx(r"\bmy\s+(?:\w+\s+)?(?:of\s+choice|for\s+everything)\b"), "front"),
    Cue("USES", _rx(r"\b(?:gets|get|is|are)\s+used\s+(?:for|in|by)\b|\b(?:a\s+)?(?:joy|pleasure|dream|delight)\s+to\s+"
                    r"(?:use|work\s+(?:in|with))\b|\b(?:is|keeps)\s+acting\s+up\s+on\s+me\b|\bis\s+where\s+I\s+(?:spend|do|"
                    r"live|work)\b"), "front"),
    Cue("USES", _rx(r"\b(?:installed|set\s+up|open)\s+on\s+(?:every|each|all\s+of\s+my)\s+(?:machine|laptop|"
                    r"computer|device)s?"), "front"),
    # WORKS_ON, object after
    Cue("WORKS_ON", _rx(r"\b(?:I|we)\s+(?:\w+\s+)?(?:own|owned|co-own)\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:assigned|moved|put|staffed|seconded|transferred|drafted)\s+(?:on)?to\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:assigned|put|staffed|drafted)\s+on\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:responsible|accountable)\s+for\s+|\bin\s+charge\s+of\s+|\bthe\s+(?:owner|lead|"
                        r"maintainer|tech\s+lead)\s+(?:of|on|for)\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:lead|leads|leading|led|run|runs|running|maintain(?:s|ed|ing)?|look\s+after|"
                        r"looking\s+after|babysit(?:ting)?)\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:ship(?:s|ped|ping)?|push(?:es|ed|ing)?|writ(?:e|es|ing)|wrote|fix(?:es|ed|ing)?|"
                        r"build(?:s|ing)?|built|add(?:s|ed|ing)?)\s+(?:\w+\s+)?(?:features|code|changes|fixes|"
                        r"updates|releases|patches|pull\s+requests|prs|tickets)\s+(?:for|to|on|in|into)\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:contribut(?:e|es|ed|ing)|committing)\s+to\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:hack(?:s|ed|ing)?|tinker(?:s|ed|ing)?|grind(?:ing)?(?:\s+away)?|plugging\s+away)\s+on\s+|"
                        r"\btasked\s+with\s+|\bhead(?:s|ed|ing)?\s+up\s+|\bhelp(?:s|ed|ing)?\s+(?:to\s+)?(?:build|ship|"
                        r"develop|maintain|run)\s+|\b(?:part\s+of|on)\s+the\s+team\s+(?:behind|for|building|that\s+"
                        r"builds|on)\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:I'm|I\s+am|I've\s+been|we're|we\s+are)\s+(?:still\s+|now\s+|mostly\s+|back\s+)?on\s+"),
        "after"),
    Cue("WORKS_ON", _rx(r"\b(?:spend|spends|spent|spending|sink|sinking|put|putting|pour|pouring|devote|"
                        r"devoting)\s+" + _SOME + r"(?:time|days|hours|weeks|energy|effort|mornings|evenings|"
                        r"afternoons)\s+(?:\w+\s+)?(?:on|in|into|with)\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b" + _MY + r"\s+(?:days|weeks|time|work|job|focus|mornings|afternoons|evenings|"
                        r"workdays|life|calendar)\s+(?:is|are|has\s+been|have\s+been|revolves?|revolve)\s+"
                        r"(?:\w+\s+)?(?:all\s+)?(?:about|around|on|spent\s+on|taken\s+up\s+by|consumed\s+by|"
                        r"filled\s+with|dedicated\s+to|devoted\s+to|centred\s+on|centered\s+on)\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:busy|occupied|swamped|buried)\s+with\s+"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:person|guy|one|engineer|dev|developer|brains|name)\s+behind\s+|\bdeep\s+(?:in|into)\s+|"
                        r"\b(?:coding|hacking|grinding|chipping)\s+(?:away\s+)?(?:on|at)\s+|"
                        r"\bmy\s+(?:current\s+|main\s+|day\s+|big\s+)?(?:gig|project|assignment|role|mission|priority|job|day\s+job)\s+"
                        r"(?:is|has\s+been|these\s+days\s+is)\s+(?:mostly\s+|basically\s+|pretty\s+much\s+|all\s+)?"), "after"),
    Cue("WORKS_ON", _rx(r"\b(?:most|much|all|half|the\s+bulk|a\s+lot|the\s+majority)\s+of\s+" + _MY + r"\s+(?:time|"
                        r"week|weeks|day|days|energy|attention|hours|effort|work)\s+(?:\w+\s+)?(?:goes|go|went|is\s+"
                        r"going|gets\s+poured|is\s+poured|is\s+spent|gets\s+spent)\s+(?:to|into|on)\s+"), "after"),
    # WORKS_ON, object in front: "X is my baby", "X takes up most of my week", "X is what I work on"
    Cue("WORKS_ON", _rx(r"\b(?:is|has\s+been)\s+(?:basically\s+|pretty\s+much\s+)?" + _MY + r"\s+(?:baby|"
                        r"main\s+project|project|responsibility|main\s+focus|focus|day\s+job|thing|"
                        r"whole\s+job|world)\b"), "front"),
    Cue("WORKS_ON", _rx(r"\b(?:where|what)\s+I\s+(?:\w+\s+)?(?:spend|put|pour)\s+(?:most\s+of\s+)?my\s+(?:days|time|"
                        r"weeks|hours|energy)\b"), "front"),
    Cue("WORKS_ON", _rx(r"\b(?:takes|took|taking|eats|ate|eating|consumes|consuming|fills|occupies|swallows)\s+"
                        r"(?:up\s+)?(?:most|all|"
                        r"much|a\s+lot|the\s+bulk|half)\s+of\s+" + _MY), "front"),
    Cue("WORKS_ON", _rx(r"\b(?:what|the\s+(?:project|thing|one))\s+(?:that\s+)?(?:I|we)(?:'ve|\s+have|'m|\s+am)?"
                        r"\s+(?:been\s+)?(?:work(?:ing)?\s+on|own|maintain|lead|run|build(?:ing)?|spend|on)\b"), "front"),
    Cue("WORKS_ON", _rx(r"\b(?:keeps|kept|keeping)\s+me\s+busy\b|\bis\s+on\s+my\s+plate\b|\bpays\s+(?:the|my)\s+bills\b"),
        "front"),
    # STRUGGLES_WITH, object after
    Cue("STRUGGLES_WITH", _rx(r"\b(?:trouble|problems?|issues?|difficult(?:y|ies)|pain|headaches?|grief|"
                              r"a\s+(?:really\s+|very\s+|super\s+|real\s+)?(?:hard|rough|bad|tough)\s+time)\s+(?:with|around|getting|"
                              r"understanding|debugging|figuring\s+out)\s+"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:tangled|tied|bogged|hung|caught|mixed|twisted)\s+(?:up\s+)?(?:down\s+)?"
                              r"(?:in|with|on|by)\s+"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:fight(?:s|ing)?|fought|wrestl(?:e|es|ed|ing)|battl(?:e|es|ed|ing)|"
                              r"grappl(?:e|es|ed|ing)|struggl(?:e|es|ed|ing)|strain(?:ing)?)\s+(?:with|against)\s+"),
        "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:confused|baffled|stumped|frustrated|annoyed|tripped\s+up|"
                              r"defeated|beaten|puzzled)\s+(?:by|about|with|in|on)\s+"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:can't|cannot|couldn't|can\s+never|never\s+manage\s+to|still\s+can't)\s+"
                              r"(?:seem\s+to\s+)?(?:get\s+my\s+head\s+around|wrap\s+my\s+head\s+around|crack|"
                              r"figure\s+out|get\s+the\s+hang\s+of|make\s+sense\s+of|understand|debug|tame|solve|"
                              r"get\s+right|nail)\s+"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:hate|hates|hating|dread|dreads|dreading)\s+(?:dealing\s+with|working\s+"
                              r"with|debugging|touching|fixing)\s+"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:waste|wastes|wasting|wasted|lose|loses|losing|lost|burn|burns|burning|"
                              r"burned|burnt|sink|sank|sinking|sunk)\s+" + _SOME + r"(?:time|hours|days|"
                              r"afternoons?|mornings?|evenings?|weeks?|nights?|sleep|sanity)\s+(?:\w+\s+)?"
                              r"(?:on|to|in|with|over|fighting|debugging|chasing)\s+"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:stuck|blocked|stalled)\s+(?:on|by|with)\s+"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:never|still\s+haven't|haven't|have\s+not|not\s+yet)\s+(?:yet\s+)?(?:quite\s+|really\s+|fully\s+)?"
                              r"(?:got|gotten|get)\s+the\s+hang\s+of\s+"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:keep|kept|always)\s+(?:messing|screwing|botching|mixing)\s+up\s+|\b(?:dread|dreading|"
                              r"dreads)\s+"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:terrible|bad|awful|hopeless|useless|rubbish|weak|clumsy)\s+(?:at|with)\s+|"
                              r"\bsuck\s+at\s+|\b(?:fed\s+up|sick|tired)\s+(?:with|of)\s+|"
                              r"\bnever\s+(?:get|got|seem\s+to\s+get)\s+(?=\S+(?:\s+\S+){0,4}\s+right\b)"), "after"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:bane|nemesis|weak\s+spot|weak\s+point|achilles\s+heel|kryptonite)\s+"
                              r"(?:of\s+my\s+\w+\s+)?(?:is|has\s+been|are)\s+"), "after"),
    # STRUGGLES_WITH, object in front
    Cue("STRUGGLES_WITH", _rx(r"\b(?:is|are|was|were|has\s+been|have\s+been|remains|keeps\s+being)\s+"
                              r"(?:\w+\s+){0,3}?(?:struggle|pain|nightmare|headache|mess|slog|chore|mystery|bane|"
                              r"pain\s+point|time\s+sink|sore\s+spot|weak\s+spot|nemesis|kryptonite|"
                              r"hell|torture|minefield|uphill\s+battle|black\s+box|battle|fight|grind|weak\s+point|"
                              r"struggle\s+for\s+me|sore\s+point)\b"), "front"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:gives?|gave|giving|causes?|caused|causing)\s+" + _ME + r"\s+" + _SOME +
                              r"(?:trouble|grief|headaches?|problems?|pain|nightmares|a\s+hard\s+time|"
                              r"fits|hell|issues)"), "front"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:beats?|beating|beaten|kills?|killing|confuses|confusing|confused|"
                              r"baffles|baffling|frustrates|frustrating|annoys|bites|biting|bit|trips|tripping|"
                              r"tripped|drives|driving|haunts|haunting|defeats|defeating|eludes|escapes|"
                              r"stumps|wrecks|wrecking|breaks|breaking|puzzles|overwhelms|scares|loses|"
                              r"losing|exhausts|slows|slowing)\s+" + _ME + r"\b"), "front"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:is|are|feels?|seems?)\s+(?:\w+\s+)?(?:hard|difficult|tricky|tough|"
                              r"painful|confusing|frustrating|impossible|brutal|exhausting|maddening|"
                              r"over\s+my\s+head|beyond\s+me)\s+(?:for\s+me|to\s+me|to\s+get\s+right|"
                              r"to\s+debug|to\s+understand)?"), "front"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:has|had|have|keeps|leaves|left)\s+(?:me|us)\s+(?:\w+\s+)?(?:stumped|beat|beaten|"
                              r"confused|baffled|stuck|puzzled|pulling\s+my\s+hair|tearing\s+my\s+hair|frustrated|"
                              r"stressed|up\s+at\s+night|scratching\s+my\s+head)"), "front"),
    Cue("STRUGGLES_WITH", _rx(r"\btakes\s+me\s+(?:forever|ages|hours|days)|\bsource\s+of\s+(?:\w+\s+)?(?:pain|frustration|"
                              r"bugs|stress|grief|headaches|misery)|\b(?:the\s+)?(?:worst|hardest|most\s+painful|trickiest|"
                              r"scariest)\s+(?:part|bit|thing)\s+(?:of|about)\s+my\b"), "front"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:makes|made|making)\s+(?:me|us)\s+(?:want\s+to\s+(?:scream|quit|cry)|crazy|nuts|"
                              r"mad|miserable|cry|despair)|\b(?:keeps|kept)\s+(?:breaking|failing|crashing|blowing\s+up)"),
        "front"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:where|what)\s+I\s+(?:\w+\s+)?(?:waste|lose|struggle|get\s+stuck|sink|"
                              r"burn|fail|trip\s+up|mess\s+up|get\s+lost)\b"), "front"),
    Cue("STRUGGLES_WITH", _rx(r"\b(?:something|a\s+thing|the\s+thing|one\s+thing|what)\s+(?:that\s+)?I\s+"
                              r"(?:\w+\s+)?(?:struggle|fight|wrestle|battle|can't\s+get|never\s+get|hate)\b"), "front"),
    # EXPRESSED_INTEREST, object after
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:want|wants|wanted|wanting|wanna|dying|itching|keen|eager|love|like|hope|"
                                  r"hoping|plan|planning|mean|meaning|excited|aching|determined|going)\s+to\s+"
                                  r"(?:\w+\s+)?(?:learn|study|explore|understand|master|try|dig\s+into|get\s+into|"
                                  r"read\s+up\s+on|know|find\s+out|look\s+into|pick\s+up|get\s+good\s+at|"
                                  r"get\s+better\s+at|experiment\s+with|play\s+with|tinker\s+with|wrap\s+my\s+head\s+around|get\s+my\s+head\s+around|"
                                  r"get\s+to\s+grips\s+with)\s+"
                                  r"(?:more\s+|a\s+lot\s+|a\s+bit\s+|everything\s+|all\s+)?(?:about\s+)?"), "after"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:spend|spent|spending)\s+(?:my\s+|most\s+)?(?:weekends|evenings|free\s+time|"
                                  r"spare\s+time|nights|lunch\s+breaks)\s+(?:on|with|doing|learning|reading\s+about|"
                                  r"playing\s+with|studying)\s+"), "after"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:interest|interested|curious|curiosity|passion|passionate|fascination|"
                                  r"fascinated|obsession|obsessed|keen|hooked|intrigued|"
                                  r"soft\s+spot)\s+(?:in|about|by|with|on|for)\s+|\bdrawn\s+to\s+"), "after"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:really|totally|very|super|so|getting|got|been|deeply|seriously|"
                                  r"heavily|big\s+time)\s+into\s+(?!(?:a|an|trouble|the\s+car|the\s+habit)\b)"), "after"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:learning|studying|exploring|reading\s+(?:up\s+)?(?:on|about)|"
                                  r"researching|digging\s+into|diving\s+into|dabbling\s+in|teaching\s+myself|"
                                  r"looking\s+into|geeking\s+out\s+(?:on|about|over)|diving\s+(?:deep\s+)?into)\s+"
                                  r"(?:more\s+)?(?:about\s+)?"), "after"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:taking|doing|started|signed\s+up\s+for|enrolled\s+in)\s+(?:a|an|some|"
                                  r"my\s+first|another)\s+(?:\w+\s+)?(?:course|class|classes|workshop|lessons|"
                                  r"tutorial|bootcamp)s?\s+(?:on|in|about)\s+"), "after"),
    # EXPRESSED_INTEREST, object in front
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:fascinates|interests|intrigues|excites|attracts|captivates|"
                                  r"draws|fascinated|intrigued|excited|grabs|appeals\s+to|calls\s+to)\s+" + _ME + r"\b"),
        "front"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:something|a\s+thing|a\s+topic|a\s+subject|an\s+area|a\s+field|"
                                  r"what|one\s+thing)\s+(?:that\s+)?(?:I|I've|I'd|I'm)\s+(?:\w+\s+){0,3}?"
                                  r"(?:like|love|want|wanted|meant|meaning|hoping|hope|curious|keen|dying|"
                                  r"itching|plan|planning)\s+(?:to\s+)?(?:\w+\s+)?(?:explore|learn|study|"
                                  r"understand|dig|try|know|look|read|get|pick|master|dive)"), "front"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:has|have|had)\s+me\s+hooked|\b(?:is|are)\s+(?:\w+\s+)?(?:goal|dream|ambition|"
                                  r"wish|plan)\s+(?:of\s+mine|for\s+(?:this|next)\s+year)"), "front"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:sounds|seems|looks)\s+(?:\w+\s+)?(?:fun|interesting|exciting|fascinating|"
                                  r"cool|amazing)\s+to\s+(?:learn|explore|study|dig\s+into|try)|\b(?:is|are)\s+"
                                  r"(?:\w+\s+){0,2}?rabbit\s+hole"), "front"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:on|tops|top\s+of|at\s+the\s+top\s+of|high\s+on)\s+my\s+(?:\w+\s+)?"
                                  r"(?:list|radar|bucket\s+list|wishlist|wish\s+list|to-learn|to-do)"), "front"),
    Cue("EXPRESSED_INTEREST", _rx(r"\b(?:is|are|has|have|was|became|becomes)\s+(?:\w+\s+)?my\s+(?:new\s+|latest\s+)?(?:obsession|"
                                  r"rabbit\s+hole|hobby|passion|fascination|side\s+quest|thing\s+lately)"), "front"),
    Cue("EXPRESSED_INTEREST", _rx(r"\bI\s+(?:\w+\s+)?(?:find|found)\s+(?:it\s+)?(?:really\s+|so\s+|super\s+)?"
                                  r"(?:fascinating|intriguing|interesting|exciting)\b"), "front"),
)

# Words that may stand between a copula and a trait: articles, degree and frequency adverbs, hedges. Not
# verbs ("I'm using it to stay organized") and not comparatives ("I promised to be more careful": a state).
TRAIT_FILLERS = frozenset("""a an the very quite really pretty fairly extremely super naturally generally usually
    always rather somewhat bit of kind sort such so too total complete born real little by nature just probably
    definitely honestly genuinely incredibly terribly hopelessly chronically notoriously typically also still
    type bit huge massive absolute hardcore serious""".split())
# A trait the speaker ascribes to themselves, with up to three words between the copula and the trait
# ("I tend to be a perfectionist", "I guess I'm kind of a night owl by nature").
TRAIT_FRAME = _rx(
    r"(?:\bam|'m|\bbe|\bbeen|\bbecome|\bbecame|\bturned\s+into|\bgrown\s+into|\bdescribe\s+myself\s+as|"
    r"\bsee\s+myself\s+as|\bknown\s+as|\bknown\s+for\s+being|\bcall\s+me|\bcalls\s+me|\bcalled\s+me|"
    r"\b(?:have|has|got|'ve\s+got)(?=\s+(?:a|an)\s+(?:\w+\s+)?[\w-]+\s+(?:streak|side|personality|nature|"
    r"tendency|mindset)))\s+(?:(?:" + "|".join(sorted(TRAIT_FILLERS)) + r")\s+){0,4}(?P<trait>"
    + "|".join(re.escape(t) for t in sorted(TRAITS, key=len, reverse=True)) + r")\b(?!\s+(?:about|to|how|whether|if|"
    r"why|what|people|person|friend|colleague|partner|customers?|clients?)\b)"
)

# What "instead of X-ing" sets aside is something never had: "instead of learning Rust, I use Go" is no change.
NOT_HAD = (r"(?:learning|studying|trying|exploring|picking\s+up|getting\s+into|considering|evaluating|buying|"
           r"paying\s+for|waiting\s+for|wrestling\s+with|struggling\s+with|fighting\s+with)\b")
# "instead of X" in a choice ("we decided to use pgx instead of an ORM", "we went with Postgres rather than
# MongoDB", "I'll use Poetry instead of pip") sets aside an option, never a value the speaker had.
SET_ASIDE_WORDS = ("instead", "rather", "in place")  # how LEAVE's set-aside alternative opens
CHOICE = _rx(r"\b(?:decided|decide|deciding|chose|choose|choosing|picked|went\s+with|go\s+with|going\s+with|"
             r"opted|opting|settled\s+on|will|going\s+to|gonna|plan(?:ning)?\s+to|want\s+to|would\s+rather|"
             r"prefer(?:red)?|recommend(?:ed)?)\b|'ll\b")
# Leaving a value and replacing one: parts of a change.
LEAVE = _rx(
    r"\b(?:gave\s+up\s+(?:on\s+)?|giving\s+up\s+(?:on\s+)?|(?:I'm|I\s+am|we're|I'm\s+so|I'm\s+totally)\s+"
    r"(?:done|finished|through)\s+with\s+|quit\s+|stopped\s+using\s+|ditched\s+|dropped\s+|abandoned\s+|"
    r"got\s+rid\s+of\s+|retired\s+|moved\s+(?:on\s+|away\s+)?(?:from|off)\s+|switched\s+(?:away\s+)?(?:from|off)\s+|"
    r"ditching\s+|dropping\s+|quitting\s+|leaving\s+|moving\s+(?:away\s+)?(?:from|off)\s+|got\s+off\s+|"
    r"migrated\s+(?:away\s+)?(?:off|from)\s+|no\s+longer\s+use\s+|phased\s+out\s+|walked\s+away\s+from\s+|"
    r"broke\s+up\s+with\s+|turned\s+my\s+back\s+on\s+|said\s+goodbye\s+to\s+|uninstalled\s+|"
    r"(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?!" + NOT_HAD + r")|(?:haven't|have\s+not|never)\s+(?:touched|opened|used)\s+"
    r"(?=\S+(?:\s+\S+)?\s+since)|used\s+to\s+(?:use|be\s+on|work\s+in|live\s+in|love|swear\s+by)\s+|"
    r"used\s+to\s+be\s+(?:a|an)\s+(?=\S+(?:\s+\S+)?\s+(?:person|user|fan|guy|girl|shop|developer|dev)\b)|"
    r"after\s+(?:years|months|a\s+while|ages|a\s+decade|a\s+long\s+time)\s+(?:on|with|of|in)\s+(?:using\s+)?|"
    r"(?:'ve|have)\s+left\s+(?=\S+(?:\s+\S+)?\s+behind\b)|no\s+more\s+|(?:never|won't|not\s+going\s+to|don't\s+think\s+I'll|"
    r"can't\s+see\s+myself)\s+(?:ever\s+)?go(?:ing)?\s+back\s+to\s+|stopped\s+(?:using|with)\s+|"
    r"was\s+(?:a|an)\s+(?=\S+(?:\s+\S+)?\s+(?:person|user|fan|guy|girl|shop|developer|dev)\b)|(?:not|no\s+longer)\s+(?:on|using|in)\s+"
    r"(?=\S+(?:\s+\S+)?\s+any\s*more\b)|was\s+(?:using|on|in)\s+(?=\S+(?:\s+\S+)?,?\s+(?:but|until|till)\b))"
)
LEFT_FRONT = _rx(r"\b(?:is|are)\s+(?:now\s+)?(?:history|dead\s+to\s+me|gone|behind\s+me|a\s+thing\s+of\s+the\s+past|"
                 r"out|retired|over)\b|\b(?:was|used\s+to\s+be)\s+(?:\w+\s+)?my\s+(?:go-to|go\s+to|daily\s+driver|"
                 r"main\s+tool|default|tool\s+of\s+choice|weapon\s+of\s+choice|thing|jam)\b|\bwas\s+(?:[\w'-]+\s+){0,3}?"
                 r"until\b")
REPLACED_FRONT_PASSIVE = _rx(r"\b(?:got|was|were|has\s+been|have\s+been|been|is|gets)\s+(?:\w+\s+)?"
                             r"(?:(?:replaced|superseded|supplanted|displaced|pushed\s+out)\s+by|(?:swapped|traded|"
                             r"switched|dropped|ditched)\s+(?:out\s+)?for|phased\s+out\s+in\s+favou?r\s+of)\s+")
REPLACED_BY_FRONT = _rx(
    r"\b(?:replaced|has\s+replaced|took\s+over\s+from|takes\s+over\s+from|(?:has|have)\s+(?:\w+\s+)?taken\s+over\s+from|superseded|supplanted|"
    r"won\s+out\s+over|beat\s+out|displaced|killed\s+off|pushed\s+out)\s+"
)

CLAUSE_BREAK = re.compile(r"[;:]|\s-\s|,\s*(?=(?:I|I'm|I've|I'd|we|we're|it's|it|but|so|and\s+I|me|which|though|"
                          r"although|because|while|now|these\s+days|from\s+here)\b)", re.IGNORECASE)
# Words before a clause's subject that are not part of it ("Honestly", "These days", "As you may have noticed").
LEADING_DISCOURSE = _rx(
    r"^(?:(?:honestly|frankly|lately|recently|basically|actually|really|so|well|yeah|yes|yep|ok|okay|anyway|"
    r"also|and|but|plus|now|still|right\s+now|these\s+days|this\s+week|this\s+month|this\s+year|at\s+the\s+"
    r"moment|to\s+be\s+(?:fair|honest)|tbh|oh|man|ugh|sadly|funnily\s+enough|i\s+guess|i\s+think|i\s+mean|"
    r"of\s+course|admittedly|truthfully|seriously|somehow|currently|nowadays|again|then)\b[,\s]*)+"
)
SPEAKER_IN_CUE = _rx(r"(?:I|I'm|I've|I'd|we|we're|we've)\b")
HYPOTHETICAL = _rx(r"^\s*(?:if|unless|whether|when\s+you|should|would|could|do\s+you|did\s+you|have\s+you|"
                   r"are\s+you|can\s+you|will\s+you|what\s+if|in\s+case|once)\b")
# Where a fronted noun phrase ends: the clause's first verb or auxiliary.
FRONT_VERBS = frozenset(
    """is are was were be been has have had keeps keep kept gives gave give fascinates interests intrigues
    excites beats beating beat replaced replaces belongs drives makes made takes took eats causes confuses
    trips bites haunts remains stays never always really still just sits lives runs does did seems feels
    sounds looks became becomes kills killing baffles frustrates annoys eludes escapes stumps wrecks breaks
    defeats puzzles overwhelms scares handles powers grabs appeals captivates attracts draws fills occupies
    consumes swallows won took superseded supplanted displaced pushed got gets""".split()
)
GENERIC_OBJECTS = frozenset(
    """thing things stuff time times lot lots day days week weeks it that this everything something anything
    nothing work life way ways one ones bit kind sort part job people everyone someone anyone bunch while
    moment idea fun more much ton tons loads heaps options opportunities ideas possibilities goals dreams plans
    future project projects places response pic picture photo photos feeling feelings stories""".split()
)
SUBJECT_NOUNS = RELATION_NOUNS | frozenset("people guy guys girl girls man woman kids everyone someone team".split())
PRONOUN_OBJECTS = frozenset({"it", "that", "this", "them", "those"})
FRONT_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "these", "those"})  # dropped from a fronted phrase
VERB_OBJECT_STARTS = frozenset("a an the that this it them my our their his her your some more people others with about "
                               "into".split())
TOPIC_GERUNDS = frozenset("""learning studying mastering understanding exploring dealing debugging fixing getting
    with into about configuring tuning""".split())
TRAIT_HERE = _rx(r"^(?:(?:a|an|total|proud|certified|confirmed|lifelong|resident)\s+){0,2}(?P<trait>"
                 + "|".join(re.escape(t) for t in sorted(TRAITS, key=len, reverse=True)) + r")\s+(?:here\b|is\s+my\s+"
                 r"middle\s+name)")


@dataclass(frozen=True)
class Reading:
    """One relation read in one clause: the object node, its tokens (empty: via a pronoun), the note."""

    relation: str
    obj: Node
    tokens: tuple[int, ...]
    confidence: float
    note: str = ""


def clause_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the clauses of one sentence."""
    spans, start = [], 0
    for match in CLAUSE_BREAK.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end() if text[match.start()] in ";:-" else match.start() + 1
    if start < len(text):
        spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _is_tool(s: SummarySentence, item: list[Token]) -> bool:
    if any(t.start in s.gaz for t in item):
        return True
    if len(item) == 1 and (item[0].text[:1].isupper() or s.lowercase) and item[0].lower in GAZETTEER:
        return True  # "Go is what I write everything in": an ambiguous term, capitalised, in a use frame
    return len(item) <= 3 and all((s.is_name_word(t) or bool(IDENTIFIER.match(t.text))) and
                                  t.lower not in RELATION_NOUNS for t in item)


def _is_project(s: SummarySentence, item: list[Token]) -> bool:
    if any(t.start in s.gaz for t in item):
        return False  # "working on Kubernetes" is use of a tool
    return (len(item) > 1 and item[-1].lower in PROJECT_WORDS) or all(s.is_name_word(t) for t in item)


NOT_IN_TOPICS = frozenset("""is are was were be been being has have had do does did that which who whom whose
    where when there here""".split())


def _is_topic(item: list[Token]) -> bool:
    words = [t.lower for t in item]
    return (0 < len(words) <= MAX_TOPIC_WORDS and not set(words) & NOT_IN_TOPICS and not set(words) & (FIRST_PERSON_TOKENS | OTHER_PARTY_TOKENS |
            SUBJECT_NOUNS) and not all(w in STOPWORDS or w in GENERIC_OBJECTS for w in words)
            and words[-1] not in GENERIC_OBJECTS and words[-1] not in STOPWORDS)


def _is_known_tool(s: SummarySentence, item: list[Token]) -> bool:
    return any(t.start in s.gaz for t in item) or (len(item) == 1 and (
        item[0].lower in GAZETTEER and (item[0].text[:1].isupper() or s.lowercase) or bool(IDENTIFIER.match(item[0].text))))


def object_fits(s: SummarySentence, relation: str, item: list[Token], strict: bool = False) -> bool:
    if relation == "USES":
        return _is_known_tool(s, item) if strict else _is_tool(s, item)
    if relation == "WORKS_ON":
        return _is_project(s, item)
    return _is_topic(item)


def dislocated_fits(s: SummarySentence, relation: str, item: list[Token]) -> bool:
    """A noun phrase said on its own before its clause ("Kotlin, I use every day"): stricter than an object in
    place, since a lone name there is most often whom the speaker addresses ("Yeah, Dave! Keep it up")."""
    if relation == "USES":
        return _is_known_tool(s, item)
    if relation == "WORKS_ON":
        return _is_project(s, item) and item[-1].lower in PROJECT_WORDS
    return object_fits(s, relation, item) and not all(s.is_name_word(t) for t in item)


class ClauseFrames:
    """Reads one sentence's clauses against `CUES`; `antecedent` is what "it" refers to in this turn."""

    def __init__(self, s: SummarySentence, antecedent: Node | None) -> None:
        self.s = s
        self.antecedent = antecedent
        self._dislocated: list[Token] | None = None  # "Kotlin, I use every day": the clause before, a bare noun phrase

    # -- the parts of a clause -------------------------------------------------------------------

    def _clause_tokens(self, start: int, end: int) -> list[Token]:
        return [t for t in self.s.toks if start <= t.start and t.end <= end]

    def _body_start(self, start: int, end: int) -> int:
        """Where the clause proper starts, after discourse words ("Honestly", "These days")."""
        text = self.s.text[start:end]
        lead = len(text) - len(text.lstrip())
        match = LEADING_DISCOURSE.match(text[lead:])
        return start + lead + (match.end() if match else 0)

    def _front(self, start: int, end: int, verb_at: int | None = None) -> list[Token] | None:
        """The clause's fronted noun phrase: its words before its first verb (or before `verb_at`, where a
        cue starts); None when it opens with a person, a pronoun other than "it", or runs past
        MAX_FRONT_WORDS words."""
        toks = self._clause_tokens(self._body_start(start, end), end)
        phrase: list[Token] = []
        for tok in toks:
            if tok.lower in FRONT_VERBS or tok.lower.endswith("n't") or (verb_at is not None and tok.start >= verb_at):
                break
            phrase.append(tok)
            if len(phrase) > MAX_FRONT_WORDS:
                return None
        else:
            return None
        if len(phrase) == 1 and phrase[0].lower in PRONOUN_OBJECTS:
            return phrase  # "that's the project I'm on": a pronoun subject, resolved by the caller
        while phrase and phrase[0].lower in FRONT_DETERMINERS:
            phrase = phrase[1:]
        if not phrase:
            return None
        if len(phrase) == 1 and phrase[0].lower in PRONOUN_OBJECTS:
            return phrase
        words = {t.lower for t in phrase}
        if words & (FIRST_PERSON_TOKENS | OTHER_PARTY_TOKENS | SUBJECT_NOUNS | NOT_IN_TOPICS):
            return None
        return phrase

    def bare_phrase(self, start: int, end: int) -> list[Token] | None:
        """The clause when it is only a noun phrase (no verb), as in a left dislocation ("Kotlin, I use every
        day", "The checkout service - that's what I'm on"); None otherwise."""
        toks = self._clause_tokens(self._body_start(start, end), end)
        while toks and (toks[0].lower in FRONT_DETERMINERS or toks[0].lower == "ah"):  # "oh" went with the discourse words
            toks = toks[1:]
        if not toks or len(toks) > MAX_FRONT_WORDS or any(t.lower in FRONT_VERBS or "'" in t.text for t in toks):
            return None
        if {t.lower for t in toks} & (FIRST_PERSON_TOKENS | OTHER_PARTY_TOKENS | SUBJECT_NOUNS | NOT_IN_TOPICS |
                                      PRONOUN_OBJECTS | STOPWORDS):
            return None
        return toks

    def _dislocated_reading(self, relation: str) -> Reading | None:
        item = self._dislocated
        if item is None or not dislocated_fits(self.s, relation, item):
            return None
        return Reading(relation, self._node(item, relation), tuple(t.start for t in item), FRAME_CONFIDENCE)

    def _speaker_before(self, offset: int, clause_start: int = 0) -> tuple[bool, int]:
        """(the clause at `offset` is the speaker's, where its subject ends). A tool or project named in an
        earlier clause is no subject of this one ("I've left A behind, I'm on B now")."""
        before = [c for c in self.s.candidates if c.start < offset and not (
            c.start < clause_start and c.node is not None and c.node.label in ("Tools", "Projects"))]
        if not before:
            return True, 0  # nobody named before the cue: the speaker's own clause ("been living in Zed")
        nearest = max(before, key=lambda c: (c.start, c.first_person))
        if nearest.node is USER or (nearest.node is not None and nearest.node.id == USER.id and nearest.first_person):
            return True, nearest.end
        return False, nearest.end  # "Kafka uses ZooKeeper", "my colleague Priya swears by Vue": not the speaker

    def _negated(self, start: int, end: int) -> bool:
        return any(t.lower in NEGATORS or t.lower.endswith("n't") for t in self.s.toks
                   if start <= t.start < end and t.lower not in ("can't", "cannot", "couldn't", "without"))

    def _after_item(self, offset: int, end: int, relation: str) -> list[list[Token]]:
        """The object phrase(s) after a cue: every item of a list for tools, the first for the others; none
        when it is someone else's ("try your recipe")."""
        if re.match(r"\s*(?:your|his|her|their|its)\b", self.s.text[offset:end], re.IGNORECASE):
            return []
        items = [it for it in self.s.object_items(offset, split_items=True) if it and it[-1].end <= end]
        if relation in ("USES", "WORKS_ON"):
            return items
        return [self.s.topic_tail(it, end) for it in items[:1] if not self._cut_verb_phrase(it)]

    def _cut_verb_phrase(self, item: list[Token]) -> bool:
        """"creating a safe place", "sharing that with others": a lone gerund whose own object was cut off is
        an activity half read, not a topic."""
        if len(item) != 1 or not item[0].lower.endswith("ing"):
            return False
        i = self.s.toks.index(item[0]) + 1
        return i < len(self.s.toks) and self.s.toks[i].lower in VERB_OBJECT_STARTS

    # -- readings --------------------------------------------------------------------------------

    def _pronoun(self, relation: str, note: str = "") -> Reading | None:
        if self.antecedent is None or (relation == "WORKS_ON" and self.antecedent.label != "Projects") or (
                relation == "USES" and self.antecedent.label == "Projects"):
            return None
        return Reading(relation, self.antecedent, (), FRAME_CONFIDENCE - PRONOUN_PENALTY, note)

    def _node(self, item: list[Token], relation: str) -> Node:
        if relation == "USES" and len(item) == 1 and item[0].lower in GAZETTEER:
            name = GAZETTEER[item[0].lower]
            return Node(snake_id(name), "Tools", name)
        node = self.s.object_node(item, relation)
        if relation == "USES" and node.label != "Tools":
            node = Node(node.id, "Tools", node.name)
        return node

    def readings(self) -> list[Reading]:
        s = self.s
        out: list[Reading] = []
        left: list[Reading] = []
        for start, end in clause_spans(s.text):
            body = self._body_start(start, end)
            if HYPOTHETICAL.match(s.text[body:end]):
                continue
            front = self._front(start, end)
            front_end = front[-1].end if front else body
            here: list[Reading] = []
            for cue in CUES:
                for match in cue.regex.finditer(s.text, body, end):
                    if cue.position == "after":
                        here += self._after_reading(cue, match, end, body)
                        continue
                    phrase = self._front(start, end, match.start())
                    if phrase is not None:
                        reading = self._front_reading(cue, phrase, phrase[-1].end, match)
                        if reading is not None:
                            here.append(reading)
            here += self._traits(body, end)
            self._dislocated = self.bare_phrase(start, end)
            here += self._replaced(front, front_end, body, end) + self._replaced_passive(front, front_end, end)
            left += self._left(body, end) + self._left_front(front, front_end, end)
            out += here
        return self._changes(out, left)

    def _after_reading(self, cue: Cue, match: re.Match[str], end: int, body: int) -> list[Reading]:
        s = self.s
        own = SPEAKER_IN_CUE.match(match.group(0))  # "I'm on Zed now": the cue names its own subject
        mine, subject_end = (True, match.start() + own.end()) if own else self._speaker_before(match.start(), body)
        if not mine or s.negated(subject_end, match.start()) or SET_ASIDE.search(s.text, max(0, match.start() - 16),
                                                                                 match.start()):
            return []  # "instead of learning Rust, I use Go": no interest in Rust
        if cue.relation != "STRUGGLES_WITH" and self._negated(match.start(), match.end()):
            return []  # "I no longer rely on"; a struggle's cue may be negative in form ("never get X right")
        if subject_end == 0 and not re.search(r"\b(?:my|our|I|we)\b", match.group(0), re.IGNORECASE) and any(
                t.lower not in STOPWORDS for t in s.toks if body <= t.start < match.start()):
            return []  # nobody named, but words before the cue ("lots of people rely on"): not the speaker
        if subject_end == 0 and not s.first_person and cue.relation in ("STRUGGLES_WITH", "EXPRESSED_INTEREST") and \
                re.match(r"[A-Za-z]+ing\b", match.group(0)) and s.text[body:match.start()].strip().lower() != "been":
            return []  # "Studying opening moves is a great way to improve": a general remark, nobody's interest
        before = s.text[subject_end:match.start()]
        if USED_TO.search(before) and not re.search(
                r"\b(?:but|now|these\s+days|anymore|nowadays)\b", before, re.IGNORECASE):
            return []  # "I used to use X": the past, read by the change rules
        rest = s.text[match.end():end].strip().lower()
        if rest.split(None, 1)[:1] and rest.split(None, 1)[0].strip(".,!?") in PRONOUN_OBJECTS:
            reading = self._dislocated_reading(cue.relation) or self._pronoun(cue.relation)
            return [reading] if reading is not None else []
        if "obj" in match.re.groupindex:
            item = [t for t in s.toks if match.start("obj") <= t.start and t.end <= match.end("obj")]
            if item and object_fits(s, cue.relation, item, cue.strict):
                return [Reading(cue.relation, self._node(item, cue.relation), tuple(t.start for t in item),
                                FRAME_CONFIDENCE)]
            return []
        out = []
        items = self._after_item(match.end(), end, cue.relation)
        for item in items:
            if object_fits(s, cue.relation, item, cue.strict):
                out.append(Reading(cue.relation, self._node(item, cue.relation), tuple(t.start for t in item),
                                   FRAME_CONFIDENCE))
        if not items:  # "Kotlin, I use every day": the object was said before the clause
            reading = self._dislocated_reading(cue.relation)
            out += [reading] if reading is not None else []
        return out

    def _front_reading(self, cue: Cue, front: list[Token], front_end: int,
                       match: re.Match[str]) -> Reading | None:
        s = self.s
        between = s.text[front_end:match.end()]
        if self._negated(front_end, match.start()) or re.search(r"\b(?:you|he|she|they|my\s+(?:"
                                                                + "|".join(RELATION_NOUNS) + r"))\b",
                                                                between, re.IGNORECASE):
            return None
        if len(front) == 1 and front[0].lower in PRONOUN_OBJECTS:  # "it", "that('s)"
            return self._dislocated_reading(cue.relation) or self._pronoun(cue.relation)
        if cue.relation in ("STRUGGLES_WITH", "EXPRESSED_INTEREST"):
            while len(front) > 1 and front[0].lower in TOPIC_GERUNDS:
                front = front[1:]  # "Learning category theory is a goal of mine": the topic, not the learning
        if not object_fits(s, cue.relation, front):
            return None
        return Reading(cue.relation, self._node(front, cue.relation), tuple(t.start for t in front), FRAME_CONFIDENCE)

    def _traits(self, body: int, end: int) -> list[Reading]:
        out = []
        here = TRAIT_HERE.match(self.s.text, body, end)
        if here is not None:  # "Night owl here": the speaker introduces themselves by the trait
            trait = here.group("trait").lower()
            out.append(Reading("EXHIBITS", Node(snake_id(trait), "Concepts", trait),
                               self._starts(here.start("trait"), here.end("trait")), FRAME_CONFIDENCE))
        for match in TRAIT_FRAME.finditer(self.s.text, body, end):
            mine, subject_end = self._speaker_before(match.start())
            subject, _, _ = self.s.subject_before(match.start())
            if subject is not USER or not mine or self.s.negated(subject_end, match.start("trait")):
                continue
            trait = match.group("trait").lower()
            out.append(Reading("EXHIBITS", Node(snake_id(trait), "Concepts", trait),
                               self._starts(match.start("trait"), match.end("trait")), FRAME_CONFIDENCE))
        return out

    def _starts(self, start: int, end: int) -> tuple[int, ...]:
        return tuple(t.start for t in self.s.toks if start <= t.start < end)

    def _tool_after(self, offset: int, end: int) -> list[Token] | None:
        items = [it for it in self.s.object_items(offset, split_items=True) if it and it[-1].end <= end]
        return items[0] if items and _is_tool(self.s, items[0]) else None

    def _left(self, body: int, end: int) -> list[Reading]:
        """Tools the speaker left in this clause ("I gave up on A", "I'm done with A")."""
        out = []
        for match in LEAVE.finditer(self.s.text, body, end):
            mine, subject_end = self._speaker_before(match.start(), body)
            if not mine or self.s.negated(subject_end, match.start()):
                continue
            if match.group(0).lower().startswith(SET_ASIDE_WORDS) and CHOICE.search(self.s.text, body, match.start()):
                continue  # an option not taken, not a value left
            item = self._tool_after(match.end(), end)
            if item is not None:
                out.append(Reading("USES", self._node(item, "USES"), tuple(t.start for t in item), LONE_LEAVE_CONFIDENCE,
                                   PAST_PREFIX))
        return out

    def _left_front(self, front: list[Token] | None, front_end: int, end: int) -> list[Reading]:
        """"A is history (for me)": a tool left, written in front."""
        if front is None or not _is_tool(self.s, front):
            return []
        for match in LEFT_FRONT.finditer(self.s.text, front_end, end):
            if not self.s.text[front_end:match.start()].strip() and not self._negated(front_end, match.end()):
                return [Reading("USES", self._node(front, "USES"), tuple(t.start for t in front), LONE_LEAVE_CONFIDENCE,
                                PAST_PREFIX)]
        return []

    def _replaced(self, front: list[Token] | None, front_end: int, body: int, end: int) -> list[Reading]:
        """"B replaced A (for me)": B now, A before."""
        if front is None or not _is_tool(self.s, front):
            return []
        for match in REPLACED_BY_FRONT.finditer(self.s.text, front_end, end):
            if self._negated(front_end, match.start()):
                continue
            old = self._tool_after(match.end(), end)
            if old is not None:
                new = self._node(front, "USES")
                return [Reading("USES", new, tuple(t.start for t in front), FRAME_CONFIDENCE),
                        Reading("USES", self._node(old, "USES"), tuple(t.start for t in old), LONE_LEAVE_CONFIDENCE,
                                PAST_PREFIX)]
        return []

    def _replaced_passive(self, front: list[Token] | None, front_end: int, end: int) -> list[Reading]:
        """"A got replaced by B (on my setup)": A before, B now."""
        if front is None or not _is_tool(self.s, front):
            return []
        for match in REPLACED_FRONT_PASSIVE.finditer(self.s.text, front_end, end):
            new = self._tool_after(match.end(), end)
            if new is not None and not self._negated(front_end, match.start()):
                return [Reading("USES", self._node(new, "USES"), tuple(t.start for t in new), FRAME_CONFIDENCE),
                        Reading("USES", self._node(front, "USES"), tuple(t.start for t in front), LONE_LEAVE_CONFIDENCE,
                                PAST_PREFIX)]
        return []

    def _changes(self, out: list[Reading], left: list[Reading]) -> list[Reading]:
        """Pair a left value with a used one in the same sentence: a change of value, both edges."""
        olds = [r for r in [*left, *out] if r.note == PAST_PREFIX]
        news = [r for r in out if r.relation == "USES" and r.note != PAST_PREFIX and
                all(r.obj.id != o.obj.id for o in olds)]
        if not olds:
            return out
        if not news:
            return [r for r in out if r.note != PAST_PREFIX] + [r for r in olds]  # a lone leave: low
        new = news[-1]
        old = olds[0]
        rest = [r for r in out if r is not new and r.note != PAST_PREFIX and r.obj.id != old.obj.id]
        return rest + [
            Reading("USES", new.obj, new.tokens, SWITCH_NEW_CONFIDENCE, f"switched from {old.obj.name}"),
            Reading("USES", old.obj, old.tokens, SWITCH_OLD_CONFIDENCE, f"{PAST_PREFIX}, switched to {new.obj.name}"),
        ]

