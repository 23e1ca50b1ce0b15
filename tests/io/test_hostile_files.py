"""Hostile files ("safe to serve"): each is refused with a one-line message naming the file,
the record or line, the field and what was expected; none ends in a trace, in the readers or
in ``python -m cblue_core validate``. Probes that could exhaust memory run in a subprocess
under a 2 GiB address-space cap, so that a regression fails the test instead of the machine."""
from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from cblue_core.io.errors import FileRefused
from cblue_core.io.jsonfile import read_raw
from cblue_core.io.limits import MAX_INT_DIGITS, MAX_JSON_DEPTH, MAX_XLSX_MEMBER_BYTES
from cblue_core.io.predictions import match_predictions
from cblue_core.io.resources import read_icd10, read_schemas
from cblue_core.io.validate import load, validate
from cblue_core.io.xlsx import MAX_ZIP_ENTRIES, read_first_sheet
from cblue_core.store.ingest import prepare_file
from cblue_core.tasks import TASKS, get_task, infer_tasks
from tests.conftest import ROOT, SAMPLE_DATA

GOOD = {"text": "呼吸肌麻痹", "entities": [{"start_idx": 0, "end_idx": 2, "type": "bod", "entity": "呼吸肌"}]}
MEMORY_CAP = 2 << 30
SECONDS = 5.0


def write(tmp_path: Path, name: str, content: bytes | str) -> Path:
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return p


def _cap_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_capped(args: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python args...`` from the project root, under the memory cap; (process, seconds)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_AS is enforced on Linux only")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, preexec_fn=_cap_memory, check=False)
    return proc, time.perf_counter() - start


def cli_validate(path: Path, *extra: str, capped: bool = False) -> tuple[int, dict[str, object]]:
    """Exit status and the one JSON object ``validate --json`` prints; never a trace."""
    args = ["-m", "cblue_core", "validate", str(path), "--json", *extra]
    if capped:
        proc, seconds = run_capped(args)
        assert seconds < SECONDS, seconds
    else:
        proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=60,
                              check=False)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    out = json.loads(proc.stdout)  # one object: anything printed after it fails here
    assert isinstance(out, dict)
    return proc.returncode, out


def assert_cli_refuses(path: Path, *needles: str, capped: bool = False) -> str:
    rc, out = cli_validate(path, capped=capped)
    errors = out["errors"]
    assert rc == 1 and isinstance(errors, list) and errors, out
    for needle in needles:
        assert needle in errors[0], errors
    assert "\n" not in errors[0]
    return str(errors[0])


def refusal(path: Path, **kw: object) -> FileRefused:
    with pytest.raises(FileRefused) as info:
        load(path, **kw)
    assert all("\n" not in str(d) for d in info.value.defects)
    return info.value


# ------------------------------------------------------------------------ 1. nesting depth

def test_array_nested_a_million_deep_is_refused_in_bounded_memory_and_time(tmp_path):
    p = write(tmp_path, "CMeEE_dev.json", b"[" * 10**6 + b"]" * 10**6)
    script = textwrap.dedent(f"""
        import json
        from cblue_core.io.validate import validate
        rep = validate({str(p)!r}).report
        print(json.dumps({{"errors": [d.to_dict() for d in rep.errors]}}))
    """)
    proc, seconds = run_capped(["-c", script])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert seconds < SECONDS
    err = json.loads(proc.stdout)["errors"][0]
    assert err["code"] == "limit" and err["line"] == 1 and err["file"] == str(p)
    assert f"deeper than {MAX_JSON_DEPTH}" in err["message"] and "at most 5" in err["expected"]
    assert_cli_refuses(p, "line 1", "nested deeper than 64", capped=True)


def nested(depth: int) -> str:
    """A CMeEE array whose deepest value sits ``depth`` arrays and objects down."""
    inner = "[" * (depth - 2) + "]" * (depth - 2)
    return json.dumps([{**GOOD, "extra": "__X__"}], ensure_ascii=False).replace('"__X__"', inner)


