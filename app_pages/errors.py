"""Errors: one run's metrics per label, a confusion matrix and an error taxonomy that click
through to the examples behind them, bucketed analysis, and saved slices.

URL query parameters ``run``, ``slice`` and ``example`` reopen the same view.
"""
from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from app_pages.common import (
    db_path,
    md,
    num,
    pick_run,
    plot_labels,
    plot_text,
    read_only,
    read_only_notice,
    run_evaluation_cached,
    selected,
    workspace,
)
from app_pages.html_view import show_html
from cblue_core.analysis.buckets import label_buckets, span_buckets
from cblue_core.records import Span
from cblue_core.render.example import comparison_html
from cblue_core.store.slices import SliceError
from cblue_core.tasks import get_task

ALL = "Σ all"

ws = workspace()
st.title("Errors")
run = pick_run(ws, "err_run")
task = get_task(run.task)
summary = run.metrics
scale = summary.get("scale", 1)
SPEC = ".4f" if scale == 1 else ".2f"


def fmt(v) -> str:
    return num(v, SPEC)


# ---------------------------------------------------------------- headline
cols = st.columns(4)
shown = [summary["headline"]] + [k for k in summary.get("metrics", {}) if k != summary["headline"]][:3]
for col, name in zip(cols, shown):
    v = summary["metrics"].get(name)
    ci = summary.get("intervals", {}).get(name)
    col.metric(md(name), fmt(v),
               help=f"95% bootstrap interval {num(ci[0], SPEC)} – {num(ci[1], SPEC)}" if ci else None)
    if ci:
        col.caption(f"95% CI {num(ci[0], SPEC)} – {num(ci[1], SPEC)}")

tab_labels, tab_matrix, tab_taxonomy, tab_buckets, tab_slices, tab_gold = st.tabs(
    ["Per label", "Confusion matrix", "Error taxonomy", "Buckets", "Slices", "Corrected gold"])

# ---------------------------------------------------------------- per label
with tab_labels:
    per_label = summary.get("per_label", {})
    if per_label:
        frame = pd.DataFrame([{"label": task.display_label(k), **v} for k, v in per_label.items()])
        st.dataframe(frame, hide_index=True, width="stretch")
    else:
        st.info("This task reports no per-label figures.")


def select_filter(new: dict) -> None:
    """A chart click: remember which error rows to list (and forget the example shown)."""
    if new != st.session_state.get("err_filter"):
        st.session_state.err_filter = new
        st.session_state.pop("err_example", None)


# ---------------------------------------------------------------- confusion matrix
with tab_matrix:
    cm = ws.runs.confusion(run.run_id)
    if cm.empty:
        st.info("No confusion pairs for this run (nothing was matched on both sides).")
    else:
        normalise = st.toggle("Normalise each row (share of the gold label)", key="err_norm")
        gold_tot = cm.groupby("gold_label")["n"].sum()
        pred_tot = cm.groupby("pred_label")["n"].sum()
        cells = [(g, p, int(n)) for g, p, n in cm.itertuples(index=False)]
        cells += [(g, ALL, int(n)) for g, n in gold_tot.items()]
        cells += [(ALL, p, int(n)) for p, n in pred_tot.items()]
        frame = pd.DataFrame(cells, columns=["gold", "pred", "n"])
        frame["value"] = frame["n"]
        if normalise:
            frame["value"] = [n / gold_tot.get(g, n) if g != ALL else n / max(pred_tot.sum(), 1)
                              for g, n in zip(frame["gold"], frame["n"])]
        frame["diag"] = frame["gold"] == frame["pred"]
        labels_x = sorted(set(frame["pred"]) - {ALL}) + [ALL]
        labels_y = sorted(set(frame["gold"]) - {ALL}) + [ALL]
        # Labels come from files: the chart shows them HTML-escaped (Plotly renders tags there);
        # a click reports the shown text, mapped back to the label by `cm_labels`.
        cm_labels = plot_labels(labels_x + labels_y)
        for side in ("gold", "pred"):
            frame[side + "_shown"] = [plot_text(v) for v in frame[side]]
        size = 620 / max(len(labels_x), len(labels_y), 4)
        fig = go.Figure(go.Scatter(
            x=frame["pred_shown"], y=frame["gold_shown"], mode="markers+text",
            text=[f"{v:.2f}" if normalise else str(n) for v, n in zip(frame["value"], frame["n"])],
            textfont={"size": 11},
            marker={"symbol": "square", "size": size, "color": frame["value"], "colorscale": "Blues",
                    "line": {"width": [2 if d else 0 for d in frame["diag"]], "color": "#2b8a3e"},
                    "showscale": True},
            customdata=frame[["gold_shown", "pred_shown"]].values,
            hovertemplate="gold %{y} · predicted %{x}: %{text}<extra></extra>"))
        fig.update_layout(height=max(420, size * len(labels_y) + 160), xaxis_title="predicted",
                          yaxis_title="gold",
                          xaxis={"categoryorder": "array", "categoryarray": [plot_text(v) for v in labels_x]},
                          yaxis={"categoryorder": "array",
                                 "categoryarray": [plot_text(v) for v in labels_y[::-1]]},
                          margin={"l": 10, "r": 10, "t": 30, "b": 10})
        st.caption("Click a cell for its examples; the Σ row and column select a whole predicted "
                   "column or gold row. Green borders: the diagonal.")
        event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key="err_cm")
        points = selected(event, "points")
        if points:
            gold, pred = (cm_labels.get(v, v) for v in points[0]["customdata"][:2])
            select_filter({k: v for k, v in (("gold_label", gold), ("pred_label", pred)) if v != ALL})

