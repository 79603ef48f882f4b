"""Sentence vectors' texts and excerpts (athena_core/retrieval/sentences.py)."""
from __future__ import annotations

from athena_core.retrieval.sentences import (
    MAX_SENTENCE_VECTORS,
    event_of,
    excerpt,
    sentence_texts,
    sentence_vector_id,
    sentence_vector_ids,
    split_label,
)

LONG = ("Anna: Thanks, that means a lot! I spent the whole weekend on it. The hardest part was the oven, "
        "it kept cracking the glaze. Next month I will try a smaller kiln.")


def test_a_transcript_label_is_split_off_only_when_it_looks_like_a_name() -> None:
    assert split_label("Anna: hi there.") == ("Anna", "hi there.")
    assert split_label("Dr Anna Smith: hi.") == ("Dr Anna Smith", "hi.")
    assert split_label("Note to self, buy milk: two litres.") == ("", "Note to self, buy milk: two litres.")
    assert split_label("no label here") == ("", "no label here")
    assert split_label("http://example.org is down") == ("", "http://example.org is down")


def test_sentence_texts_carry_the_label_and_skip_short_or_single_sentence_texts() -> None:
    texts = sentence_texts(LONG, min_words=20)
    assert texts == ["Anna: Thanks, that means a lot!", "Anna: I spent the whole weekend on it.",
                     "Anna: The hardest part was the oven, it kept cracking the glaze.",
                     "Anna: Next month I will try a smaller kiln."]
    assert sentence_texts(LONG, min_words=100) == []  # under the word floor: its own vector is enough
    assert sentence_texts(LONG, min_words=0) == []  # 0 switches sentence vectors off
    one_sentence = "Anna: " + " ".join(["word"] * 40)
    assert sentence_texts(one_sentence, min_words=20) == []


def test_a_long_text_folds_its_tail_into_the_last_sentence_vector() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(12))
    texts = sentence_texts(text, min_words=5)
    assert len(texts) == MAX_SENTENCE_VECTORS
    assert texts[-1].startswith("Sentence number 7") and texts[-1].endswith("number 11 is here.")


def test_sentence_ids_map_back_to_their_event_and_are_bounded() -> None:
    assert sentence_vector_id("evt_1", 3) == "evt_1.s3"
    assert event_of("evt_1.s3") == ("evt_1", True)
    assert event_of("evt_1") == ("evt_1", False)
    assert event_of("evt_1.sx") == ("evt_1.sx", False)
    assert sentence_vector_ids("evt_1") == [f"evt_1.s{i}" for i in range(MAX_SENTENCE_VECTORS)]


def test_an_excerpt_starts_at_the_best_matching_sentence_and_grows_forward() -> None:
    cut = excerpt(LONG, ["oven", "glazes"], max_words=20)
    # the oven sentence (12 words) plus the next (8 words) fit in 20; the label stays, cuts are marked
    assert cut == "Anna: … The hardest part was the oven, it kept cracking the glaze. Next month I will try a smaller kiln."
    assert len(cut.split()) <= 20 + 2  # label and the "…" mark
    # the last sentence matches: nothing after it, so it grows backward while the words fit
    assert excerpt(LONG, ["kiln"], max_words=19) == (
        "Anna: … The hardest part was the oven, it kept cracking the glaze. Next month I will try a smaller kiln.")
    assert excerpt(LONG, ["kiln"], max_words=16) == "Anna: … Next month I will try a smaller kiln."


def test_an_excerpt_of_a_short_text_is_none_and_a_long_sentence_is_cut() -> None:
    assert excerpt("Anna: short one.", ["one"], max_words=15) is None
    assert excerpt(LONG, ["oven"], max_words=0) is None
    one_long = "Bo: " + " ".join(f"w{i}" for i in range(40)) + " oven."
    cut = excerpt(one_long, ["oven"], max_words=10)
    assert cut == "Bo: " + " ".join(f"w{i}" for i in range(10)) + " …"


def test_without_a_matching_word_the_excerpt_is_the_opening() -> None:
    assert excerpt(LONG, ["zebra"], max_words=12) == "Anna: Thanks, that means a lot! I spent the whole weekend on it. …"
