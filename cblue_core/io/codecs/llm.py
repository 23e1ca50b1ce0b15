"""Codecs of the LLM benchmarks' records: PromptCBLUE prompts and CliMedBench items, and
CliMedBench prediction files."""
from __future__ import annotations

from typing import Any

from ...records import Example
from ...tasks import CLIMEDBENCH_SCENARIOS, PROMPT_TASKS, TaskSpec, canonical_prompt_task
from ..offsets import INCLUSIVE
from .base import Codec, DecodeContext, Record, RecordError
from .fields import as_record, describe, get, get_id


class PromptCodec(Codec):
    """PromptCBLUE: ``{"input","target","answer_choices","task_type","task_dataset","sample_id"}``."""

    GOLD = "target"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        inp = get(rec, "input", str)
        target = get(rec, "target", str, required=False, default="")
        choices = get(rec, "answer_choices", list, required=False, default=None) or []
        task_dataset = get(rec, "task_dataset", str)
        task_type = get(rec, "task_type", str, required=False, default="")
        sid = get(rec, "sample_id", str, required=False, default="xxxx")
        canonical = canonical_prompt_task(task_dataset)
        if canonical not in PROMPT_TASKS:
            ctx.warn(f"unknown task_dataset {task_dataset!r}", field="task_dataset",
                     expected="one of the 18 PromptCBLUE tasks (or CMeIE)", code="unknown_label")
        return Example(key=sid, index=index, text=inp, label=canonical, target=target,
                       choices=[str(c) for c in choices],
                       meta={"task_dataset": task_dataset, "task_type": task_type}, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        raw: Record = dict(ex.raw) if isinstance(ex.raw, dict) else {}
        raw.update({"input": ex.text, "target": ex.target, "sample_id": ex.key,
                    "task_dataset": ex.meta.get("task_dataset", ex.label)})
        # A model's prediction carries no record of its own: keep the fields post-processing reads.
        if "answer_choices" not in raw and ex.choices:
            raw["answer_choices"] = list(ex.choices)
        if "task_type" not in raw and ex.meta.get("task_type"):
            raw["task_type"] = ex.meta["task_type"]
        return raw


_SCENARIOS = {s.code: s for s in CLIMEDBENCH_SCENARIOS}
_MAX_OPTIONS = 26  # a list of options is lettered A, B, C...


class ClimedbenchCodec(Codec):
    """CliMedBench item (documented shape; the real questions are not public):
    ``{"id","scenario","dimension","prompt","input","options": {"A": ...},"reference"}``."""

    GOLD = "reference"

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        obj = as_record(rec)
        rid = get_id(obj, "id")
        scen = get(obj, "scenario", str)
        scenario = _SCENARIOS.get(scen)
        if scenario is None:
            ctx.warn(f"unknown scenario {scen!r}", field="scenario",
                     expected="one of " + ", ".join(_SCENARIOS), code="unknown_label")
        dim = get(obj, "dimension", str, required=False, default=scenario.dimension if scenario else "")
        options = _options(obj.get("options"))
        ref = get(obj, "reference", str, required=False, default="")
        return Example(key=str(rid), index=index, text=get(obj, "input", str, required=False, default=""),
                       label=scen, target=ref,
                       choices=[f"{k}: {v}" for k, v in options.items()],
                       meta={"scenario": scen, "dimension": dim,
                             "prompt": get(obj, "prompt", str, required=False, default=""),
                             "options": options}, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return {"id": ex.key, "prediction": ex.target}


def _options(value: object) -> dict[str, Any]:
    """CliMedBench options: an object keyed by letter, or a list lettered A, B, C..."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    if not isinstance(value, list):
        raise RecordError("options", f"is {describe(value)}", "an object or a list")
    if len(value) > _MAX_OPTIONS:
        raise RecordError("options", f"is a list of {len(value)} options",
                          f"at most {_MAX_OPTIONS} options, lettered A to Z")
    return {chr(65 + i): str(o) for i, o in enumerate(value)}

class ClimedbenchPredictionCodec(Codec):
    """CliMedBench predictions: ``{"id", "prediction": the model's raw text}``."""

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        rid = get_id(rec, "id")
        return Example(key=str(rid), index=index, target=get(rec, "prediction", str), raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> Record:
        return {"id": ex.key, "prediction": ex.target}

