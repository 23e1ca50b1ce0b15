from cblue_core.records import Triple
from cblue_core.render.relations import find_all, locate_mentions, relations_html

from .helpers import BOLD, EVIL, check_html, visible_text


def test_find_all_every_occurrence_overlapping_too():
    assert find_all("肺癌，肺癌，肺癌", "肺癌") == [0, 3, 6]
    assert find_all("aaa", "aa") == [0, 1]
    assert find_all("abc", "") == []


def test_every_occurrence_located_and_ambiguous_marked():
    text = "肺癌可引起咳嗽，肺癌晚期可见咯血，小细胞肺癌"
    triples = [Triple("肺癌", "临床表现", "咳嗽"), Triple("小细胞肺癌", "临床表现", "咯血")]
    m = locate_mentions(text, triples)
    assert m["肺癌"].occurrences == (0, 8, 20) and m["肺癌"].ambiguous
    assert m["小细胞肺癌"].occurrences == (17,) and not m["小细胞肺癌"].ambiguous
    assert m["咳嗽"].roles == ("object",) and m["肺癌"].roles == ("subject",)
    out = relations_html(text, triples)
    assert visible_text(out).startswith(text)
    n = m["肺癌"].number
    for k in (1, 2, 3):
        assert f">#{n}·{k}<" in out  # each occurrence highlighted and numbered
    assert "ambiguous: 3 occurrences, arc drawn to the first" in out
    assert out.count('class="cbr-arc"') == 2
    assert out.count("临床表现") >= 2


def test_missing_mentions_listed_and_combined_marker():
    text = "高血压患者常见头痛"
    triples = [Triple("高血压", "临床表现", "头痛", combined=True),
               Triple("高血压", "并发症", "脑出血", combined=False)]
    out = relations_html(text, triples)
    check_html(out)
    assert "mentions not found in the text" in out
    assert out.count("⊕ Combined") == 1
    tail = out.split("mentions not found in the text", 1)[1]
    assert "脑出血" in tail and "头痛" not in tail
    assert locate_mentions(text, triples)["脑出血"].missing


def test_relations_escape_everything_and_empty():
    out = relations_html(f"前{EVIL}后", [Triple(EVIL, EVIL, EVIL, EVIL, EVIL, True),
                                         Triple("", "p", "前")],
                         label_name=lambda p: f"{p}{EVIL}")
    check_html(out)
    assert BOLD in out
    check_html(relations_html("", []))
    assert "no relations" in relations_html("文本", [])
