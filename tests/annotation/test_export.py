"""Exports at a gold version: the official format (untouched records as read, edited ones
encoded by the codec) and brat / doccano / Label Studio, each read back by its reader."""
from __future__ import annotations

import json

import pytest

from cblue_core.annotation import Annotation
from cblue_core.annotation.export import (
    export_official,
    from_brat,
    from_doccano,
    from_label_studio,
    label_studio_config,
    to_brat,
    to_doccano,
    to_label_studio,
    unzip_files,
    zip_files,
)
from cblue_core.io.validate import validate
from cblue_core.records import Span, Triple
from cblue_core.tasks import get_task
from tests.annotation.conftest import (
    CDN_DEV,
    CMEEE_DEV,
    CMEEE_PRED,
    CMEEE_V2_DEV,
    CMEIE_DEV,
    CTC_DEV,
    STS_DEV,
    ingest,
)


def ident(examples):
    return [(ex.index, ex.key, ex.text, ex.text2, Annotation.from_example(ex)) for ex in examples]


FORMATS = {
    "brat": (to_brat, from_brat),
    "doccano": (to_doccano, from_doccano),
    "label_studio": (to_label_studio, from_label_studio),
}


def round_trip(task, examples, fmt):
    write, read = FORMATS[fmt]
    back = read(task, write(task, examples))
    assert ident(back) == ident(examples)
    return back


def edit(ws, did, idx, make):
    ann, rev = ws.annotations.current(did, idx)
    return ws.annotations.save(did, idx, make(ann), author="curator", reason="test", base_revision=rev)


@pytest.mark.parametrize("fmt", ["brat", "doccano", "label_studio"])
def test_cmeee_nested_round_trip(ws, fmt):
    did = ingest(ws, CMEEE_DEV)
    edit(ws, did, 0, lambda a: Annotation(a.spans[1:] + (Span(0, 2, "sym"),)))
    gold = ws.annotations.gold_examples(did)
    assert max(ex.depth for ex in gold) == 3           # nested spans, depth 3, survive the trip
    round_trip(get_task("CMeEE"), gold, fmt)


def test_brat_files_and_zip(ws):
    did = ingest(ws, CMEEE_DEV)
    gold = ws.annotations.gold_examples(did)
    files = to_brat(get_task("CMeEE"), gold)
    assert files["000000.txt"] == gold[0].text
    assert files["000000.ann"].splitlines()[:2] == ["T1\tbod 7 10\t四肢肌", "T2\tsym 7 12\t四肢肌无力"]
    assert "[entities]\ndis\n" in files["annotation.conf"]
    assert ident(from_brat(get_task("CMeEE"), unzip_files(zip_files(files)))) == ident(gold)
    with pytest.raises(ValueError, match="discontinuous"):
        from_brat(get_task("CMeEE"), {"a.txt": "abcdef", "a.ann": "T1\tdis 0 1;2 3\ta c\n"})


@pytest.mark.parametrize("fmt", ["brat", "doccano", "label_studio"])
def test_cmeie_round_trip(ws, fmt):
    did = ingest(ws, CMEIE_DEV)
    edit(ws, did, 1, lambda a: Annotation(triples=a.triples + (
        Triple("缺铁性贫血", "药物治疗", "口服铁剂", "疾病", "药物"),)))
    gold = ws.annotations.gold_examples(did)
    assert sum(t.combined is True for ex in gold for t in ex.triples) == 29
    back = round_trip(get_task("CMeIE"), gold, fmt)
    assert back[1].triples[-1] == Triple("缺铁性贫血", "药物治疗", "口服铁剂", "疾病", "药物", False)


def test_cmeie_brat_lines_and_combined_computed_when_absent():
    """An older export (Chinese type names in the .ann) still reads; ours writes ASCII ids."""
    task = get_task("CMeIE")
    text = "高血压可引起头痛。治疗高血压常用氨氯地平。头痛可用布洛芬。"
    files = {"000007.txt": text,
             "000007.ann": "T1\t疾病 0 3\t高血压\nT2\t症状 6 8\t头痛\nT3\t药物 25 28\t布洛芬\n"
                           "R1\t临床表现 Arg1:T1 Arg2:T2\nR2\t药物治疗 Arg1:T1 Arg2:T3\n"}
    ex, = from_brat(task, files)
    assert ex.index == 7 and ex.key == text
    assert ex.triples == [Triple("高血压", "临床表现", "头痛", "疾病", "症状", False),
                          Triple("高血压", "药物治疗", "布洛芬", "疾病", "药物", True)]
    out = to_brat(task, [ex])["000007.ann"]
    assert "R2\tP39_drug_therapy Arg1:T1 Arg2:T3\nA2\tCombined R2 true\n" in out
    assert out.startswith("T1\tE01_disease 0 3\t高血压\n")
    assert from_brat(task, {"000007.txt": text, "000007.ann": out}) == [ex]


