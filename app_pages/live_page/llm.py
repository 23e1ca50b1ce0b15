"""The Live page for a declared LLM endpoint: a PromptCBLUE or CliMedBench prompt (typed, or a
dataset example), the answer streamed token by token, then the structured answer the benchmark's
post-processing reads from it, each item marked right, wrong or missed against the gold."""
from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_run_yield_check

from app_pages.common import md, read_only
from app_pages.html_view import show_html
from app_pages.keys import Live as K
from app_pages.permissions import role_allows, why_not
from cblue_core.analysis.llm_answer import MISSED, RIGHT, WRONG, judge_llm_answer
from cblue_core.auth.roles import PermissionDenied
from cblue_core.models.base import model_input
from cblue_core.models.endpoints.client import EndpointFailure
from cblue_core.models.endpoints.config import EndpointConfig, EndpointConfigError, load_endpoints
from cblue_core.models.endpoints.live_calls import READ_ONLY, LiveAnswer, LiveRefused
from cblue_core.models.endpoints.prompts import prompt_for, supports
from cblue_core.models.endpoints.streaming import CHARS, ENV_MAX_CHARS, ENV_MAX_SECONDS, SECONDS, StreamLimits
from cblue_core.models.endpoints.visitor_limits import RateLimited, prompts_per_minute, shared_window
from cblue_core.records import Example
from cblue_core.render.example import example_html
from cblue_core.store.endpoint_calls import ASK
from cblue_core.tasks import REGISTRY, TaskSpec

TYPE, DATASET = "输入文本 / Type or paste", "数据集样例 / Dataset example"
SPLITS = ("dev", "test", "train")     # CliMedBench ships only a test file
# A trailing run that could still become an autolink with the next piece ("ht" + "tp://", "ww" +
# "w.", "a@" + "b") waits for it. md() breaks up words of at most six letters ("mailto") and "@",
# so only the last six characters are looked at: the guard is linear, and an answer without
# spaces is shown as it arrives.
_HOLD = 6
_OPEN_TAIL = re.compile(r"[A-Za-z@]+$")
# Streamlit redraws the whole answer at each piece: pieces within this many seconds are drawn once.
FLUSH_S = 0.1


def endpoint_tasks() -> list[str]:
    return [t.name for t in REGISTRY.values() if supports(t)]


def declared_endpoints(demo: bool) -> list[EndpointConfig]:
    """The endpoints the server's operator declared (none when the file is broken: said once)."""
    try:
        return list(load_endpoints().values())
    except EndpointConfigError as exc:
        if not demo:
            st.warning(md(str(exc)))
        return []


def escaped_stream(pieces: Iterable[str]) -> Iterator[str]:
    """The answer's pieces made inert for Markdown as they arrive (``md`` per line, line breaks
    kept), holding back a trailing word until the next piece so that a URL split across pieces
    is still broken up."""
    pending = ""

    def inert(text: str) -> str:
        return "  \n".join(md(line) for line in text.split("\n"))

    for piece in pieces:
        pending += piece
        cut = _OPEN_TAIL.search(pending[-_HOLD:])
        keep = len(cut.group(0)) if cut else 0
        ready, pending = pending[:len(pending) - keep], pending[len(pending) - keep:]
        if ready:
            yield inert(ready)
    if pending:
        yield inert(pending)


def pick_input(ws, task: TaskSpec, demo: bool) -> tuple[Example, Example | None]:
    found = next((d for d in (ws.datasets.find(task.name, s) for s in SPLITS) if d is not None), None)
    choices = [TYPE] + ([DATASET] if found is not None else [])
    source = st.radio("输入 / Input", choices, horizontal=True, key=K.SOURCE, format_func=md)
    if source == TYPE:
        text = st.text_area("提示 / Prompt", key=K.TEXT, height=140,
                            placeholder="例如：找出句子中的疾病实体：患者因反复咳嗽伴发热3天入院。")
        return Example(key="live", index=0, text=text), None
    assert found is not None
    idx = st.number_input("病例 / Example", min_value=0, max_value=max(found.records - 1, 0), step=1,
                          key=K.EXAMPLE, help=f"The record number in the {md(found.split)} split (0-based)")
    gold = ws.datasets.example(found.dataset_id, int(idx))
    example = model_input(task, gold)
    if not demo:
        show_html(example_html(example, task))
    return example, gold


