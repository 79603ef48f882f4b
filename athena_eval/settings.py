"""Where the evaluations find their data and write their reports: settings of the harness, not of the
service (`ATHENA_EVAL_*`, or the CLI options that override them). Relative paths are relative to the
working directory (`make eval` runs from the repository root)."""
from __future__ import annotations

from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict


class EvalSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ATHENA_EVAL_", extra="ignore")

    # LoCoMo (CC BY-NC 4.0) is not shipped; by default it sits beside the checkout.
    locomo_dataset: Path = Path("../shared/datasets/locomo/locomo10.json")
    out_dir: Path = Path("bench/results")
