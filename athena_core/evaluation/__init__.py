"""Retrieval-quality evaluation (SPEC S9 "Quality"): `athena eval locomo`.

- `locomo`: loads LoCoMo in place (CC BY-NC 4.0, never copied into the repository), ingests it through
  the real HTTP API and pipeline, asks every question through SearchMemory, writes the report.
- `scoring`: pure metrics (evidence turn/session recall@k and at token budgets, answer-word recall).
- `baselines`: BM25 and dense retrieval over the same raw turns.
"""