def test_depth_limit_is_exact_and_names_the_line(tmp_path):
    assert load(write(tmp_path, "CMeEE_dev.json", nested(MAX_JSON_DEPTH))).report.ok
    text = json.dumps([GOOD], ensure_ascii=False, indent=2).replace("[", "[\n", 1)
    deep = text[:-1] + ",\n" + nested(MAX_JSON_DEPTH + 1)[1:-1] + "\n]"
    p = write(tmp_path, "CMeEE_dev.json", deep)
    err = refusal(p).defects[0]
    assert err.code == "limit" and err.line == deep[:deep.index("[", deep.index('"extra"'))].count("\n") + 1


def test_brackets_inside_strings_do_not_count(tmp_path):
    rec = {"text": "[" * 200 + "{\\\"" * 100, "entities": []}
    assert load(write(tmp_path, "CMeEE_dev.json", json.dumps([rec]))).report.ok


# ------------------------------------------------------------------------ 2. long integers

def test_integer_of_5000_digits_is_refused_with_record_and_line(tmp_path):
    rec = json.dumps([GOOD, {**GOOD, "entities": [{**GOOD["entities"][0], "start_idx": 0}]}],
                     ensure_ascii=False, indent=1)
    text = rec.replace('"start_idx": 0', '"start_idx": ' + "9" * 5000)
    p = write(tmp_path, "CMeEE_dev.json", text)
    defects = refusal(p).defects
    assert len(defects) == 1
    err = defects[0]
    assert err.code == "limit" and err.record == 0 and err.line == text[:text.index("9" * 5000)].count("\n") + 1
    assert "5,000 digits" in err.message and f"at most {MAX_INT_DIGITS} digits" in err.expected
    assert_cli_refuses(p, "record 0", "5,000 digits")


def test_long_integer_in_json_lines_names_its_record(tmp_path):
    lines = [json.dumps({"text": "x", "spo_list": []}), '{"text": "y", "n": -' + "1" * 101 + "}"]
    p = write(tmp_path, "CMeIE_dev.json", "\n".join(lines) + "\n")
    err = refusal(p).defects[0]
    assert (err.record, err.line, err.code) == (1, 2, "limit")


def test_integer_of_100_digits_is_accepted(tmp_path):
    p = write(tmp_path, "CMeEE_dev.json", '[{"text": "x", "entities": [], "n": ' + "1" * 100 + "}]")
    assert load(p).report.ok


# ------------------------------------------------------------------------ 3. lone surrogates

def test_lone_surrogate_is_refused_with_record_and_field(tmp_path):
    text = json.dumps([GOOD, GOOD], ensure_ascii=False).replace('"entity": "呼吸肌"}]}]', '"entity": "\\ud800"}]}]')
    p = write(tmp_path, "CMeEE_dev.json", text)
    err = refusal(p).defects[0]
    assert err.code == "encoding" and err.record == 1 and err.field == "entities[0].entity"
    assert "surrogate" in err.message and "pairs" in err.expected
    assert_cli_refuses(p, "record 1", "entities[0].entity", "surrogate")


def test_lone_surrogate_in_a_key_is_named_printably(tmp_path):
    p = write(tmp_path, "CMeEE_dev.json", '[{"text": "x", "entities": [], "\\udfff": 1}]')
    err = refusal(p).defects[0]
    assert err.field == "\\udfff" and err.record == 0
    assert_cli_refuses(p, "surrogate")  # the message prints: the CLI encodes it as UTF-8


def test_surrogate_pairs_and_escaped_backslashes_are_accepted(tmp_path):
    p = write(tmp_path, "CMeEE_dev.json", '[{"text": "\\ud83d\\ude00 \\\\ud800", "entities": []}]')
    assert load(p).examples[0].text == "\U0001f600 \\ud800"


# ------------------------------------------------------------------------ 4. size, non-regular files

