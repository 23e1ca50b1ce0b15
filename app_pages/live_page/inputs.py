"""The Live page's inputs: task and model, the text (typed, a curated case, a dataset example)
and the patient-identifier check."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from app_pages import url_state
from app_pages.common import db_path, md
from app_pages.keys import Live as K
from app_pages.keys import Param
from cblue_core.analysis.curation import RULE, RULE_PLAIN, RULE_ZH, CuratedCase, curated_cases
from cblue_core.analysis.privacy import find_identifiers
from cblue_core.models.base import model_input
from cblue_core.models.provenance import RECORDS_FILE, fingerprint, overlapping, read_training_records
from cblue_core.records import Example
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
                             format_func=lambda t: f"{REGISTRY[t].plain_title} · {t}")
    url_state.show({Param.TASK: task_name})
    task_models = {m.name: m for m in models if m.task == task_name}
    if task_name in llm_tasks:
        task_models.update({cfg.ref: cfg for cfg in endpoints})
    shown = ((lambda n: model_title(task_models[n])) if demo else
             (lambda n: f"{n} ({getattr(task_models[n], 'source', 'endpoint')})"))
    name = c2.selectbox("模型 / Model", list(task_models), key=K.MODEL, format_func=shown)
    return task_models[name]


def model_title(info) -> str:
    """A model as a clinician can read it: whose it is, in Chinese first, then its name."""
    source = getattr(info, "source", "endpoint")
    who = {"built-in": "内置模型 · built-in model", "endpoint": "大语言模型服务 · LLM service"}.get(
        source, "本地模型 · local model")
    return f"{who} ({getattr(info, 'name', info)})"


@st.cache_data(max_entries=32, show_spinner=False)
def curated(path: str, dataset_id: int, sha256: str, model_folder: str, task_name: str) -> list[CuratedCase]:
    """The rule's cases of one dev file for one model (keyed by the file's content hash: the
    same file gives the same cases in any workspace)."""
    from app_pages.common import shared_workspace

    examples = shared_workspace(path).cursor().datasets.examples(dataset_id)
    records = training_records(model_folder)
    seen = {examples[i].index for i in overlapping(examples, records)} if records else set()
    queries = get_task(task_name).kind in (Kind.CLASSIFICATION, Kind.PAIR)
    return curated_cases(examples, exclude=seen, queries=queries)


def training_records(model_folder: str) -> frozenset[str] | None:
    """The fingerprints of the records a model folder declares it was trained on (read once per
    process and version of the file; shared, read-only)."""
    path = Path(model_folder) / RECORDS_FILE
    try:
        stat = path.stat()
    except OSError:
        return None
    return _training_records(model_folder, stat.st_mtime_ns, stat.st_size)


@st.cache_data(max_entries=8, show_spinner=False)
def _training_records(model_folder: str, _mtime_ns: int, _size: int) -> frozenset[str] | None:
    return read_training_records(model_folder)


def training_note(info, example: Example, demo: bool) -> None:
    """Say so when the text is one the model learnt from: its prediction there shows memory,
    not skill (a typed text is checked too, a clinician may paste a textbook sentence)."""
    records = training_records(str(info.path))
    if not records or not (example.text or "").strip() or fingerprint(example) not in records:
        return
    st.info("模型训练时见过这段文本，结果不能说明它对新文本的表现。 The model was trained on this text: its "
            "answer here says little about new text.", icon=":material/school:")


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
        cases = {c.index: c for c in curated(db_path(), dev.dataset_id, dev.sha256, str(info.path), task.name)}
        if not cases:
            st.info("这个任务暂无精选病例。 No curated case for this task.")
            st.stop()
        texts = ws.datasets.texts(dev.dataset_id, list(cases))
        numbers = {i: n for n, i in enumerate(cases, start=1)}
        idx = st.selectbox("病例 / Case", list(cases), key=K.EXAMPLE,
                           format_func=lambda i: f"{numbers[i]}. {texts.get(i, '')[:60]}")
        st.caption(f"精选病例：{md(RULE_ZH)} Curated cases: {md(RULE_PLAIN)}.")
        with st.expander("如何挑选 · How this case was chosen"):
            st.caption(f"{md(cases[idx].reason)}. The rule: {md(RULE)}.")
    else:
        # A record number, not a list of every example: a selectbox of the 5,000 CMeEE dev texts
        # sent 630 KB to the browser on every rerun. The example is shown below.
        idx = st.number_input("病例 / Example", min_value=0, max_value=max(dev.records - 1, 0), step=1,
                              key=K.EXAMPLE, help="The record number in the dev split (0-based), "
                                                       "as on the Datasets page")
    gold = ws.datasets.example(dev.dataset_id, int(idx))
    return model_input(task, gold), gold


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
