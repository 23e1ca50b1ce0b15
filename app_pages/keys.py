"""Every URL query parameter and widget/session-state key of the app, declared once.

Pages name keys through these classes instead of bare strings, so that a key is spelled in one
place, two pages never collide by accident, and tests and benchmarks can drive a widget by the
same name the page uses. A class per page; keys that depend on an item (one per example or
row) are functions. The string values are part of the app's interface (tests, benchmarks and
deep links use them): change them only together with those.
"""
from __future__ import annotations


class Param:
    """URL query parameters (deep links): ``/annotate?task=CMeEE&split=dev&example=3``."""

    TASK = "task"
    SPLIT = "split"
    EXAMPLE = "example"
    RUN = "run"              # Errors; Compare's run A is ``a``
    RUN_A = "a"
    RUN_B = "b"
    TAB = "tab"              # Errors: a tab's slug
    SLICE = "slice"          # Errors: a saved slice's name
    DEMO = "demo"            # Live: 1 for the clinicians' demo


class Sidebar:
    """The sidebar every page shares (kept for the session)."""

    DB_PATH = "db_path"
    DB_IN_USE = "db_in_use"  # (what the field held, the file this session then opened)
    DEVICE = "device"
    MODEL_DIRS = "model_dirs"
    SESSION_ID = "_session_id"      # names the session (not a widget): its cursors run one user filter at a
                                    # time, and the workspace files it created are counted


class SignIn:
    """The sign-in page and the sidebar's Sign out (OIDC): a visitor is named by the proxy or the
    token, never by a box they type into (:mod:`app_pages.identity`)."""

    SIGN_IN = "sign_in"
    SIGN_OUT = "sign_out"


class Datasets:
    TASK = "ds_task"
    SPLIT = "ds_split"
    EXAMPLE = "ds_example"
    UPLOAD = "ds_upload"
    UPLOAD_TASK = "ds_upload_task"
    UPLOAD_SPLIT = "ds_upload_split"
    STORE = "ds_store"
    CONTAINS = "ds_q"
    REGEX = "ds_re"
    NESTED = "ds_nested"
    TYPES = "ds_types"
    SQL = "ds_sql"
    PAGE = "ds_page"
    TABLE = "ds_table"
    CHARTS = "ds_charts"                   # the summary charts' expander (built only while open)
    LAST_SELECTION = "ds_last_selection"
    PREV = "ds_prev"
    NEXT = "ds_next"
    VALIDATED_UPLOAD = "_validated_upload"   # the last upload's validation (app_pages.uploads)
    VERSION = "ds_version"                 # which dataset of the task split (when it has several)
    MAKE_DEFAULT = "ds_make_default"       # admin: the version shown becomes everyone's default
    OPENED = "_ds_opened"                  # this session's version per task split (datasets.versions)

    @staticmethod
    def chart(n: int) -> str:
        return f"ds_chart_{n}"


class Live:
    DEMO = "live_demo"
    TASK = "live_task"
    MODEL = "live_model"
    SOURCE = "live_source"
    TEXT = "live_text"
    TEXT2 = "live_text2"
    EXAMPLE = "live_example"
    CONFIRM = "live_confirm"
    RUN = "live_run"


class Runs:
    IMPORT_OPEN = "runs_import_open"
    IMPORT_FIRST = "runs_import_first"     # the import expander starts open in an empty workspace
    UPLOAD = "runs_upload"
    NAME = "runs_name"
    ALLOW_MISSING = "runs_allow_missing"
    IMPORT = "runs_import"
    IMPORT_SPLIT = "runs_dataset"
    MODEL_SPLIT = "runs_model_dataset"
    MODEL = "runs_model"
    MODEL_BATCH = "runs_model_batch"
    MODEL_NAME = "runs_model_name"
    MODEL_GO = "runs_model_go"
    ENDPOINT = "runs_endpoint"             # an LLM endpoint run (app_pages/runs_endpoint.py)
    ENDPOINT_SPLIT = "runs_endpoint_dataset"
    ENDPOINT_LIMIT = "runs_endpoint_limit"
    ENDPOINT_NAME = "runs_endpoint_name"
    ENDPOINT_GO = "runs_endpoint_go"
    SELECTED = "runs_selected"
    OPEN_ERRORS = "runs_open_errors"
    EXPORT = "runs_export"
    DELETE = "runs_delete"


