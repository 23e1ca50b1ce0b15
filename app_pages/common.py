"""What every page shares: the workspace (one connection per process, a cursor per session),
the user's name, and small widgets. Not a page itself."""
from __future__ import annotations

import html
import logging
import numbers
import os
import threading
import uuid
from pathlib import Path

import streamlit as st

from app_pages import url_state
from app_pages.keys import Param, Sidebar
from app_pages.markdown import md
from cblue_core.auth import PermissionDenied, Role, User
from cblue_core.render.bidi import isolate
from cblue_core.store.ingest import bootstrap_sample_data
from cblue_core.store.new_workspaces import NewWorkspaceQuota
from cblue_core.store.roots import allowed_roots, check_workspace_path
from cblue_core.store.workspace import Workspace, WorkspaceError, WorkspaceLocked, connect, default_db_path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = ROOT / "sample_data"


ENV_READONLY = "CBLUE_STUDIO_READONLY"
log = logging.getLogger("cblue_studio.pages")
_threads = threading.local()


def read_only() -> bool:
    """Demo mode for a served app: the workspace is opened read-only and every control that
    would write is disabled (``CBLUE_STUDIO_READONLY=1``)."""
    return os.environ.get(ENV_READONLY, "").strip().lower() in ("1", "true", "yes")


def read_only_notice(what: str) -> None:
    """Say once, where the write controls are, why they do nothing."""
    if read_only():
        st.info(f"Read-only mode: {md(what)} is switched off on this server.", icon=":material/lock:")


@st.cache_resource(show_spinner="Opening the workspace…", max_entries=4)
def _open_workspace(path: str, read_only: bool) -> Workspace:
    """One connection per database file and process (DuckDB allows no second process on a file
    open for writing), filled with the sample data on first start; read-only mode opens an
    existing workspace and writes nothing."""
    if read_only:
        return connect(path, read_only=True, actor=None)
    ws = connect(path)      # the server process, as the file's owner, stores the sample data
    bootstrap_sample_data(ws, SAMPLE_DATA)
    # Shared by every session: it acts for nobody; a session's cursor acts for its signed-in user.
    return ws.acting_as(None)


def shared_workspace(path: str) -> Workspace:
    """The process's connection to the workspace file at ``path`` (give sessions a cursor)."""
    return _open_workspace(path, read_only())


@st.cache_resource
def new_workspace_quota() -> NewWorkspaceQuota:
    """The process's count of workspace files created from the sidebar (per session, in all)."""
    return NewWorkspaceQuota()


def session_id() -> str:
    """A name for this browser session, made on its first run: the core runs one user filter at
    a time per session (:mod:`cblue_core.store.session_gate`)."""
    value = st.session_state.get(Sidebar.SESSION_ID)
    if not isinstance(value, str):
        value = st.session_state[Sidebar.SESSION_ID] = uuid.uuid4().hex
    return value


def session_cursor(path: str) -> Workspace:
    """A cursor on the process's workspace at ``path`` for this session (for cached functions
    that run user filters: saved slices)."""
    return shared_workspace(path).cursor(session=session_id(), actor=acting_user())


def acting_user() -> User:
    """The signed-in user of this session (:func:`app_pages.identity.current_user`)."""
    from app_pages.identity import current_user

    return current_user()


def db_path() -> str:
    """The workspace file this session uses: the server's default, or the one typed in the
    sidebar under the allowed roots (:func:`cblue_core.store.roots.check_workspace_path`), unless
    :func:`workspace` had to fall back on the server's for it; raises WorkspaceError otherwise."""
    typed = _typed_db()
    in_use = st.session_state.get(Sidebar.DB_IN_USE)
    if in_use is not None and in_use[0] == typed:
        return in_use[1]
    return _typed_db_path(typed)


def _typed_db() -> str:
    return (st.session_state.get(Sidebar.DB_PATH) or "").strip()


def _typed_db_path(typed: str) -> str:
    default = str(default_db_path())
    if not typed or typed == default:
        return default
    roots = allowed_roots()
    path = check_workspace_path(typed, roots)
    if not path.exists() and not read_only():
        new_workspace_quota().admit(session_id(), path, roots)
    return str(path)


def workspace(*, report: bool = True) -> Workspace:
    """This script run's cursor on the workspace; stops the page with a message when it cannot open.
    ``report=False``: a file typed in the sidebar that cannot be opened is not reported (a
    lookup before the page, such as the navigation's, would report it a second time).

    A cursor per thread rather than per session: Streamlit's fast reruns start the new run on a
    new thread while the interrupted one is still stopping, and a DuckDB cursor refuses a second
    call while one is running ("connection is busy"). Thread-local cursors go with their thread."""
    typed = _typed_db()
    try:
        path = _typed_db_path(typed)
        base = shared_workspace(path)
    except (WorkspaceLocked, WorkspaceError) as exc:
        path, base = _server_workspace(typed, exc, report)
    st.session_state[Sidebar.DB_IN_USE] = (typed, path)
    held = getattr(_threads, "cursors", None)
    if held is None:
        held = _threads.cursors = {}
    session = session_id()
    mine = held.get((path, session))
    if mine is None or mine[0] is not base:
        mine = held[(path, session)] = (base, base.cursor(session=session))
    return mine[1].acting_as(acting_user())


