from cblue_core.records import Triple
from cblue_core.render.bounds import MAX_OCCURRENCES
from cblue_core.render.mentions import find_all, locate_mentions


def test_find_all_stops_at_its_limit():
    assert find_all("字" * 50, "字", 3) == [0, 1, 2]
    assert find_all("字字", "字", 5) == [0, 1]


def test_a_mention_found_at_every_offset_keeps_the_first_occurrences_only():
    text = "字" * 2000
    found = locate_mentions(text, [Triple("字字", "临床表现", "字" * 5), Triple("肺癌", "临床表现", "字")])
    assert found["字字"].occurrences == tuple(range(MAX_OCCURRENCES)) and found["字字"].capped
    assert found["字" * 5].capped and found["字"].capped
    assert found["肺癌"].missing and not found["肺癌"].capped
    assert not locate_mentions("肺癌，肺癌", [Triple("肺癌", "p", "x")])["肺癌"].capped


def test_an_occurrence_inside_a_longer_mention_is_left_when_there_is_another():
    """CMeIE arcs attached to 关节 inside 腕关节 and to 病毒 inside 乙型肝炎病毒 (issue 23)."""
    from cblue_core.records import Triple
    from cblue_core.render.mentions import locate_mentions

    text = "腕关节疼痛，关节肿胀。乙型肝炎病毒感染，病毒载量高。"
    found = locate_mentions(text, [Triple("腕关节", "部位", "关节"), Triple("乙型肝炎病毒", "病因", "病毒")])
    assert found["关节"].occurrences == (text.index("，关节") + 1,)
    assert found["病毒"].occurrences == (text.index("，病毒") + 1,)
    assert found["腕关节"].occurrences == (0,)
    # found only inside the longer mention: kept, there is nowhere else to attach
    assert locate_mentions("腕关节疼痛", [Triple("腕关节", "部位", "关节")])["关节"].occurrences == (1,)


def test_the_dashed_bars_of_other_occurrences_are_explained():
    from cblue_core.records import Triple
    from cblue_core.render.relations import relations_html

    html = relations_html("发热可见于肺炎，肺炎常见发热。", [Triple("肺炎", "临床表现", "发热")])
    assert "the others are underlined with a dashed bar" in html
