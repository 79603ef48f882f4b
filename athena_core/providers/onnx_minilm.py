"""all-MiniLM-L6-v2 run by ONNX Runtime: the installed package's weights, exported once to an ONNX file.

Why: a search embeds one short query, and sentence-transformers on torch spends most of its time per
query (one thread) in framework overhead; ONNX Runtime gives the same vector (largest difference per
component about 2e-7) in 0.41 of the time (29.4 → 12.0 ms p50, `bench/embedding_runtime.py`), and the
process never imports torch (about 400 MB less). For batches the two are about as fast.

The export needs torch and onnx once per machine and model package version. The file is cached in
`cache_dir`, written under a temporary name and renamed, so processes starting together never read half a
file; an export whose output differs from torch's on probe texts is not kept. Loading a cached file imports
neither torch nor sentence-transformers: the tokenizer is the package's own `tokenizer.json`, set to the
model's `max_seq_length` (the file itself says 128 and fixed padding; sentence-transformers overrides both).
"""
from __future__ import annotations

import json
import logging
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np

FORMAT = "v1"  # bump when the export (inputs, outputs, opset) changes, so old cached files are not used
PROBE_TEXTS = ("hello world", "", "Kafka consumer rebalancing keeps biting me on Mondays.",
               "[8 May 2023] Caroline: I went to the LGBTQ support group yesterday and it was so powerful. " * 6)
