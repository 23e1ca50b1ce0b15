"""Shared pieces of the renderer: escaping, the scoped stylesheet, chips, badges, sections.

Everything here returns HTML fragments; :func:`document` wraps a fragment into a
self-contained block (one ``<style>`` plus a ``<div class="cbr">``). ``st.html`` is not
iframed, so every CSS rule is scoped under ``.cbr`` and every class starts with ``cbr-``: the
stylesheet cannot restyle the rest of the Streamlit page. No JavaScript, no external resource,
no SVG (``st.html`` sanitises with DOMPurify's HTML-only profile, which drops SVG).
"""
from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..records import Span
from ..tasks import Label, TaskSpec
from .bidi import isolate
from .marks import marks_css
from .palette import Colour, palette_css


def esc(value: Any) -> str:
    """HTML-escape any value (quotes included), for text and attribute values alike, its
    direction isolated when it could reorder the line around it (:func:`.bidi.isolate`)."""
    return html.escape(isolate("" if value is None else str(value)), quote=True)


_CSS = """
.cbr{font-family:system-ui,-apple-system,"PingFang SC","Hiragino Sans GB","Microsoft YaHei",
"Noto Sans CJK SC","Source Han Sans SC",sans-serif;font-size:16px;line-height:1.6;color:#1f2328;
background:#fff;padding:.6em .8em;border:1px solid #d0d7de;border-radius:.4em;
overflow-wrap:anywhere;text-align:left}
.cbr *{box-sizing:border-box}
.cbr.cbr-big{font-size:26px;container-type:inline-size}
@media (max-width:640px){.cbr.cbr-big{font-size:19px}.cbr.cbr-big .cbr-tab{font-size:.7em}}
.cbr.cbr-big .cbr-rl{font-size:min(1em,calc(100cqw / 27))}
.cbr .cbr-sec{margin:.35em 0}
.cbr .cbr-h{font-size:.78em;font-weight:600;color:#57606a;margin:.5em 0 .15em;letter-spacing:.02em}
.cbr .cbr-text{white-space:pre-wrap;line-height:1.7;margin:.2em 0}
.cbr .cbr-pre{white-space:pre-wrap;margin:.2em 0;padding:.35em .5em;background:#f6f8fa;
border-radius:.3em;border:1px solid #eaeef2}
.cbr .cbr-seg{position:relative;display:inline-block;white-space:pre-wrap}
.cbr .cbr-bar{position:absolute;left:0;right:0;height:0;border-top:.26em solid var(--cbr-bd,#6e7781)}
.cbr .cbr-bs{left:.1em}
.cbr .cbr-be{right:.1em}
.cbr .cbr-more{border-top:.26em dotted #8c959f}
.cbr .cbr-lbl{position:absolute;left:0;top:.05em;font-size:.58em;line-height:1.2;padding:0 .3em;
white-space:nowrap;background:var(--cbr-bg,#f6f8fa);border:1px solid var(--cbr-bd,#6e7781);
border-radius:.3em;color:#1f2328;z-index:1;font-weight:600}
.cbr .cbr-swbar{display:inline-block;width:2.2em;height:0;vertical-align:middle;
border-top:.26em solid #57606a;margin-right:.3em}
.cbr .cbr-chip{display:inline-block;padding:0 .5em;margin:.12em .25em .12em 0;line-height:1.5;
border:1px solid var(--cbr-bd,#8c959f);background:var(--cbr-bg,#f6f8fa);border-radius:.8em;
white-space:pre-wrap;color:#1f2328}
.cbr .cbr-badge{display:inline-block;padding:0 .45em;margin:0 .3em .15em 0;font-size:.78em;
line-height:1.5;border-radius:.3em;background:#eaeef2;color:#24292f;border:1px solid #d0d7de}
.cbr .cbr-code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em;
color:#57606a}
.cbr .cbr-muted{color:#57606a;font-size:.85em}
.cbr .cbr-note{color:#6e5600;background:#fff8c5;border:1px solid #eac54f;border-radius:.3em;
padding:.1em .45em;font-size:.82em;margin:.25em 0;display:inline-block}
.cbr .cbr-warn{color:#82071e;background:#ffebe9;border:1px solid #ff8182;border-radius:.3em;
padding:.1em .45em;font-size:.82em;margin:.25em 0;display:inline-block}
.cbr .cbr-legend{font-size:.82em;margin:.3em 0}
.cbr .cbr-legend .cbr-chip{margin-right:.4em}
.cbr table.cbr-tab{border-collapse:collapse;margin:.3em 0;font-size:.9em;width:100%}
.cbr .cbr-tab th,.cbr .cbr-tab td{border:1px solid #d0d7de;padding:.15em .45em;vertical-align:top;
text-align:left}
.cbr .cbr-tab th{background:#f6f8fa;font-weight:600}
.cbr dl.cbr-dl{margin:.2em 0;display:grid;grid-template-columns:max-content 1fr;gap:.15em .8em}
.cbr .cbr-dl dt{font-weight:600;color:#24292f}
.cbr .cbr-dl dd{margin:0;white-space:pre-wrap}
.cbr .cbr-pair{display:grid;grid-template-columns:1fr 1fr;gap:.6em}
.cbr .cbr-box{border:1px solid #d0d7de;border-radius:.35em;padding:.3em .55em;background:#fff}
.cbr .cbr-ok{border-color:#1a7f37}
.cbr .cbr-bad{border-color:#cf222e}
.cbr ol.cbr-opts{margin:.2em 0;padding-left:0;list-style:none}
.cbr .cbr-opts li{margin:.15em 0;padding:.1em .45em;border:1px solid #d0d7de;border-radius:.3em;
white-space:pre-wrap}
.cbr .cbr-opts li.cbr-ref{border-color:#1a7f37;background:#dafbe1}
.cbr .cbr-key{font-weight:700;margin-right:.4em}
.cbr .cbr-dlg{display:flex;flex-direction:column;gap:.35em}
.cbr .cbr-turn{max-width:85%;border-radius:.7em;padding:.3em .6em;border:1px solid #d0d7de}
.cbr .cbr-sp-doctor{align-self:flex-start;background:#f1f8ff;border-color:#9cc6f0}
.cbr .cbr-sp-patient{align-self:flex-end;background:#f6fff1;border-color:#a8d59a}
.cbr .cbr-sp-other{align-self:flex-start;background:#f6f8fa}
.cbr .cbr-who{font-size:.75em;font-weight:600;color:#57606a;margin-bottom:.1em}
.cbr .cbr-cmp-h{font-weight:700;margin:.5em 0 .2em;padding-bottom:.1em;border-bottom:2px solid #d0d7de}
.cbr .cbr-rl{overflow-x:auto;overflow-y:hidden;margin:.2em 0 .3em;padding:.15em 0 .1em;--cbr-arc:#57606a}
.cbr .cbr-rl-line{margin:0 0 .4em}
.cbr .cbr-rl-arcs{padding-bottom:.45em}
.cbr .cbr-rl-row{height:1.3em;white-space:nowrap;line-height:0}
.cbr .cbr-rl-gap,.cbr .cbr-rl-slot{display:inline-block;vertical-align:top;height:0}
.cbr .cbr-rl-arc{display:block;position:relative;height:0;margin-top:.6em;box-sizing:content-box;
border:2px solid var(--cbr-arc);border-bottom:0;border-radius:.6em .6em 0 0}
.cbr .cbr-rl-arc:hover{--cbr-arc:#1f2328;z-index:3}
.cbr .cbr-rl-nl{border-left:0;border-top-left-radius:0}
.cbr .cbr-rl-nr{border-right:0;border-top-right-radius:0}
.cbr .cbr-rl-al::after,.cbr .cbr-rl-ar::after{content:"";position:absolute;bottom:-.02em;width:0;height:0;
box-sizing:content-box;border-left:.27em solid transparent;border-right:.27em solid transparent;
border-top:.5em solid var(--cbr-arc)}
.cbr .cbr-rl-al::after{left:calc(-.27em - 1px)}
.cbr .cbr-rl-ar::after{right:calc(-.27em - 1px)}
.cbr .cbr-rl-at{position:absolute;left:0;top:0;height:0}
.cbr .cbr-rl .cbr-rl-lbl{position:absolute;left:100%;right:auto;top:-.84em;transform:translateX(-50%);
font-size:.72em;line-height:1.3;padding:0 .4em;white-space:nowrap;background:#fff;color:#1f2328;
border:1px solid var(--cbr-arc);border-radius:.7em;z-index:2;font-weight:600}
.cbr .cbr-rl .cbr-m-spurious .cbr-rl-lbl{text-decoration:none}
.cbr .cbr-rl-leg{position:absolute;left:0;top:0;bottom:0;border-right:2px solid var(--cbr-arc)}
.cbr .cbr-rl-lega::after{content:"";position:absolute;bottom:-.02em;right:calc(-.27em - 1px);width:0;height:0;
box-sizing:content-box;border-left:.27em solid transparent;border-right:.27em solid transparent;
border-top:.5em solid var(--cbr-arc)}
.cbr .cbr-rl-cont{position:absolute;top:-.62em;font-size:.8em;line-height:1;padding:0 .1em;
background:#fff;color:var(--cbr-arc);font-weight:700}
.cbr .cbr-rl-cont::before{content:"»"}
.cbr .cbr-rl-cl{left:-.15em}
.cbr .cbr-rl-cr{right:-.15em}
.cbr .cbr-rl-txt{white-space:nowrap;padding-left:1em;line-height:1.5;min-height:1.5em;tab-size:1}
.cbr .cbr-rl-r{display:inline-block;position:relative;height:1.5em;vertical-align:top;white-space:pre;
overflow:visible}
.cbr .cbr-rl-n{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",
monospace}
.cbr .cbr-rl-n .cbr-lbl{font-family:system-ui,-apple-system,"Noto Sans CJK SC",sans-serif}
.cbr .cbr-rl-hl{background:var(--cbr-bg)}
.cbr .cbr-rl-unused{border-top-style:dashed;opacity:.6}
.cbr .cbr-rl-sw{display:inline-block;width:1.8em;height:.6em;margin-right:.35em;vertical-align:middle;
box-sizing:content-box;border:2px solid var(--cbr-arc);border-bottom:0;border-radius:.45em .45em 0 0}
.cbr .cbr-rl-arc.cbr-m-missed,.cbr .cbr-rl-sw.cbr-m-missed{border-style:dashed;opacity:.6}
.cbr .cbr-rl-arc.cbr-m-spurious,.cbr .cbr-rl-sw.cbr-m-spurious{border-style:dotted;border-width:3px 3px 0;
--cbr-arc:#D55E00}
.cbr .cbr-rl-arc.cbr-m-wrong_type,.cbr .cbr-rl-sw.cbr-m-wrong_type{border-style:dashed;--cbr-arc:#C98A00}
.cbr .cbr-rl-arc.cbr-m-wrong_boundary,.cbr .cbr-rl-sw.cbr-m-wrong_boundary{border-style:dotted;
border-width:3px 3px 0;--cbr-arc:#C98A00}
.cbr .cbr-rl-arc.cbr-m-wrong_both,.cbr .cbr-rl-sw.cbr-m-wrong_both{border-style:double;border-width:4px 4px 0;
--cbr-arc:#C98A00}
.cbr .cbr-rl-arc.cbr-m-other,.cbr .cbr-rl-sw.cbr-m-other{border-style:dotted}
.cbr .cbr-rl-arc.cbr-m-correct,.cbr .cbr-rl-sw.cbr-m-correct{--cbr-arc:#117733}
.cbr .cbr-rl-nl.cbr-m-spurious,.cbr .cbr-rl-nl.cbr-m-wrong_boundary,.cbr .cbr-rl-nl.cbr-m-wrong_both,
.cbr .cbr-rl-nl.cbr-m-missed,.cbr .cbr-rl-nl.cbr-m-wrong_type,.cbr .cbr-rl-nl.cbr-m-other{border-left:0}
.cbr .cbr-rl-nr.cbr-m-spurious,.cbr .cbr-rl-nr.cbr-m-wrong_boundary,.cbr .cbr-rl-nr.cbr-m-wrong_both,
.cbr .cbr-rl-nr.cbr-m-missed,.cbr .cbr-rl-nr.cbr-m-wrong_type,.cbr .cbr-rl-nr.cbr-m-other{border-right:0}
.cbr .cbr-m-missed>.cbr-rl-leg,.cbr .cbr-m-wrong_type>.cbr-rl-leg{border-right-style:dashed}
.cbr .cbr-m-spurious>.cbr-rl-leg,.cbr .cbr-m-wrong_boundary>.cbr-rl-leg{border-right:3px dotted var(--cbr-arc)}
.cbr .cbr-m-wrong_both>.cbr-rl-leg{border-right:4px double var(--cbr-arc)}
.cbr .cbr-m-other>.cbr-rl-leg{border-right-style:dotted}
.cbr .cbr-rl-tab td{vertical-align:middle}
.cbr .cbr-rl-tab .cbr-chip{margin:0 .2em 0 0}
.cbr .cbr-missing{border-style:dashed!important;background:#fff!important;color:#82071e}
.cbr .cbr-num{font-size:.72em;font-weight:700;color:#57606a;margin-right:.25em}
.cbr .cbr-depth{display:inline-block}
"""


