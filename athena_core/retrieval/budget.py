"""Evidence within a token budget: pack ranked results, best first, until `max_tokens` is spent.

Tokens are approximated as ``ceil(whitespace words × 4/3)`` (about 0.75 English words per BPE token), a
tokenizer-free estimate that is stable across models; the evaluation counts tokens the same way.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def approx_tokens(text: str) -> int:
    return math.ceil(len(text.split()) * 4 / 3)


def pack_within_budget(
    ranked: Iterable[T],
    *,
    text: Callable[[T], str],
    key: Callable[[T], str],
    max_tokens: int | None,
    max_items: int,
) -> list[T]:
    """The best results that fit: rank order kept, duplicates (same key or same text) dropped.

    A result larger than what remains is skipped, not cut, so smaller results further down can still use
    the budget; packing stops at `max_items` results or when fewer than one token remains.
    """
    packed: list[T] = []
    seen_keys: set[str] = set()
    seen_texts: set[str] = set()
    used = 0
    for item in ranked:
        if len(packed) >= max_items or (max_tokens is not None and used >= max_tokens):
            break
        item_key, body = key(item), " ".join(text(item).split())
        if not body or item_key in seen_keys or body in seen_texts:
            continue
        size = approx_tokens(body)
        if max_tokens is not None and used + size > max_tokens:
            continue
        packed.append(item)
        seen_keys.add(item_key)
        seen_texts.add(body)
        used += size
    return packed
