"""Runs: import a predictions file, or run a model, on a stored split; see every run's official
metrics with bootstrap intervals, delete runs, export a run as the official submission file.
Model runs and imported runs are stored, scored and analysed the same way."""
from __future__ import annotations

import tempfile
from functools import partial

import pandas as pd
import streamlit as st

from app_pages.common import (
    available_models,
    db_path,
    device_choice,
    load_model,
    md,
    model_dirs,
    model_failure,
    num,
    overlap_warning,
    read_only_notice,
    run_label,
    shared_workspace,
    workspace,
)
from app_pages.keys import Param
from app_pages.keys import Runs as K
from app_pages.markdown import md_name
from app_pages.navigation import page_file
from app_pages.permissions import allowed, why_not
from app_pages.runs_endpoint import endpoint_figures, start_endpoint_run
from cblue_core.auth import PermissionDenied
from cblue_core.io.errors import FileRefused
from cblue_core.io.writers import run_file_name
from cblue_core.runs.record import export_run, import_run, model_run
from cblue_core.runs.seen_split import settle_all, unseen_score
from cblue_core.tasks import REGISTRY


def pick_split(candidates, key: str) -> int:
    # The dataset id and file name keep two versions of one split apart (Streamlit matches a
    # selection by its label).
    by_id = {d.dataset_id: d for d in candidates}
    return st.selectbox("Gold split", list(by_id), key=key, format_func=lambda i: (
        f"{by_id[i].task} · {by_id[i].split} · #{i} {by_id[i].name} ({by_id[i].records} examples)"))


UNSEEN_COLUMN = "unseen score (n)"


def unseen_cell(score: tuple[str, float | None, int] | None) -> str:
    """The headline on the examples the run's model never saw, and how many: "unknown" when the
    model declares no training records (an import, a user checkpoint)."""
    if score is None:
        return "unknown"
    _, value, n = score
    if not n:
        return "none unseen"
    return f"{'n/a' if value is None else format(value, '.4f')} ({n:,})"