# ---------------------------------------------------------------- taxonomy
with tab_taxonomy:
    counts = ws.runs.error_counts(run.run_id)
    if not counts:
        st.info("No error taxonomy for this task.")
    else:
        categories = plot_labels(counts)
        tax = pd.DataFrame({"category": list(categories), "rows": list(counts.values())})
        fig = px.bar(tax, x="rows", y="category", orientation="h", text="rows")
        fig.update_layout(yaxis={"categoryorder": "total ascending"}, height=80 + 32 * len(tax))
        event = st.plotly_chart(fig, on_select="rerun", selection_mode="points", key="err_tax")
        points = selected(event, "points")
        if points:
            select_filter({"category": categories.get(points[0]["y"], points[0]["y"])})
        tags = ws.runs.tag_counts(run.run_id)
        if tags:
            tag = st.selectbox("Or a tag (nesting, schema violations, Combined triples…)",
                               ["(none)"] + list(tags), key="err_tag",
                               format_func=lambda t: t if t == "(none)" else f"{t} ({tags[t]})")
            if tag != "(none)":
                select_filter({"tag": tag})

# ---------------------------------------------------------------- buckets
with tab_buckets:
    ev = run_evaluation_cached(db_path(), run.run_id)
    gold_examples = ws.datasets.examples(run.dataset_id)
    preds = ws.runs.predictions(run.run_id)
    train_info = ws.datasets.find(run.task, "train")
    train = ws.datasets.examples(train_info.dataset_id) if train_info else None
    if any(g.spans for g in gold_examples):
        buckets = span_buckets(gold_examples, preds, train)
    elif any(g.label for g in gold_examples) and task.scorer in ("macro_f1", "accuracy"):
        buckets = label_buckets(gold_examples, preds, train)
    else:
        buckets = []
    if not buckets:
        st.info("Bucketed analysis covers span and label tasks.")
    else:
        st.caption("F1 per bucket (accuracy for label tasks) with 95% bootstrap intervals; "
                   + ("training-set features from the workspace's train split." if train else
                      "no train split in the workspace: frequency and consistency buckets are off."))
        bframe = pd.DataFrame([{"feature": b.feature, "bucket": b.bucket, "order": b.order, "F1": b.f1,
                                "low": b.low, "high": b.high, "gold": b.support, "tp": b.tp, "fp": b.fp,
                                "fn": b.fn, "examples": b.examples} for b in buckets])
        for n, (feature, part) in enumerate(bframe.groupby("feature", sort=False)):
            part = part.sort_values("order")
            fig = go.Figure(go.Bar(x=[plot_text(b) for b in part["bucket"]], y=part["F1"], error_y={
                "type": "data", "symmetric": False, "array": part["high"] - part["F1"],
                "arrayminus": part["F1"] - part["low"]}, text=part["gold"], hovertemplate=(
                "%{x}: F1 %{y:.3f} (gold items %{text})<extra></extra>")))
            fig.update_layout(title=plot_text(feature), height=280, yaxis={"range": [0, 1.05]},
                              margin={"t": 40, "b": 10})
            st.columns(2)[n % 2].plotly_chart(fig, key=f"err_bucket_{n}")
        with st.expander("Bucket table"):
            st.dataframe(bframe.drop(columns="order"), hide_index=True)

