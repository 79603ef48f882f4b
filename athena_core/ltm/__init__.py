"""LTM: the per-user knowledge graph of facts (SPEC S6)."""