def _server_workspace(typed: str, problem: Exception, report: bool = True) -> tuple[str, Workspace]:
    """The server's own workspace when the file typed in the sidebar cannot be opened: the page
    stays usable and the sidebar says why the typed file was not opened (a file the command line
    holds is locked for as long as that command runs). Stops the page only when the server's own
    workspace cannot be opened either."""
    default = str(default_db_path())
    if typed and typed != default:
        if report:
            st.sidebar.error(f"Not opened: {md(typed)}. {md(problem)} Showing the server's workspace instead; "
                             f"to start the app on another file: `CBLUE_STUDIO_DB=path/to/file.duckdb "
                             f"streamlit run app.py`.")
        try:
            return default, shared_workspace(default)
        except (WorkspaceLocked, WorkspaceError) as exc:
            problem = exc
    st.error(md(problem))
    st.stop()


def _real(value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"not a number: {type(value).__name__}")


def num(value, spec: str = ".4f") -> str:
    """A number for Markdown, formatted with ``spec`` (``n/a`` for None). Anything that is not a
    real number is refused, so the result is digits, sign, point, separators or ``e``/``inf``/``nan``."""
    if value is None:
        return "n/a"
    _real(value)
    return format(value, spec)


def pct(value, digits: int = 1) -> str:
    """A share (0.25) as a percentage for Markdown (``25.0%``; ``n/a`` for None)."""
    if value is None:
        return "n/a"
    _real(value)
    return format(value, f".{int(digits)}%")


def plot_text(value) -> str:
    """Data shown in a Plotly figure (tick labels, categories, hover text, legend names, titles,
    annotations): Plotly renders a small HTML subset there (``<a href>``, ``<b>``, ``<br>``), so
    ``&``, ``<`` and ``>`` are escaped; Plotly shows ``&lt;`` as ``<``. Distinct values stay
    distinct, so a clicked point maps back to its value (see :func:`plot_labels`); direction
    isolated like :func:`md`."""
    return html.escape(isolate("" if value is None else str(value)), quote=False)


def plot_labels(values) -> dict[str, str]:
    """``{plot_text(v): v}``: what a click on a chart reports, back to the value it shows."""
    return {plot_text(v): v for v in values}


def counted(n: int, noun: str) -> str:
    """'1 row', '2 rows', '1,204 matching examples' (Markdown-safe)."""
    return f"{int(n):,} {md(noun)}" if n == 1 else f"{int(n):,} {md(noun)}s"


def user_name() -> str:
    return acting_user().name


def demo_mode() -> bool:
    """The clinician demo (``?demo=1``): a clean surface without developer controls."""
    return st.query_params.get(Param.DEMO) == "1"


def sidebar() -> None:
    from app_pages.identity import sidebar_identity

    if demo_mode():
        return          # the demo shows task and model on its page, nothing else
    with st.sidebar:
        st.text_input("Workspace file", value=str(default_db_path()), key=Sidebar.DB_PATH,
                      disabled=read_only() or not _may_switch_workspace(),
                      help="A DuckDB file under the folders this server allows (its workspace/ "
                           "folder, the folder of $CBLUE_STUDIO_DB, $CBLUE_STUDIO_ROOTS); created "
                           "and filled with the sample data when new.")
        sidebar_identity()
        devices = ["cpu"] + (["cuda"] if _cuda() else [])
        st.selectbox("Device", devices, key=Sidebar.DEVICE,
                     help="Where models run. CUDA appears when a GPU is present.")
        st.text_input("Model folders", key=Sidebar.MODEL_DIRS, placeholder="/path/to/checkpoints",
                      help="Extra folders with local checkpoints (os.pathsep-separated), besides "
                           "the built-in models/ and $CBLUE_STUDIO_MODELS.")


def _may_switch_workspace() -> bool:
    """Switching (and creating) workspace files is an admin's, by their role in the server's own."""
    try:
        server = shared_workspace(str(default_db_path()))
    except (WorkspaceLocked, WorkspaceError):
        return False
    return server.cursor(actor=acting_user()).role() is Role.ADMIN


@st.cache_data
def _cuda() -> bool:
    from cblue_core.models.devices import cuda_available, gpu_hardware_absent
    # Every page draws the sidebar: without GPU hardware, skip importing torch just to learn that.
    return not gpu_hardware_absent() and cuda_available()


def device_choice() -> str:
    return st.session_state.get(Sidebar.DEVICE) or "cpu"


def model_dirs() -> list[str]:
    """The extra model folders typed in the sidebar."""
    return [p for p in (st.session_state.get(Sidebar.MODEL_DIRS) or "").split(os.pathsep) if p.strip()]


