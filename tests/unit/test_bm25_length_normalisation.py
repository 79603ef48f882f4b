"""BM25's length normalisation, put back on the best rows of an FTS5 table without per-row token counts
(`stores/lexical/sqlite_lexical.length_normalised`)."""
from __future__ import annotations

from athena_core.stores.lexical.sqlite_lexical import BM25_B, BM25_K1, length_normalised


def test_of_two_equal_matches_the_shorter_text_ranks_first() -> None:
    rows = [("long", 2.0, 400), ("short", 2.0, 40)]
    assert length_normalised(rows) == ["short", "long"]


def test_a_clearly_better_match_outranks_a_shorter_one() -> None:
    rows = [("long-two-words", 4.0, 200), ("short-one-word", 2.0, 100)]
    assert length_normalised(rows) == ["long-two-words", "short-one-word"]


def test_the_division_is_bm25s_length_term_against_the_rows_mean() -> None:
    """Texts of 50 and 150 characters (half and 1.5 times their mean): the longer needs exactly the ratio
    of BM25's length terms, (1 + k1 (1 - b + 1.5 b)) / (1 + k1 (1 - b + 0.5 b)), more raw score to rank first."""
    long_weight = 1 + BM25_K1 * (1 - BM25_B + BM25_B * 1.5)
    short_weight = 1 + BM25_K1 * (1 - BM25_B + BM25_B * 0.5)
    ratio = long_weight / short_weight
    assert length_normalised([("short", 1.0, 50), ("long", ratio * 0.99, 150)]) == ["short", "long"]
    assert length_normalised([("short", 1.0, 50), ("long", ratio * 1.01, 150)]) == ["long", "short"]


def test_ties_keep_the_order_they_came_in_and_nothing_gives_nothing() -> None:
    assert length_normalised([("b", 1.0, 10), ("a", 1.0, 10)]) == ["b", "a"]
    assert length_normalised([]) == []
