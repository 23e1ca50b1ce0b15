"""Live: type or pick a text, choose a model and a device, see the prediction with the same
renderer as the Datasets page, its latency, and the gold beside it for a dataset example.

Demo mode (``?demo=1``) is for clinicians: large type, Chinese type names with a glossary on
hover, curated cases, a research-prototype notice, a warning before running text that looks
like patient identifiers, and no raw JSON anywhere.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from app_pages.common import available_models, device_choice, load_model, md, model_failure, workspace
from app_pages.html_view import show_html
from cblue_core.models.base import model_input
from cblue_core.privacy import find_identifiers
from cblue_core.records import Example
from cblue_core.render.example import comparison_html, example_html
from cblue_core.tasks import Kind, get_task

ws = workspace()
demo = st.toggle("Demo mode (for clinicians)", key="live_demo",
                 value=st.query_params.get("demo") == "1")
st.query_params["demo"] = "1" if demo else "0"

if demo:
    st.markdown(
        "<div style='font-size:1.6rem;font-weight:600'>医学文本智能分析演示</div>"
        "<div style='font-size:1.1rem'>Clinical text analysis demo</div>", unsafe_allow_html=True)
    st.warning("⚠️ 研究原型，不可用于临床诊断或治疗决策。Research prototype, not for clinical use.")
else:
    st.title("Live prediction")

found = available_models()
unusable = [m for m in found if not m.ok and m.source == "user"]
if unusable and not demo:
    st.warning("Some model folders cannot be used: " + "; ".join(md(m.problem) for m in unusable))
models = [m for m in found if m.ok and m.task]
if not models:
    st.error("No model is available: the built-in models are missing from models/, and no user "
             "folder is set (sidebar or $CBLUE_STUDIO_MODELS).")
    st.stop()

tasks = sorted({m.task for m in models}, key=lambda t: [m.task for m in models].index(t))
c1, c2 = st.columns(2)
wanted = st.query_params.get("task")
if "live_task" not in st.session_state and wanted in tasks:
    st.session_state.live_task = wanted
task_name = c1.selectbox("Task / 任务", tasks, key="live_task",
                         format_func=lambda t: f"{t} · {get_task(t).description}")
task = get_task(task_name)
task_models = [m for m in models if m.task == task_name]
model_name = c2.selectbox("Model / 模型", [m.name for m in task_models], key="live_model",
                          format_func=lambda n: f"{n} ({next(m.source for m in task_models if m.name == n)})")
st.query_params["task"] = task_name
info = next(m for m in task_models if m.name == model_name)

# ---------------------------------------------------------------- the input
dev = ws.datasets.find(task_name, "dev")
source = st.radio("Input / 输入", ["Type or paste", "Curated case" if demo else "Dataset example"],
                  horizontal=True, key="live_source")
gold: Example | None = None
if source == "Type or paste":
    text = st.text_area("Text / 文本", key="live_text", height=120,
                        placeholder="例如：患者因反复咳嗽伴发热3天入院，胸部CT提示右下肺炎。")
    text2 = st.text_area("Second text / 第二句", key="live_text2", height=80) if task.kind is Kind.PAIR else ""
    example = Example(key="live", index=0, text=text, text2=text2)
elif dev is None:
    st.info(f"No {md(task_name)} dev split in the workspace to pick from.")
    st.stop()
else:
    limit = 12 if demo else dev.records
    shown = ws.datasets.query(dev.dataset_id, limit=limit).rows
    heads = dict(zip(shown["idx"].tolist(), shown["text"].str.slice(0, 60).tolist()))   # one lookup per option, not a re-index
    idx = st.selectbox("Example / 病例", list(heads), key="live_example", format_func=lambda i: f"{i}: {heads[i]}")
    gold = ws.datasets.example(dev.dataset_id, int(idx))
    example = model_input(task, gold)
    if not demo:
        show_html(example_html(example, task))

typed = (example.text + example.text2).strip()
hits = find_identifiers(example.text + "\n" + example.text2)
allowed = True
if hits:
    kinds = "、".join(sorted({h.label for h in hits}))
    st.warning(f"⚠️ The text seems to contain patient identifiers ({md(kinds)}). Remove them before "
               "running, or confirm that this text may be processed. 文本中可能含有患者身份信息。")
    allowed = st.checkbox("I confirm this text contains no real patient data / 确认无真实患者信息",
                          key="live_confirm")

device = device_choice()
run = st.button("Predict / 分析", type="primary", disabled=not typed or not allowed, key="live_run")
if not run:
    st.stop()

# ---------------------------------------------------------------- predict and show
try:
    predictor, load_s = load_model(info.path, task_name, device)
    pred = predictor.predict([example])[0]
except Exception as exc:  # noqa: BLE001  (any model failure is a message in the page)
    st.error(md(model_failure(exc, device)))
    st.stop()

timing = predictor.last_timing
cols = st.columns(3)
cols[0].metric("Latency / 耗时", f"{timing.seconds * 1000:.0f} ms")
cols[1].metric("Device / 设备", timing.device)
cols[2].metric("Model load / 加载", f"{load_s:.2f} s", help="once per process; then cached")
if gold is not None:
    show_html(comparison_html(gold, pred, task, big=demo))
else:
    show_html(example_html(pred, task, big=demo))
probs = pred.meta.get("probabilities") if pred.meta else None
if probs:
    frame = pd.DataFrame({"label": [task.display_label(k) for k in probs], "probability": list(probs.values())})
    st.bar_chart(frame.sort_values("probability", ascending=False).head(10), x="label", y="probability",
                 horizontal=True)
triple_scores = pred.meta.get("triple_scores") if pred.meta else None
if triple_scores and not demo:
    st.dataframe(pd.DataFrame([{"subject": t.subject, "predicate": task.display_label(t.predicate),
                                "object": t.object, "score": sc}
                               for t, sc in zip(pred.triples, triple_scores)]), hide_index=True)
if not demo and pred.meta.get("generation"):
    with st.expander("Raw generation"):
        st.text(pred.meta["generation"])
