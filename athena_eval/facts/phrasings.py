"""How the facts benchmark says things: per relation, the phrasings a planted fact is stated in.

Each relation has a `tuning` list (the phrasings the offline extractor was developed against, beside the
issue's own examples: a first held-out list was seen while the chat rules were written, so it joined the
tuning list) and a `held_out` list, written afterwards and never used to change the extractor: the
report's held-out rows are the honest figure for phrasings the patterns were not written for. A planted
fact draws all its mentions from one split, so the report shows the two splits apart. `{x}` is the object as written, `{X}` the same with a capital first letter, `{p}` /
`{P}` a project and `{c}` a client. Written as ordinary chat, not in the extractor's trigger words.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Phrasings:
    tuning: tuple[str, ...]
    held_out: tuple[str, ...]


USES = Phrasings(
    tuning=(
        "I use {x} for most of my work these days.",
        "{X} is my daily driver.",
        "I picked up {x} last month. I use it all day.",
        "Most of my day is spent in {x}.",
        "I've been using {x} for a couple of years now.",
        "We rely on {x} at work.",
        "I'm a heavy {x} user.",
        "These days I do nearly everything with {x}.",
        "Honestly I can't imagine working without {x}.",
        "My go-to these days is {x}.",
        "{X} has been part of my setup since last year.",
        "Everything I do at the moment goes through {x}.",
        "I lean on {x} a lot.",
    ),
    held_out=(
        "{X} is open on my screen pretty much all the time.",
        "I've standardised on {x} for everything new.",
        "Our whole team runs on {x}, me included.",
        "I do all my day-to-day stuff in {x}.",
        "Been living in {x} for months now.",
    ),
)

WORKS_ON = Phrasings(
    tuning=(
        "I'm working on {x} this quarter.",
        "{X} is the project I spend most of my week on.",
        "The project I spend most of my week on is {x}.",
        "Most of my time goes into {x}.",
        "I've been building {x} since March.",
        "Right now I'm heads-down on {x}.",
        "My main focus at work is {x}.",
        "I'm the lead developer on {x}.",
        "These days my job is basically {x}.",
        "I'm knee-deep in {x} again.",
    ),
    held_out=(
        "My days are mostly about {x} now.",
        "I own {x} at my company.",
        "I've been assigned to {x} until the summer.",
        "I spend my mornings shipping features for {x}.",
    ),
)

BUILT_FOR_CLIENT = Phrasings(
    tuning=(
        "{P} is for {c}.",
        "{P} is being built for {c}.",
        "Our client for {p} is {c}.",
        "{c} is the client behind {p}.",
        "{P} is a contract job for {c}.",
        "{c} pays for {p}.",
        "{P} was commissioned by {c}.",
        "The customer on {p} is {c}.",
        "{c} is who {p} is for.",
    ),
    held_out=(
        "{c} is the customer for {p}.",
        "We do {p} under contract with {c}.",
        "{P} belongs to {c}, we just build it.",
    ),
)

STRUGGLES_WITH = Phrasings(
    tuning=(
        "{X} is a struggle.",
        "I keep fighting with {x}.",
        "{X} is something I keep fighting with.",
        "I'm struggling with {x}.",
        "I'm stuck on {x} again.",
        "{X} keeps tripping me up.",
        "I lost another afternoon to {x}.",
        "{X} is driving me up the wall.",
        "{X} has been a real headache this week.",
        "I can't wrap my head around {x}.",
    ),
    held_out=(
        "{X} gives me a lot of trouble.",
        "I always get tangled up in {x}.",
        "{X} is where I waste most of my time.",
        "Honestly {x} is beating me right now.",
    ),
)

EXPRESSED_INTEREST = Phrasings(
    tuning=(
        "I'd love to understand {x}.",
        "I want to learn {x} this year.",
        "I'm really curious about {x}.",
        "{X} fascinates me.",
        "I'd like to get into {x}.",
        "One day I want to properly dig into {x}.",
        "I've been reading a lot about {x} lately.",
        "{X} is on my list of things to learn.",
        "I keep meaning to study {x}.",
    ),
    held_out=(
        "I'm dying to learn more about {x}.",
        "{X} is something I'd really like to explore.",
        "Lately I've been getting into {x}.",
        "I've got a growing interest in {x}.",
    ),
)

# Traits: `{x}` is the trait with its article when it is a noun ("a night owl"), bare when an adjective.
EXHIBITS = Phrasings(
    tuning=(
        "I'm {x}, so bear with me.",
        "To be fair, I'm {x}.",
        "I'd call myself {x}.",
        "I've always been {x}.",
        "Everyone who works with me knows I'm {x}.",
        "Being {x} is just how I am.",
        "My friends would tell you I'm {x}.",
    ),
    held_out=(
        "I tend to be {x}.",
        "As you may have noticed, I'm {x}.",
        "I guess I'm {x} by nature.",
    ),
)

PLACE = Phrasings(
    tuning=(
        "I live in {x}.",
        "I moved to {x} two years ago.",
        "Home for me is {x}.",
        "I'm based in {x}.",
        "We've settled in {x} for now.",
    ),
    held_out=(
        "I'm from {x} originally and still live there.",
        "My apartment is in {x}.",
    ),
)
PERSON = Phrasings(
    tuning=(
        "My sister {x} visits every month.",
        "I'm meeting my friend {x} tonight.",
        "My partner {x} cooked dinner yesterday.",
        "My brother {x} called me today.",
        "I'm having lunch with my cousin {x} tomorrow.",
    ),
    held_out=(
        "I'm visiting my aunt {x} this weekend.",
        "{x} is my best friend.",
    ),
)
POSSESSION = Phrasings(
    tuning=(
        "I have a dog named {x}.",
        "My cat {x} sat on my keyboard again.",
        "I took {x}, my dog, for a long walk.",
        "I adopted a kitten and called her {x}.",
    ),
    held_out=(
        "Our dog {x} needs a walk.",
        "I got a puppy last year, her name is {x}.",
    ),
)

# A change of tool: `{a}` the old value, `{b}` the new one.
SWITCH = Phrasings(
    tuning=(
        "I switched from {a} to {b}.",
        "I moved from {a} to {b} last week.",
        "I replaced {a} with {b}.",
        "I dropped {a} and went with {b}.",
        "After years on {a}, I've moved over to {b}.",
    ),
    held_out=(
        "I gave up on {a}; {b} is what I use now.",
        "{B} replaced {a} for me this month.",
        "I'm done with {a}, it's all {b} from here.",
    ),
)

# Decoys. A third party's fact (`{n}` a name) and an assistant's recommendation or first person: none is
# the user's, whatever the words.
THIRD_PARTY = (
    "My colleague {n} uses {x}.",
    "My manager {n} is struggling with {x}.",
    "{n} from my team wants to learn {x}.",
    "My friend {n} swears by {x}.",
    "{n} keeps fighting with {x}.",
)
ASSISTANT = (
    "You could try {x} for that.",
    "I'd recommend {x} here.",
    "I use {x} myself for this kind of work.",
    "Many teams rely on {x} for this.",
    "Have you considered {x}?",
)

# Turns with no fact in them: openers and closers, the agent's reply on a statement's topic (`{x}`), the
# user's follow-up, the agent's acknowledgement, and the question an assistant decoy answers.
SMALL_TALK = (
    "Thanks, that helps.", "Ok, let me think about it.", "Good morning!", "Haha, fair enough.",
    "Can you give me an example?", "Let's get back to that tomorrow.", "Sounds good.", "Hmm, not sure yet.",
)
AGENT_REPLIES = (
    "How has {x} been going lately?",
    "Tell me more about {x}: what does a normal day with it look like?",
    "Good to know about {x}. What matters most to you there?",
    "Interesting. What got you to {x} in the first place?",
    "Noted about {x}. Is there anything there you want help with?",
)
FOLLOW_UPS = (
    "Pretty well overall, though there is always more to figure out.",
    "Mostly speed and keeping things simple, honestly.",
    "Day to day it takes up a good part of my attention.",
    "Not right now, I mainly wanted you to have the context.",
    "Hard to say, it grew on me over time.",
)
ACKS = ("Got it, thanks.", "Makes sense.", "Thanks for the context.", "Understood.")
ASKS = ("Any tool you would suggest for {x}?", "What would you use for {x}?", "Ideas for {x}?")
