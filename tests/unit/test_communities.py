"""SPEC S6.5: community detection (Leiden, modularity) and bridge scores — pure functions."""
from __future__ import annotations

import random
from itertools import combinations

import pytest

from athena_core.ltm.communities import Community, CommunityResult, bridge_scores, detect_communities


def clique(prefix: str, n: int, weight: float) -> list[tuple[str, str, float]]:
    return [(f"{prefix}{i}", f"{prefix}{j}", weight) for i, j in combinations(range(n), 2)]


def two_cliques_with_bridge() -> list[tuple[str, str, float]]:
    """Two dense heavy 8-cliques; one entity `t:u:bridge` linked lightly to two members of each."""
    edges = clique("t:u:a", 8, 5.0) + clique("t:u:b", 8, 5.0)
    edges += [("t:u:bridge", "t:u:a0", 1.0), ("t:u:a1", "t:u:bridge", 1.0),
              ("t:u:bridge", "t:u:b0", 1.0), ("t:u:b1", "t:u:bridge", 1.0)]
    return edges


def test_planted_cliques_split_and_bridge_scores_highest():
    edges = two_cliques_with_bridge()
    result = detect_communities(edges)
    m = result.membership
    assert set(m) == {f"t:u:a{i}" for i in range(8)} | {f"t:u:b{i}" for i in range(8)} | {"t:u:bridge"}
    assert len({m[f"t:u:a{i}"] for i in range(8)}) == 1
    assert len({m[f"t:u:b{i}"] for i in range(8)}) == 1
    assert m["t:u:a0"] != m["t:u:b0"]
    assert len(result.communities) == 2
    assert result.modularity > 0.3

    scores = bridge_scores(edges, m)
    assert set(scores) == set(m)
    assert scores["t:u:bridge"] >= 1
    assert scores["t:u:bridge"] == max(scores.values())
    # Only the bridge and the two members it touches in the other community see a foreign community.
    other = "b" if m["t:u:bridge"] == m["t:u:a0"] else "a"
    nonzero = {k for k, s in scores.items() if s}
    assert nonzero == {"t:u:bridge", f"t:u:{other}0", f"t:u:{other}1"}


def test_hub_between_three_communities_has_strictly_highest_bridge_score():
    edges = clique("x", 8, 5.0) + clique("y", 8, 5.0) + clique("z", 8, 5.0)
    edges += [("hub", f"{p}{i}", 1.0) for p in "xyz" for i in range(2)]
    result = detect_communities(edges)
    assert len(result.communities) == 3
    scores = bridge_scores(edges, result.membership)
    assert scores["hub"] == 2
    assert all(s <= 1 for k, s in scores.items() if k != "hub")


def test_deterministic_and_independent_of_edge_order():
    rng = random.Random(42)
    edges = []
    for c in range(6):  # six noisy communities of 30 nodes
        for _ in range(300):
            u = rng.randrange(30)
            v = rng.randrange(30) if rng.random() < 0.85 else rng.randrange(180) - 30 * c
            edges.append((f"n{30 * c + u}", f"n{(30 * c + v) % 180}", float(rng.randint(1, 4))))
    edges = [e for e in edges if e[0] != e[1]]
    first = detect_communities(edges, seed=3)
    second = detect_communities(list(edges), seed=3)
    assert first == second
    shuffled = list(edges)
    random.Random(7).shuffle(shuffled)
    flipped = [(b, a, w) if i % 2 else (a, b, w) for i, (a, b, w) in enumerate(shuffled)]
    assert detect_communities(flipped, seed=3) == first
    assert first.modularity > 0.3


def test_global_random_state_untouched():
    random.seed(123)
    expected = random.random()
    random.seed(123)
    detect_communities(two_cliques_with_bridge())
    assert random.random() == expected


def test_renumbering_by_size_then_smallest_key():
    # Community sizes 5, 3, 3 (the two 3-cliques tie on size: "k..." < "m..." decides), then a pair.
    edges = clique("p", 5, 3.0) + clique("m", 3, 3.0) + clique("k", 3, 3.0) + [("z1", "z2", 3.0)]
    result = detect_communities(edges)
    m = result.membership
    assert {m[f"p{i}"] for i in range(5)} == {0}
    assert {m[f"k{i}"] for i in range(3)} == {1}
    assert {m[f"m{i}"] for i in range(3)} == {2}
    assert m["z1"] == m["z2"] == 3
    assert [c.community_id for c in result.communities] == [0, 1, 2, 3]
    assert [c.size for c in result.communities] == [5, 3, 3, 2]
    # Stable under relabelling the input order.
    assert detect_communities(list(reversed(edges))).membership == m


