"""The stop-word lists, side by side. Each list is part of its user's behaviour (tests and retrieval
quality are measured on it), so they are kept as three named lists rather than merged:

- `STOPWORDS`: function words plus conversational filler. RAKE phrase delimiters and the "not a content
  word" filter of the offline provider and the extractor, and what `retrieval.lexical_terms` drops
  from a query.
- `SMALL_TALK_STOPWORDS`: the quality gate's (function words, contraction fragments "s t d m", and
  phatic words "hi", "thanks", "bye"), so small talk has no content word at all and scores low.
- `ANSWER_STOPWORDS`: the short list evaluation's answer-word recall ignores (a fixed metric
  definition: changing it changes the reported figures, not retrieval).
"""
from __future__ import annotations

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

# English stop words and phatic words ("hi", "thanks", "bye" ...): the quality gate's text model.
SMALL_TALK_STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are aren as at be been before being below
    between both but by can cannot could couldn did didn do does doesn doing don down during each few for
    from further get got had hasn has have haven having he her here hers herself him himself his i if in
    into is isn it its itself just let ll me might more most must my myself no nor not now of off on once
    only or other ought our ours ourselves out over own re same shall she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up us
    ve very was wasn we were weren what when where which while who whom why will with won would you your
    yours yourself yourselves s t d m o y how want wants need really thing things one like
    hi hello hey hiya greetings thanks thank thx ty bye goodbye cya see later ok okay sure yes yeah yep
    no nope please cool great nice good fine help welcome morning evening afternoon anything else
    """.split()
)

ANSWER_STOPWORDS: frozenset[str] = frozenset(
    "a an the and or but of to in on at for from by with about as into over after before during than then "
    "is are was were be been being am do does did has have had having it its it's this that these those "
    "he she they them his her their hers theirs him i me my we us our you your yours who whom whose which "
    "what when where why how not no nor so too very can could would should will shall may might must "
    "there here s t just also some any all both each other such own same only up down out off again "
    "further once more most".split()
)
