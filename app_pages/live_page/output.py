"""The Live page's result: the prediction drawn with the shared renderer, beside the gold with
right and wrong marked; in demo mode large Chinese-first type and no developer figures."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.common import device_choice, load_model, md, model_failure
from app_pages.html_view import show_html
from cblue_core.analysis.judge import judge
from cblue_core.records import Example
from cblue_core.render.example import comparison_html, example_html
from cblue_core.tasks import TaskSpec


def predict_and_show(info, task: TaskSpec, example: Example, gold: Example | None, demo: bool) -> None:
    device = "cpu" if demo else device_choice()
    try:
        predictor, load_s = load_model(info.path, task.name, device)
        pred = predictor.predict([example])[0]
    except Exception as exc:  # noqa: BLE001 - model_failure logs the unexpected ones; a message here
        st.error(md(model_failure(exc, device)))
        return
    if not demo:
        timing = predictor.last_timing
        cols = st.columns(3)
        cols[0].metric("Latency / 耗时", f"{timing.seconds * 1000:.0f} ms")
        cols[1].metric("Device / 设备", timing.device)
        cols[2].metric("Model load / 加载", f"{load_s:.2f} s", help="once per process; then cached")
    verdict = judge(task, gold, pred) if gold is not None else None
    if verdict is not None and verdict.correct is not None:
        if verdict.correct:
            st.success(f"与标注一致 · matches the gold ({verdict.right:d} right)", icon=":material/check:")
        else:
            st.warning(f"与标注不一致 · differs from the gold: {verdict.right:d} right, {verdict.wrong:d} "
                       "wrong or missed (marked below)", icon=":material/close:")
    if gold is not None:
        show_html(comparison_html(gold, pred, task, big=demo, marks=verdict.marks if verdict else None))
    else:
        show_html(example_html(pred, task, big=demo))
    probabilities(pred, task)
    if not demo:
        details(pred, task)


def probabilities(pred: Example, task: TaskSpec) -> None:
    probs = pred.meta.get("probabilities") if pred.meta else None
    if probs:
        frame = pd.DataFrame({"label": [task.display_label(k) for k in probs], "probability": list(probs.values())})
        st.bar_chart(frame.sort_values("probability", ascending=False).head(10), x="label", y="probability",
                     horizontal=True)


def details(pred: Example, task: TaskSpec) -> None:
    scores = pred.meta.get("triple_scores") if pred.meta else None
    if scores:     # the triples themselves are in the table above, numbered as here
        st.caption("Model scores of the predicted triples: " + " · ".join(
            f"#{n:d} {float(sc):.2f}" for n, sc in enumerate(scores, start=1)))
    if pred.meta.get("generation"):
        with st.expander("Raw generation"):
            st.text(pred.meta["generation"])
