"""A development set of chat phrasings for the offline extractor, written independently of the extractor and of the facts benchmark's splits (issue 14): the extractor may be tuned on these; the benchmark's fresh split stays unseen."""

# {x} = tool as written, {X} = capitalised (sentence start only)
USES = (
    "{X}, I use every day.",
    "I'm in {x} pretty much all day tbh",
    "honestly I live in {x} these days",
    "{x} is my daily driver",
    "The thing I keep coming back to is {x}, I use it constantly.",
    "I've been using {x} daily for a couple of years now.",
    "Most mornings start with me opening {x}.",
    "I'm in {x} every single day at work",
    "{X} is what I reach for whenever I need to get something done.",
    "I rely on {x} a lot, it's part of my daily routine.",
    "yeah I lean on {x} heavily for my day-to-day",
    "I've got {x} open basically all the time.",
    "My go-to is {x}. I use it for nearly everything.",
    "{X} has been my main tool for ages and I still use it daily.",
    "can't really get through a workday without {x} lol",
    "I'm a regular {x} user, for what it's worth.",
    "Day to day, I work mostly in {x}.",
    "{X} is something I use all the time, honestly.",
    "Quick context: I use {x} on a daily basis.",
    "so basically everything I do runs through {x}, I'm on it constantly",
)

# {x} = project with "the", {X} = capitalised
WORKS_ON = (
    "I'm working on {x} right now.",
    "These days most of my time goes into {x}.",
    "{X} is what I'm on at the moment.",
    "my main project is {x}",
    "I've been heads-down on {x} for the past few weeks",
    "Right now I'm knee-deep in {x}.",
    "{X} - that's the project I'm working on these days.",
    "I spend most of my day hacking on {x} tbh",
    "At work I'm responsible for {x}.",
    "The project I'm currently on is {x}.",
    "I'm building out {x} at the moment, it's taking up most of my week.",
    "been working on {x} all month",
    "I got put on {x} last quarter and I'm still on it.",
    "My day job is mostly {x} these days.",
    "So I'm on {x}. It's been my main focus since spring.",
)

# {p} = project, {P} = capitalised, {c} = client company
BUILT_FOR_CLIENT = (
    "{P} is for {c}, they're our client.",
    "We're building {p} for {c}.",
    "{P} is a client project for {c}.",
    "The client for {p} is {c}.",
    "I'm doing {p} for a client, {c}.",
    "{c} commissioned {p} from us.",
    "{P} is being built for {c}.",
    "so {p} is a contract gig for {c}",
    "{c} is the client behind {p}.",
    "we're delivering {p} to {c} as part of a client engagement",
    "{P}? That's for {c}, one of our clients.",
    "The customer on {p} is {c}, they're paying for the whole thing.",
    "{c} hired us to build {p}.",
)

# {x} = problem, {X} = capitalised
STRUGGLES_WITH = (
    "I keep getting stuck on {x}.",
    "honestly I'm losing my mind over {x}",
    "I have a really hard time with {x}.",
    "The thing I can never get right is {x}.",
    "{X}. I can never get that stuff right.",
    "I've been fighting with {x} all week.",
    "My biggest pain point right now is {x}.",
    "ugh, the bane of my existence is {x}",
    "I really struggle with {x}, tbh.",
    "Every time I deal with {x} I end up banging my head against the wall.",
    "I can't seem to figure out {x} no matter what I try.",
    "Something I'm really bad at dealing with is {x}.",
    "what's been killing me lately is {x}",
    "I'm stuck on {x} again and it's driving me nuts.",
    "I get tripped up by {x} constantly.",
)

# {x} = topic, {X} = capitalised
EXPRESSED_INTEREST = (
    "I've been meaning to learn {x}.",
    "{X} is something I really want to get into.",
    "I'm super curious about {x}.",
    "lately I've gotten really into reading about {x}",
    "Someday I want to properly learn {x}.",
    "I'm really interested in {x}, to be honest.",
    "One thing I'd like to dig into this year is {x}.",
    "{X} fascinates me and I want to learn more about it.",
    "i've always wanted to learn more about {x}",
    "Been wanting to pick up {x} for a while now.",
    "I'd really like to wrap my head around {x} at some point.",
    "my next rabbit hole is probably going to be {x}",
    "Something I'm drawn to lately is {x}, I want to study it properly.",
)

# {x} = trait, with or without article ("a night owl" / "methodical")
EXHIBITS = (
    "I'm {x}, honestly.",
    "I'd describe myself as {x}.",
    "People tell me I'm {x}, and they're right.",
    "Honestly I've always been {x}.",
    "yeah I'm definitely {x}",
    "I tend to be {x}, for better or worse.",
    "Fair warning: I'm {x}.",
    "I'm kind of {x} by nature.",
    "Anyone who knows me will tell you I'm {x}.",
    "I've been {x} my whole life.",
    "if it helps, I'm {x}",
    "I'm {x}, so keep that in mind.",
)

# {x} = city
PLACE = (
    "I live in {x}.",
    "I'm based in {x}.",
    "I'm based out of {x} these days.",
    "{x} is home for me.",
    "home's {x} for me right now",
    "I've been living in {x} for about three years.",
    "My apartment's in {x}.",
    "I moved to {x} a while back and I'm still here.",
    "I'm in {x}, so my time zone is a bit different.",
    "I call {x} home.",
    "Living in {x} these days, loving it.",
    "For context, I'm located in {x}.",
)

