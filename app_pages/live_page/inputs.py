"""The Live page's inputs: task and model, the text (typed, a curated case, a dataset example)
and the patient-identifier check."""
from __future__ import annotations

import streamlit as st

from app_pages import url_state
from app_pages.common import db_path, md
from app_pages.html_view import show_html
from app_pages.keys import Live as K
from app_pages.keys import Param
from cblue_core.curation import RULE, curated_indices
from cblue_core.models.base import model_input
from cblue_core.models.provenance import overlapping, read_training_records
from cblue_core.privacy import find_identifiers
from cblue_core.records import Example
from cblue_core.render.example import example_html
from cblue_core.tasks import REGISTRY, Kind, TaskSpec, get_task

# CMeEE first: the demo opens on nested entities, the benchmark's headline task.
PREFERRED = ("CMeEE", "CMeIE", "CHIP-CDN", "CHIP-CTC", "KUAKE-QIC", "CHIP-STS", "KUAKE-QQR", "KUAKE-QTR")
TYPE, CURATED, DATASET = "输入文本 / Type or paste", "精选病例 / Curated case", "数据集样例 / Dataset example"


def _task_order(task: str) -> tuple[int, int]:
    return (PREFERRED.index(task) if task in PREFERRED else len(PREFERRED), list(REGISTRY).index(task))


def pick_model(models, demo: bool, endpoints=()):
    """A model folder's info, or a declared endpoint (for the tasks endpoints answer)."""
    from app_pages.live_page.llm import endpoint_tasks

    llm_tasks = endpoint_tasks() if endpoints else []
    tasks = sorted({m.task for m in models} | set(llm_tasks), key=_task_order)
    url_state.seed(K.TASK, Param.TASK, url_state.one_of(tasks))
    c1, c2 = st.columns(2)
    task_name = c1.selectbox("任务 / Task", tasks, key=K.TASK,
                             format_func=lambda t: f"{REGISTRY[t].description} · {t}")
    url_state.show({Param.TASK: task_name})
    task_models = {m.name: m for m in models if m.task == task_name}
    if task_name in llm_tasks:
        task_models.update({cfg.ref: cfg for cfg in endpoints})
    shown = (lambda n: n) if demo else (lambda n: f"{n} ({getattr(task_models[n], 'source', 'endpoint')})")
    name = c2.selectbox("模型 / Model", list(task_models), key=K.MODEL, format_func=shown)
    return task_models[name]


@st.cache_data(max_entries=32, show_spinner=False)
def curated_cases(path: str, dataset_id: int, sha256: str, model_folder: str, task_name: str) -> list[int]:
    """The rule's cases of one dev file for one model (keyed by the file's content hash: the
    same file gives the same cases in any workspace)."""
    from app_pages.common import shared_workspace

    examples = shared_workspace(path).cursor().datasets.examples(dataset_id)
    records = read_training_records(model_folder)
    seen = {examples[i].index for i in overlapping(examples, records)} if records else set()
    queries = get_task(task_name).kind in (Kind.CLASSIFICATION, Kind.PAIR)
    return curated_indices(examples, exclude=seen, queries=queries)


def pick_input(ws, task: TaskSpec, info, demo: bool) -> tuple[Example, Example | None]:
    """(what the model sees, the gold when the text is a dataset example)."""
    dev = ws.datasets.find(task.name, "dev")
    choices = [TYPE] + ([CURATED if demo else DATASET] if dev is not None else [])
    source = st.radio("输入 / Input", choices, horizontal=True, key=K.SOURCE, format_func=md)
    if source == TYPE:
        text = st.text_area("文本 / Text", key=K.TEXT, height=120,
                            placeholder="例如：患者因反复咳嗽伴发热3天入院，胸部CT提示右下肺炎。")
        text2 = st.text_area("第二句 / Second text", key=K.TEXT2, height=80) if task.kind is Kind.PAIR else ""
        return Example(key="live", index=0, text=text, text2=text2), None
    assert dev is not None
    if demo:
        idxs = curated_cases(db_path(), dev.dataset_id, dev.sha256, str(info.path), task.name)
        if not idxs:
            st.info("No case of this split fits the demo's rule.")
            st.stop()
        st.caption(f"精选病例 chosen by rule: {md(RULE)}")
        texts = ws.datasets.texts(dev.dataset_id, idxs[:2000])
        heads = {i: texts.get(i, "")[:60] for i in idxs[:2000]}
        idx = st.selectbox("病例 / Example", list(heads), key=K.EXAMPLE,
                           format_func=lambda i: f"{i}: {heads[i]}")
    else:
        # A record number, not a list of every example: a selectbox of the 5,000 CMeEE dev texts
        # sent 630 KB to the browser on every rerun. The example is shown below.
        idx = st.number_input("病例 / Example", min_value=0, max_value=max(dev.records - 1, 0), step=1,
                              key=K.EXAMPLE, help="The record number in the dev split (0-based), "
                                                       "as on the Datasets page")
    gold = ws.datasets.example(dev.dataset_id, int(idx))
    example = model_input(task, gold)
    if not demo:
        show_html(example_html(example, task))
    return example, gold


def confirm_identifiers(example: Example) -> bool:
    """Warn before running text that looks like it holds patient identifiers; True when it may
    run (nothing found, or the user confirmed)."""
    hits = find_identifiers(example.text + "\n" + (example.text2 or ""))
    if not hits:
        return True
    kinds = "、".join(sorted({h.label for h in hits}))
    st.warning(f"文本中可能含有患者身份信息 ({md(kinds)})。The text seems to contain patient "
               "identifiers: remove them, or confirm that this text may be processed.")
    return st.checkbox("确认无真实患者信息 / I confirm this text contains no real patient data",
                       key=K.CONFIRM)
