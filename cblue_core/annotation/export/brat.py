"""brat standoff (:func:`to_brat` / :func:`from_brat`): one ``.txt`` and one ``.ann`` per
example, ``annotation.conf`` and ``visual.conf``.

brat reads its files line by line, so no line of ours may hold a line break
(:data:`~.characters.LINE_BREAKS`): type names are ASCII ids (:mod:`.brat_ids`), display names
in ``visual.conf`` are written with visible escapes, and a mention that crosses line breaks is
written the way brat itself writes one, as fragments between the breaks (``T1\tdis 0 3;4 6\tabc
de``), which :func:`from_brat` reads back as the one span. What brat cannot hold is refused:
a mention that starts or ends with a line break, a CRLF in a text (brat reads it as one
character, so every later offset would move) and a lone surrogate.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from ...records import Example, Span
from ...tasks import TaskSpec
from .brat_ids import (
    BRAT_OVERLAP,
    CMEIE_SCHEMAS,
    CMEIE_TYPE_IDS,
    brat_type_id,
    brat_type_name,
)
from .characters import LINE_BREAK, LINE_BREAKS, check_utf8, refusal, visible
from .common import decimal_index, gold_kind, place_mentions, read_example, read_triple


def _brat_names(task: TaskSpec, examples: Sequence[Example]
                ) -> tuple[list[str], list[str], list[tuple[str, str, str]]]:
    """Entity types, predicates and (subject type, predicate, object type) schemas of an export:
    the task's own (CMeIE: the 53 schemas) and then those the examples use, in first-seen order."""
    kind = gold_kind(task, ("spans", "triples"), "brat")
    if kind == "spans":
        types = list(dict.fromkeys(list(task.label_codes) + [s.type for ex in examples for s in ex.spans]))
        return types, [], []
    schemas = list(dict.fromkeys(list(CMEIE_SCHEMAS) + [
        (t.subject_type, t.predicate, t.object_type) for ex in examples for t in ex.triples]))
    types = list(dict.fromkeys([s for s, _, _ in schemas] + [o for _, _, o in schemas]))
    types = list(dict.fromkeys(list(CMEIE_TYPE_IDS) + types))
    preds = list(dict.fromkeys(list(task.label_codes) + [p for _, p, _ in schemas]))
    return types, preds, schemas


def brat_conf(task: TaskSpec, examples: Sequence[Example] = ()) -> str:
    """A brat ``annotation.conf`` for the task's types (and the types the examples use): ASCII
    type names, any overlap of entities allowed (CMeEE nests its entities; CMeIE mentions overlap
    and one mention may carry two types), CMeIE relations with their argument types."""
    types, preds, schemas = _brat_names(task, examples)
    head = ("# brat annotation.conf written by CBLUE Studio for " + task.name + ".\n"
            "# Type names are ASCII ids (brat requires [A-Za-z0-9_-]); visual.conf shows their\n"
            "# Chinese names. CMeIE: E01-E11 entity types, P01-P44 predicates (the official\n"
            "# 53_schemas.json order); other names: X_ + the hex of their UTF-8 bytes.\n\n")
    ents = "[entities]\n" + "".join(f"{brat_type_id(t)}\n" for t in types)
    rels = "\n[relations]\n# nested, equal and crossing entity spans are all allowed\n" + BRAT_OVERLAP + "\n"
    attrs = "\n[events]\n\n[attributes]\n"
    if preds:
        by_pred: dict[str, list[tuple[str, str]]] = {p: [] for p in preds}
        for s, p, o in schemas:
            by_pred.setdefault(p, []).append((s, o))
        for p in preds:
            for s, o in by_pred[p]:
                rels += f"{brat_type_id(p, True)}\tArg1:{brat_type_id(s)}, Arg2:{brat_type_id(o)}\n"
        attrs += "Combined\tArg:<RELATION>, Value:true|false\n"
    return head + ents + rels + attrs


def _short(name: str, type_id: str) -> str:
    stem = type_id.split("_", 1)[0]
    return stem if stem not in ("", "X") else (name[:4] or "(none)")


