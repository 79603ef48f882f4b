"""Reciprocal rank fusion (issue 7): reference values, weights, provenance."""
from __future__ import annotations

import pytest

from athena_core.retrieval.fusion import best_keys, fuse_loaded, rank_bonus, reciprocal_rank_fusion


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


def test_best_keys_loads_every_key_without_a_budget_else_the_best_by_a_first_fusion() -> None:
    lists = {"lexical": ["a", "x", "b", "c"], "dense": ["b", "y", "a"]}
    weights = {"lexical": 1.0, "dense": 1.0}
    assert best_keys(lists, weights, 10.0, 0) == ["a", "x", "b", "c", "y"]
    # a and b are in both lists, so they outrank x (lexical 2) and y (dense 2)
    assert best_keys(lists, weights, 10.0, 2) == ["a", "b"]
    assert best_keys(lists, weights, 10.0, 3) == ["a", "b", "x"]


def test_fuse_loaded_keeps_each_loaded_keys_score_as_if_all_were_loaded() -> None:
    lists = {"lexical": ["a", "x", "b"], "dense": ["b", "a", "y"]}
    weights = {"lexical": 1.0, "dense": 0.5}
    everything = {f.key: f.score for f in reciprocal_rank_fusion(lists, weights, 10.0)}
    fused, ranks = fuse_loaded(lists, weights, 10.0, gone=set(), loaded={"a", "b"})  # x and y never loaded
    assert [f.key for f in fused] == ["a", "b"]
    assert {f.key: f.score for f in fused} == {"a": everything["a"], "b": everything["b"]}
    assert ranks == {"a": 1, "b": 2}
    # x loaded but not kept (say archived): it leaves the list and b moves up to lexical rank 2
    fused, _ = fuse_loaded(lists, weights, 10.0, gone={"x"}, loaded={"a", "b", "y"})
    b = next(f for f in fused if f.key == "b")
    assert b.ranks == {"lexical": 2, "dense": 1} and b.score == 1.0 / 12 + 0.5 / 11
    # the rank of a loaded key counts the unloaded keys above it
    fused, ranks = fuse_loaded(lists, weights, 10.0, gone=set(), loaded={"y"})
    assert [f.key for f in fused] == ["y"] and ranks["y"] == 4