def test_file_over_the_size_limit_is_refused_unread(tmp_path):
    p = tmp_path / "CMeEE_dev.json"
    with p.open("wb") as f:  # sparse: 1 GiB + 1 byte that take no disk and are never read
        f.truncate((1 << 30) + 1)
    err = refusal(p).defects[0]
    assert err.code == "too_large" and "over the 1 GiB limit" in err.message
    assert_cli_refuses(p, "over the 1 GiB limit", capped=True)


def test_size_limit_is_a_parameter_for_paths_and_uploads(tmp_path):
    data = json.dumps([GOOD] * 50, ensure_ascii=False).encode()
    p = write(tmp_path, "CMeEE_dev.json", data)
    assert load(p).report.ok and load(data, "CMeEE").report.ok
    for source in (p, data):
        rep = validate(source, "CMeEE", max_bytes=1000).report
        assert not rep.ok and rep.errors[0].code == "too_large"
        assert "over the 1000 bytes limit" in rep.errors[0].message
    with pytest.raises(FileRefused, match="over the 1000 bytes limit"):
        read_raw(p, max_bytes=1000)
    gold = load(p).examples
    with pytest.raises(FileRefused, match="over the 1000 bytes limit"):
        match_predictions(get_task("CMeEE"), gold, data, max_bytes=1000)
    assert match_predictions(get_task("CMeEE"), gold, data).report.matched == 50


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_not_a_regular_file():
    start = time.perf_counter()
    err = refusal(Path("/dev/zero"), task="CMeEE").defects[0]
    assert err.code == "not_a_file" and "not a regular file" in err.message
    assert time.perf_counter() - start < SECONDS
    assert_cli_refuses(Path("/dev/zero"), "not a regular file", capped=True)
    assert prepare_file("/dev/zero", "CMeEE")[0] == "refused"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_named_pipe_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "CMeEE_dev.json"
    os.mkfifo(fifo)
    assert refusal(fifo).defects[0].code == "not_a_file"  # opening it would block for a writer
    assert_cli_refuses(fifo, "not a regular file")


def test_folder_and_missing_file_keep_their_messages(tmp_path):
    assert "is a folder" in str(refusal(tmp_path, task="CMeEE"))
    assert "no such file" in str(refusal(tmp_path / "CMeEE_dev.json"))


# ------------------------------------------------------------------------ 5. xlsx

SHEET = ('<?xml version="1.0" encoding="UTF-8"?><worksheet '
         'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>{rows}</sheetData></worksheet>')
SHARED = ('<?xml version="1.0" encoding="UTF-8"?><sst '
          'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">{items}</sst>')
ROWS = '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'


