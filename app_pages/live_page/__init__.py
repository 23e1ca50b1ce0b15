"""Live: type or pick a text, choose a model and a device, see the prediction with the same
renderer as the Datasets page, its latency, and the gold beside it for a dataset example.

Demo mode (``?demo=1``) is its own surface for clinicians: large Chinese-first type with English
beside, curated cases chosen by a written rule (cblue_core.analysis.curation), right and wrong marked
against the gold, a research-prototype notice, a warning before text that looks like patient
identifiers, and no developer controls, latency figures or raw JSON.
"""
from __future__ import annotations

import streamlit as st

from app_pages.common import available_models, demo_mode, md, workspace
from app_pages.html_view import show_html
from app_pages.keys import Live as K
from app_pages.keys import Param
from app_pages.live_page import inputs, llm, output
from cblue_core.models.endpoints.config import EndpointConfig
from cblue_core.render.example import input_html
from cblue_core.tasks import get_task


def _follow_demo_switch() -> None:
    if st.session_state.get(K.DEMO):
        st.query_params[Param.DEMO] = "1"
    else:
        st.query_params.pop(Param.DEMO, None)


def render() -> None:
    ws = workspace()
    # The switch writes the URL in a callback, before the app draws its sidebar and navigation,
    # so that the demo is the same surface whether it was entered by ?demo=1 or by the switch.
    demo = st.toggle("Demo mode for clinicians / 演示模式", key=K.DEMO, value=demo_mode(),
                     on_change=_follow_demo_switch)
    if demo:
        st.markdown("<div style='font-size:1.8rem;font-weight:600'>医学文本智能分析演示</div>"
                    "<div style='font-size:1.1rem;color:#555'>Clinical text analysis demo</div>",
                    unsafe_allow_html=True)
        st.warning("研究原型，不可用于临床诊断或治疗决策。Research prototype, not for clinical use.",
                   icon=":material/science:")
    else:
        st.title("Live prediction")
    found = available_models()
    unusable = [m for m in found if not m.ok and m.source == "user"]
    if unusable and not demo:
        st.warning("Some model folders cannot be used: " + "; ".join(md(m.problem) for m in unusable))
    models = [m for m in found if m.ok and m.task]
    endpoints = llm.declared_endpoints(demo)
    if not models and not endpoints:
        st.error("No model is available: the built-in models are missing from models/, and no user "
                 "folder is set (sidebar or $CBLUE_STUDIO_MODELS), and no LLM endpoint is declared "
                 "($CBLUE_STUDIO_ENDPOINTS).")
        st.stop()
    info = inputs.pick_model(models, demo, endpoints)
    if isinstance(info, EndpointConfig):
        render_endpoint(ws, info, demo)
        return
    task = get_task(info.task)
    example, gold = inputs.pick_input(ws, task, info, demo)
    inputs.training_note(info, example, demo)
    allowed = inputs.confirm_identifiers(example)
    typed = (example.text + (example.text2 or "")).strip()
    # The text before any result (a kind's renderer would say "no entities" of a text nothing has
    # read yet); the result replaces it, so the text is not drawn three times.
    preview = st.empty()
    if gold is not None:
        with preview.container():
            show_html(input_html(example, big=demo))
    if st.button("分析 / Predict", type="primary", key=K.RUN, disabled=not typed or not allowed):
        preview.empty()
        output.predict_and_show(info, task, example, gold, demo)


def render_endpoint(ws, cfg: EndpointConfig, demo: bool) -> None:
    task = get_task(st.session_state[K.TASK])
    example, gold = llm.pick_input(ws, task, demo)
    allowed = inputs.confirm_identifiers(example) and llm.may_ask()
    if st.button("分析 / Ask", type="primary", key=K.RUN, disabled=not example.text.strip() or not allowed):
        llm.stream_and_show(ws, cfg, task, example, gold, demo)
