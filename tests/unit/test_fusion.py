"""Reciprocal rank fusion (issue 7): reference values, weights, provenance."""
from __future__ import annotations

import pytest

from athena_core.retrieval.fusion import rank_bonus, reciprocal_rank_fusion


def test_scores_are_the_weighted_sum_of_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion({"lexical": ["a", "b"], "dense": ["b", "c"]}, {"lexical": 1.0, "dense": 1.0}, k=10)
    scores = {f.key: f.score for f in fused}
    assert scores == pytest.approx({"a": 1 / 11, "b": 1 / 12 + 1 / 11, "c": 1 / 12})
    assert [f.key for f in fused] == ["b", "a", "c"]
    assert {f.key: f.retrievers for f in fused} == {"a": ["lexical"], "b": ["lexical", "dense"], "c": ["dense"]}
    assert {f.key: f.ranks for f in fused}["b"] == {"lexical": 2, "dense": 1}


def test_weights_decide_between_retrievers_that_disagree() -> None:
    lists = {"lexical": ["name_match", "x"], "dense": ["paraphrase", "y"]}
    lexical_first = reciprocal_rank_fusion(lists, {"lexical": 2.0, "dense": 1.0})
    dense_first = reciprocal_rank_fusion(lists, {"lexical": 1.0, "dense": 2.0})
    assert lexical_first[0].key == "name_match" and dense_first[0].key == "paraphrase"
    # found by both at rank 2 beats a single rank-1 find when the weights are equal
    both = {"lexical": ["name_match", "other"], "dense": ["paraphrase", "other"]}
    assert reciprocal_rank_fusion(both, {})[0].key == "other"


def test_a_retriever_with_weight_zero_is_off() -> None:
    fused = reciprocal_rank_fusion({"lexical": ["a"], "dense": ["b", "a"]}, {"lexical": 0.0})
    assert [(f.key, f.retrievers) for f in fused] == [("b", ["dense"]), ("a", ["dense"])]


def test_a_small_k_trusts_the_top_of_each_list_more() -> None:
    lists = {"lexical": ["top", "x1", "x2", "both"], "dense": ["y1", "y2", "y3", "both"]}
    assert reciprocal_rank_fusion(lists, {}, k=1)[0].key == "top"
    assert reciprocal_rank_fusion(lists, {}, k=60)[0].key == "both"


def test_a_key_repeated_in_one_list_counts_once_at_its_best_rank() -> None:
    [item] = reciprocal_rank_fusion({"lexical": ["a", "a", "a"]}, {}, k=10)
    assert item.score == pytest.approx(1 / 11) and item.ranks == {"lexical": 1}


def test_ties_keep_first_seen_order_and_k_must_be_positive() -> None:
    assert [f.key for f in reciprocal_rank_fusion({"a": ["x"], "b": ["y"]}, {})] == ["x", "y"]
    with pytest.raises(ValueError, match="k must be positive"):
        reciprocal_rank_fusion({"a": ["x"]}, {}, k=0)
    assert rank_bonus(1, 0.5, k=10) == pytest.approx(0.5 / 11)
