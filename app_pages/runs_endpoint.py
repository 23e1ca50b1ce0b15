"""The Runs page's LLM endpoint parts: start a run of a declared endpoint on a PromptCBLUE or
CliMedBench split (a progress bar per answered prompt; answers already in the workspace's
cache are not sent again), and an endpoint run's request and token figures."""
from __future__ import annotations

import streamlit as st

from app_pages.common import md, num, page_failure, read_only_notice
from app_pages.keys import Runs as K
from app_pages.permissions import allowed, why_not
from cblue_core.auth.roles import PermissionDenied
from cblue_core.models.endpoints.client import EndpointFailure
from cblue_core.models.endpoints.config import EndpointConfigError, load_endpoints
from cblue_core.models.endpoints.prompts import supports
from cblue_core.runs.endpoint import endpoint_run
from cblue_core.tasks import REGISTRY


def start_endpoint_run(ws, datasets, pick_split) -> None:
    """The expander that runs an endpoint on a split (``pick_split``: the page's split picker)."""
    try:
        endpoints = load_endpoints()
    except EndpointConfigError as exc:
        st.warning(md(str(exc)))
        return
    if not endpoints:
        return
    with st.expander("Run an LLM endpoint on a split"):
        runnable = [d for d in datasets if d.task in REGISTRY and supports(REGISTRY[d.task])]
        if not runnable:
            st.info("No PromptCBLUE or CliMedBench split in the workspace.")
            return
        by_id = {d.dataset_id: d for d in runnable}
        target = pick_split(runnable, K.ENDPOINT_SPLIT)
        split = by_id[target]
        c1, c2 = st.columns([3, 1])
        ref = c1.selectbox("Endpoint", [c.ref for c in endpoints.values()], key=K.ENDPOINT)
        cfg = endpoints[ref.split(":", 1)[1]]
        limit = c2.number_input("First N examples", min_value=1, max_value=max(split.records, 1),
                                value=split.records, key=K.ENDPOINT_LIMIT)
        name = st.text_input("Run name", key=K.ENDPOINT_NAME, placeholder=f"{cfg.ref} on {split.split}")
        st.caption(f"{md(cfg.model)} · {md(cfg.mode)} · at most {cfg.max_concurrency:d} requests at a time; "
                   "answers already in the workspace are not sent again.")
        read_only_notice("storing endpoint runs")
        # checked before the prompts are sent: the run is stored (run.create) only once all are answered
        if not st.button(f"Ask {int(limit):,} prompts and score", type="primary", key=K.ENDPOINT_GO,
                         disabled=not allowed("run.create"), help=md(why_not("run.create"))):
            return
        total = int(limit)
        bar = st.progress(0.0, text="Sending prompts…")
        done = [0]

        def advance(n: int) -> None:
            done[0] += n
            bar.progress(min(done[0] / max(total, 1), 1.0), text=f"{done[0]:,} / {total:,} prompts")

        try:
            result = endpoint_run(ws, target, cfg, name=name or None,
                                  limit=None if total >= split.records else total, progress=advance)
        except (EndpointConfigError, EndpointFailure, ValueError, PermissionDenied) as exc:
            st.error(md(str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - logged by page_failure; one line on the page
            st.error(md(page_failure("an endpoint run", exc)))
            return
        ev, stats = result.run.evaluation, result.output.stats
        bar.progress(1.0, text=f"{total:,} prompts in {stats.wall_s:.1f} s")
        st.success(f"Stored run #{result.run.run_id:d}: {md(ev.headline)} = {num(ev.value)}")
        if stats.failed:
            st.warning(f"{stats.failed:d} of {total:,} prompts failed after retries and are scored as empty "
                       "answers: the run is partial.")


def endpoint_figures(run) -> None:
    """Requests sent, cached and failed, tokens and speed of an endpoint run (nothing otherwise)."""
    if run.source != "endpoint":
        return
    p = run.params
    req, tokens = p.get("requests", {}), p.get("tokens", {})
    cols = st.columns(5)
    cols[0].metric("Requests sent", f"{req.get('sent', 0):,}")
    cols[1].metric("From cache", f"{req.get('cached', 0):,}")
    cols[2].metric("Failed", f"{req.get('failed', 0):,}")
    cols[3].metric("Tokens (prompt / completion)", f"{tokens.get('prompt', 0):,} / {tokens.get('completion', 0):,}")
    cols[4].metric("Tokens/s", f"{p.get('tokens_per_s', 0):.1f}", help=f"wall time {p.get('seconds', 0):.1f} s")
    if p.get("partial"):
        st.warning(f"Partial run: {req.get('failed', 0):,} prompts failed after retries and are scored as "
                   "empty answers.")
        for line in p.get("failures", []):
            st.caption(md(line))
