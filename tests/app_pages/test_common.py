"""Helpers every page shares: the messages a model failure turns into."""
from __future__ import annotations

from app_pages.common import md, model_failure
from cblue_core.models.registry import ModelLoadError


def test_model_failures_are_one_line_messages():
    assert model_failure(ModelLoadError("model 'x' has no weights"), "cpu") == "model 'x' has no weights"
    assert model_failure(NotImplementedError(), "cpu") == (
        "The model could not run on cpu: NotImplementedError: NotImplementedError")
    assert model_failure(RuntimeError("CUDA out of memory.\nTried to allocate 2 GiB"), "cuda") == (
        "The model could not run on cuda: RuntimeError: CUDA out of memory.")
    assert model_failure(KeyError("label"), "cpu").endswith("KeyError: 'label'")


def test_md_makes_data_inert():
    assert md("[x](javascript:alert(1)) *b*\nnext") == r"\[x\]\(javascript\:alert\(1\)\) \*b\* next"


def test_md_breaks_the_autolinks_markdown_would_make_of_bare_urls():
    shown = md("see http://attacker.invalid and www.attacker.invalid or me@attacker.invalid")
    assert "http\\:" not in shown and "h\u200bttp\\:" in shown
    assert "w\u200bww\\." in shown and "\\@\u200battacker" in shown
    assert shown.replace("\u200b", "").replace("\\", "") == (
        "see http://attacker.invalid and www.attacker.invalid or me@attacker.invalid")


def test_markdown_and_plot_text_isolate_direction():
    """A U+202E in a name shown in a message or a chart reverses only that name (old: the rest
    of the caption or tick label too)."""
    from app_pages.common import plot_text
    from app_pages.markdown import md_name

    for out in (md("a\u202eb.json"), md_name("\u05d0.json"), md_name("\u202e"), plot_text("x\u202ey")):
        assert out.startswith("\u2068") and out.endswith("\u2069"), ascii(out)
    assert md_name("CMeEE_dev.json") == "CMeEE_dev.json" and plot_text("疾病") == "疾病"