def brat_visual_conf(task: TaskSpec, examples: Sequence[Example] = ()) -> str:
    """A brat ``visual.conf`` showing each ASCII type id by its Chinese name:
    ``ascii_id | 中文 | short`` lines (CMeEE: ``dis | 疾病 | dis``). A name's controls and line
    breaks are shown as escapes (``\\n``): one line per type, whatever the name."""
    types, preds, _ = _brat_names(task, examples)
    zh = {label.code: label.zh for label in task.labels}
    lines = []
    for name, tid in [(t, brat_type_id(t)) for t in types] + [(p, brat_type_id(p, True)) for p in preds]:
        shown = visible(zh.get(name) or name or "(none)").replace("|", "/")
        lines.append(f"{tid} | {shown} | {_short(shown, tid)}")
    return ("# brat visual.conf written by CBLUE Studio for " + task.name + ": the Chinese names\n"
            "# of the ASCII type ids (id | display name | short form).\n\n[labels]\n"
            + "".join(line + "\n" for line in lines)
            + "\n[drawing]\nSPAN_DEFAULT\tfgColor:black, bgColor:lightgreen, borderColor:darken\n"
            "ARC_DEFAULT\tcolor:black, arrowHead:triangle-5\n")


def _fragments(ex: Example, start: int, end: int, field: str) -> list[tuple[int, int]]:
    """The pieces of ``text[start:end]`` between line breaks, as brat writes a span that
    crosses lines; refused when the span starts or ends with a break (brat drops those ends)."""
    mention = ex.text[start:end]
    if mention[:1] in LINE_BREAKS or mention[-1:] in LINE_BREAKS:
        ch = mention[0] if mention[:1] in LINE_BREAKS else mention[-1]
        raise refusal(f"example {ex.index}", field, mention, ch,
                      "and brat cannot mark a span that starts or ends with a line break (it writes "
                      "a span on one line, split at line breaks)")
    out, pos = [], start
    for m in LINE_BREAK.finditer(mention):
        if start + m.start() > pos:
            out.append((pos, start + m.start()))
        pos = start + m.end()
    out.append((pos, end))
    return out


def _t_line(n: int, type_id: str, text: str, frags: list[tuple[int, int]]) -> str:
    offsets = ";".join(f"{s} {e}" for s, e in frags)
    return f"T{n}\t{type_id} {offsets}\t" + " ".join(text[s:e] for s, e in frags)


def _check_text(ex: Example) -> None:
    check_utf8(f"example {ex.index}", "text", ex.text)
    if "\r\n" in ex.text:
        raise refusal(f"example {ex.index}", "text", ex.text, "\r",
                      "followed by LF: brat reads CRLF as one line break, which would move every "
                      "later offset (convert the text's line breaks first)")


def _ann_text(kind: str, ex: Example) -> str:
    """The ``.ann`` file of one example (ValueError for what brat cannot hold)."""
    _check_text(ex)
    lines = []
    if kind == "spans":
        for n, s in enumerate(ex.spans, 1):
            if not 0 <= s.start < s.end <= len(ex.text):
                raise ValueError(f"example {ex.index}: span {s.start}-{s.end} is outside the text")
            frags = _fragments(ex, s.start, s.end, f"spans[{n - 1}]")
            lines.append(_t_line(n, brat_type_id(s.type), ex.text, frags))
    else:
        ents, where, _ = place_mentions(ex)
        for n, (mention, typ, start) in enumerate(ents, 1):
            frags = _fragments(ex, start, start + len(mention), f"mention {n} of the triples")
            lines.append(_t_line(n, brat_type_id(typ), ex.text, frags))
        attr = 0
        for k, t in enumerate(ex.triples, 1):
            a, b = where[(t.subject, t.subject_type)] + 1, where[(t.object, t.object_type)] + 1
            lines.append(f"R{k}\t{brat_type_id(t.predicate, True)} Arg1:T{a} Arg2:T{b}")
            if t.combined is not None:
                attr += 1
                lines.append(f"A{attr}\tCombined R{k} {'true' if t.combined else 'false'}")
    return "".join(line + "\n" for line in lines)


def check_brat(task: TaskSpec, examples: Sequence[Example]) -> None:
    """Raise the ValueError :func:`to_brat` would raise for ``examples``, building no file."""
    kind = gold_kind(task, ("spans", "triples"), "brat")
    for ex in examples:
        _ann_text(kind, ex)