class Errors:
    RUN = "err_run"
    TAB = "err_tab"
    FILTER = "err_filter"                  # which error rows a click selected
    EXAMPLE = "err_example"                # the example shown under the rows
    ROWS = "err_rows"
    ROWS_CSV = "err_rows_csv"              # the whole selection as a CSV download
    SEEN = "err_seen"                      # Training records: all / unseen only / seen only
    SEEN_ACTIVE = "err_seen_active"        # what that filter means for the run shown (None: all)
    NORMALISE = "err_norm"
    TOP_K = "err_top_k"                    # how many labels the matrix shows before "other"
    TAXONOMY = "err_tax"
    TAXONOMY_CORRECT = "err_tax_correct"   # the button that lists the correct rows
    TAG = "err_tag"
    SLICE = "err_slice"
    SLICE_NAME = "err_slice_name"
    SLICE_PREDICATE = "err_slice_pred"
    SLICE_SAVE = "err_slice_save"
    GOLD_VERSION = "err_gold_version"

    @staticmethod
    def matrix(version: str) -> str:
        """The matrix of one view (run, training-records filter, normalised, top k): a click on
        one view's grid ("row,column") is no click on another's, whose cells are elsewhere."""
        return f"err_cm::{version}"


class Compare:
    RUN_A = "cmp_a"
    RUN_B = "cmp_b"
    LIST = "cmp_list"
    TABLE = "cmp_table"
    PAGE = "cmp_page"
    SEEN = "cmp_seen"                      # Training records: all / unseen only / seen only


