from cblue_core.render.bounds import bounded, clip

from .helpers import EVIL, check_html


def test_clip_marks_what_it_cuts():
    assert clip("abcdef", 6) == "abcdef"
    assert clip("abcdefg", 6) == "abcde…" and len(clip("x" * 1000, 6)) == 6


def test_a_fragment_over_the_bound_becomes_a_note_and_the_escaped_text():
    text = EVIL * 10
    assert bounded("<div>small</div>", text, max_chars=100) == "<div>small</div>"
    out = bounded("<span>" * 1000, text, max_chars=800)
    assert "too large to draw" in out and "6,000 characters, over the 800 limit" in out
    assert f"first {800 // 8:,} of {len(text):,} characters" in out
    check_html(out)
    assert len(out) < 2_000
