"""LLM and embedding providers (SPEC S8): one protocol per role, one module per engine."""