# ---------------------------------------------------------------- slices
with tab_slices:
    st.caption("A slice is a SQL predicate over the example columns (idx, text, label, n_spans, "
               "nesting_depth, text_length, …), saved by name and reusable on every run of the task.")
    c1, c2 = st.columns([1, 3])
    sname = c1.text_input("Slice name", key="err_slice_name")
    spred = c2.text_input("Predicate", key="err_slice_pred", placeholder="nesting_depth >= 2")
    read_only_notice("saving slices")
    if st.button("Save slice", key="err_slice_save", disabled=read_only()):
        try:
            ws.slices.save(sname, spred, run.task)
            st.success(f"Saved slice {md(repr(sname))}")
        except SliceError as exc:
            st.error(f"Not saved: {md(exc)}")
    slices = ws.slices.all(run.task)
    if slices:
        from cblue_core.metrics.bootstrap import bootstrap_interval
        from cblue_core.metrics.types import evaluate as eval_stats
        from cblue_core.metrics.types import metric_fn_for

        ev = run_evaluation_cached(db_path(), run.run_id)
        rows = []
        for s in slices:
            try:
                idxs = ws.slices.indices(run.dataset_id, s.predicate)
            except SliceError as exc:
                rows.append({"slice": s.name, "predicate": s.predicate, "examples": 0, "error": str(exc)})
                continue
            row = {"slice": s.name, "predicate": s.predicate, "examples": len(idxs)}
            fn = metric_fn_for(ev.stats, ev.headline) if ev.stats is not None else None
            if idxs and fn is not None:
                sub = ev.stats.subset(idxs)
                row[ev.headline] = eval_stats(sub, fn)
                row["95% CI"] = "{:.4f} – {:.4f}".format(*bootstrap_interval(sub, fn, n=300))
            rows.append(row)
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        names = [s.name for s in slices]
        wanted = st.query_params.get("slice")
        if "err_slice" not in st.session_state and wanted in names:
            st.session_state.err_slice = wanted
        chosen = st.selectbox("List the errors of a slice", ["(none)"] + names, key="err_slice")
        if chosen != "(none)":
            st.query_params["slice"] = chosen
            pred_txt = next(s.predicate for s in slices if s.name == chosen)
            select_filter({"slice": chosen, "idx_in": tuple(ws.slices.indices(run.dataset_id, pred_txt))})

# ---------------------------------------------------------------- corrected gold
with tab_gold:
    from cblue_core.annotation.rescore import error_changes

    edited = ws.annotations.edited_indices(run.dataset_id)
    if not edited:
        st.info("No gold correction on this split yet (see the Annotate page).")
    else:
        names = ["current"] + [v.name for v in ws.annotations.versions(run.dataset_id)]
        version = st.selectbox("Gold version", names, key="err_gold_version",
                               help="current = the original plus every saved correction")
        changes = error_changes(ws, run.run_id, None if version == "current" else version)
        g = st.columns(3)
        g[0].metric(f"{md(changes.headline)} on the original gold", fmt(changes.before))
        g[1].metric(f"{md(changes.headline)} on {md(version)}", fmt(changes.after),
                    delta=None if changes.delta is None else f"{changes.delta:+.4f}")
        g[2].metric("Examples whose errors changed", len(changes.examples))
        st.caption(f"{len(edited):d} corrected examples. Errors that disappear on the corrected gold "
                   "were annotation noise rather than model errors.")
        for title, rows in (("Errors that disappear", changes.fixed), ("Errors that appear", changes.new)):
            st.markdown(f"**{title}** ({len(rows):d})")
            if rows:
                st.dataframe(pd.DataFrame(rows)[[c for c in ("idx", "category", "gold_label", "pred_label",
                                                             "gold_text", "pred_text") if c in rows[0]]],
                             hide_index=True, width="stretch")

# ---------------------------------------------------------------- examples behind the selection
st.subheader("Examples behind the selection")
flt = dict(st.session_state.get("err_filter") or {})
if not flt:
    st.caption("Click a confusion-matrix cell, a taxonomy bar, a tag or a slice.")
else:
    shown_filter = {k: v for k, v in flt.items() if k != "idx_in"}
    st.caption("Filter: " + ", ".join(f"{md(k)} = {md(v)}" for k, v in shown_filter.items()))
    idx_in = flt.pop("idx_in", None)
    flt.pop("slice", None)
    rows = ws.runs.error_rows(run.run_id, limit=2000, **flt)
    if idx_in is not None:
        rows = rows[rows["idx"].isin(idx_in) & (~rows["category"].isin(["correct", "correct_term"]))]
    st.caption(f"{len(rows):d} rows in {(int(rows['idx'].nunique()) if len(rows) else 0):d} examples")
    view = rows[["idx", "category", "gold_label", "pred_label", "gold_text", "pred_text"]]
    event = st.dataframe(view, hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key="err_rows")
    picked = selected(event)
    if picked:
        st.session_state.err_example = int(view.iloc[picked[0]]["idx"])

wanted = st.query_params.get("example")
if "err_example" not in st.session_state and wanted and str(wanted).isdigit():
    st.session_state.err_example = int(wanted)
idx = st.session_state.get("err_example")
if idx is not None:
    gold = ws.datasets.example(run.dataset_id, idx)
    pred = ws.runs.prediction(run.run_id, idx)
    if gold is not None and pred is not None:
        st.query_params["example"] = str(idx)
        marks = {}
        for r in ws.runs.error_rows(run.run_id, idx=idx).itertuples(index=False):
            if pd.notna(r.gold_start):
                marks[Span(int(r.gold_start), int(r.gold_end), r.gold_label, r.gold_text)] = r.category
            if pd.notna(r.pred_start):
                marks[Span(int(r.pred_start), int(r.pred_end), r.pred_label, r.pred_text)] = r.category
        st.markdown(f"**Example {idx:d}**: gold above, run #{run.run_id:d} below")
        show_html(comparison_html(gold, pred, task, marks=marks))