def xlsx(path: Path, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def workbook(rows: str = ROWS, strings: tuple[str, ...] = ("A00", "霍乱")) -> dict[str, str | bytes]:
    return {"xl/worksheets/sheet1.xml": SHEET.format(rows=rows),
            "xl/sharedStrings.xml": SHARED.format(items="".join(f"<si><t>{s}</t></si>" for s in strings))}


def test_hand_made_workbook_is_read(tmp_path):
    """The workbook the probes below break one thing each in."""
    p = xlsx(tmp_path / "icd10.xlsx", workbook())
    assert read_first_sheet(p) == [["A00", "霍乱"]]
    assert [t.term for t in read_icd10(p)] == ["霍乱"]


def _rels(target: str) -> dict[str, str]:
    return {
        "xl/workbook.xml": '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
                           'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
                           '<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
                                      f'relationships"><Relationship Id="rId1" Target="{target}"/></Relationships>',
    }


XLSX_PROBES: dict[str, tuple[dict[str, str | bytes] | bytes, str]] = {
    "not a zip": (b"PK\x03\x04 not really", "not an .xlsx workbook"),
    "no worksheet": ({"[Content_Types].xml": "<Types/>"}, "has no worksheet"),
    "first sheet missing": ({**workbook(), **_rels("worksheets/sheet9.xml")},
                            "first sheet xl/worksheets/sheet9.xml is missing"),
    "not worksheet xml": ({"xl/worksheets/sheet1.xml": "hello"}, "is not worksheet XML"),
    "row not closed": (workbook(rows='<row r="1"><c r="A1" t="s"><v>0</v></c><row r="2"></row>'),
                       "a <row> element is not closed"),
    "cell not closed": (workbook(rows='<row r="1"><c r="A1" t="s"><v>0</v><c r="B1"><v>2</v></c></row>'),
                        "a <c> element of row 1 is not closed"),
    "shared string index past the end": (workbook(rows='<row r="1"><c r="A1" t="s"><v>7</v></c></row>'),
                                         "cell A1 points at shared string '7', which does not exist"),
    "negative shared string index": (workbook(rows='<row r="1"><c r="B1" t="s"><v>-1</v></c></row>'),
                                     "cell B1 points at shared string '-1'"),
    "number that is not one": (workbook(rows='<row r="1"><c r="C1"><v>abc</v></c></row>'),
                               "cell C1 holds 'abc', not a number"),
    "column past XFD": (workbook(rows='<row r="1"><c r="AAAAAAAA1"><v>1</v></c></row>'),
                        "cell AAAAAAAA1 lies beyond column XFD"),
    "sheet XML not UTF-8": ({"xl/worksheets/sheet1.xml": SHEET.format(
                            rows='<row r="1"><c r="A1" t="inlineStr"><is><t>霍乱</t></is></c></row>').encode("gbk")},
                            "xl/worksheets/sheet1.xml is not UTF-8 XML"),
    "encrypted member": (b"", "cannot be decompressed"),
}


def _encrypted(path: Path) -> Path:
    """A workbook whose sheet's header says it is encrypted (zipfile cannot decrypt it)."""
    xlsx(path, workbook())
    data = bytearray(path.read_bytes())
    for sig, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        pos = data.find(sig)
        while pos >= 0:
            data[pos + flag_at] |= 1
            pos = data.find(sig, pos + 4)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("probe", list(XLSX_PROBES))
def test_malformed_xlsx_gives_one_line_refusal(tmp_path, probe):
    members, needle = XLSX_PROBES[probe]
    p = tmp_path / "icd10.xlsx"
    if probe == "encrypted member":
        _encrypted(p)
    elif isinstance(members, bytes):
        p.write_bytes(members)
    else:
        xlsx(p, members)
    for read in (read_first_sheet, read_icd10):
        with pytest.raises(FileRefused) as info:
            read(p)
        assert needle in str(info.value) and "\n" not in str(info.value)
        assert info.value.defects[0].file == str(p)
    assert_cli_refuses(p, needle)


def test_cell_refusals_name_the_row_and_cell(tmp_path):
    p = xlsx(tmp_path / "icd10.xlsx", workbook(rows=ROWS + '<row r="2"><c r="B2" t="s"><v>9</v></c></row>'))
    with pytest.raises(FileRefused) as info:
        read_first_sheet(p)
    err = info.value.defects[0]
    assert (err.record, err.line, err.field) == (1, 2, "cell B2") and "below 2" in err.expected


def test_too_many_zip_entries_are_refused_before_zipfile_reads_them(tmp_path):
    members: dict[str, str | bytes] = {f"x/{i}": b"" for i in range(MAX_ZIP_ENTRIES + 1)}
    p = xlsx(tmp_path / "icd10.xlsx", {**workbook(), **members})
    with pytest.raises(FileRefused, match=f"lists {MAX_ZIP_ENTRIES + 3:,} entries"):
        read_first_sheet(p)


def _zip_one_member(name: str, compressed: bytes, declared_size: int) -> bytes:
    """A zip holding one deflated member, written by hand so its header may lie about its size."""
    fn = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, 0, len(compressed), declared_size,
                        len(fn), 0) + fn
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, 0, len(compressed),
                          declared_size, len(fn), 0, 0, 0, 0, 0, 0) + fn
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(compressed), 0)
    return local + compressed + central + end


@pytest.fixture(scope="module")
def deflated_3gib() -> tuple[bytes, int]:
    """3 GiB of zeros as one deflate stream of 3 MB, built in a fraction of a second: a block
    compressed after a full flush is the same bytes each time, so it is repeated."""
    chunk = 1 << 24
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(chunk)) + c.flush(zlib.Z_FULL_FLUSH)
    return block * 192 + c.flush(), 192 * chunk


