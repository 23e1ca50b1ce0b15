"""CHIP-CDEE clinical finding events: core names highlighted in the text plus an event table."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ..records import Event, Span
from .base import document, esc, heading
from .mentions import find_all
from .palette import colour_by_index
from .spans import SpanStyle, spans_body


def events_body(text: str, events: Sequence[Event], *,
                tendency_name: Callable[[str], str] | None = None) -> str:
    """Fragment: the text with every occurrence of each core name highlighted (labelled with
    the numbers of its events, ``E1,E3``) and a table of the events."""
    events = list(events)
    tname = tendency_name or (lambda t: str(t))
    numbers: dict[str, list[int]] = {}
    for i, ev in enumerate(events, start=1):
        numbers.setdefault(str(ev.core_name), []).append(i)
    cores = list(numbers)
    spans = [Span(o, o + len(c), c, c) for c in cores for o in find_all(text, c)]

    def style(s: Span, _slice: str) -> SpanStyle:
        nums = numbers[s.type]
        label = ",".join(f"E{n}" for n in nums)
        tip = "; ".join(f"E{n} {events[n - 1].core_name} ({tname(events[n - 1].tendency)})"
                        for n in nums)
        return SpanStyle(colour_by_index(cores.index(s.type)), label, tip)

    out = [spans_body(text, spans, style)]
    if not events:
        out.append('<div class="cbr-muted">无事件 / no events</div>')
        return "".join(out)
    rows = []
    for i, ev in enumerate(events, start=1):
        core = str(ev.core_name)
        found = bool(find_all(text, core))
        where = ("" if found else
                 '<span class="cbr-warn">原文中未找到 / not found in the text</span>')
        col = colour_by_index(cores.index(core))
        rows.append(
            f"<tr><td>E{i}</td><td><span class=\"cbr-chip {col.css_class}\">{esc(core)}</span>"
            f"{where}</td><td>{esc(tname(ev.tendency))}</td>"
            f"<td>{esc('、'.join(ev.character))}</td><td>{esc('、'.join(ev.anatomy))}</td></tr>")
    out.append(heading("事件", f"events ({len(events)})"))
    out.append('<table class="cbr-tab"><tr><th>#</th><th>主体词 core name</th>'
               '<th>发生状态 tendency</th><th>描述词 character</th><th>解剖部位 anatomy</th></tr>'
               + "".join(rows) + "</table>")
    return "".join(out)


def events_html(text: str, events: Sequence[Event], *,
                tendency_name: Callable[[str], str] | None = None, big: bool = False) -> str:
    """Self-contained HTML of a CHIP-CDEE example."""
    return document(events_body(text, events, tendency_name=tendency_name), big=big)