def stylesheet() -> str:
    """The renderer's whole stylesheet (fixed text plus palette and mark-style rules)."""
    css = " ".join(line.strip() for line in _CSS.strip().splitlines())
    return css + palette_css().replace(".cbr-c", ".cbr .cbr-c") + marks_css()


STYLE_TAG = f"<style>{stylesheet()}</style>"


def document(body: str, *, big: bool = False) -> str:
    """Wrap a fragment into a self-contained block: the scoped stylesheet plus a container."""
    cls = "cbr cbr-big" if big else "cbr"
    return f'{STYLE_TAG}<div class="{cls}">{body}</div>'


def chip(text: Any, colour: Colour | None = None, *, title: Any = None, extra: str = "") -> str:
    """A rounded chip; colour only through a palette class; ``extra`` is a fixed class list."""
    cls = "cbr-chip" + (f" {colour.css_class}" if colour else "") + (f" {extra}" if extra else "")
    tip = f' title="{esc(title)}"' if title not in (None, "") else ""
    return f'<span class="{cls}"{tip}>{esc(text)}</span>'


def badge(text: Any, *, title: Any = None) -> str:
    tip = f' title="{esc(title)}"' if title not in (None, "") else ""
    return f'<span class="cbr-badge"{tip}>{esc(text)}</span>'


