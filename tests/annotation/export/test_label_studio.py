"""Label Studio exports of hostile names, checked with label-studio-sdk
(tests/annotation/ls_verify.py): what XML 1.0 can escape validates and reads back; what it
cannot hold is refused, naming the example and the field, before any file is built."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from cblue_core.annotation import Annotation
from cblue_core.annotation.export import from_label_studio, label_studio_files
from cblue_core.records import Example, Span, Triple
from cblue_core.tasks import get_task
from tests.annotation.ls_verify import label_studio_errors

pytest.importorskip("label_studio_sdk", reason="label-studio-sdk not installed (pip install -r requirements-dev.txt)")

CMEEE, CMEIE = get_task("CMeEE"), get_task("CMeIE")
# XML 1.0 cannot hold these, not even as &#...; references
REFUSED = {"VT": "\x0b", "SOH": "\x01", "ESC": "\x1b", "FFFE": "\ufffe", "NUL": "\x00", "FFFF": "\uffff"}
# quoteattr writes these as references or entities, which the SDK reads back exactly
ESCAPED = {"LF": "\n", "CR": "\r", "TAB": "\t", "LS": "\u2028", "NEL": "\x85", "quote": '"/>', "amp": "&lt;"}


def ident(examples):
    return [(ex.index, ex.text, Annotation.from_example(ex)) for ex in examples]


def files_of(task, examples):
    built = label_studio_files(task, examples, "x")
    return built["x.label_config.xml"], built["x.json"]


def spans_example(typ: str, index: int = 0) -> Example:
    text = "患者高血压。"
    return Example(key=text, index=index, text=text,
                   spans=[Span(0, 2, "bod", "患者"), Span(2, 5, typ, "高血压")])


@pytest.mark.parametrize("char", REFUSED.values(), ids=REFUSED.keys())
def test_an_entity_type_xml_cannot_hold_is_refused(char):
    """Old: the config held the character raw and LabelInterface could not parse it; no
    spelling of it (raw or a character reference) makes a config the SDK parses."""
    from label_studio_sdk.label_interface import LabelInterface

    with pytest.raises(ValueError, match=rf"^example 7, spans\[1\]\.type: .*U\+{ord(char):04X}.*XML 1\.0"):
        files_of(CMEEE, [spans_example(f"dis{char}x", index=7)])
    for value in (f"dis{char}", f"dis&#x{ord(char):x};"):
        with pytest.raises(Exception):  # noqa: B017 - the SDK raises its XML parser's own errors
            LabelInterface(f'<View><Labels name="label" toName="text"><Label value="{value}"/></Labels>'
                           '<Text name="text" value="$text"/></View>')


@pytest.mark.parametrize("field, make", [
    ("triples[0].predicate", lambda c: Triple("高血压", f"药物{c}治疗", "降压药", "疾病", "药物")),
    ("triples[0].object_type", lambda c: Triple("高血压", "药物治疗", "降压药", "疾病", f"药{c}物"))])
def test_cmeie_predicates_and_types_xml_cannot_hold_are_refused(field, make):
    text = "高血压可以口服降压药治疗。"
    ex = Example(key=text, index=2, text=text, triples=[make("\x1b")])
    with pytest.raises(ValueError, match="^" + re.escape(f"example 2, {field}: ")):
        files_of(CMEIE, [ex])


@pytest.mark.parametrize("task, make, field", [
    ("CHIP-CTC", lambda c: Example("k", 4, "吸烟史", label=f"Smoking{c}"), "label"),
    ("CHIP-CDN", lambda c: Example("k", 4, "高血压", terms=["高血压", f"原发性{c}高血压"]), r"terms\[1\]")])
def test_labels_and_terms_xml_cannot_hold_are_refused(task, make, field):
    with pytest.raises(ValueError, match=rf"^example 4, {field}: .*U\+FFFE"):
        files_of(get_task(task), [make("\ufffe")])


def test_names_xml_can_escape_validate_once_the_refused_example_is_left_out():
    """In a split whose names hold every character XML can escape and one it cannot, the
    refusal names that example; the others validate with the SDK and read back."""
    text = "高血压可以口服降压药治疗。"
    cmeie = [Example(key=text, index=n, text=text,
                     triples=[Triple("高血压", f"药物{c}治疗", "降压药", f"疾{c}病", "药物", False)])
             for n, c in enumerate(ESCAPED.values())]
    cmeee = [spans_example(f"dis{c}x", index=n) for n, c in enumerate(ESCAPED.values())]
    bad_cmeie = replace(cmeie[0], index=99, triples=[replace(cmeie[0].triples[0], predicate="药\x1b")])
    bad_cmeee = replace(cmeee[0], index=99, spans=[replace(s, type="dis\x1b") for s in cmeee[0].spans])
    for task, split, bad in ((CMEEE, cmeee, bad_cmeee), (CMEIE, cmeie, bad_cmeie)):
        with pytest.raises(ValueError, match=r"^example 99, (spans\[0\]\.type|triples\[0\]\.predicate): "):
            files_of(task, [*split, bad])
        config, tasks = files_of(task, split)
        assert label_studio_errors(config, tasks) == (0, [])
        assert ident(from_label_studio(task, tasks)) == ident(split)


def test_an_export_nested_too_deep_is_refused():
    with pytest.raises(ValueError, match="Label Studio export.*nested deeper than"):
        from_label_studio(get_task("CMeEE"), "[" * 100_000 + "]" * 100_000)
