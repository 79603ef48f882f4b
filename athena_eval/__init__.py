"""Retrieval-quality evaluation (SPEC S9 "Quality"): `athena eval locomo`.

- `locomo`: the harness: ingests LoCoMo through the real HTTP API and pipeline, asks every question
  through SearchMemory, writes the report.
- `dataset`: loads LoCoMo in place (CC BY-NC 4.0, never copied into the repository) from `--dataset` or
  `ATHENA_EVAL_LOCOMO_DATASET` (`settings`).
- `store_reads`: what the harness reads of the running stack's stores, through the ports.
- `scoring`: pure metrics (evidence turn/session recall@k and at token budgets, answer-word recall).
- `baselines`: BM25 and dense retrieval over the same raw turns.
"""