@pytest.mark.parametrize("path,task_name", [(CTC_DEV, "CHIP-CTC"), (STS_DEV, "CHIP-STS")])
@pytest.mark.parametrize("fmt", ["doccano", "label_studio"])
def test_classification_round_trip(ws, path, task_name, fmt):
    did = ingest(ws, path)
    task = get_task(task_name)
    edit(ws, did, 0, lambda a: Annotation(label="Diet" if task_name == "CHIP-CTC" else
                                          "0" if a.label == "1" else "1"))
    gold = ws.annotations.gold_examples(did)
    back = round_trip(task, gold, fmt)
    assert [ex.meta for ex in back] == [ex.meta for ex in gold]     # STS's category travels too
    with pytest.raises(ValueError, match="brat export holds entity spans and CMeIE triples"):
        to_brat(task, gold)


@pytest.mark.parametrize("fmt", ["doccano", "label_studio"])
def test_cdn_round_trip(ws, fmt):
    did = ingest(ws, CDN_DEV)
    gold = ws.annotations.gold_examples(did)
    multi = [ex for ex in gold if len(ex.terms) > 1]
    assert multi, "the sample CDN file must hold a text with several terms"
    back = round_trip(get_task("CHIP-CDN"), gold, fmt)
    assert [(ex.text, ex.terms) for ex in back] == [(ex.text, ex.terms) for ex in gold]
    assert any(b.terms == m.terms for b in back for m in multi)


def test_doccano_shapes():
    task = get_task("CMeEE")
    line = json.loads(to_doccano(task, [_ex("患者发热", [Span(2, 4, "sym", "发热")])]))
    assert line == {"text": "患者发热", "label": [[2, 4, "sym"]], "cblue_index": 0}
    ctc = json.loads(to_doccano(get_task("CHIP-CTC"), [_ex("吸烟", [], label="Smoking Status", key="s9")]))
    assert ctc["label"] == ["Smoking Status"] and ctc["cblue_key"] == "s9"
    # doccano's own export shapes read too
    ex, = from_doccano(task, json.dumps({"id": 3, "text": "患者发热", "entities": [
        {"id": 1, "label": "sym", "start_offset": 2, "end_offset": 4}]}, ensure_ascii=False))
    assert ex.spans == [Span(2, 4, "sym", "发热")]
    with pytest.raises(ValueError, match="line 1: not JSON"):
        from_doccano(task, "{oops")


def _ex(text, spans, label=None, key=None):
    from cblue_core.records import Example
    return Example(key=key or text, index=0, text=text, spans=list(spans), label=label)


def test_label_studio_predictions_and_config(ws):
    did = ingest(ws, CMEEE_DEV)
    task = get_task("CMeEE")
    gold = ws.annotations.gold_examples(did)
    preds = validate(CMEEE_PRED, task, predictions=True).examples
    tasks = json.loads(to_label_studio(task, gold, preds, model_version="pred-file"))
    assert tasks[0]["predictions"][0]["model_version"] == "pred-file"
    assert tasks[0]["annotations"][0]["result"][0]["type"] == "labels"
    back = from_label_studio(task, json.dumps(tasks), source="predictions")
    assert [Annotation.from_example(e) for e in back] == [Annotation.from_example(p) for p in preds]
    # a cancelled annotation is skipped
    tasks[0]["annotations"].append({"result": [], "was_cancelled": True})
    assert from_label_studio(task, json.dumps(tasks))[0].spans == gold[0].spans
    assert '<Label value="dis"/>' in label_studio_config(task)
    ctc = label_studio_config(get_task("CHIP-CTC"))
    assert 'choice="single"' in ctc and '<Choice value="Smoking Status"/>' in ctc


# ---------------------------------------------------------------------------- official format