@pytest.mark.parametrize("declared", ["true size", "lying size"])
def test_xlsx_bomb_is_refused_in_bounded_memory_and_time(tmp_path, deflated_3gib, declared):
    compressed, size = deflated_3gib
    # A lying header claims 1,000 bytes: zipfile then stops there and the CRC does not match;
    # reading would otherwise stop at the 256 MiB cap while inflating.
    p = tmp_path / "icd10.xlsx"
    p.write_bytes(_zip_one_member("xl/worksheets/sheet1.xml", compressed,
                                  size if declared == "true size" else 1000))
    needle = ("over the 256 MiB limit" if declared == "true size"
              else "member xl/worksheets/sheet1.xml cannot be decompressed")
    script = textwrap.dedent(f"""
        import json
        from cblue_core.io.errors import FileRefused
        from cblue_core.io.xlsx import read_first_sheet
        try:
            read_first_sheet({str(p)!r})
        except FileRefused as refused:
            print(json.dumps([str(d) for d in refused.defects]))
    """)
    proc, seconds = run_capped(["-c", script])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert seconds < SECONDS
    assert needle in json.loads(proc.stdout)[0]
    assert_cli_refuses(p, needle, capped=True)


def test_member_cap_holds_while_inflating_even_when_the_header_lies(tmp_path):
    """The header check aside, inflating stops at the cap (zipfile itself stops at the
    declared size, so a stream longer than its header is simulated)."""
    from cblue_core.io import xlsx as xlsx_module

    p = xlsx(tmp_path / "icd10.xlsx", workbook())

    class Lying(zipfile.ZipFile):
        def open(self, name, mode="r", pwd=None, *, force_zip64=False):
            return io.BytesIO(bytes(5000))

    with Lying(p) as zf, pytest.raises(FileRefused, match="uncompressed \\(at least\\) is 4.9 KiB"):
        xlsx_module._read_member(zf, "xl/worksheets/sheet1.xml", str(p), 4096)
    assert MAX_XLSX_MEMBER_BYTES == 256 << 20


def test_schema_record_with_a_non_string_field_is_refused(tmp_path):
    lines = ['{"subject_type": "疾病", "predicate": "病因", "object_type": "社会学"}',
             '{"subject_type": "疾病", "predicate": ["病因"], "object_type": "社会学"}']
    p = write(tmp_path, "53_schemas.json", "\n".join(lines))
    with pytest.raises(FileRefused) as info:
        read_schemas(p)
    assert (info.value.defects[0].record, info.value.defects[0].line) == (1, 2)
    assert_cli_refuses(p, "record 1", "not a schema record")


# ------------------------------------------------------------------------ 6. container and gold

def test_cmeee_file_holding_one_object_is_accepted_with_a_container_warning(tmp_path):
    p = write(tmp_path, "CMeEE_dev.json", '{"text": "x"}')
    rep = validate(p).report
    assert rep.ok and rep.container == "lines"
    codes = [w.code for w in rep.warnings]
    assert codes[:2] == ["container", "no_annotations"]
    assert "a single JSON object, not one JSON array of records as official CMeEE files are" in str(rep.warnings[0])
    rc, out = cli_validate(p)
    assert rc == 0 and any("single JSON object" in w for w in out["warnings"])


@pytest.mark.parametrize("task, name, content, found", [
    ("CMeEE", "CMeEE_dev.json", json.dumps(GOOD, ensure_ascii=False) + "\n"
     + json.dumps({**GOOD, "text": "呼吸肌无力"}, ensure_ascii=False), "JSON lines"),
    ("CMeIE", "CMeIE_dev.json", '[{"text": "x", "spo_list": []}]', "one JSON array"),
    ("IMCS-V2-NER", "IMCS-V2_dev.json", '[{"dialog_id": "1", "dialogue": [{"sentence": "a", "BIO_label": "O"}]}]',
     "one JSON array"),
])
def test_container_other_than_the_official_one_is_a_warning(tmp_path, task, name, content, found):
    rep = load(write(tmp_path, name, content), task).report
    assert [w.code for w in rep.warnings] == ["container"]
    assert f"the file is {found}" in rep.warnings[0].message and task in rep.warnings[0].message


