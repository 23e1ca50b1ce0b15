import re
import zlib

from cblue_core.render import example_html
from cblue_core.render.base import stylesheet
from cblue_core.render.palette import PALETTE, PALETTE_VALUES, color_for
from cblue_core.tasks import CMEEE_TYPES, TASKS

from .helpers import check_html, make_example

HEX = re.compile(r"^#[0-9A-Fa-f]{6}$")


def test_palette_is_fixed_and_large_enough():
    assert len(PALETTE) >= 12
    assert len({c.bg for c in PALETTE}) == len(PALETTE) == len({c.border for c in PALETTE})
    for i, c in enumerate(PALETTE):
        assert c.index == i and HEX.match(c.bg) and HEX.match(c.border)
        assert c.bg.lower() != c.border.lower()


def test_mapping_is_stable():
    for i, lab in enumerate(CMEEE_TYPES):
        assert color_for(lab.code, CMEEE_TYPES) is PALETTE[i]
        assert color_for(lab, [x.code for x in CMEEE_TYPES]) is PALETTE[i]
    assert len({color_for(lab.code, CMEEE_TYPES) for lab in CMEEE_TYPES}) == len(CMEEE_TYPES)
    # outside the list: a CRC32 (not Python's salted hash), the same in every process
    assert color_for("未知类型") is PALETTE[zlib.crc32("未知类型".encode()) % len(PALETTE)]
    assert color_for("未知类型", CMEEE_TYPES) is color_for("未知类型")


def test_colours_only_from_the_palette():
    """Markup names colours only by palette class; colour values live in the fixed stylesheet."""
    css = stylesheet()
    palette_rules = re.findall(r"\.cbr-c(\d+)\{--cbr-bg:(#\w+);--cbr-bd:(#\w+)\}", css)
    assert len(palette_rules) == len(PALETTE)
    assert {v.lower() for _, bg, bd in palette_rules for v in (bg, bd)} == PALETTE_VALUES
    for task in TASKS:
        out = example_html(make_example(task), task)
        markup = out.split("</style>", 1)[1]
        for name, value in check_html(out).attrs:
            if name in ("class", "style"):
                assert "#" not in (value or "") and "rgb" not in (value or "")
        for n in re.findall(r"cbr-c(\d+)", markup):
            assert int(n) < len(PALETTE)
