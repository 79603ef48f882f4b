"""The local model on its two runtimes (issue 16 item 6): ONNX Runtime (the default) against torch, and
a query on ONNX Runtime in int8 (`ATHENA_EMBEDDING_QUERY_PRECISION`, the default since the fourteenth reads round).

    python bench/embedding_runtime.py            # 200 queries, 512 passages
    python bench/embedding_runtime.py --quick    # 10 queries, 16 passages (the CI smoke run)

One process, both runtimes loaded, one thread each (as the API and worker run them). Queries are one text
per call, as a search embeds them, timed alternately (query i on ONNX, then on torch) so a noisy machine
slows both alike; passages go in batches of 32, as the pipeline's embed step sends them. Reports p50/p95 per
runtime, the ratio ONNX ÷ torch of the same run, and the largest difference between their vectors. The
int8 queries (`onnx-int8-query`, `embed_query` of an embedder with `query_precision="int8"`) are timed in the
same turns; their row has no passages (stored texts stay float32), and the summary gives int8 ÷ float32 and
the cosine of each int8 query vector to its float32 one (min and median).

Stored texts as the worker sends them (`embedding_stored_texts` records): calls of 8 and of 32 texts of
chat-like, mixed lengths (most 4-30 words, one in ten 40-120), ms of CPU per text, three ways in turns, call
by call: float32 in sorted chunks of 32 (`sorted-chunks`, the batching before `onnx_minilm.length_batches`),
float32 in length batches (`length-batches`, shipped), and int8 one text per call (`int8-texts`,
`ATHENA_EMBEDDING_TEXT_PRECISION=int8`); each with its ratio to `sorted-chunks` of the same run.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import emit, log, machine_info, percentile, save_results  # noqa: E402

WORDS = ("kafka consumer rebalancing time zone handling garden bulbs sourdough loaf raised bed climate "
         "budget recording setup payments service postgres pool settings support group sunrise painting "
         "weekend hike lake camping trip invoice deadline migration schema review").split()


def texts(rng: random.Random, n: int, low: int, high: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))) + "?" for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--passages", type=int, default=None)
    args = parser.parse_args()
    queries_n = args.queries or (10 if args.quick else 200)
    passages_n = args.passages or (16 if args.quick else 512)

    from athena_core.providers.local_embedder import LocalEmbedder

    t0 = time.perf_counter()
    onnx = LocalEmbedder(runtime="onnx")
    onnx_load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    torch = LocalEmbedder(runtime="torch")
    torch_load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    int8 = LocalEmbedder(runtime="onnx", query_precision="int8")
    int8_load_s = time.perf_counter() - t0
    if onnx.runtime != "onnx" or int8.query_precision != "int8":
        raise SystemExit(f"ONNX Runtime or its int8 model is not available here ({onnx!r}, {int8!r}); see the log")
    rng = random.Random(7)
    queries = texts(rng, queries_n, 4, 16)
    passages = texts(rng, passages_n, 8, 120)
    calls = {"onnx": onnx.embed, "torch": torch.embed, "onnx-int8-query": int8.embed_query}
    for call in calls.values():
        call(queries[:5])
    timed: dict[str, list[float]] = {name: [] for name in calls}
    for q in queries:
        for name, call in calls.items():
            t0 = time.perf_counter()
            call([q])
            timed[name].append((time.perf_counter() - t0) * 1000)
    cosine = np.sum(int8.embed_query(queries) * onnx.embed(queries), axis=1)
    batch_s: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    for name, embedder in (("onnx", onnx), ("torch", torch)):
        t0 = time.perf_counter()
        vectors[name] = embedder.embed(passages)
        batch_s[name] = time.perf_counter() - t0
    records = []
    load_s = {"onnx": onnx_load_s, "torch": torch_load_s, "onnx-int8-query": int8_load_s}
    for name in calls:
        values = sorted(timed[name])
        records.append({"bench": "embedding_runtime", "runtime": name, "queries": len(values),
                        "query_p50_ms": round(percentile(values, 50), 2),
                        "query_p95_ms": round(percentile(values, 95), 2),
                        "passages": passages_n if name in batch_s else None,
                        "passages_per_s": round(passages_n / batch_s[name], 1) if name in batch_s else None,
                        "load_s": round(load_s[name], 2), **machine_info()})
    onnx_row, torch_row, int8_row = records
    records.append({"bench": "embedding_runtime_summary",
                    "query_p50_ratio_onnx_to_torch": round(onnx_row["query_p50_ms"] / torch_row["query_p50_ms"], 3),
                    "passages_per_s_ratio_onnx_to_torch": round(onnx_row["passages_per_s"] / torch_row["passages_per_s"], 3),
                    "max_abs_diff": float(np.max(np.abs(vectors["onnx"] - vectors["torch"]))),
                    "query_p50_ratio_int8_to_onnx": round(int8_row["query_p50_ms"] / onnx_row["query_p50_ms"], 3),
                    "int8_query_cosine_min": round(float(cosine.min()), 4),
                    "int8_query_cosine_median": round(float(np.median(cosine)), 4), **machine_info()})
    records += stored_texts(rng, onnx, 2 if args.quick else 40)
    for record in records:
        emit(record)
    log(f"[embedding_runtime] saved {save_results('embedding_runtime', records)}")


def chat_texts(rng: random.Random, n: int) -> list[str]:
    """Turns of a chat: most short, one in ten long (a pasted log, a long answer)."""
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 120) if rng.random() < 0.1
                                                      else rng.randint(4, 30))) for _ in range(n)]


def stored_texts(rng: random.Random, onnx, calls_per_size: int) -> list[dict]:  # noqa: ANN001 - LocalEmbedder
    """CPU per stored text in the worker's calls, three ways in turns (see the module docstring)."""
    from athena_core.providers import onnx_minilm
    from athena_core.providers.local_embedder import LocalEmbedder

    int8 = LocalEmbedder(runtime="onnx", text_precision="int8")
    shipped_share = onnx_minilm.PAD_SHARE

    def sorted_chunks(batch: list[str]) -> None:
        onnx_minilm.PAD_SHARE = float("inf")  # every row joins until the chunk has 32: sorting alone
        try:
            onnx.embed(batch)
        finally:
            onnx_minilm.PAD_SHARE = shipped_share
    ways = {"sorted-chunks": sorted_chunks, "length-batches": onnx.embed, "int8-texts": int8.embed}
    records = []
    for size in (8, 32):
        cpu_s = {name: 0.0 for name in ways}
        for _ in range(calls_per_size):
            batch = chat_texts(rng, size)
            for name, way in ways.items():
                t0 = time.process_time()
                way(batch)
                cpu_s[name] += time.process_time() - t0
        per_text = {name: 1000 * seconds / (size * calls_per_size) for name, seconds in cpu_s.items()}
        for name in ways:
            records.append({"bench": "embedding_stored_texts", "way": name, "texts_per_call": size,
                            "calls": calls_per_size, "cpu_ms_per_text": round(per_text[name], 2),
                            "ratio_to_sorted_chunks": round(per_text[name] / per_text["sorted-chunks"], 3),
                            **machine_info()})
    return records


if __name__ == "__main__":
    main()