def available_models():
    from cblue_core.models.registry import list_models

    return list_models(model_dirs())


@st.cache_resource(max_entries=3, show_spinner="Loading the model…")
def _load_model(path: str, task: str, device: str):
    import time

    from cblue_core.models.loading import load_predictor
    start = time.perf_counter()
    predictor = load_predictor(path, task=task, device=device)
    return predictor, time.perf_counter() - start


def model_failure(exc: Exception, device: str) -> str:
    """What a page says when a model cannot load or run: the message of our own errors, the
    first line of anything a model raises (out of memory, a broken checkpoint) — never a trace;
    the unexpected ones are logged."""
    from cblue_core.io.errors import short_error
    from cblue_core.models.devices import DeviceError
    from cblue_core.models.registry import ModelLoadError
    from cblue_core.runs.record import ModelTaskMismatch

    if isinstance(exc, (ModelLoadError, DeviceError, ModelTaskMismatch, WorkspaceError)):
        return str(exc)
    if not _is_out_of_memory(exc):
        _log("a model run", exc)
    return f"The model could not run on {device}: {type(exc).__name__}: {short_error(exc)}"


def _is_out_of_memory(exc: BaseException) -> bool:
    return "out of memory" in str(exc).lower()


# Failures a page expects and explains with their own message: a refused edit or file, a name
# taken, a locked or missing workspace. Anything else is a bug or an unforeseen state: logged.
EXPECTED_FAILURES: tuple[type[BaseException], ...] = (ValueError, LookupError, WorkspaceError,
                                                      WorkspaceLocked, PermissionDenied)


def page_failure(where: str, exc: Exception) -> str:
    """One line for the page about ``exc``; an unexpected one's traceback goes to the log beside
    the workspace (frames only, never the input: see cblue_core.io.logs)."""
    from cblue_core.io.errors import short_error

    if isinstance(exc, EXPECTED_FAILURES):
        return short_error(exc)
    _log(where, exc)
    return f"{where} failed unexpectedly ({type(exc).__name__}); the details are in the server's log"


def _log(where: str, exc: BaseException) -> None:
    from cblue_core.io.logs import log_exception, log_path

    try:
        log_exception(f"page: {where}", exc, log_path(_safe_db_path()))
    except OSError:
        log.error("could not write the error log for %s (%s)", where, type(exc).__name__)


def _safe_db_path() -> str | None:
    try:
        return db_path()
    except WorkspaceError:
        return None


def load_model(path, task: str, device: str):
    """(predictor, seconds its load took); at most 3 models stay loaded per process."""
    return _load_model(str(path), task, device)


@st.cache_data(max_entries=32, show_spinner="Scoring the run…")
def run_evaluation_cached(path: str, run_id: int):
    """A stored run's evaluation with its per-example statistics (slices, comparisons), without
    error rows; None when there is no such run. Scored once per run and kept in the workspace
    (:mod:`cblue_core.runs.derived`): runs never change after they are stored. Data, so
    ``cache_data``: each caller gets its own copy and cannot change what another session reads."""
    from cblue_core.runs.derived import run_evaluation_kept

    return run_evaluation_kept(shared_workspace(path).cursor(), run_id)


def pick_run(ws: Workspace, key: str, label: str = "Run", param: str = Param.RUN):
    """A run selector that follows (and writes) the URL query parameter ``param``."""
    runs = ws.runs.all()
    if not runs:
        st.info("No runs yet. A run is a model's predictions on a stored split: on the Runs page, run a "
                "built-in model (every CBLUE 1.0 task has one, e.g. `cmeee` on CMeEE dev) or import a "
                "predictions file.", icon=":material/info:")
        st.page_link("pages/runs.py", label="Make a run on the Runs page", icon=":material/flag:")
        st.stop()
    by_id = {r.run_id: r for r in runs}
    url_state.seed(key, param, url_state.int_in(by_id))
    # Selectbox options are plain text (not Markdown): the run's name is shown as typed.
    run_id = st.selectbox(md(label), list(by_id), key=key, format_func=lambda i: run_label(by_id[i]))
    url_state.show({param: run_id})
    return by_id[run_id]


def overlap_warning(run) -> None:
    """The warning a run carries when its model was trained on some of the split's records."""
    from cblue_core.runs.record import overlap_sentence

    overlap = run.metrics.get("training_overlap")
    if overlap and overlap.get("examples"):
        st.warning(md(overlap_sentence(overlap, run.model)), icon=":material/warning:")


def run_label(run) -> str:
    name, value = run.headline
    scale = run.metrics.get("scale", 1)
    shown = "n/a" if value is None else (f"{value:.4f}" if scale == 1 else f"{value:.2f}")
    return f"#{run.run_id} {run.name} · {run.task} {run.split} · {name} {shown}"


def selected(event, what: str = "rows") -> list:
    """The rows or points a chart/table selection event holds (plain dicts from tests too)."""
    try:
        return list((event or {}).get("selection", {}).get(what, []) or [])
    except AttributeError:
        return []
