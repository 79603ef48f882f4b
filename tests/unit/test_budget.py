"""Evidence within a token budget (issue 7): order kept, duplicates dropped, never over budget."""
from __future__ import annotations

import random

from athena_core.retrieval.budget import approx_tokens, pack_within_budget


def _pack(items: list[tuple[str, str]], max_tokens: int | None, max_items: int = 100) -> list[str]:
    packed = pack_within_budget(items, text=lambda i: i[1], key=lambda i: i[0], max_tokens=max_tokens,
                                max_items=max_items)
    return [key for key, _ in packed]


def test_tokens_are_words_times_four_thirds_rounded_up() -> None:
    assert approx_tokens("") == 0
    assert approx_tokens("one") == 2
    assert approx_tokens("one two three") == 4
    assert approx_tokens("  spaced   out\nwords  ") == 4


def test_a_result_too_large_is_skipped_and_smaller_ones_after_it_still_fit() -> None:
    items = [("a", "a " * 6), ("big", "w " * 30), ("b", "b " * 3), ("c", "c " * 3)]
    # a = 8 tokens, big = 40, b = c = 4: a budget of 16 takes a, skips big, takes b and c
    assert _pack(items, 16) == ["a", "b", "c"]
    assert _pack(items, 15) == ["a", "b"]


def test_duplicates_by_id_or_by_text_are_dropped_keeping_the_better_ranked() -> None:
    items = [("a", "same words here"), ("a", "other text"), ("b", "same   words here"), ("c", "fresh")]
    assert _pack(items, None) == ["a", "c"]


def test_no_budget_packs_up_to_the_item_limit_and_empty_texts_are_skipped() -> None:
    items = [(str(i), f"text {i}") for i in range(10)]
    assert _pack(items, None, max_items=3) == ["0", "1", "2"]
    assert _pack([("e", "   "), ("f", "kept")], None) == ["f"]


def test_random_packings_never_exceed_the_budget_and_keep_rank_order() -> None:
    rng = random.Random(7)
    for _ in range(200):
        items = [(str(i), "w " * rng.randint(1, 60)) for i in range(rng.randint(0, 40))]
        budget = rng.randint(1, 500)
        keys = _pack(items, budget)
        assert sum(approx_tokens(dict(items)[k]) for k in keys) <= budget
        assert keys == sorted(keys, key=int)