def records_of(path):
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("path", [CMEEE_DEV, CMEIE_DEV, CTC_DEV, CDN_DEV, CMEEE_V2_DEV])
def test_official_export_of_the_original_is_the_original(ws, tmp_path, path):
    did = ingest(ws, path)
    out = export_official(ws, did, "original", tmp_path / "out")   # a file path (no folder yet)
    assert records_of(out) == records_of(path)
    lines_in = path.read_text(encoding="utf-8").lstrip().startswith("{")
    assert out.read_text(encoding="utf-8").lstrip().startswith("{") == lines_in   # same container


def test_official_export_at_a_version(ws, tmp_path):
    did = ingest(ws, CMEEE_DEV)
    edit(ws, did, 0, lambda a: Annotation(a.spans[1:]))
    edit(ws, did, 2, lambda a: Annotation(a.spans + (Span(0, 2, "sym"),)))   # 轮状 as sym (a test edit)
    ws.annotations.create_version(did, "v1", "curator")
    edit(ws, did, 3, lambda a: Annotation(a.spans[:1]))                       # after v1: not exported
    folder = tmp_path / "export"
    folder.mkdir()
    out = export_official(ws, did, "v1", folder)
    assert out.name == "CMeEE_dev.json"
    original, exported = records_of(CMEEE_DEV), records_of(out)
    assert len(exported) == len(original)
    for i, (o, e) in enumerate(zip(original, exported)):
        if i not in (0, 2):
            assert e == o                                  # untouched: the record as read
    assert exported[0]["entities"] == original[0]["entities"][1:]
    assert exported[2]["entities"][-1] == {"start_idx": 0, "end_idx": 1, "type": "sym", "entity": "轮状"}
    # the export reads back (inclusive ends detected) as the v1 gold
    loaded = validate(out, get_task("CMeEE"))
    assert loaded.report.ok and loaded.report.offset_convention == "inclusive"
    assert [Annotation.from_example(e) for e in loaded.examples] == [
        Annotation.from_example(e) for e in ws.annotations.gold_examples(did, "v1")]


def test_official_export_keeps_exclusive_ends_and_record_layout(ws, tmp_path):
    did = ingest(ws, CMEEE_V2_DEV)
    edit(ws, did, 0, lambda a: Annotation(a.spans[:-1]))
    out = export_official(ws, did, None, tmp_path / "v2.json")
    loaded = validate(out, get_task("CMeEE-V2"))
    assert loaded.report.offset_convention == "exclusive"
    assert Annotation.from_example(loaded.examples[0]) == ws.annotations.current(did, 0)[0]
    # a classification record keeps its original key order and id
    did2 = ingest(ws, CTC_DEV)
    edit(ws, did2, 0, lambda a: Annotation(label="Smoking Status"))
    out2 = export_official(ws, did2, None, tmp_path / "ctc.json")
    first = json.loads(out2.read_text(encoding="utf-8"))[0]
    orig = records_of(CTC_DEV)[0]
    assert list(first) == list(orig) and first["id"] == orig["id"] and first["label"] == "Smoking Status"


def test_a_download_holds_the_same_files_as_the_cli_export(ws, tmp_path):
    """The Annotate page's downloads and `export --format` are one piece of code: the zip of a
    download holds exactly the files the CLI writes, and the official download is the file."""
    from cblue_core.annotation.export import (
        FORMAT_TITLES,
        FORMATS,
        export_dataset,
        export_download,
        unzip_files,
    )

    did = ingest(ws, CMEEE_DEV)
    edit(ws, did, 0, lambda a: Annotation(a.spans[1:]))
    ws.annotations.create_version(did, "v 1/x", "curator")
    assert set(FORMAT_TITLES) == set(FORMATS)
    targets = {"official": "official", "brat": "brat", "doccano": "CMeEE_dev_v_1_x_doccano.jsonl",
               "label-studio": "CMeEE_dev_v_1_x_label_studio.json"}
    for fmt in FORMATS:
        download = export_download(ws, did, fmt, "v 1/x")
        out = tmp_path / fmt
        written = export_dataset(ws, did, out / targets[fmt], fmt, "v 1/x")
        if fmt == "official":
            assert (download.file_name, download.mime) == ("CMeEE_dev.json", "application/json")
            assert download.data == written[0].read_bytes()
            continue
        assert download.file_name == f"CMeEE_dev_v_1_x_{fmt.replace('-', '_')}.zip"
        on_disk = {p.name: p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()}
        assert unzip_files(download.data) == on_disk
    with pytest.raises(ValueError, match="unknown export format"):
        export_download(ws, did, "xml")