EXPORT_TOLERANCE = 1e-4
# A query's int8 vector against its float32 one (`quantize`): about 0.993 on ordinary queries, 0.986 at
# worst on 300 measured; a quantised file below this on the probe texts is not kept.
QUANTIZED_MIN_COSINE = 0.97


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/athena/models`, else `~/.cache/athena/models`: one export per machine, not per data dir."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "athena" / "models"


def cached_file(cache_dir: Path, package_version: str) -> Path:
    return cache_dir / f"all-MiniLM-L6-v2-{package_version}-{FORMAT}.onnx"


def quantized_file(exported: Path) -> Path:
    """Where the int8 form of an exported file is kept: beside it."""
    return exported.with_name(exported.stem + "-int8" + exported.suffix)


def _max_seq_length(model_dir: Path) -> int:
    return int(json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"])


def export(model_dir: Path, target: Path) -> None:
    """Export the transformer of `model_dir` to `target` (token ids, mask and type ids in; the last hidden
    state out; batch and length dynamic), check it against torch on `PROBE_TEXTS`, then rename into place.
    Pooling and normalising stay in numpy (`OnnxMiniLM`), as sentence-transformers does them."""
    import onnxruntime as ort
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir)).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                    token_type_ids: torch.Tensor) -> torch.Tensor:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    tokenizer = _tokenizer(model_dir)
    # traced on one text; the probes, padded to one batch, then check the file
    sample = _encode_batch(tokenizer, [PROBE_TEXTS[0]])
    ids, mask, types = _encode_batch(tokenizer, list(PROBE_TEXTS))
    names = ["input_ids", "attention_mask", "token_type_ids"]
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        with torch.no_grad(), warnings.catch_warnings():  # the tracer's warnings: the probe check below decides
            warnings.simplefilter("ignore")
            # torch's own answer first: after a trace the model no longer gives it
            expected = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                             token_type_ids=torch.from_numpy(types)).last_hidden_state.numpy()
            torch.onnx.export(LastHiddenState(model), tuple(torch.from_numpy(a) for a in sample), tmp,
                              input_names=names, output_names=["last_hidden_state"], opset_version=17,
                              dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
                              dynamo=False)
        got = ort.InferenceSession(tmp, providers=["CPUExecutionProvider"]).run(
            None, dict(zip(names, (ids, mask, types))))[0]
        gap = float(np.max(np.abs(_pool(got, mask) - _pool(expected, mask))))
        if gap > EXPORT_TOLERANCE:
            raise RuntimeError(f"the ONNX export differs from torch by {gap:.2e} (> {EXPORT_TOLERANCE})")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def quantize(model_dir: Path, exported: Path, target: Path) -> None:
    """The exported model with int8 weights (ONNX Runtime's dynamic quantisation, one scale per output
    channel): a query's embedding 2.2-3.5x faster on one thread (`bench/embedding_runtime.py`), its
    vector at cosine ~0.99 to the float32 one. For queries only (`LocalEmbedder`'s `query_precision`): the
    stored vectors stay float32. Checked on `PROBE_TEXTS` against the float32 file, then renamed into place."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        with warnings.catch_warnings(), _without_preprocessing_advice():
            warnings.simplefilter("ignore")
            quantize_dynamic(str(exported), tmp, weight_type=QuantType.QInt8, per_channel=True)
        texts = list(PROBE_TEXTS)
        worst = float(np.min(np.sum(OnnxMiniLM(model_dir, Path(tmp)).encode(texts, len(texts))
                                    * OnnxMiniLM(model_dir, exported).encode(texts, len(texts)), axis=1)))
        if worst < QUANTIZED_MIN_COSINE:
            raise RuntimeError(f"the int8 model's vectors are at cosine {worst:.3f} to float32's "
                               f"(< {QUANTIZED_MIN_COSINE})")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class _without_preprocessing_advice(logging.Filter):
    """Drops ONNX Runtime's root-logger advice to pre-process the model before quantising, while `quantize`
    runs: the shape-inference pre-processing it means is for static quantisation; ours is dynamic and checked
    on the probe texts, so the advice is noise on every setup."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()

    def __enter__(self) -> None:
        logging.getLogger().addFilter(self)

    def __exit__(self, *exc: object) -> None:
        logging.getLogger().removeFilter(self)


def _tokenizer(model_dir: Path):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=_max_seq_length(model_dir))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest text of the batch
    return tokenizer


def _encode_batch(tokenizer, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    encodings = tokenizer.encode_batch(texts)
    return tuple(np.array([getattr(e, field) for e in encodings], dtype=np.int64)
                 for field in ("ids", "attention_mask", "type_ids"))


def _pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the real tokens, then L2-normalised: the package's Pooling and Normalize modules."""
    weights = mask[..., None].astype(np.float32)
    mean = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    return mean / np.clip(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12, None)


# A text joins a batch only when padding it to the batch's width adds at most this many tokens (the larger
# of the two): a padded token costs as much as a real one. LoCoMo turns, float32, one thread, ms of CPU per
# text with batches of at most 32 (`length_batches`): calls of 32 texts 20.4 → 8.8, calls of 8 14.0 → 9.5,
# one call of 640 texts 9.2 → 8.7; one text per call 10.0.
PAD_SHARE = 0.1
PAD_MIN_TOKENS = 4


def length_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """The rows of a call in batches, longest first: a batch of at most `batch_size` rows whose lengths are
    within `PAD_SHARE` (or `PAD_MIN_TOKENS`) of its longest. Sorting alone (sentence-transformers' way) still
    pads the short turns of a small call to its one long text."""
    batches: list[np.ndarray] = []
    start = 0
    order = np.argsort(-lengths, kind="stable")
    for i in range(1, len(order) + 1):
        if i == len(order) or i - start == batch_size or (
                lengths[order[start]] - lengths[order[i]] > max(PAD_MIN_TOKENS, PAD_SHARE * lengths[order[start]])):
            batches.append(order[start:i])
            start = i
    return batches


class OnnxMiniLM:
    """Texts → unit vectors with the exported model; batches are formed by token length
    (`length_batches`), so a long text does not pad a batch of short ones."""

    def __init__(self, model_dir: Path, onnx_file: Path, threads: int | None = 1) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # cores are shared
        self._session = ort.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
        self.onnx_file = onnx_file
        self._tokenizer = _tokenizer(model_dir)
        self.max_seq_length = _max_seq_length(model_dir)
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        self.dimension = int(pooling["word_embedding_dimension"])

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        ids, mask, types = _encode_batch(self._tokenizer, texts)  # padded to the longest text of all
        lengths = mask.sum(axis=1)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for rows in length_batches(lengths, batch_size):
            width = int(lengths[rows[0]])
            batch = {"input_ids": ids[rows, :width], "attention_mask": mask[rows, :width],
                     "token_type_ids": types[rows, :width]}
            out[rows] = _pool(self._session.run(None, batch)[0], batch["attention_mask"])
        return out
