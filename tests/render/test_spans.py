import random

import pytest

from cblue_core.records import Span
from cblue_core.render.bounds import MAX_HTML_CHARS, MAX_LAYERS
from cblue_core.render.marks import MARK_STYLES, mark_style
from cblue_core.render.spans import (
    assign_levels,
    legend_html,
    span_styler,
    spans_body,
    spans_html,
    valid_spans,
)
from cblue_core.tasks import CMEEE_TYPES

from .helpers import BOLD, EVIL, IMG, QUOTE, SCRIPT, check_html, visible_text


def _overlap(a: Span, b: Span) -> bool:
    return a.start < b.end and b.start < a.end


def _titles(out: str) -> list[str]:
    return [v for k, v in check_html(out).attrs if k == "title"]


def test_depth3_nesting_levels_and_mentions():
    text = "右侧呼吸肌麻痹加重"
    spans = [Span(2, 7, "sym", "呼吸肌麻痹"), Span(2, 5, "bod", "呼吸肌"), Span(2, 4, "bod", "呼吸")]
    levels = assign_levels(spans)
    assert sorted(levels) == [0, 1, 2]
    assert levels[2] == 0 and levels[1] == 1 and levels[0] == 2  # inner closest to the text
    out = spans_html(text, spans, labels=CMEEE_TYPES)
    assert visible_text(out) == text
    titles = _titles(out)
    for s in spans:
        assert any(t.endswith(f"({s.type}): {s.text}") for t in titles), s
    assert out.count('class="cbr-lbl"') == 3
    assert "top:3.60em" in out  # third level drawn


def test_crossing_spans_get_different_levels():
    text = "甲乙丙丁戊己"
    spans = [Span(0, 4, "dis"), Span(2, 6, "sym")]
    levels = assign_levels(spans)
    assert levels[0] != levels[1]
    out = spans_html(text, spans)
    assert visible_text(out) == text
    titles = _titles(out)
    assert "dis: 甲乙丙丁" in titles and "sym: 丙丁戊己" in titles  # mention from the text slice


def test_single_char_span_at_text_end():
    text = "患者发热"
    out = spans_html(text, [Span(3, 4, "sym", "热"), Span(0, 1, "bod", "患")])
    assert visible_text(out) == text
    assert "sym: 热" in _titles(out)


@pytest.mark.parametrize("bad", [Span(2, 2, "dis"), Span(-1, 2, "dis"), Span(3, 99, "dis"),
                                 Span(3, 1, "dis"), Span(4, 5, "dis")])
def test_invalid_spans_are_skipped(bad):
    text = "患者发热"
    kept, skipped = valid_spans(text, [bad, Span(0, 2, "bod")])
    assert skipped == [bad] and kept == [Span(0, 2, "bod")]
    out = spans_html(text, [bad, Span(0, 2, "bod")])
    assert visible_text(out).startswith(text)
    assert "1 invalid span(s) skipped" in out


def test_empty_text_and_no_spans():
    check_html(spans_html("", []))
    check_html(spans_html("", [Span(0, 1, "x")]))
    assert visible_text(spans_html("无实体", [])) == "无实体"


def test_random_overlaps_never_share_a_level():
    rng = random.Random(7)
    for _ in range(50):
        n = 30
        spans = []
        for _ in range(rng.randint(1, 12)):
            a = rng.randrange(n)
            spans.append(Span(a, rng.randint(a + 1, n), rng.choice(["dis", "sym", "bod"])))
        kept, _ = valid_spans("x" * n, spans)
        levels = assign_levels(kept)
        for i, a in enumerate(kept):
            for j, b in enumerate(kept):
                if i < j and _overlap(a, b):
                    assert levels[i] != levels[j]
        check_html(spans_html("字" * n, spans))


def test_line_breaks_and_long_spans_wrap():
    text = "第一行\n第二行很长很长很长很长很长很长很长的实体结束"
    out = spans_html(text, [Span(0, len(text), "dis")])
    assert visible_text(out) == text
    assert out.count('class="cbr-lbl"') == 1  # one label even when the span is cut into pieces


def test_marks_styles_and_legend():
    text = "呼吸肌麻痹伴发热"
    a, b, c, d = Span(0, 5, "sym"), Span(0, 3, "bod"), Span(6, 8, "sym"), Span(6, 8, "dis")
    marks = {a: "correct", b: "wrong_boundary", c: "missed", d: "spurious"}
    out = spans_html(text, [a, b, c, d], marks=marks)
    check_html(out)
    for key in ("correct", "wrong_boundary", "missed", "spurious"):
        assert f"cbr-m-{key}" in out
        assert MARK_STYLES[key].en in out  # legend entry
    assert "cbr-m-wrong_type" not in out.split("</style>", 1)[1]