def to_brat(task: TaskSpec, examples: Sequence[Example]) -> dict[str, str]:
    """brat standoff: ``{NNNNNN.txt: text, NNNNNN.ann: annotations, annotation.conf: ...,
    visual.conf: ...}`` (NNNNNN = the example's index). Raises ValueError (naming the example
    and the field) for what brat cannot hold (see the module docstring)."""
    kind = gold_kind(task, ("spans", "triples"), "brat")
    files: dict[str, str] = {}
    for ex in examples:
        ann, stem = _ann_text(kind, ex), f"{ex.index:06d}"
        files[f"{stem}.txt"] = ex.text
        files[f"{stem}.ann"] = ann
    files["annotation.conf"] = brat_conf(task, examples)
    files["visual.conf"] = brat_visual_conf(task, examples)
    return files


_T_HEAD = re.compile(r"(\S+) ([0-9]+ [0-9]+(?:;[0-9]+ [0-9]+)*)")


def _read_span(head: str, text: str, where: str) -> tuple[str, int, int]:
    """(type id, start, end) of a T line's ``TYPE START END`` (or fragments ``S E;S E`` whose
    gaps are line breaks only, as :func:`to_brat` and brat write a span across lines)."""
    m = _T_HEAD.fullmatch(head)
    if not m:
        raise ValueError(f"{where}: malformed span {head!r} (expected 'TYPE START END')")
    frags = [(int(a), int(b)) for a, b in (part.split(" ") for part in m.group(2).split(";"))]
    for (s, e), (s2, _) in pairwise(frags):
        gap = text[e:s2]
        if s >= e or not gap or any(ch not in LINE_BREAKS for ch in gap):
            raise ValueError(f"{where}: discontinuous span {head!r} (only fragments split at line "
                             "breaks are read)")
    start, end = frags[0][0], frags[-1][1]
    if not 0 <= start < end <= len(text):
        raise ValueError(f"{where}: span {start}-{end} is outside the text (length {len(text)})")
    return m.group(1), start, end


def from_brat(task: TaskSpec, files: dict[str, str | bytes]) -> list[Example]:
    """Examples from brat standoff files (``.txt`` + ``.ann`` pairs; other files ignored). Type
    names are read back through :func:`brat_type_name`."""
    kind = gold_kind(task, ("spans", "triples"), "brat")

    def text_of(v: str | bytes) -> str:
        return v.decode("utf-8") if isinstance(v, bytes) else v

    stems = sorted(name[:-4] for name in files if name.endswith(".txt"))
    out = []
    for pos, stem in enumerate(stems):
        text = text_of(files[f"{stem}.txt"])
        ann = text_of(files.get(f"{stem}.ann", ""))
        spans: dict[str, Span] = {}
        rels: dict[str, tuple[str, str, str]] = {}
        combined: dict[str, bool] = {}
        for ln, line in enumerate(ann.split("\n"), 1):
            line = line.rstrip("\r")
            if not line.strip() or line.startswith("#"):
                continue
            ident, _, rest = line.partition("\t")
            where = f"{stem}.ann line {ln}"
            if ident.startswith("T"):
                type_id, start, end = _read_span(rest.split("\t", 1)[0], text, where)
                spans[ident] = Span(start, end, brat_type_name(type_id), text[start:end])
            elif ident.startswith("R"):
                m = re.fullmatch(r"(\S+) Arg1:(\S+) Arg2:(\S+)", rest.strip())
                if not m:
                    raise ValueError(f"{where}: malformed relation {rest!r} (expected 'TYPE Arg1:T1 Arg2:T2')")
                rels[ident] = (brat_type_name(m.group(1)), m.group(2), m.group(3))
            elif ident.startswith("A"):
                bits = rest.split()
                if len(bits) >= 2 and bits[0] == "Combined":
                    combined[bits[1]] = len(bits) < 3 or bits[2].lower() == "true"
        index = decimal_index(stem)
        rec = {"cblue_index": pos if index is None else index}
        if kind == "spans":
            out.append(read_example(task, rec, pos, text, spans=list(spans.values())))
            continue
        triples = []
        for rid, (pred, a, b) in rels.items():
            if a not in spans or b not in spans:
                raise ValueError(f"{stem}.ann: relation {rid} points to a missing span ({a}, {b})")
            triples.append(read_triple(text, spans[a], pred, spans[b], combined.get(rid)))
        out.append(read_example(task, rec, pos, text, triples=triples))
    return out
