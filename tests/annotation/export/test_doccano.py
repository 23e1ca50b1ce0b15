"""doccano JSONL with line separators in texts and names: one record a line for every reader
(``str.splitlines`` included), and doccano's own export, which may hold them raw, reads back."""
from __future__ import annotations

import json

import pytest

from cblue_core.annotation import Annotation
from cblue_core.annotation.export import doccano_readme, from_doccano, to_doccano
from cblue_core.records import Example, Span, Triple
from cblue_core.tasks import get_task

# json.dumps escapes the C0 line breaks (\n, \r, \x0b, \x1c...) itself, but not these
BREAKS = {"LS": "\u2028", "PS": "\u2029", "NEL": "\x85"}


def ident(examples):
    return [(ex.index, ex.text, Annotation.from_example(ex)) for ex in examples]


@pytest.mark.parametrize("brk", BREAKS.values(), ids=BREAKS.keys())
def test_line_separators_stay_inside_their_record(brk):
    """Old: U+2028, U+2029 and U+0085 were written raw, and a reader splitting lines where
    Python does (ours did) cut the record in two: `not JSON`."""
    text = f"患者高血压{brk}伴头痛。"
    cmeee = [Example(key=text, index=0, text=text, spans=[Span(2, 7, f"dis{brk}x", text[2:7])]),
             Example(key="头痛", index=1, text="头痛", spans=[Span(0, 2, "sym", "头痛")])]
    cmeie = [Example(key=text, index=0, text=text, triples=[
        Triple("高血压", f"临床{brk}表现", "头痛", "疾病", "症状", False)])]
    for task, examples in ((get_task("CMeEE"), cmeee), (get_task("CMeIE"), cmeie)):
        jsonl = to_doccano(task, examples)
        assert len(jsonl.splitlines()) == len(examples)
        assert json.loads(jsonl.splitlines()[0])["text"] == text
        assert ident(from_doccano(task, jsonl)) == ident(examples)


def test_doccanos_own_export_with_raw_separators_reads_back():
    """doccano writes JSON with ensure_ascii off: U+2028 raw inside a string is valid JSON."""
    line = json.dumps({"text": "高血压\u2028头痛", "label": [[0, 3, "dis"]]}, ensure_ascii=False)
    assert "\u2028" in line
    ex, = from_doccano(get_task("CMeEE"), line + "\r\n")
    assert ex.text == "高血压\u2028头痛" and ex.spans == [Span(0, 3, "dis", "高血压")]


def test_the_readme_lists_names_on_their_lines():
    ex = Example(key="k", index=0, text="高血压", spans=[Span(0, 3, "dis\nImport: something else", "高血压")])
    readme = doccano_readme(get_task("CMeEE"), [ex])
    assert "\nImport: something else" not in readme and "dis\\x0aImport: something else" in readme


def test_a_lone_surrogate_is_escaped_and_reads_back():
    """JSON can escape U+D800, UTF-8 cannot hold it (old: the export could not be written)."""
    text = "患者\ud800高血压"
    ex = Example(key=text, index=0, text=text, spans=[Span(3, 6, "dis", "高血压")])
    jsonl = to_doccano(get_task("CMeEE"), [ex])
    assert "\\ud800" in jsonl.encode("utf-8").decode("utf-8")
    assert ident(from_doccano(get_task("CMeEE"), jsonl)) == ident([ex])


def test_a_line_nested_too_deep_is_refused_with_its_line():
    deep = '{"text": "a", "label": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(ValueError, match="doccano line 2.*nested deeper than"):
        from_doccano(get_task("CMeEE"), '{"text": "b", "label": []}\n' + deep)