def exported_run(path: str, run_id: int) -> bytes:
    """The run's official submission file. Streamlit calls it on a thread of its own when the
    download button is clicked: a cursor of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        return export_run(shared_workspace(path).cursor(), run_id, tmp).read_bytes()


def render() -> None:
    ws = workspace()
    st.title("Runs")
    # Registry order (CMeEE first), not alphabetical: the splits people score most come first.
    datasets = sorted((d for d in ws.datasets.all() if d.annotations > 0 or d.task == "MedDG"),
                      key=lambda d: (list(REGISTRY).index(d.task) if d.task in REGISTRY else len(REGISTRY),
                                     d.split != "dev", d.dataset_id))
    # Open on a fresh workspace; then as the user left it (the first import must not fold it away).
    with st.expander("Import a predictions file", key=K.IMPORT_OPEN,
                     expanded=st.session_state.setdefault(K.IMPORT_FIRST, not ws.runs.all())):
        if not datasets:
            st.info("No labelled split in the workspace yet.")
        else:
            by_id = {d.dataset_id: d for d in datasets}
            target = pick_split(datasets, K.IMPORT_SPLIT)
            task = REGISTRY[by_id[target].task]
            st.caption(f"Expected: {md(task.name)} predictions in the official submission format "
                       f"({md(task.submission_file)}), matched by {md(task.key_field)}.")
            upload = st.file_uploader("Predictions file", type=["json", "jsonl", "tsv", "txt"], key=K.UPLOAD)
            name = st.text_input("Run name", key=K.NAME, placeholder="e.g. bert-base seed 1")
            allow_missing = st.checkbox("Score gold examples without a prediction as empty", key=K.ALLOW_MISSING)
            read_only_notice("importing runs")
            if upload is not None and st.button("Import and score", type="primary", key=K.IMPORT,
                                                disabled=not allowed("run.create"), help=md(why_not("run.create"))):
                try:
                    result = import_run(ws, target, upload.getvalue(), name=name or upload.name,
                                        file_name=upload.name, allow_missing=allow_missing)
                except PermissionDenied as exc:
                    st.error(md(exc))
                except FileRefused as refused:
                    st.error("The file was refused; nothing was stored.")
                    st.dataframe(pd.DataFrame([{"problem": d.message, "record": d.record, "line": d.line,
                                                "field": d.field, "expected": d.expected}
                                               for d in refused.defects]), hide_index=True)
                else:
                    ev = result.evaluation
                    st.success(f"Stored run #{result.run_id:d}: {md(ev.headline)} = {num(ev.value)}")
                    for line in result.match.lines():
                        st.caption(md(line))
    with st.expander("Run a model on a split"):
        models = [m for m in available_models() if m.ok and m.task]
        runnable = [d for d in datasets if any(m.task == d.task for m in models)]
        if not runnable:
            st.info("No model predicts the task of a labelled split in the workspace.")
        else:
            by_id = {d.dataset_id: d for d in runnable}
            target = pick_split(runnable, K.MODEL_SPLIT)
            split = by_id[target]
            task_models = {m.name: m for m in models if m.task == split.task}
            c1, c2 = st.columns([3, 1])
            model_name = c1.selectbox("Model", list(task_models), key=K.MODEL,
                                      format_func=lambda n: f"{n} ({task_models[n].source})")
            batch = c2.number_input("Batch size", min_value=1, max_value=1024, value=32, key=K.MODEL_BATCH)
            name = st.text_input("Run name", key=K.MODEL_NAME, placeholder=f"{model_name} on {split.split}")
            device = device_choice()
            read_only_notice("storing model runs")
            if st.button(f"Predict {split.records:,} examples on {md(device)} and score", type="primary",
                         key=K.MODEL_GO, disabled=not allowed("run.create"), help=md(why_not("run.create"))):
                bar = st.progress(0.0, text="Loading the model…")
                done = [0]

                def advance(n: int) -> None:
                    done[0] += n
                    bar.progress(min(done[0] / max(split.records, 1), 1.0),
                                 text=f"{done[0]:,} / {split.records:,} examples")

                try:
                    predictor, _ = load_model(task_models[model_name].path, split.task, device)
                    result = model_run(ws, target, predictor, name=name or None, batch_size=int(batch),
                                       progress=advance, on_retry=lambda old, new: st.warning(
                                           f"Out of memory on {md(device)} at batch size {old:d}; "
                                           f"retrying with {new:d}."))
                except Exception as exc:  # noqa: BLE001  (any model failure is a message in the page)
                    st.error(md(model_failure(exc, device)))
                else:
                    ev, params = result.evaluation, ws.runs.get(result.run_id).params
                    bar.progress(1.0, text=f"{params['examples']:,} examples in {params['seconds']:.1f} s "
                                           f"on {md(device)}")
                    st.success(f"Stored run #{result.run_id:d}: {md(ev.headline)} = {num(ev.value)}")
    start_endpoint_run(ws, datasets, pick_split)
    runs = ws.runs.all()
    if not runs:
        st.info("No runs yet.")
        st.stop()
    rows = []
    training = settle_all(ws, runs, model_dirs())
    for r in runs:
        name, value = r.headline
        low, high = (r.metrics.get("intervals", {}).get(name) or [None, None])
        rows.append({"run": r.run_id, "name": r.name, "task": r.task, "split": r.split, "source": r.source,
                     "metric": name, "value": value, "95% CI low": low, "95% CI high": high,
                     UNSEEN_COLUMN: unseen_cell(unseen_score(training[r.run_id])),
                     "model": r.model or "", "created": r.created_at[:19]})
    st.subheader("All runs")
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"value": st.column_config.NumberColumn(format="%.4f"),
                                "95% CI low": st.column_config.NumberColumn(format="%.4f"),
                                "95% CI high": st.column_config.NumberColumn(format="%.4f")})
    by_run = {r.run_id: r for r in runs}
    chosen = st.selectbox("Run", list(by_run), key=K.SELECTED, format_func=lambda i: run_label(by_run[i]))
    run = by_run[chosen]
    overlap_warning(run)
    endpoint_figures(run)
    metrics = run.metrics
    cols = st.columns(3)
    for n, (k, v) in enumerate(list(metrics.get("metrics", {}).items())[:9]):
        ci = metrics.get("intervals", {}).get(k)
        cols[n % 3].metric(md(k), "n/a" if v is None else f"{v:.4f}",
                           help=f"95% bootstrap interval {ci[0]:.4f} – {ci[1]:.4f}" if ci else None)
    for note in metrics.get("notes", []) + metrics.get("match", []):
        st.caption(md(note))
    if run.params:   # a model run's model, device, batch size, time and decoding settings; an import's file
        st.caption("Made with: " + " · ".join(f"{md(k)} {md(v)}" for k, v in run.params.items()))
    c1, c2, c3 = st.columns(3)
    if c1.button("Open in Errors", key=K.OPEN_ERRORS):
        st.switch_page(page_file("errors"), query_params={Param.RUN: str(chosen)})
    # The file is written when the button is clicked, not on every rerun (a 5,000-example run
    # takes about a second to export).
    file_name = run_file_name(REGISTRY[run.task], run.split)
    c2.download_button(f"Export {md_name(file_name)}", partial(exported_run, db_path(), chosen),
                       file_name=file_name, key=K.EXPORT,
                       help="The run's predictions in the task's official submission format"
                            + ("" if run.split == "test" else f" (named for the {md(run.split)} split; the "
                               "leaderboard takes the test split's file)"))
    if c3.button("Delete this run", key=K.DELETE, disabled=not allowed("run.delete"), help=md(why_not("run.delete"))):
        try:
            ws.runs.delete(chosen)
        except PermissionDenied as exc:
            st.error(md(exc))
            return
        st.session_state.pop(K.SELECTED, None)
        st.rerun()
