"""The official export of records holding line separators: JSON lines that every reader (ours,
which splits with ``str.splitlines``, included) reads back as the records they were."""
from __future__ import annotations

import json

from cblue_core.annotation import Annotation
from cblue_core.annotation.export import export_official
from cblue_core.io.validate import validate
from tests.annotation.conftest import CMEIE_DEV, ingest


def test_escaped_line_separators_in_json_lines_come_back_escaped(ws, tmp_path):
    """A CMeIE line may write U+2028, U+2029 or U+0085 as \\u escapes; old: the export wrote
    them raw, and the file no longer read back (a record cut in two)."""
    lines = CMEIE_DEV.read_text(encoding="utf-8").splitlines()[:3]
    rec = json.loads(lines[0])
    rec["text"] = rec["text"].replace("。", "\u2028\u2029\x85。", 1)
    source = tmp_path / "CMeIE_dev.json"
    source.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n", encoding="utf-8")
    did = ingest(ws, source)
    gold = ws.annotations.gold_examples(did)
    for version in ("original", None):
        out = export_official(ws, did, version, tmp_path / "out" / f"{version}.json")
        data = out.read_text(encoding="utf-8")
        assert len(data.splitlines()) == 3 and "\\u2028\\u2029\\u0085" in data
        back = validate(out, ws.datasets.task_of(did)).examples
        assert [(ex.text, Annotation.from_example(ex)) for ex in back] == \
            [(ex.text, Annotation.from_example(ex)) for ex in gold]
