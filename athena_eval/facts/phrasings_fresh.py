"""A fresh held-out set of phrasings for the facts benchmark: the "fresh" split.

Written from the fact kinds and slot names alone, without reading the offline extractor, its vocabularies
or the tuning/held-out texts, so no pattern was written for these words: the fresh row is the figure for
phrasings nobody tuned against. Casual chat as users of a coding assistant or a personal assistant type it:
fronted objects, passives, embedded clauses, lists, lowercase. Slots as in `phrasings`: `{x}`/`{X}` the
object (and capitalised), `{p}`/`{P}` a project, `{c}`/`{C}` a client, `{a}`/`{b}` the old and new tool of
a switch, `{n}` a third party's name. A trait `{x}` is a noun phrase with its article or an adjective
("a night owl", "methodical"), so trait phrasings read right with both.

Decoys never make a user fact: a third party's (`THIRD_PARTY`: a phrasing starting "my " also states that
`{n}` is someone the user knows), the assistant's (`ASSISTANT`), and the user's own negations,
hypotheticals and questions (`USER_DECOYS`: per decoy kind, (object kind, phrasing) pairs over tools,
problems, interests, places and projects).
"""
from __future__ import annotations

USES = (
    "I do pretty much everything in {x} now.",
    "{X} is what I reach for first, every single time.",
    "i've got {x} open basically all day",
    "The tool I lean on the most, if I'm honest, is {x}.",
    "Everything I ship these days goes through {x}.",
    "For me it's {x}, and it has been for years.",
    "{X}, mostly. That's what I build with at my job.",
    "Our whole stack is {x} and I'm hands-on with it daily.",
    "I'm comfortable with a few things, but {x} is the one I work in every day.",
    "Half my muscle memory at this point is {x}.",
)
WORKS_ON = (
    "I'm on {x} at the moment.",
    "Right now most of my time goes into {x}.",
    "{X} is my main project this quarter.",
    "these days i'm heads-down on {x}",
    "I got assigned to {x} a few weeks back and I'm still on it.",
    "What I'm building right now is {x}.",
    "Most of my commits this month went into {x}.",
    "I'm the lead developer on {x}, so it's on my plate all day.",
    "My team owns {x}, and I write most of the code for it.",
)
BUILT_FOR_CLIENT = (
    "We're building {p} for {c}.",
    "{P}? That one is a {c} project.",
    "{C} hired us to build {p}.",
    "Whenever {p} breaks, it's {c} who calls us.",
    "i'm doing {p} for {c}, they're our biggest account",
    "Our contact at {c} signs off on every release of {p}.",
    "It's {c} who we're making {p} for.",
    "{P} is a {c} thing; they signed the contract with us last year.",
    "The people at {c} asked us for {p} in the first place.",
)
STRUGGLES_WITH = (
    "I keep losing whole afternoons to {x}.",
    "I'm at my wits' end with {x}.",
    "ugh, {x}. three days on it and still nothing works",
    "I can't get my head around {x}, no matter how many docs I read.",
    "What's killing me right now is {x}.",
    "I've been banging my head against {x} all week.",
    "Every sprint I end up fighting with {x}.",
    "{X} is where I get stuck, every time.",
    "The part I find hardest, by far, is {x}.",
)
EXPRESSED_INTEREST = (
    "I'd love to get into {x} properly.",
    "Lately I've been reading a lot about {x}, it's fascinating.",
    "{X} is something I want to learn this year.",
    "i'm teaching myself {x} in the evenings",
    "One thing on my learning list: {x}.",
    "I signed up for a course on {x} last week.",
    "If I had a free month, I'd spend it on {x}.",
    "I've gotten really curious about {x} recently.",
    "Weekends are for {x} at the moment, I'm trying to get good at it.",
)
EXHIBITS = (
    "People who know me would tell you I'm {x}.",
    "I've always been {x}, even as a kid.",
    "honestly i'm {x} to the core",
    "My partner says I'm {x}, and they're not wrong.",
    "I'll admit it: I'm {x}.",
    "Ask anyone: I've been {x} my whole life.",
    "I'm {x}, so keep that in mind when you plan things with me.",
    "Anyone on my team will confirm that I'm {x}.",
)
PLACE = (
    "home base for me is {x}",
    "{X} is home for me now.",
    "Two years ago I packed up and moved to {x}, and I'm still here.",
    "It's late here in {x}, so I'll keep this short.",
    "the weather in {x} is awful today, I'm staying in",
    "I grew up in {x} and I still live there.",
    "My flat in {x} is tiny, but I love it.",
    "I live just outside {x}, so I take the train in.",
)
PERSON = (
    "My partner {x} thinks I work too much.",
    "{X}, my best friend, is coming over later.",
    "I'm having dinner with my neighbour {x} tonight.",
    "my roommate {x} borrowed my laptop again",
    "I asked my cousin {x} for advice on this.",
    "My mentor {x} taught me most of what I know.",
    "I'm picking up my friend {x} from the airport tomorrow.",
    "{X} and I have been together for six years.",
)
POSSESSION = (
    "My dog {x} needs a walk soon.",
    "{X}, my cat, just walked across my keyboard.",
    "sorry, my dog {x} is barking at the mail carrier",
    "We adopted a puppy named {x} last spring.",
    "{X} (my cat) is asleep on my desk again.",
    "I have a rabbit called {x}.",
    "My cat {x} knocked my coffee over this morning.",
    "I need to take {x}, my dog, to the vet on Friday.",
)
SWITCH = (
    "I ditched {a} for {b} a few months ago.",
    "I used to be on {a}, but now it's all {b}.",
    "{B} replaced {a} for me this spring.",
    "After years of {a}, I've gone over to {b}.",
    "We migrated off {a} and onto {b}, and I'm in {b} every day now.",
    "i dropped {a}, {b} is what i use now",
    "{A} was my go-to until I found {b}.",
    "Swapped {a} out for {b} in January and never looked back.",
)

