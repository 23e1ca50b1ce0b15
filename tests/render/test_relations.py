import random
import re

import pytest

from cblue_core.io.validate import load
from cblue_core.records import Example, Triple
from cblue_core.render import comparison_html, example_html
from cblue_core.render.bounds import MAX_ARCS, MAX_LAYERS, MAX_OCCURRENCES
from cblue_core.render.mentions import closest_pair, find_all, locate_mentions
from cblue_core.render.relation_layout import (
    LINE_EM,
    RelationLayout,
    char_em,
    layout_relations,
    level_intervals,
    wrap_lines,
)
from cblue_core.render.relation_marks import relation_marks
from cblue_core.render.relations import relations_html
from cblue_core.tasks import get_task
from tests.conftest import SAMPLE_DATA

from .helpers import BOLD, EVIL, IMG, SCRIPT, check_html, visible_text

ARC_RE = re.compile(r'class="cbr-rl-arc ([^"]*)"')


def arcs_in(out: str) -> list[set[int]]:
    """The triple indices of every arc piece in the HTML (a bundle piece draws several)."""
    return [{int(k) for k in re.findall(r"cbr-rl-k(\d+)", cls)} for cls in ARC_RE.findall(out)]


def check_layout(lay: RelationLayout, line_em: float = LINE_EM) -> None:
    """The layout's invariants: lines fit, pieces on one level never overlap (labels included),
    a piece nesting another on its line is above it, every locatable triple has an arc."""
    for a, b in lay.lines:
        assert sum(char_em(ch) for ch in lay.text[a:b]) <= line_em + 1e-9
    for li in range(len(lay.lines)):
        mine = [p for p in lay.pieces if p.line == li]
        for p in mine:
            assert p.lo < p.hi and p.ext[0] <= p.lo and p.hi <= p.ext[1]
            for q in mine:
                if p is q:
                    continue
                if p.level == q.level:
                    assert p.ext[1] <= q.ext[0] + 1e-6 or q.ext[1] <= p.ext[0] + 1e-6, (p, q)
                if p.lo < q.lo and q.hi < p.hi:  # p nests q
                    assert p.level > q.level, (p, q)
    drawable = {k for k, c in enumerate(lay.chosen) if c is not None}
    assert lay.arcs() == drawable


# ---------------------------------------------------------------- locating mentions


def test_find_all_every_occurrence_overlapping_too():
    assert find_all("肺癌，肺癌，肺癌", "肺癌") == [0, 3, 6]
    assert find_all("aaa", "aa") == [0, 1]
    assert find_all("abc", "") == []


def test_every_occurrence_located():
    text = "肺癌可引起咳嗽，肺癌晚期可见咯血，小细胞肺癌"
    triples = [Triple("肺癌", "临床表现", "咳嗽"), Triple("小细胞肺癌", "临床表现", "咯血")]
    m = locate_mentions(text, triples)
    # the third 肺癌 is inside 小细胞肺癌, another mention: no arc attaches there
    assert m["肺癌"].occurrences == (0, 8) and m["肺癌"].ambiguous
    assert m["小细胞肺癌"].occurrences == (17,) and not m["小细胞肺癌"].ambiguous
    assert m["咳嗽"].roles == ("object",) and m["肺癌"].roles == ("subject",)
    out = relations_html(text, triples)
    assert visible_text(out).startswith(text)  # the sentence once, first
    assert visible_text(out).count(text) == 1
    assert len(arcs_in(out)) == 2


def test_closest_pair_of_occurrences():
    # subject at 0 and 30, object at 25: the second subject occurrence is closer
    assert closest_pair([0, 30], 2, [25], 2) == (30, 25)
    assert closest_pair([0, 30], 2, [5], 2) == (0, 5)
    # fewest characters between them, not the nearest starts
    assert closest_pair([0, 20], 8, [11], 2) == (0, 11)
    # the same string as subject and object: two distinct occurrences
    assert closest_pair([0, 6], 2, [0, 6], 2) == (0, 6)
    assert closest_pair([3], 2, [3], 2) == (3, 3)
    # disjoint occurrences before overlapping ones
    assert closest_pair([0], 5, [3, 9], 2) == (0, 9)
    assert closest_pair([0], 5, [3], 2) == (0, 3)
    assert closest_pair([], 2, [3], 2) is None and closest_pair([1], 2, [], 2) is None


