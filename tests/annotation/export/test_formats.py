"""What a page says before offering downloads: each format's refusal of a stored split, read
from the gold once, without building a file."""
from __future__ import annotations

import json

from cblue_core.annotation import export as exporter
from cblue_core.annotation.export import export_refusals
from tests.annotation.conftest import ingest

HOSTILE = [{"text": "患者高血压。", "entities": [{"start_idx": 2, "end_idx": 4, "type": "dis\x0b", "entity": "高血压"}]},
           {"text": "头痛\r\n发热。", "entities": [{"start_idx": 0, "end_idx": 1, "type": "sym", "entity": "头痛"}]}]


def test_refusals_name_the_example_and_field_and_build_nothing(ws, tmp_path, monkeypatch):
    path = tmp_path / "CMeEE_dev.json"
    path.write_text(json.dumps(HOSTILE, ensure_ascii=False), encoding="utf-8")
    did = ingest(ws, path)
    built = []
    for module, name in ((exporter.write, "format_files"), (exporter.brat, "brat_conf"),
                         (exporter.label_studio, "to_label_studio"), (exporter.write, "export_official")):
        monkeypatch.setattr(module, name, lambda *a, _n=name: built.append(_n))
    refused = export_refusals(ws, did)
    assert refused["official"] is None and refused["doccano"] is None and not built
    assert refused["brat"].startswith("example 1, text: ") and "U+000D" in refused["brat"]
    assert refused["label-studio"].startswith("example 0, spans[0].type: 'dis\\x0b' holds U+000B")
    assert export_refusals(ws, did, "original") == refused

