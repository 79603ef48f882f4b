"""Hybrid retrieval (issue 7): lexical + dense + graph, fused by reciprocal rank, packed into a token budget."""
