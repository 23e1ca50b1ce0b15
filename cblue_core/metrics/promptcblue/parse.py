"""The official PromptCBLUE post-processor (HEAD ``post_generate_process.py``), reimplemented.

Turns generations (the ``target`` field of prompt records) into the structured answers that
the scorer reads (``results.json``), task by task, following the official post-processor exactly (docs/metrics.md section 3).

Differences from the official script, all deliberate:

* Where the official script would crash the whole run (unknown task, a Text2DT line without
  ``：role=``, a CMedCausal line without ``头实体：`` or ``；尾实体：``, a nested CMedCausal
  relation other than ``因果关系``, ``answer_choices`` missing where the task needs them), this
  module raises :class:`PromptParseError` (naming sample id, task and line) in strict mode.
  With ``strict=False`` the offending line is skipped and recorded as a
  :class:`ParseIssue` of kind ``"error"`` on the :class:`ParsedAnswer` (``.failures``).
* Text2DT ``triples`` go through :func:`ast.literal_eval` instead of ``eval``: the same result
  for every literal (lists, tuples, strings, numbers, dicts, sets); an expression that is not
  a literal (``[1+1]``, ``[len]``) gives ``[]`` here where ``eval`` might have evaluated it.
* CHIP-CDN keeps the chosen terms in first-seen order; the official ``list(set(...))`` order
  depends on the hash seed, and the scorer compares sets, so scores are unaffected.
* Content the official parser silently ignores is *recorded* (never changing the answer) as
  issues of kind ``"dropped"`` (a non-empty line or piece the parser ignores) or ``"invalid"``
  (a value not among the allowed options: replaced, filtered out or kept as the official
  parser does). Clean mode counts them.

``variant="legacy"`` reproduces the older 16-task post-processor (``src/for_eval``, deleted
2023-08-11) that made the toy ``results.json``/``dev_structured.json``: ASCII ``:`` ``,`` ``;``
become full-width first (at most 100 of each), an invalid CHIP-MDCFNPC attribute becomes
``无实际意义的不标注或者和病人当前的状态独立不标注``, the relation task is keyed ``CMeIE`` and
Text2DT/CMedCausal are unknown tasks.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .tasks import CLS_LABELS, LEGACY_PARSER_TASKS, PARSER_TASKS, canonical_task

__all__ = [
    "ParseIssue",
    "ParsedAnswer",
    "PromptParseError",
    "StructuredParse",
    "UnknownTaskError",
    "literal_triples",
    "parse_generation",
    "parse_record",
    "parse_records",
    "structure",
    "structure_with_issues",
]

HEAD = "head"
LEGACY = "legacy"

NER_TASKS = ("CMeEE-V2", "IMCS-V2-NER")
PLAIN_CLS_TASKS = ("CHIP-CTC", "KUAKE-IR", "KUAKE-QIC", "KUAKE-QQR", "KUAKE-QTR", "IMCS-V2-DAC")
CDEE_KEYS = ("主体词", "发生状态", "描述词", "解剖部位")
CDEE_LIST_KEYS = ("描述词", "解剖部位")
MRG_KEYS = ("主诉：", "现病史：", "辅助检查：", "既往史：", "诊断：", "建议：")
CDN_NONE = "没有对应的标准化实体"
MDCFNPC_INVALID = "不标注"
MDCFNPC_INVALID_LEGACY = "无实际意义的不标注或者和病人当前的状态独立不标注"
SR_INVALID = "无法根据上下文确定病人是否患有该症状"
T2DT_LEAD = "根据给定的指南文本抽取的诊疗决策树"
T2DT_DEFAULT_NODE = {"role": "D", "logical_rel": "null", "triples": []}


class PromptParseError(ValueError):
    """A generation the official post-processor cannot handle (it would crash the run)."""

    def __init__(self, reason: str, *, sample_id: str | None = None, task: str | None = None,
                 line: str | None = None):
        self.reason = reason
        self.sample_id = sample_id
        self.task = task
        self.line = line
        where = f"sample {sample_id!r}, task {task!r}"
        super().__init__(f"{where}: {reason}" + (f" (line {line!r})" if line is not None else ""))


class UnknownTaskError(PromptParseError):
    """``task_dataset`` is not a PromptCBLUE task (the official parser raises ValueError)."""


@dataclass(frozen=True)
class ParseIssue:
    """Something in one generation that the official parser crashes on or silently ignores.

    ``kind``: ``"error"`` (the official parser would crash; the line is skipped here),
    ``"dropped"`` (non-empty content the parser ignores) or ``"invalid"`` (a value outside the
    allowed options, replaced, filtered or kept exactly as the official parser does).
    """

    kind: str
    reason: str
    line: str
    sample_id: str
    task: str


@dataclass
class ParsedAnswer:
    """The structured answer of one record plus what the parse ran into."""

    sample_id: str
    task: str
    answer: Any
    issues: list[ParseIssue] = field(default_factory=list)

    @property
    def failures(self) -> list[ParseIssue]:
        """Issues on which the official post-processor would have crashed."""
        return [i for i in self.issues if i.kind == "error"]

    @property
    def ok(self) -> bool:
        return not self.failures

    def as_result(self) -> dict[str, Any]:
        """The ``{"sample_id", "answer"}`` entry of ``results.json``."""
        return {"sample_id": self.sample_id, "answer": self.answer}


@dataclass
class StructuredParse:
    """``results`` (the ``results.json`` dict) and the per-record parses behind it."""

    results: dict[str, list[dict[str, Any]]]
    parsed: list[ParsedAnswer]

    def issues(self, kind: str | None = None) -> list[ParseIssue]:
        return [i for p in self.parsed for i in p.issues if kind is None or i.kind == kind]

    def issue_counts(self) -> dict[str, dict[str, int]]:
        """``{task: {"error": n, "dropped": n, "invalid": n}}`` for every task parsed."""
        out: dict[str, dict[str, int]] = {}
        for p in self.parsed:
            counts = out.setdefault(p.task, {"error": 0, "dropped": 0, "invalid": 0})
            for i in p.issues:
                counts[i.kind] += 1
        return out


class _Ctx:
    """Collects issues for one record; raises on errors in strict mode."""

    def __init__(self, sample_id: str, task: str, strict: bool):
        self.sample_id, self.task, self.strict = sample_id, task, strict
        self.issues: list[ParseIssue] = []

    def note(self, kind: str, reason: str, line: str) -> None:
        if kind == "error" and self.strict:
            raise PromptParseError(reason, sample_id=self.sample_id, task=self.task, line=line)
        self.issues.append(ParseIssue(kind, reason, line, self.sample_id, self.task))


class _LineError(Exception):
    """Internal: the current line cannot be parsed (official: IndexError/AssertionError)."""


def _after(text: str, sep: str, what: str) -> str:
    """``text.split(sep)[1]``, raising :class:`_LineError` where the official IndexError is."""
    parts = text.split(sep)
    if len(parts) < 2:
        raise _LineError(what)
    return parts[1]


# --------------------------------------------------------------------------- per task


def _parse_ner(gen: str, choices: Any, ctx: _Ctx) -> list[dict[str, Any]]:
    if not isinstance(choices, list):
        ctx.note("error", "answer_choices must be a list for NER tasks", gen)
        return []
    lines = gen.split("\n")
    entities: list[dict[str, Any]] = []
    for choice in choices:
        prefix = f"{choice}实体"
        for line in lines:
            if line.startswith(prefix):
                for mention in line.replace(f"{choice}实体：", "").split("，"):
                    if mention.strip():
                        entities.append({"entity": mention.strip(), "type": choice})
    prefixes = tuple(f"{c}实体" for c in choices)
    for idx, line in enumerate(lines):
        if not line.strip() or line.startswith(prefixes):
            continue
        head, sep, rest = line.partition("实体：")
        if sep and rest.strip():
            ctx.note("dropped", f"entity type {head!r} was not asked for", line)
        elif not sep and idx > 0:
            ctx.note("dropped", "line is not '<type>实体：...'", line)
    return entities


def _parse_spo(gen: str, choices: Any, ctx: _Ctx) -> list[dict[str, Any]]:
    if not isinstance(choices, list):
        ctx.note("error", "answer_choices must be a list for CMeIE-V2", gen)
        return []
    spos: list[dict[str, Any]] = []
    for line in gen.split("\n"):
        predicate = line.split("关系的头尾实体对")[0][2:].strip()
        rest = line.replace(f"具有{predicate}关系的头尾实体对如下：", "")
        for piece in rest.split("。"):
            parts = piece.split("，尾实体为")
            if len(parts) < 2:
                if piece.strip():
                    ctx.note("dropped", "no '，尾实体为' in this piece", piece)
                continue
            spos.append({
                "predicate": predicate,
                "subject": parts[0].replace("头实体为", "").strip(),
                "object": parts[1].replace("尾实体为", "").strip(),
            })
    return spos


def _parse_causal(gen: str, ctx: _Ctx) -> list[dict[str, Any]]:
    spos: list[dict[str, Any]] = []
    rel: str | None = None
    for raw in gen.split("\n"):
        line = raw.strip()
        if "因果关系三元组如下" in line:
            rel = "因果关系"
            continue
        if "条件关系三元组" in line:
            rel = "条件关系"
            continue
        if "上下位关系" in line:
            rel = "上下位关系"
            continue
        if "给定的文本没有指定关系的三元组" in line:
            break
        if not line:
            continue
        try:
            head = _after(line, "头实体：", "no '头实体：' in the line").split("；尾实体：")[0]
            if rel != "条件关系":
                obj: Any = _after(line, "；尾实体：", "no '；尾实体：' in the line")
            else:
                tail = _after(line, "；尾三元组：", "no '；尾三元组：' in a conditional line")
                sub = _after(tail, "头实体：", "no '头实体：' in the tail triple").split("；尾实体：")[0]
                ob = _after(tail, "；尾实体：", "no '；尾实体：' in the tail triple").split("；关系：")[0]
                rel_1 = _after(tail, "；关系：", "no '；关系：' in the tail triple")
                if rel_1 != "因果关系":
                    raise _LineError(f"nested relation must be 因果关系, got {rel_1!r}")
                obj = {"predicate": rel_1, "subject": sub, "object": ob}
        except _LineError as exc:
            ctx.note("error", str(exc), raw)
            continue
        spos.append({"predicate": rel, "subject": head, "object": obj})
    return spos


def literal_triples(text: str) -> tuple[list[Any], str | None]:
    """The official ``eval`` of a Text2DT ``triples=`` value, done with ``ast.literal_eval``.

    Returns ``(triples, problem)``: a non-list literal gives ``[]``, elements whose ``len`` is
    not 3 are dropped (a 3-character string survives), any exception (including an element
    without ``len``) gives ``[]``. ``problem`` describes what was lost, or is None.
    """
    try:
        value = ast.literal_eval(text)
    except Exception as exc:  # noqa: BLE001 - mirrors the official bare ``except Exception``
        return [], f"triples are not a Python literal ({type(exc).__name__})"
    if not isinstance(value, list):
        return [], f"triples literal is a {type(value).__name__}, not a list"
    kept = []
    try:
        for tri in value:
            if len(tri) != 3:
                continue
            kept.append(tri)
    except Exception as exc:  # noqa: BLE001
        return [], f"a triple has no length ({type(exc).__name__})"
    if len(kept) != len(value):
        return kept, f"{len(value) - len(kept)} element(s) with len != 3 dropped"
    return kept, None


def _parse_text2dt(gen: str, ctx: _Ctx) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    for line in gen.split("\n"):
        if T2DT_LEAD in line or not line:
            continue
        parts = line.split("：role=")
        if len(parts) < 2:
            ctx.note("error", "no '：role=' in the line", line)
            continue
        role = parts[1].split("；logical_rel=")[0]
        rel_parts = line.split("；logical_rel=")
        logical_rel = rel_parts[1].split("；triples=")[0] if len(rel_parts) >= 2 else "null"
        tri_parts = line.split("；triples=")
        if len(tri_parts) >= 2:
            triples, problem = literal_triples(tri_parts[1])
            if problem:
                ctx.note("invalid", problem, line)
        else:
            triples = []
            ctx.note("dropped", "no '；triples=' in the line", line)
        nodes.append({"role": role, "logical_rel": logical_rel, "triples": triples})
    return nodes or [dict(T2DT_DEFAULT_NODE, triples=[])]


def _parse_cdn(gen: str, choices: Any, ctx: _Ctx) -> list[dict[str, Any]]:
    lines = gen.split("\n")
    for earlier in lines[:-1]:
        if earlier.strip():
            ctx.note("dropped", "CHIP-CDN reads only the last line", earlier)
    pieces = [w.strip() for w in lines[-1].split("，") if w.strip()]
    if pieces and not isinstance(choices, (list, tuple, str)):
        ctx.note("error", "answer_choices is needed to filter CHIP-CDN terms", lines[-1])
        return []
    kept: list[str] = []
    for w in pieces:
        if w in choices:
            if w not in kept:
                kept.append(w)
        elif w != CDN_NONE:
            ctx.note("invalid", "term is not among answer_choices", w)
    return [{"entity": w, "type": "normalization"} for w in kept]


def _note_lost_first_line(first: str, looks_like_content: bool, ctx: _Ctx) -> None:
    if looks_like_content:
        ctx.note("dropped", "the first line is discarded as a lead-in, but it holds an answer", first)


def _parse_cdee(gen: str, ctx: _Ctx) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    first = gen.split("\n")[0]
    _note_lost_first_line(first, first.startswith(tuple(f"{k}：" for k in CDEE_KEYS)), ctx)
    for line in gen.split("\n")[1:]:
        info: dict[str, Any] = {}
        for piece in line.split("；"):
            attr = piece
            matched = False
            # The official loop rebinds the piece after each matching key, so a piece such
            # as "主体词：发生状态：否定" fills both keys; keep that behaviour.
            for key in CDEE_KEYS:
                if attr.startswith(f"{key}："):
                    matched = True
                    attr = attr.replace(f"{key}：", "").strip()
                    if key in CDEE_LIST_KEYS:
                        info[key] = [w.strip() for w in attr.split("，") if w.strip()]
                    else:
                        info[key] = attr
            if not matched and piece.strip():
                ctx.note("dropped", "piece starts with no CHIP-CDEE field name", piece)
        for key in CDEE_KEYS:
            if key not in info:
                info[key] = [] if key in CDEE_LIST_KEYS else ""
        events.append(info)
    return events


def _parse_attr(gen: str, choices: Any, ctx: _Ctx, replacement: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    first = gen.split("\n")[0].split("：")
    _note_lost_first_line("：".join(first), len(first) == 2 and bool(first[1].strip()), ctx)
    for line in gen.split("\n")[1:]:
        parts = line.split("：")
        if len(parts) != 2:
            if line.strip():
                ctx.note("dropped", "line does not split into exactly two parts on '：'", line)
            continue
        finding, conclusion = parts
        if not isinstance(choices, (list, tuple, str)):
            ctx.note("error", "answer_choices is needed to check the attribute", line)
            continue
        if conclusion not in choices:
            ctx.note("invalid", f"attribute not among answer_choices, replaced by {replacement!r}", line)
            conclusion = replacement
        out.append({"entity": finding.strip(), "attr": conclusion})
    return out


def _parse_mrg(gen: str, ctx: _Ctx) -> dict[str, str]:
    first = gen.strip().split("\n")[0]
    _note_lost_first_line(first, first.startswith(MRG_KEYS), ctx)
    lines = gen.strip().split("\n")[1:]
    report: dict[str, str] = {}
    for key in MRG_KEYS:
        for line in lines:
            if line.startswith(key):
                report[key[:-1]] = line.strip().split(key)[-1].strip()
    for line in lines:
        if line.strip() and not line.startswith(MRG_KEYS):
            ctx.note("dropped", "line starts with no report section name", line)
    return report


def _check_label(task: str, answer: str, ctx: _Ctx) -> None:
    labels = CLS_LABELS.get(task)
    if labels is not None and answer not in labels:
        ctx.note("invalid", "label is not among the task's labels", answer)


# --------------------------------------------------------------------------- entry points


def parse_generation(task: str, generation: Any, answer_choices: Any = None, *,
                     sample_id: str = "xxxx", strict: bool = True,
                     variant: str = HEAD) -> ParsedAnswer:
    """Parse one generation the way the official post-processor does.

    ``task`` may use either naming (``CMeIE`` is ``CMeIE-V2``). In strict mode a line the
    official script would crash on raises :class:`PromptParseError`; otherwise it is skipped
    and recorded in ``ParsedAnswer.failures``. An unknown task always raises
    :class:`UnknownTaskError`.
    """
    if variant not in (HEAD, LEGACY):
        raise ValueError(f"variant must be {HEAD!r} or {LEGACY!r}, not {variant!r}")
    name = canonical_task(task) if isinstance(task, str) else task
    known = PARSER_TASKS if variant == HEAD else tuple(canonical_task(t) for t in LEGACY_PARSER_TASKS)
    if name not in known:
        raise UnknownTaskError(f"unknown task_dataset {task!r}", sample_id=sample_id, task=task)
    ctx = _Ctx(sample_id, name, strict)
    if not isinstance(generation, str):
        ctx.note("error", f"generation must be a string, not {type(generation).__name__}", repr(generation))
        generation = ""
    gen = generation
    if variant == LEGACY:
        gen = gen.replace(":", "：", 100).replace(",", "，", 100).replace(";", "；", 100)

    answer: Any
    if name in NER_TASKS:
        answer = _parse_ner(gen, answer_choices, ctx)
    elif name == "CMeIE-V2":
        answer = _parse_spo(gen, answer_choices, ctx)
    elif name == "CMedCausal":
        answer = _parse_causal(gen, ctx)
    elif name == "Text2DT":
        answer = _parse_text2dt(gen, ctx)
    elif name == "CHIP-CDN":
        answer = _parse_cdn(gen, answer_choices, ctx)
    elif name == "CHIP-CDEE":
        answer = _parse_cdee(gen, ctx)
    elif name == "CHIP-STS":
        answer = {"相同": "是的", "不同": "不是"}.get(gen.strip(), gen.strip())
        _check_label(name, answer, ctx)
    elif name in PLAIN_CLS_TASKS:
        answer = gen.strip()
        _check_label(name, answer, ctx)
    elif name == "CHIP-MDCFNPC":
        answer = _parse_attr(gen, answer_choices, ctx,
                             MDCFNPC_INVALID_LEGACY if variant == LEGACY else MDCFNPC_INVALID)
    elif name == "IMCS-V2-SR":
        answer = _parse_attr(gen, answer_choices, ctx, SR_INVALID)
    elif name == "IMCS-V2-MRG":
        answer = _parse_mrg(gen, ctx)
    else:  # MedDG
        answer = gen.strip()
    return ParsedAnswer(sample_id=sample_id, task=name, answer=answer, issues=ctx.issues)


def parse_record(record: Mapping[str, Any], *, strict: bool = True, variant: str = HEAD,
                 text_field: str = "target") -> ParsedAnswer:
    """Parse one prompt record (``task_dataset``, ``answer_choices``, ``sample_id``, ``target``)."""
    sample_id = record.get("sample_id", "xxxx")
    if "task_dataset" not in record:
        raise PromptParseError("record has no 'task_dataset'", sample_id=sample_id)
    if text_field not in record:
        raise PromptParseError(f"record has no {text_field!r}", sample_id=sample_id,
                               task=record["task_dataset"])
    return parse_generation(record["task_dataset"], record[text_field], record.get("answer_choices"),
                            sample_id=sample_id, strict=strict, variant=variant)


def parse_records(records: Iterable[Mapping[str, Any]], *, strict: bool = True,
                  variant: str = HEAD) -> list[ParsedAnswer]:
    return [parse_record(r, strict=strict, variant=variant) for r in records]


def _result_key(task: str, variant: str) -> str:
    return "CMeIE" if variant == LEGACY and task == "CMeIE-V2" else task


def structure_with_issues(records: Iterable[Mapping[str, Any]], *, strict: bool = True,
                          variant: str = HEAD) -> StructuredParse:
    """Like :func:`structure`, also returning each record's :class:`ParsedAnswer`."""
    keys = PARSER_TASKS if variant == HEAD else LEGACY_PARSER_TASKS
    results: dict[str, list[dict[str, Any]]] = {k: [] for k in keys}
    parsed = parse_records(records, strict=strict, variant=variant)
    for p in parsed:
        results[_result_key(p.task, variant)].append(p.as_result())
    return StructuredParse(results=results, parsed=parsed)


def structure(records: Iterable[Mapping[str, Any]], *, strict: bool = True,
              variant: str = HEAD) -> dict[str, list[dict[str, Any]]]:
    """The official ``results.json``: ``{task: [{"sample_id", "answer"}, ...]}``, all 18 keys
    (16 with ``variant="legacy"``), records in input order."""
    return structure_with_issues(records, strict=strict, variant=variant).results