def test_labelled_split_without_any_annotation_field_is_a_warning(tmp_path):
    records = json.dumps([{"text": "发热"}, {"text": "咳嗽"}], ensure_ascii=False)
    rep = load(write(tmp_path, "CMeEE_dev.json", records)).report
    assert [w.code for w in rep.warnings] == ["no_annotations"]
    w = rep.warnings[0]
    assert w.field == "entities" and "dev split carries no gold" in w.message
    # A test split has no gold by design; one record with the field (even empty) is enough.
    assert not load(write(tmp_path, "CMeEE_test.json", records)).report.warnings
    some = json.dumps([{"text": "发热"}, {"text": "咳嗽", "entities": []}], ensure_ascii=False)
    assert not load(write(tmp_path, "CMeEE_train.json", some)).report.warnings


def test_dialogue_views_look_for_their_own_gold(tmp_path):
    dialogues = {"1": {"dialogue": [{"sentence": "头痛", "speaker": "患者", "BIO_label": "B-Symptom I-Symptom"}]}}
    p = write(tmp_path, "IMCS-V2_dev.json", json.dumps(dialogues, ensure_ascii=False))
    warned = {spec.name: [w.field for w in load(p, spec).report.warnings] for spec in infer_tasks(p)}
    assert warned == {"IMCS-V2-NER": [], "IMCS-V2-DAC": ["dialogue[].dialogue_act"],
                      "IMCS-V2-SR": ["dialogue[].symptom_norm"], "IMCS-V2-MRG": ["report"]}


def test_predictions_files_are_not_asked_for_gold(tmp_path):
    p = write(tmp_path, "CMeEE_dev.json", json.dumps([{"text": "发热"}], ensure_ascii=False))
    assert not validate(p, predictions=True).report.warnings


# ------------------------------------------------------------------------ records of any shape

HOSTILE_VALUES: list[object] = [None, 5, "x", [], {}, [[]], True, 1.5,
                                {"type": "relation", "head": "s", "relation": [1]}]


def _paths(value: object, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:2]):
            out += _paths(v, (*path, i))
    return out


def _replace(record: object, path: tuple[str | int, ...], new: object) -> object:
    if not path:
        return new
    copy = json.loads(json.dumps(record))
    cur = copy
    for key in path[:-1]:
        cur = cur[key]
    cur[path[-1]] = new
    return copy


@pytest.mark.parametrize("task", [t.name for t in TASKS if t.container != "tsv"])
def test_records_of_unexpected_shapes_are_refused_never_raised(task):
    """Each field of a sample record replaced by values of other JSON types: the file is
    accepted or refused with the record's defects, and no codec raises (decoding used to fail
    with TypeError or AttributeError on e.g. ``"entities": 5``)."""
    spec = next(t for t in TASKS if t.name == task)
    files = [p for p in sorted(SAMPLE_DATA.rglob("*.json*")) if spec in infer_tasks(p)]
    if task == "PromptCBLUE":  # its files are named by split only
        files = [SAMPLE_DATA / "promptcblue/dev.json"]
    if not files:
        pytest.skip(f"no sample file for {task}")
    first = read_raw(files[0]).records[0]
    for path in _paths(first)[:40]:
        for value in HOSTILE_VALUES:
            bad = _replace(first, path, value)
            if spec.container == "dialogs":
                if not isinstance(bad, dict):
                    continue
                key = str(bad.pop("__key__", "k"))
                text = json.dumps({key: bad}, ensure_ascii=False)
            else:
                text = json.dumps([bad], ensure_ascii=False)
            for predictions in (False, True):
                rep = validate(text.encode(), spec, name=files[0].name, predictions=predictions).report
                assert not any("unexpected shape" in e.message for e in rep.errors), (path, value, rep.errors)