def test_mark_style_table_distinct_and_unknown_category():
    styles = [(m.css, m.label_css, m.symbol) for m in MARK_STYLES.values()]
    assert len(set(styles)) == len(styles)
    assert mark_style("Wrong-Type").key == "wrong_type"
    assert mark_style("FN").key == "missed"
    out = spans_html("发热", [Span(0, 2, "sym")], marks={Span(0, 2, "sym"): SCRIPT})
    check_html(out)
    assert "cbr-m-other" in out


def test_big_mode_uses_chinese_names():
    out = spans_html("发热", [Span(0, 2, "sym")], labels=CMEEE_TYPES, big=True)
    assert 'class="cbr cbr-big"' in out and ">临床表现<" in out


def test_tooltip_format_with_label_objects():
    out = spans_html("发热", [Span(0, 2, "sym")], labels=CMEEE_TYPES)
    assert "临床表现 / clinical manifestation (sym): 发热" in _titles(out)
    out = spans_html("发热", [Span(0, 2, "sym")], label_name=lambda c: f"名字 {c}")
    assert "名字 sym: 发热" in _titles(out)


def test_legend_lists_colours_and_names():
    out = legend_html(CMEEE_TYPES)
    check_html(out)
    for lab in CMEEE_TYPES:
        assert lab.zh in out and lab.en in out
    assert len({c for c in out.split('class="cbr-chip ')[1:]}) == len(CMEEE_TYPES)


def test_spans_escape_everything():
    text = f"前{EVIL}后"
    spans = [Span(1, 1 + len(IMG), EVIL, EVIL), Span(0, len(text), SCRIPT)]
    out = spans_html(text, spans, label_name=lambda c: f"{c}{QUOTE}", marks={spans[0]: EVIL},
                     legend=True)
    assert visible_text(out).startswith(text)
    assert BOLD in out
    out2 = legend_html([EVIL, SCRIPT])
    check_html(out2)


def test_adjacent_labels_do_not_overlap_on_one_level():
    from cblue_core.render.spans import label_width
    spans = [Span(0, 2, "Medical_Examination"), Span(2, 4, "Medical_Examination"), Span(9, 10, "x")]
    assert assign_levels(spans) == [0, 0, 0]  # plain overlap: none
    widths = [label_width(s.type) for s in spans]
    assert widths[0] > 2
    assert assign_levels(spans, widths) == [0, 1, 0]


def _nested(n: int, length: int = 2000) -> tuple[str, list[Span]]:
    text = "字" * length
    return text, [Span(0, i, "dis", text[:i]) for i in range(1, n + 1)]


def test_nested_spans_html_grows_linearly_and_stays_bounded():
    sizes = {n: len(spans_html(*_nested(n))) for n in (100, 200)}
    assert sizes[200] < 2.2 * sizes[100], sizes  # drawing every covering span made it ~7x
    text, spans = _nested(1000)   # 721 MB of HTML before
    out = spans_html(text, spans)
    assert len(out) < MAX_HTML_CHARS
    assert visible_text(out).startswith(text)
    assert "992 span(s) not drawn" in out


def test_spans_deeper_than_the_layers_are_counted_not_drawn():
    text, spans = _nested(MAX_LAYERS + 12, 40)
    out = spans_html(text, spans)
    segments = out.split('class="cbr-seg"')[1:]
    assert segments and all(seg.count('class="cbr-bar ') <= MAX_LAYERS + 1 for seg in segments)
    assert out.count('class="cbr-lbl"') == MAX_LAYERS + 1   # one label per drawn span, one "+n"
    assert '<span class="cbr-lbl">+12</span>' in out
    assert "12 span(s) not drawn: more than 8 layers deep" in out
    check_html(out)


def test_a_long_mention_is_written_once():
    rng = random.Random(3)
    text = "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(500))
    out = spans_html(text, [Span(0, 300, "dis", text[:300])])
    # once, in the tooltip of the bar's label (the text itself is cut into segments)
    assert out.count(text[100:160]) == 1
    assert len(_titles(out)) < 60


def test_html_bound_draws_the_rest_plain_with_a_note():
    text = "甲乙" * 1000
    spans = [Span(2 * i, 2 * i + 1, "sym") for i in range(1000)]
    out = spans_body(text, spans, span_styler(), max_chars=30_000)
    assert len(out) <= 30_000
    assert "".join(check_html(out).text).startswith(text)
    drawn = out.count('class="cbr-lbl"')
    assert 0 < drawn < 1000
    assert f"{1000 - drawn:,} span(s) not drawn (or drawn only in part) from character" in out