def heading(zh: str, en: str) -> str:
    return f'<div class="cbr-h">{esc(zh)} / {esc(en)}</div>'


def section(zh: str, en: str, body: str) -> str:
    return f'<div class="cbr-sec">{heading(zh, en)}{body}</div>'


def text_block(text: Any, cls: str = "cbr-text") -> str:
    """Plain text with its line breaks preserved."""
    return f'<div class="{cls}">{esc(text)}</div>'


def label_title(label: Label) -> str:
    """'中文名 / English (code)' without empty parts (a code '' gives no '()')."""
    if label.code == "":
        return f"{label.zh} / {label.en}" if label.en else label.zh
    return label.display()


def task_label_name(task: TaskSpec | None,
                    extra: Iterable[Label] = ()) -> Callable[[str], str]:
    """Display name of a label code for ``task``: its registry label (matched by code, then by
    Chinese name, for files that store the name), then ``extra`` labels, else the code."""
    table: dict[str, Label] = {}
    for lab in list(extra)[::-1] + list(task.labels if task else ())[::-1]:
        table[lab.zh] = lab
    for lab in list(extra)[::-1] + list(task.labels if task else ())[::-1]:
        table[lab.code] = lab

    def name(code: str) -> str:
        lab = table.get(str(code))
        return label_title(lab) if lab else str(code)
    return name


@dataclass(frozen=True)
class RenderContext:
    """Options every kind renderer receives."""

    big: bool = False
    marks: Mapping[Span, str] = field(default_factory=dict)
