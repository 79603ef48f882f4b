"""Which capitalised words of a chat are entities: a word that merely opens turn after turn is none."""
from __future__ import annotations

from athena_core.providers.offline.entities import entity_mentions


def names(sentences: list[str]) -> set[str]:
    return {m.name for m in entity_mentions(sentences)}


def test_words_that_open_chat_turns_are_no_entities() -> None:
    """LoCoMo, in chunks of 20 turns: "Wow" was an entity 473 times, "Life", "Family", "Art" and "Music"
    each a dozen, because a capital after "Jon: " opens a clause and these recur there."""
    chat = ["Jon: Wow, that's a great photo!", "Gina: Wow, thanks!", "Jon: Life is busy at the studio.",
            "Gina: Life with a dog is fun, my life is never dull.", "Jon: Congrats on the new job!",
            "Gina: Congrats to you too!"]
    found = names(chat)
    assert not found & {"Wow", "Life", "Congrats"}
    assert {"Jon", "Gina"} <= found


def test_a_name_that_only_opens_sentences_still_counts_when_it_recurs() -> None:
    assert "Maria" in names(["Maria called this morning.", "Maria wants the report by Friday."])
    assert "Maria" not in names(["Maria called this morning."])  # once, at the start: maybe just a capital
