"""Real headless Chromium: a CMeIE example on the Datasets page, its triples drawn as arcs over the
sentence (brat-style, HTML and CSS only), checked by the boxes the browser lays out."""
from __future__ import annotations

import pytest

from cblue_core.io.validate import load
from tests.conftest import SAMPLE_DATA

pytestmark = pytest.mark.browser

# Every arc piece, its line, its row (level), the mention runs and labels of that line, in px.
GEOMETRY = """() => {
  const box = e => { const r = e.getBoundingClientRect();
                     return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return [...document.querySelectorAll('.cbr-rl-line')].map((line, li) => {
    const txt = line.querySelector('.cbr-rl-txt');
    const rows = [...line.querySelectorAll('.cbr-rl-row')];
    return {
      line: li,
      text: box(txt),
      mentions: [...txt.querySelectorAll('.cbr-rl-hl')].map(box),
      labels: [...line.querySelectorAll('.cbr-rl-lbl')].map(box),
      arcs: rows.flatMap((row, ri) => [...row.querySelectorAll('.cbr-rl-arc')].map(a => {
        const after = getComputedStyle(a, '::after');
        return {row: ri, cls: a.className, title: a.title, ...box(a),
                arrow: after.content !== 'none' && parseFloat(after.borderTopWidth) > 3,
                arrowVisible: after.visibility !== 'hidden' && after.display !== 'none'};
      })),
    };
  });
}"""


def pick_example():
    """The sample CMeIE example with the most triples among those with a repeated mention."""
    best = None
    for ex in load(SAMPLE_DATA / "cblue/CMeIE/CMeIE_dev.json").examples:
        mentions = {t.subject for t in ex.triples} | {t.object for t in ex.triples}
        repeated = [m for m in mentions if ex.text.count(m) > 1]
        if len(ex.triples) >= 3 and repeated and (best is None or len(ex.triples) > len(best[0].triples)):
            best = (ex, repeated)
    assert best is not None
    return best


def test_relations_drawn_as_arcs_over_the_sentence(app_url, page, output_dir):
    ex, repeated = pick_example()
    page.goto(f"{app_url}/?task=CMeIE&split=dev&example={ex.index}", timeout=60_000)
    page.wait_for_selector(".cbr-rl-arc", timeout=60_000)
    figure = page.locator(".cbr", has=page.locator(".cbr-rl")).first
    figure.scroll_into_view_if_needed()
    lines = page.evaluate(GEOMETRY)
    assert len(lines) >= 2  # this sentence wraps
    arcs = [a for ln in lines for a in ln["arcs"]]

    # every triple is drawn, as arcs over the sentence (a bundle piece carries several)
    drawn = {int(c[len("cbr-rl-k"):]) for a in arcs for c in a["cls"].split() if c.startswith("cbr-rl-k")}
    assert drawn == set(range(len(ex.triples)))
    for t in ex.triples:
        assert any(f"{t.subject}" in a["title"] and f"→ {t.object}" in a["title"] for a in arcs), t

    for ln in lines:
        for a in ln["arcs"]:
            cls = a["cls"].split()
            assert a["bottom"] <= ln["text"]["top"] + 1, a          # above the line's text
            for m in ln["mentions"]:
                if m["left"] < a["right"] and a["left"] < m["right"]:
                    assert a["bottom"] <= m["top"] + 1, (a, m)       # above its mentions
            # a leg (not a continuation end) stands on a highlighted mention
            legs = ([a["left"] + 1] if "cbr-rl-nl" not in cls else []) + (
                [a["right"] - 1] if "cbr-rl-nr" not in cls else [])
            for x in legs:
                assert any(m["left"] - 1 <= x <= m["right"] + 1 for m in ln["mentions"]), (x, a)
            if "cbr-rl-ar" in cls or "cbr-rl-al" in cls:
                assert a["arrow"] and a["arrowVisible"], a            # the arrowhead is drawn
        # no two arcs on one level overlap
        for i, a in enumerate(ln["arcs"]):
            for b in ln["arcs"][i + 1:]:
                if a["row"] == b["row"]:
                    assert a["right"] <= b["left"] + 1 or b["right"] <= a["left"] + 1, (a, b)
        # labels never overlap each other nor the text
        for i, a in enumerate(ln["labels"]):
            assert a["bottom"] <= ln["text"]["top"] + 1, a
            for b in ln["labels"][i + 1:]:
                assert (a["right"] <= b["left"] + 1 or b["right"] <= a["left"] + 1
                        or a["bottom"] <= b["top"] + 1 or b["bottom"] <= a["top"] + 1), (a, b)

    # the repeated mention is explained once, not once per triple
    notes = page.locator(".cbr-note", has_text="arcs use the closest occurrence")
    assert notes.count() == len(repeated)
    # the triple table stays below the drawing
    assert page.locator(".cbr-rl-tab tr").count() == len(ex.triples) + 1
    figure.screenshot(path=str(output_dir / "relations_arcs.png"))