# {x} = first name of someone close to the user
PERSON = (
    "My partner {x} thinks I work too much.",
    "My sister {x} is visiting this weekend.",
    "I was chatting with my friend {x} about this yesterday.",
    "My manager, {x}, wants it done by Friday.",
    "{x} is my best friend from uni.",
    "my husband {x} keeps teasing me about it",
    "I'm having dinner with my brother {x} tonight.",
    "My wife's name is {x}.",
    "My roommate {x} and I split the chores.",
    "{x}, my mentor, gave me some great advice.",
    "my cousin {x} is staying with me for a bit",
    "I asked my coworker {x} and she had no idea either.",
)

# {x} = pet's name
POSSESSION = (
    "My dog {x} woke me up at 5am.",
    "I have a cat called {x}.",
    "{x} is my cat, she's a menace.",
    "our puppy {x} chewed through my charger",
    "My rabbit's name is {x}.",
    "I've got a little terrier named {x}.",
    "Sorry, {x} (my dog) needs a walk, brb.",
    "My cat {x} keeps sitting on my keyboard.",
    "I adopted a kitten last month, we named him {x}.",
    "i have to feed {x}, my parrot, in a sec",
    "{x}, my golden retriever, is the best boy.",
)

# {a} = old tool, {b} = new (current) tool, {A}/{B} capitalised
SWITCH = (
    "I moved off {a} and onto {b} last year.",
    "{A} got replaced by {b} on my setup a while back.",
    "I ditched {a} for {b} and haven't looked back.",
    "These days I use {b}; I used to be on {a}.",
    "I finally migrated from {a} to {b}.",
    "{B} is what I use now, I dropped {a} last spring.",
    "used to be a {a} person, now it's all {b}",
    "After years on {a}, I made the jump to {b}.",
    "I gave up on {a} and went with {b} instead.",
    "I replaced {a} with {b} a few months ago.",
    "{A} was my go-to until I moved over to {b}, which I use now.",
    "I've left {a} behind, I'm on {b} now.",
    "tbh I traded {a} for {b} and it's been great",
    "I was using {a} but I've since switched over to {b}.",
    "Not on {a} anymore, I'm fully on {b} now.",
    "{A}? Nah, I moved to {b} ages ago.",
)

# (kind, template); {x} = tool, {X} = capitalised, {n} = person name (third_party)
DECOYS = (
    ("third_party", "My manager {n} swears by {x}."),
    ("third_party", "{n} on my team uses {x} for everything."),
    ("third_party", "My friend {n} keeps telling me to try {x}."),
    ("third_party", "{n} is a huge {x} fan."),
    ("third_party", "my coworker {n} moved her whole team to {x}"),
    ("third_party", "Apparently {n} has been using {x} daily for years."),
    ("third_party", "{n} said {x} is the best thing since sliced bread."),
    ("third_party", "My brother {n} works with {x} all day."),
    ("assistant", "You might want to look at {x}."),
    ("assistant", "I'd recommend {x} for this."),
    ("assistant", "One option is {x}, which handles this well."),
    ("assistant", "Have you considered using {x}?"),
    ("assistant", "{X} could be a good fit for your use case."),
    ("assistant", "A lot of people use {x} for exactly this."),
    ("assistant", "I can walk you through setting up {x} if you like."),
    ("negation", "I don't use {x}."),
    ("negation", "I've never used {x}, honestly."),
    ("negation", "{X} isn't something I use."),
    ("negation", "nope, no {x} for me"),
    ("negation", "I don't really work with {x} at all."),
    ("negation", "We don't have {x} at my job and I've never touched it."),
    ("negation", "I'm not a {x} user."),
    ("hypothetical", "If I ever moved to {x}, what would I need to change?"),
    ("hypothetical", "I might try {x} at some point, not sure yet."),
    ("hypothetical", "Maybe I'll give {x} a shot next year."),
    ("hypothetical", "would {x} make sense if I ever had to scale this up"),
    ("hypothetical", "Suppose I used {x} for this, would that be dumb?"),
    ("hypothetical", "I'm thinking about maybe switching to {x} eventually, but probably not."),
    ("hypothetical", "If my team adopted {x}, I'd have to learn it from scratch."),
    ("question", "Is {x} any good?"),
    ("question", "what do people think of {x}?"),
    ("question", "How does {x} compare to the alternatives?"),
    ("question", "Can {x} handle large files?"),
    ("question", "Does {x} have a free tier?"),
    ("question", "Is {x} worth learning these days?"),
    ("question", "Has anyone here used {x}?"),
    ("past_only", "I haven't touched {x} in years."),
    ("past_only", "I used to use {x} back in college."),
    ("past_only", "{X} was my thing a long time ago, not anymore."),
    ("past_only", "I stopped using {x} a while back."),
    ("past_only", "gave up on {x} ages ago"),
    ("past_only", "I quit {x} last year and haven't missed it."),
    ("past_only", "Back in the day I was all about {x}."),
)