def test_top_members_by_weighted_degree():
    # One 5-clique, weight 1 except c-b 3 and c-d 2: strengths c 7, b 6, d 5, a 4, e 4 (tie: key).
    heavier = {("b", "c"): 3.0, ("c", "d"): 2.0}
    edges = [(u, v, heavier.get((u, v), 1.0)) for u, v in combinations("abcde", 2)]
    result = detect_communities(edges, top_k=3)
    assert len(result.communities) == 1
    (only,) = result.communities
    assert only == Community(community_id=0, size=5, top_members=["c", "b", "d"])
    assert only.as_dict() == {"community_id": 0, "size": 5, "top_members": ["c", "b", "d"]}
    assert result.documents() == [only.as_dict()]
    assert detect_communities(edges).communities[0].top_members == ["c", "b", "d", "a", "e"]


def test_parallel_edges_are_summed():
    # x: one 2.5 edge to each of a0, a1; 1.0 edges to b0, b1. Alone, a wins; with parallel
    # observations of the b links (either direction) summing to 4.0 each, b wins.
    base = clique("a", 5, 2.0) + clique("b", 5, 2.0)
    base += [("x", "a0", 2.5), ("x", "a1", 2.5), ("x", "b0", 1.0), ("x", "b1", 1.0)]
    m = detect_communities(base).membership
    assert m["x"] == m["a0"] != m["b0"]
    parallels = [("b0", "x", 1.0), ("b1", "x", 1.0), ("x", "b0", 2.0), ("x", "b1", 2.0)]
    m = detect_communities(base + parallels).membership
    assert m["x"] == m["b0"] != m["a0"]


@pytest.mark.parametrize("heavy", ["a", "b"])
def test_weight_decides_which_community_a_node_joins(heavy):
    # Same topology; only the weights of x's links differ.
    edges = clique("a", 6, 5.0) + clique("b", 6, 5.0)
    light = "b" if heavy == "a" else "a"
    edges += [("x", f"{heavy}0", 10.0), ("x", f"{heavy}1", 10.0), ("x", f"{light}0", 1.0), ("x", f"{light}1", 1.0)]
    m = detect_communities(edges).membership
    assert m["x"] == m[f"{heavy}0"] == m[f"{heavy}5"]
    assert m["x"] != m[f"{light}0"]


def test_empty_graph():
    result = detect_communities([])
    assert result == CommunityResult()
    assert result.membership == {} and result.communities == [] and result.modularity == 0.0
    assert bridge_scores([], {}) == {}


def test_isolated_edge():
    result = detect_communities([("t:u:a", "t:u:b", 1.0)])
    assert result.membership == {"t:u:a": 0, "t:u:b": 0}
    assert result.modularity == pytest.approx(0.0)
    assert result.communities == [Community(0, 2, ["t:u:a", "t:u:b"])]
    assert bridge_scores([("t:u:a", "t:u:b", 1.0)], result.membership) == {"t:u:a": 0, "t:u:b": 0}


def test_zero_weight_graph_and_invalid_weights():
    result = detect_communities([("a", "b", 0.0)])
    assert result.modularity == 0.0
    assert set(result.membership) == {"a", "b"}
    with pytest.raises(ValueError):
        detect_communities([("a", "b", -1.0)])
    with pytest.raises(ValueError):
        detect_communities([("a", "b", float("nan"))])


def test_bridge_scores_counts_distinct_foreign_communities():
    membership = {"h": 0, "a": 0, "b": 1, "b2": 1, "c": 2, "loner": 3}
    edges = [("h", "a", 1.0), ("h", "b", 1.0), ("b2", "h", 1.0), ("h", "c", 1.0), ("h", "h", 9.0),
             ("h", "unknown", 1.0)]
    scores = bridge_scores(edges, membership)
    assert scores == {"h": 2, "a": 0, "b": 1, "b2": 1, "c": 1, "loner": 0}
