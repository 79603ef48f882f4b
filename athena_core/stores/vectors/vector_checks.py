"""Checks every vector index applies at its edge: ids from the scope alphabet, unit vectors of the right size."""
from __future__ import annotations

import re

import numpy as np

# Same alphabet as ScopeId: chain ids never contain ':' or quotes, in every engine.
ID_PATTERN = re.compile(r"^[A-Za-z0-9_.@\-]{1,128}$")


def check_id(value: str, what: str) -> str:
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        raise ValueError(f"{what} must match {ID_PATTERN.pattern}, got {value!r}")
    return value


def as_unit_vector(vector: object, dimension: int) -> np.ndarray:
    """One float32 vector of `dimension` values, L2-normalised (a zero vector stays zero)."""
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim == 2 and array.shape[0] == 1:
        array = array[0]
    if array.ndim != 1 or array.shape[0] != dimension:
        raise ValueError(f"expected a vector of {dimension} values, got shape {tuple(array.shape)}")
    if not np.all(np.isfinite(array)):
        raise ValueError("vector contains NaN or infinite values")
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array