def test_each_triple_uses_its_closest_occurrences():
    text = "肺炎患者常见咳嗽。" + "另外" * 5 + "，部分肺炎患者伴有高热"
    triples = [Triple("肺炎", "临床表现", "咳嗽"), Triple("肺炎", "临床表现", "高热")]
    lay = layout_relations(text, triples)
    assert lay.chosen == [(0, 6), (22, 28)]
    pieces = {p.arc: p for p in lay.pieces}
    # the arc to 高热 starts at the second 肺炎 (offsets 22..24), the one to 咳嗽 at the first
    assert 1.0 + 22 < pieces[1].lo < 1.0 + 24
    assert 1.0 < pieces[0].lo < 1.0 + 2


# ---------------------------------------------------------------- levelling


def test_level_intervals_never_share_a_level_when_overlapping():
    rng = random.Random(7)
    for _ in range(200):
        ivs = []
        for _ in range(rng.randint(1, 12)):
            a = rng.uniform(0, 30)
            ivs.append((a, a + rng.uniform(0.5, 15)))
        lv = level_intervals(ivs)
        for i, (a, b) in enumerate(ivs):
            assert lv[i] == 0 or any(lv[j] == lv[i] - 1 and ivs[j][0] < b and a < ivs[j][1]
                                     for j in range(len(ivs))), "a level is used only when needed"
            for j, (c, d) in enumerate(ivs):
                if i != j and lv[i] == lv[j]:
                    assert b <= c or d <= a
                if i != j and a < c and d < b:
                    assert lv[i] > lv[j]  # nested: higher


def test_nested_arcs_go_higher_and_disjoint_arcs_share_a_level():
    text = "甲病可见乙症和丙症，丁病可见戊症"
    triples = [Triple("甲病", "临床表现", "丙症"), Triple("甲病", "临床表现", "乙症"),
               Triple("丁病", "临床表现", "戊症")]
    lay = layout_relations(text, triples)
    check_layout(lay)
    level = {p.arc: p.level for p in lay.pieces}
    assert level[1] == 0 and level[0] == 1 and level[2] == 0
    p0, p1 = (next(p for p in lay.pieces if p.arc == k) for k in (0, 1))
    assert p0.lo < p1.lo < p1.hi < p0.hi  # the outer arc's legs lie outside the inner one's


def test_arcs_sharing_a_mention_get_distinct_legs():
    text = "心悸和胸痛都是心脏病的症状"
    triples = [Triple("心脏病", "临床表现", "心悸"), Triple("心脏病", "临床表现", "胸痛")]
    lay = layout_relations(text, triples)
    check_layout(lay)
    ends = sorted(p.hi for p in lay.pieces)
    assert ends[0] < ends[1]
    x0, x1 = 1.0 + 7, 1.0 + 10  # 心脏病 spans offsets 7..10
    assert all(x0 < x < x1 for x in ends)
    arrows = {p.arrow for p in lay.pieces}
    assert arrows == {"left"}  # the objects are to the left


# ---------------------------------------------------------------- notes


def test_ambiguity_said_once_per_mention():
    text = "肺炎@肺炎患者常见发热、咳嗽、咳痰、胸痛和呼吸困难。"
    triples = [Triple("肺炎", "临床表现", o, "疾病", "症状") for o in ("发热", "咳嗽", "咳痰", "胸痛", "呼吸困难")]
    out = relations_html(text, triples)
    check_html(out)
    assert out.count("occurs 2 times") == 1
    assert "「肺炎」出现 2 次" in out and "arcs use the closest occurrence" in out
    assert "arc drawn to the first" not in out
    assert len(arcs_in(out)) == 5
    assert "疾病 2/2" in out  # the marker on the occurrence the arcs use
    assert out.count("cbr-rl-unused") >= 1  # the other occurrence: a dashed bar, no arc


def test_mentions_not_found_listed_once_and_combined_marker():
    text = "高血压患者常见头痛"
    triples = [Triple("高血压", "临床表现", "头痛", combined=True),
               Triple("高血压", "并发症", "脑出血", combined=False),
               Triple("脑出血", "病因", "高血压")]
    out = relations_html(text, triples)
    check_html(out)
    assert out.count("not in the text:") == 1
    tail = out.split("not in the text:", 1)[1].split("</div>", 1)[0]
    assert tail.count("脑出血") == 1 and "头痛" not in tail
    assert out.count("⊕ Combined") == 1
    assert locate_mentions(text, triples)["脑出血"].missing
    assert [a for a in arcs_in(out)] == [{0}]
    assert out.count("no arc: object not in the text") == 1
    assert out.count("no arc: subject not in the text") == 1


