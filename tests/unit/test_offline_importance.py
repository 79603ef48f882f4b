"""Importance calibration of the offline provider (issue 14, SPEC S5/S6.1): a chain carrying a first-person
fact, decision, preference, problem or commitment scores ≥ 0.5 (hot enough to promote when memory first
holds it: I_base ≥ 0.7 · 0.5 > 0.3); small talk and acknowledgements score ≤ 0.2. Shown on a labelled set
of varied phrasings, not by lowering the promotion threshold."""
from __future__ import annotations

import pytest

from athena_core.providers.llm import TranscriptLine
from athena_core.providers.offline_llm import OfflineLLM

POSITIVE = [
    [("user", "I'm rewriting the payments service in Go."), ("agent", "Nice, Go suits a payments service well.")],
    [("user", "I decided we will use pgx instead of an ORM."), ("agent", "pgx gives you prepared statements and batching.")],
    [("user", "I keep fighting with Kafka consumer rebalancing."), ("agent", "Static membership can reduce rebalances.")],
    [("user", "I switched from VS Code to Zed last month."), ("agent", "Zed is fast; how do you find the extensions?")],
    [("user", "The checkout service is for Northwind Traders."), ("agent", "Understood, the checkout service belongs to that client.")],
    [("user", "I'd love to learn spaced repetition."), ("agent", "Anki is a good place to start.")],
    [("user", "I will ship it Friday."), ("agent", "Good luck with the release.")],
    [("user", "My daughter starts school in September, so mornings are chaos."), ("agent", "That is a big change for the family.")],
    [("user", "We agreed to move the staging cluster to Kubernetes next quarter."), ("agent", "I can draft a migration plan.")],
    [("user", "Honestly I prefer tabs over spaces and I hate long meetings."), ("agent", "Noted.")],
    [("user", "Building wheels for ARM is a constant struggle for me."), ("agent", "cibuildwheel can help with that.")],
    [("user", "I work at a small robotics startup in Lyon."), ("agent", "That sounds exciting.")],
    [("user", "Our deploys keep failing because the Terraform state gets locked."), ("agent", "A DynamoDB lock table with timeouts may help.")],
    [("user", "I'm allergic to peanuts, keep that in mind for the recipes."), ("agent", "I will avoid peanuts in every suggestion.")],
    [("user", "Going forward, let's always write the API docs in OpenAPI 3.1."), ("agent", "Sounds like a plan.")],
    [("user", "I use Flutter all day for the mobile app."), ("agent", "Flutter's hot reload is handy.")],
    [("user", "The project I spend most of my week on is the billing dashboard."), ("agent", "What stack is it built on?")],
    [("user", "I promised the client a demo by the end of the month."), ("agent", "Let's plan the milestones.")],
    [("user", "My favourite editor is still Vim, even after all these years."), ("agent", "A classic choice.")],
    [("user", "I've been running marathons since 2019."), ("agent", "Impressive!")],
    [("user", "Can you remind me that I'm presenting the roadmap on Tuesday?"), ("agent", "Sure, I'll remember the roadmap presentation.")],
    [("user", "I'm really interested in Rust for embedded work."), ("agent", "Embassy is a nice framework for that.")],
    # chat fragments that leave the speaker out (seen on make run: this one scored 0.09 and was never promoted)
    [("user", "Struggling hard with Gradle builds, any tips?"), ("agent", "Happy to help with that.")],
    [("user", "Been fighting flaky integration tests all morning."), ("agent", "That sounds painful.")],
]
NEGATIVE = [
    [("user", "thanks!"), ("agent", "You're welcome!")],
    [("user", "ok sounds good"), ("agent", "Great.")],
    [("user", "haha nice"), ("agent", ":)")],
    [("user", "good morning, how are you?"), ("agent", "Good morning! I'm doing well, thanks for asking.")],
    [("user", "hi"), ("agent", "Hello! How can I help?")],
    [("user", "cool, thank you so much"), ("agent", "Anytime!")],
    [("user", "lol"), ("agent", "Glad that made you laugh.")],
    [("user", "bye for now"), ("agent", "Bye, talk soon!")],
    [("user", "yes please"), ("agent", "Okay.")],
    [("user", "awesome, appreciate it"), ("agent", "Happy to help.")],
    [("user", "hey there, what's up?"), ("agent", "Not much, how can I help today?")],
    [("user", "got it, thanks"), ("agent", "No problem.")],
    [("user", "I think so too"), ("agent", "Great minds.")],
    [("user", "I guess that works for me"), ("agent", "Perfect.")],
    [("user", "me too haha"), ("agent", "Ha!")],
    [("user", "I'm fine, thanks. You?"), ("agent", "All good here.")],
    [("user", "I see what you mean"), ("agent", "Glad it's clear.")],
    [("user", "Going to bed now, bye"), ("agent", "Good night!")],
    [("user", "Something is off with me today, lol"), ("agent", "Take it easy.")],
    [("user", "Heading out, talk later"), ("agent", "See you!")],
]
POSITIVE += [  # a fact inside a longer, partly social chain
    [("user", "hey, good morning"), ("agent", "Morning! What are we doing today?"),
     ("user", "the mobile app is built for Contoso, and I need the release notes done"), ("agent", "On it.")],
    [("user", "thanks for yesterday"), ("agent", "Anytime."),
     ("user", "by the way I moved from Jenkins to GitHub Actions for all our pipelines"), ("agent", "Good move.")],
]


def _importance(conversation: list[tuple[str, str]]) -> float:
    transcript = [TranscriptLine(role=role, type="message", content=content) for role, content in conversation]
    return OfflineLLM().form_chain(transcript).intrinsic_importance


def test_the_labelled_set_is_large_and_varied() -> None:
    assert len(POSITIVE) >= 15 and len(NEGATIVE) >= 10
    assert len({c[0][1].split()[0].lower() for c in POSITIVE}) >= 8  # not one template


@pytest.mark.parametrize("conversation", POSITIVE, ids=lambda c: c[-2][1][:40] if len(c) > 2 else c[0][1][:40])
def test_facts_decisions_preferences_problems_and_commitments_score_at_least_half(conversation) -> None:
    assert _importance(conversation) >= 0.5


@pytest.mark.parametrize("conversation", NEGATIVE, ids=lambda c: c[0][1][:40])
def test_small_talk_and_acknowledgements_score_at_most_a_fifth(conversation) -> None:
    assert _importance(conversation) <= 0.2


def test_the_separation_holds_over_the_whole_set() -> None:
    assert min(map(_importance, POSITIVE)) >= 0.5 > 0.2 >= max(map(_importance, NEGATIVE))
