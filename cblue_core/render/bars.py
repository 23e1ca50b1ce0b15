"""Bar charts as plain HTML and CSS: a bar per value, its number written beside it, an optional
95% interval drawn across the bar, titled panels side by side.

For the charts that only show values (F1 per label, bucket scores). Plotly's bundle took 0.4 s
of a fresh page's main thread to evaluate, then 0.1-0.3 s to draw each figure; these are drawn
with the rest of the page. Every value is written out (none is only in a hover), every string
is escaped (:func:`.base.esc`); the block brings its own stylesheet, scoped under ``.cbr-bars``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .base import esc

_CSS = """
.cbr-bars{font-family:system-ui,-apple-system,"PingFang SC","Noto Sans CJK SC",sans-serif;font-size:14px;
color:#1f2328;display:grid;gap:18px 28px;grid-template-columns:repeat(var(--cbr-cols),minmax(0,1fr))}
@media (max-width:800px){.cbr-bars{grid-template-columns:minmax(0,1fr)}}
.cbr-bars *{box-sizing:border-box}
.cbr-bars .cbr-bars-t{font-weight:600;font-size:15px;margin:0 0 2px}
.cbr-bars .cbr-bars-a{color:#57606a;font-size:12px;margin:0 0 6px}
.cbr-bars .cbr-bars-r{display:grid;grid-template-columns:minmax(6em,var(--cbr-label)) minmax(80px,1fr) auto;
gap:8px;align-items:center;min-height:24px}
.cbr-bars .cbr-bars-l{overflow-wrap:anywhere;line-height:1.25;text-align:right}
.cbr-bars .cbr-bars-n{display:block;color:#57606a;font-size:12px;white-space:nowrap}
.cbr-bars .cbr-bars-k{position:relative;height:16px;background:#f1f3f5;border-radius:2px}
.cbr-bars .cbr-bars-b{position:absolute;left:0;top:0;bottom:0;background:#0068c9;border-radius:2px}
.cbr-bars .cbr-bars-i{position:absolute;top:50%;height:2px;margin-top:-1px;background:#343a40}
.cbr-bars .cbr-bars-i::before,.cbr-bars .cbr-bars-i::after{content:"";position:absolute;top:-5px;
width:2px;height:12px;background:#343a40}
.cbr-bars .cbr-bars-i::before{left:-1px}.cbr-bars .cbr-bars-i::after{right:-1px}
.cbr-bars .cbr-bars-v{font-variant-numeric:tabular-nums;white-space:nowrap;font-size:13px}
"""
STYLE = "<style>" + " ".join(line.strip() for line in _CSS.strip().splitlines()) + "</style>"


@dataclass(frozen=True)
class Bar:
    """One bar: ``value`` on the panel's scale, ``text`` the number written beside it, ``note``
    under the label (say "n=120"); ``low``/``high`` an interval drawn across the bar."""

    label: str
    value: float
    text: str
    note: str = ""
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class BarPanel:
    """Bars under a title; ``axis`` says what the values are (with their unit)."""

    title: str
    axis: str
    bars: tuple[Bar, ...]


def _share(value: float, scale: float) -> float:
    return 0.0 if scale <= 0 else min(max(value / scale, 0.0), 1.0) * 100


def _bar(bar: Bar, scale: float) -> str:
    tip = bar.label + (f" ({bar.note})" if bar.note else "") + f": {bar.text}"
    interval = ""
    if bar.low is not None and bar.high is not None:
        left, right = _share(bar.low, scale), _share(bar.high, scale)
        interval = f'<div class="cbr-bars-i" style="left:{left:.2f}%;width:{max(right - left, 0):.2f}%"></div>'
    note = f'<span class="cbr-bars-n">{esc(bar.note)}</span>' if bar.note else ""
    return (f'<div class="cbr-bars-r" title="{esc(tip)}"><div class="cbr-bars-l">{esc(bar.label)}{note}</div>'
            f'<div class="cbr-bars-k"><div class="cbr-bars-b" style="width:{_share(bar.value, scale):.2f}%"></div>'
            f'{interval}</div><div class="cbr-bars-v">{esc(bar.text)}</div></div>')


def bars_html(panels: Sequence[BarPanel], *, scale: float | None = None, columns: int = 1,
              label_px: int = 220) -> str:
    """The panels, ``columns`` a row (one on a narrow page), each bar's length its value over
    ``scale`` (else the largest value of all panels); labels wrap within ``label_px``."""
    top = scale if scale is not None else max((b.value for p in panels for b in p.bars), default=0.0)
    body = "".join(
        f'<div><div class="cbr-bars-t">{esc(p.title)}</div><div class="cbr-bars-a">{esc(p.axis)}</div>'
        + "".join(_bar(b, top) for b in p.bars) + "</div>"
        for p in panels)
    return (f'{STYLE}<div class="cbr-bars" style="--cbr-cols:{max(int(columns), 1)};'
            f'--cbr-label:{max(int(label_px), 60)}px">{body}</div>')