def test_relations_escape_everything_and_empty():
    out = relations_html(f"前{EVIL}后{BOLD}", [Triple(EVIL, EVIL, EVIL, EVIL, EVIL, True),
                                               Triple(BOLD, BOLD, "前", BOLD, BOLD),
                                               Triple("", "p", "前")],
                         label_name=lambda p: f"{p}{EVIL}")
    text = visible_text(out)  # raises on any foreign tag, attribute, class or style
    assert IMG in text and SCRIPT in text and BOLD in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in out and "**bold**" in out
    # BOLD also occurs inside EVIL; its arc to 前 takes its own occurrence at the end, which
    # wraps onto the next line: drawn in two pieces
    assert len(arcs_in(out)) == 3
    check_html(relations_html("", []))
    check_html(relations_html("", [Triple("a", "p", "b")]))
    assert "no relations" in relations_html("文本", [])


# ---------------------------------------------------------------- wrapping


def test_wrap_lines_fit_and_avoid_cutting_mentions():
    text = "甲" * 35 + "慢性阻塞性肺疾病" + "乙" * 10
    lines = wrap_lines(text, 40, keep=[(35, 43)])
    assert lines == [(0, 35), (35, 53)]
    assert wrap_lines("一二三\n四五", 40) == [(0, 3), (4, 6)]
    assert wrap_lines("", 40) == [(0, 0)]
    text = "患者出现发热，咳嗽" * 10
    for a, b in wrap_lines(text, 12):
        assert sum(char_em(c) for c in text[a:b]) <= 12
    assert "".join(text[a:b] for a, b in wrap_lines(text, 12)) == text
    # punctuation does not start a line
    assert all(text[a] not in "，。" for a, _ in wrap_lines(text, 12))


def test_arcs_across_a_line_break():
    text = "肺炎" + "的" * 14 + "可见咳嗽"
    triples = [Triple("肺炎", "临床表现", "咳嗽"), Triple("咳嗽", "病因", "肺炎")]
    lay = layout_relations(text, triples, line_em=10)
    check_layout(lay, 10)
    assert len(lay.lines) == 2
    by_arc = {k: sorted((p for p in lay.pieces if k in p.arcs), key=lambda p: p.line) for k in (0, 1)}
    first, second = by_arc[0]
    assert (first.line, first.open_right, first.open_left, first.arrow) == (0, True, False, "")
    assert (second.line, second.open_left, second.open_right, second.arrow) == (1, True, False, "right")
    assert first.label == "临床表现"
    back1, back2 = by_arc[1]  # from 咳嗽 (line 2) back to 肺炎 (line 1): the arrow on line 1
    assert back1.arrow == "left" and back2.arrow == ""
    out = relations_html(text, triples, line_em=10)
    check_html(out)
    markup = out.split("</style>", 1)[1]
    assert markup.count("cbr-rl-nr") == 2 and markup.count("cbr-rl-nl") == 2
    assert markup.count("cbr-rl-cont cbr-rl-cr") == 2 and markup.count("cbr-rl-cont cbr-rl-cl") == 2
    assert visible_text(out).startswith(text)


def test_arcs_leaving_a_mention_for_a_later_line_are_bundled():
    text = "肺炎" + "的" * 14 + "可见咳嗽、发热和胸痛"
    triples = [Triple("肺炎", "临床表现", o) for o in ("咳嗽", "发热", "胸痛")]
    lay = layout_relations(text, triples, line_em=10)
    check_layout(lay, 10)
    assert lay.lines[-1] == (18, 26)  # the break does not cut 咳嗽
    leaving = [p for p in lay.pieces if p.line == 0]
    assert len(leaving) == 1 and leaving[0].arcs == (0, 1, 2) and leaving[0].label == "临床表现 ×3"
    arriving = [p for p in lay.pieces if p.line == 2]
    assert len(arriving) == 1 and set(arriving[0].arcs) == {0, 1, 2} and len(arriving[0].legs) == 2
    out = relations_html(text, triples, line_em=10)
    check_html(out)
    assert out.count("cbr-rl-leg cbr-rl-lega") == 2
    assert set().union(*arcs_in(out)) == {0, 1, 2}


# ---------------------------------------------------------------- real-shaped examples


def test_five_triple_example_has_five_arcs():
    task = get_task("CMeIE")
    ex = load(SAMPLE_DATA / "cblue/CMeIE/CMeIE_dev.json").examples[0]
    assert len(ex.triples) == 5
    out = relations_html(ex.text, ex.triples, line_em=200)  # on one line: one piece per arc
    assert len(arcs_in(out)) == 5 and set().union(*arcs_in(out)) == set(range(5))
    out = example_html(ex, task)  # wrapped: still the five triples, each drawn
    check_html(out)
    assert set().union(*arcs_in(out)) == set(range(5))
    assert out.count("occurs 2 times") == 1
    assert "临床表现" in out and "辅助检查 (auxiliary examination)" in out
    check_layout(layout_relations(ex.text, ex.triples))