# Decoys: none of these is the user's fact, whatever the words.
THIRD_PARTY = (
    "My teammate {n} is all in on {x}.",
    "my coworker {n} uses {x} for everything",
    "{n}, who sits next to me, won't stop talking about {x}.",
    "My boss {n} has been struggling with {x} for weeks.",
    "My friend {n} is learning {x}.",
    "{n} on the platform team deploys everything with {x}.",
    "My old classmate {n} works with {x} at their job.",
    "{n} from the design team asked me about {x} yesterday.",
)
ASSISTANT = (
    "Have you looked at {x}? It handles this well.",
    "{X} would be a good fit here.",
    "One option is {x}.",
    "I'd go with {x} for this.",
    "If it were me, I'd pick {x}.",
    "A lot of people use {x} for exactly this.",
    "You might get on well with {x}.",
    "Consider {x}; it's mature and well documented.",
)
# (object kind, phrasing): the object kinds are "tool", "problem", "interest", "place", "project".
USER_DECOYS: dict[str, tuple[tuple[str, str], ...]] = {
    "negation": (
        ("tool", "I don't use {x}."),
        ("tool", "never touched {x}, not once"),
        ("tool", "{X}? No, that's not something I work with."),
        ("problem", "{X} has never been a problem for me."),
        ("problem", "I'm not struggling with {x} at all, it's fine."),
        ("interest", "I'm not really into {x}."),
        ("interest", "{X} doesn't interest me, to be honest."),
        ("place", "I don't live in {x}, people always assume that."),
        ("project", "I'm not on {x}, that's another team."),
    ),
    "hypothetical": (
        ("tool", "If I ever switched to {x}, I'd need to relearn everything."),
        ("tool", "Suppose we used {x}: would the build get faster?"),
        ("tool", "in theory i could try {x} someday, but probably not"),
        ("problem", "If {x} ever became an issue, how would I even debug it?"),
        ("interest", "Maybe one day I'll look into {x}, if I ever have the time."),
        ("interest", "If I were younger I'd probably take up {x}."),
        ("place", "If I moved to {x}, would my timezone still work for the team?"),
        ("place", "I sometimes daydream about living in {x}."),
        ("project", "Imagine if I got moved to {x}; that would be a nightmare."),
    ),
    "question": (
        ("tool", "Should I use {x}?"),
        ("tool", "is {x} any good for this?"),
        ("tool", "What do you think of {x}?"),
        ("tool", "Would {x} be overkill for a small team?"),
        ("problem", "How do people usually deal with {x}?"),
        ("interest", "Is {x} worth learning, do you think?"),
        ("interest", "where would someone even start with {x}?"),
        ("place", "What's it like to live in {x}?"),
        ("project", "Who's working on {x} these days, do you know?"),
    ),
}