class Annotate:
    """The Annotate page: widgets, and the session state it keeps between reruns."""

    # selection and navigation
    TASK = "ann_task"
    SPLIT = "ann_split"
    EXAMPLE = "ann_example"
    TAB = "ann_tab"
    BIG = "ann_big"
    PREV = "ann_prev"
    NEXT = "ann_next"
    LINKED = "ann_linked"              # the deep link was read into the widgets
    DATASET = "ann_dataset"            # the dataset shown last (a new one starts at example 0)
    GOTO = "ann_goto"                  # (example, tab) to open on the next run

    # the edit
    EDITOR = "ann_editor"              # one span editor for every example: its frame keeps focus
    EDITOR_NONCE = "ann_editor_nonce"  # the editor action handled last
    REASON = "ann_reason"
    SAVE = "ann_save"
    DISCARD = "ann_discard"
    UNDO_MINE = "ann_undo_mine"
    KEEP_MINE = "ann_keep_mine"
    KEEP_THEIRS = "ann_keep_theirs"
    ICD_QUERY = "ann_icd_q"

    # session state
    DRAFTS = "ann_drafts"
    CONFLICTS = "ann_conflicts"
    FLASH = "ann_flash"
    EDITOR_NOTICES = "ann_editor_notices"   # per example: the last save's outcome, for the span editor
    GEN = "ann_gen"
    BROWSER = "ann_browser"
    DRAFT_CHECKED = "ann_draft_checked"
    MENTIONS = "ann_mentions"          # CMeIE mentions marked per example (session only)
    FREE_MENTIONS = "ann_free_mentions"
    SUGGEST_SOURCE = "ann_suggest_source"   # where the Edit tab's suggestions come from: "run:ID" or "model:NAME"
    SUGGESTED = "ann_suggested"        # per (source, example, revision): the Suggestions offered
    SUGGEST_REJECTED = "ann_suggest_rejected"   # per example: identities of suggestions rejected
    SUGGEST_ALL_TRIPLES = "ann_suggest_all_triples"
    SUGGEST_USE_LABEL = "ann_suggest_use_label"

    # Versions
    VERSION_NAME = "ann_ver_name"
    VERSION_CREATE = "ann_ver_create"
    DIFF_FROM = "ann_diff_a"
    DIFF_TO = "ann_diff_b"
    DIFF_TABLE = "ann_diff_table"
    DIFF_PICK = "ann_diff_pick"
    DIFF_OPEN = "ann_diff_open"

    # Review queue
    QUEUE_LAST = "ann_rq_last"
    QUEUE_KIND = "ann_rq_kind"          # which queue: the review reasons, or a run's model queue
    QUEUE_MEASURE = "ann_rq_measure"    # the uncertainty of class probabilities: margin or entropy
    QUEUE_OPEN = "ann_rq_open"

    # Agreement
    ANNOTATOR_A = "ann_ag_a"
    ANNOTATOR_B = "ann_ag_b"
    ADJ_EXAMPLE = "ann_adj_idx"
    ADJ_SEEN = "ann_adj_seen"          # (example, revision) the adjudicator is shown
    ADJ_RELOAD = "ann_adj_reload"
    ADJ_SAVE = "ann_adj_save"
    BLIND_SWITCH = "ann_blind_switch"  # a curator starts or ends the split's blind pass

    # Re-score
    RESCORE_RUN = "ann_rs_run"
    RESCORE_BASE = "ann_rs_base"
    RESCORE_TARGET = "ann_rs_version"
    RESCORE_PICK = "ann_rs_pick"
    RESCORE_OPEN = "ann_rs_open"

    # Export
    EXPORT_VERSION = "ann_exp_version"

    @staticmethod
    def export_button(n: int) -> str:
        return f"ann_exp_{n}"

    @staticmethod
    def queue_table(queue: str) -> str:
        """One review table per queue: a row picked in one is not a pick in another."""
        return f"ann_rq_table::{queue}"

    @staticmethod
    def queue_pick(queue: str) -> str:
        """One "Item" picker per queue: with one key for all, the browser kept showing the first
        queue's item labels after another queue was chosen (the options, 0..99, did not change)."""
        return f"ann_rq_pick::{queue}"

    @staticmethod
    def revert(event_id: int) -> str:
        return f"ann_revert::{event_id}"

    @staticmethod
    def label(doc: str, gen: int) -> str:
        return f"ann_label::{doc}::{gen}"

    @staticmethod
    def terms(doc: str, gen: int, query_hash: int) -> str:
        return f"ann_terms::{doc}::{gen}::{query_hash}"

    @staticmethod
    def free_text(doc: str) -> str:
        return f"ann_free_text::{doc}"

    @staticmethod
    def free_type(doc: str) -> str:
        return f"ann_free_type::{doc}"

    @staticmethod
    def free_add(doc: str) -> str:
        return f"ann_free_add::{doc}"

    @staticmethod
    def subject(doc: str, gen: int) -> str:
        return f"ann_subj::{doc}::{gen}"

    @staticmethod
    def object(doc: str, gen: int) -> str:
        return f"ann_obj::{doc}::{gen}"

    @staticmethod
    def predicate(doc: str, gen: int) -> str:
        return f"ann_pred::{doc}::{gen}"

    @staticmethod
    def add_triple(doc: str) -> str:
        return f"ann_add_triple::{doc}"

    @staticmethod
    def remove_triple(doc: str, gen: int, i: int) -> str:
        return f"ann_trm::{doc}::{gen}::{i}"

    @staticmethod
    def suggested_triple(doc: str, n: int, accept: bool) -> str:
        """The Accept (``accept``) or Reject button of the ``n``-th suggested triple."""
        return f"ann_sug_{'ok' if accept else 'no'}::{doc}::{n}"

    @staticmethod
    def adj_label(example: int) -> str:
        return f"ann_adj_label::{example}"

    @staticmethod
    def adj_item(example: int, n: int) -> str:
        return f"ann_adj::{example}::{n}"


class Admin:
    USER_NAME = "adm_user_name"
    USER_ROLE = "adm_user_role"
    SET_ROLE = "adm_set_role"
    REMOVE_USER = "adm_remove_user"
    REMOVE = "adm_remove"
    AUDIT_USER = "adm_audit_user"
    AUDIT_ACTION = "adm_audit_action"
    AUDIT_OUTCOME = "adm_audit_outcome"
    AUDIT_DATES = "adm_audit_dates"