def test_sample_examples_keep_the_layout_invariants():
    for ex in load(SAMPLE_DATA / "cblue/CMeIE/CMeIE_dev.json").examples:
        for width in (40, 26, 12):
            check_layout(layout_relations(ex.text, ex.triples, line_em=width), width)


def test_real_cmeie_keeps_the_layout_invariants(cblue_dir):
    path = cblue_dir / "CMeIE" / "CMeIE_dev.json"
    if not path.is_file():
        pytest.skip(f"no {path}")
    examples = load(path).examples
    for ex in examples[::7]:
        lay = layout_relations(ex.text, ex.triples)
        check_layout(lay)
        check_html(relations_html(ex.text, ex.triples))


# ---------------------------------------------------------------- gold vs prediction


def test_relation_marks_and_comparison_arcs():
    g = [Triple("肺炎", "临床表现", "发热"), Triple("肺炎", "临床表现", "咳嗽"), Triple("肺炎", "并发症", "胸腔积液")]
    p = [Triple("肺炎", "临床表现", "发热"), Triple("肺炎", "并发症", "咳嗽"), Triple("肺炎", "病因", "细菌")]
    gm, pm = relation_marks(g, p)
    assert gm == {g[0]: "correct", g[1]: "wrong_predicate", g[2]: "missed"}
    assert pm == {p[0]: "correct", p[1]: "wrong_predicate", p[2]: "spurious"}
    assert relation_marks([Triple("a", "p", "b")], [Triple("b", "p", "a")])[0] == {Triple("a", "p", "b"): "swapped"}

    task = get_task("CMeIE")
    text = "肺炎常见发热和咳嗽，可并发胸腔积液，多由细菌引起"
    out = comparison_html(Example("k", 0, text, triples=g), Example("k", 0, text, triples=p), task)
    check_html(out)
    gold, pred = out.split("模型预测 / Prediction", 1)
    assert "cbr-m-missed" in gold and "cbr-m-missed" not in pred
    assert "cbr-m-spurious" in pred and "cbr-m-spurious" not in gold.split("</style>", 1)[1]
    assert "○ 并发症" in gold and "+ 病因" in pred and "≠ 临床表现" in gold
    assert "漏检 / missed" in gold and "多检 / spurious" in pred  # legends


# ---------------------------------------------------------------- hostile records


def _nested_triples(n: int) -> tuple[str, list[Triple]]:
    rng = random.Random(1)
    text = "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(2000))
    return text, [Triple(text[:k + 1], "临床表现", text[:k + 2], "疾病", "症状") for k in range(n)]


def test_nested_mentions_html_stays_linear_in_the_record():
    text, triples = _nested_triples(200)
    size = len(text) + sum(len(t.subject) + len(t.object) for t in triples)
    out = relations_html(text, triples)
    assert len(out) < 25 * size, len(out) / size   # every covering mention on every run: ~290x
    runs = out.split('class="cbr-rl-r')[1:]
    assert runs and all(r.split("</span></span>")[0].count('class="cbr-bar ') <= MAX_LAYERS + 1 for r in runs)
    assert "not drawn" in out
    check_html(out)


def test_a_mention_at_every_offset_is_marked_a_bounded_number_of_times():
    text = "字" * 300
    triples = [Triple("字" * (k % 5 + 1), "临床表现", "字" * (k % 7 + 1), "疾病", "症状") for k in range(10)]
    out = relations_html(text, triples)
    assert f"occurs more than {MAX_OCCURRENCES} times" in out
    assert out.count('class="cbr-lbl"') < 10 * MAX_OCCURRENCES
    assert len(out) < 200_000    # every occurrence drawn with its tooltip: 13 MB for 25 triples
    check_html(out)


def test_arcs_drawn_for_the_first_triples_only_and_all_listed():
    text = "甲病伴乙症。"
    triples = [Triple("甲病", f"p{k}", "乙症", "疾病", "症状") for k in range(MAX_ARCS + 3)]
    out = relations_html(text, triples)
    assert {k for arcs in arcs_in(out) for k in arcs} == set(range(MAX_ARCS))
    assert out.count("no arc: only the first") == 3
    assert f"{MAX_ARCS + 3:,} triples: arcs are drawn for the first {MAX_ARCS}" in out
    assert out.count("<tr>") == MAX_ARCS + 4      # the header and every triple