def may_ask() -> bool:
    """Whether this visitor may send a prompt to an endpoint; says why not where they cannot."""
    if read_only():
        st.info(f"Read-only mode: {md(READ_ONLY)}.", icon=":material/lock:")
        return False
    if not role_allows(ASK):
        st.info(f"Asking an LLM endpoint costs its operator for every prompt. {md(why_not(ASK))} "
                "Nothing is sent.", icon=":material/lock:")
        return False
    return True


def stop_if_session_ended() -> bool:
    """The stream's ``should_stop``: Streamlit's own check of this script run, which raises its
    stop or rerun when the visitor closed the tab or asked again, as the next ``st`` call would.
    The stream calls it while it waits for the endpoint, when no ``st`` call happens."""
    check = get_run_yield_check()
    if check is not None:
        check()
    return False


def stream_and_show(ws, cfg: EndpointConfig, task: TaskSpec, example: Example, gold: Example | None,
                    demo: bool) -> None:
    received: list[str] = []

    def kept(pieces: Iterable[str]) -> Iterator[str]:
        for piece in pieces:   # the raw answer, for the judge (the page shows it escaped)
            received.append(piece)
            yield piece

    try:
        call = LiveAnswer(ws, cfg, prompt_for(task, example), window=shared_window(prompts_per_minute()),
                            limits=StreamLimits.from_env(), should_stop=stop_if_session_ended, flush_s=FLUSH_S)
    except (PermissionDenied, LiveRefused, RateLimited) as exc:
        st.warning(f"Nothing was sent: {md(str(exc))}.", icon=":material/block:")
        return
    except ValueError as exc:      # the server's own limits are misconfigured
        st.error(md(str(exc)))
        return
    start = time.perf_counter()
    shown = escaped_stream(kept(call))
    try:
        st.write_stream(shown)
    except (EndpointFailure, EndpointConfigError) as exc:
        st.error(md(str(exc)))
        return
    finally:
        # a stop raised mid-answer: shut the request and keep its audit event now
        shown.close()
        call.close()
    seconds = time.perf_counter() - start
    bound = {CHARS: ENV_MAX_CHARS, SECONDS: ENV_MAX_SECONDS}.get(call.outcome.stopped or "")
    if bound:
        st.warning(md(f"答案不完整 · The answer was {call.outcome.ended(call.limits)}, the most this server "
                      f"lets Live show (${bound})."), icon=":material/content_cut:")
    answer = "".join(received)
    pred = Example(key=example.key, index=example.index, text=example.text, label=example.label,
                   choices=list(example.choices), target=answer.strip(), meta=dict(example.meta))
    if not demo:
        cols = st.columns(2)
        cols[0].metric("Answer time / 耗时", f"{seconds:.2f} s")
        cols[1].metric("Endpoint / 端点", cfg.ref)
    verdict = judge_llm_answer(task, gold, pred)
    if verdict.correct is True:
        st.success("与标注一致 · matches the gold", icon=":material/check:")
    elif verdict.correct is False:
        right = sum(i.mark == RIGHT for i in verdict.items)
        st.warning(f"与标注不一致 · differs from the gold ({right:d} right; wrong and missed items marked below)",
                   icon=":material/close:")
    if verdict.items:
        st.markdown("**结构化答案 / Structured answer**")
        for item in verdict.items:
            if item.mark == RIGHT:
                mark = ":green[✓ 正确 right]"
            elif item.mark == WRONG:
                mark = ":red[✗ 错误 wrong]"
            elif item.mark == MISSED:
                mark = ":orange[○ 遗漏 missed]"
            else:
                mark = ":gray[· 未判定 not judged]"
            st.markdown(f"- {mark} {md(item.text)}")
    for note in verdict.notes:
        st.caption(md(note))


