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
