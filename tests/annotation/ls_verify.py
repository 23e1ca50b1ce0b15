"""Label Studio's own validation (label-studio-sdk, a dev dependency) of exported tasks.

``LabelInterface(config)`` parses a labeling config; ``validate()`` checks it against Label
Studio's config schema; ``validate_prediction(obj, return_errors=True)`` checks one annotation
or prediction (the two share their checks: each region's control and object tags exist, its
type matches the control, its labels or choices are values the control declares, each relation
joins two regions). Two checks the SDK leaves to the server are added: each object tag's
``$variable`` is in the task's ``data`` (what ``validate_task`` meant to do; its annotation
branch calls ``validate_annotation()`` without an argument), and each relation's labels are
values of the config's ``<Relations>``.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable


def label_studio_errors(config: str, tasks: str | Iterable[dict]) -> tuple[int, list[str]]:
    """(tasks rejected, the first 20 reasons) for ``tasks`` (JSON text or dicts) under ``config``;
    raises what LabelInterface raises for an invalid config."""
    from label_studio_sdk.label_interface import LabelInterface

    li = LabelInterface(config)
    li.validate()
    relations = {r.get("value") for r in ET.fromstring(config).iter("Relation")}
    items = json.loads(tasks) if isinstance(tasks, str) else list(tasks)
    rejected, reasons = 0, []
    for n, task in enumerate(items):
        errors = [f"data.{obj.value_name} missing" for obj in li.objects
                  if obj.value_is_variable and task["data"].get(obj.value_name) is None]
        for source in ("annotations", "predictions"):
            for obj in task.get(source) or []:
                errors += li.validate_prediction(obj, return_errors=True)
                errors += [f"relation label {lab!r} is not a <Relation> value"
                           for r in obj.get("result", []) if r.get("type") == "relation"
                           for lab in r.get("labels") or [] if lab not in relations]
        if errors:
            rejected += 1
            reasons += [f"task {task.get('id', n + 1)}: {e}" for e in errors[:2]]
    return rejected, reasons[:20]
