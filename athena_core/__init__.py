"""Athena core: the domain code shared by the API (`athena_api`) and the workers (`athena_tasks`).

Models, settings, store ports and adapters, LLM and embedding providers, and the pure algorithms
(heat, topic-break gate, quality gate, merge confidence) live here so both processes import one thing.
"""
