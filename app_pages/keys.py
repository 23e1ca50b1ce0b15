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
    RUN = "run"
    TAB = "tab"


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
    GEN = "ann_gen"
    BROWSER = "ann_browser"
    DRAFT_CHECKED = "ann_draft_checked"
    MENTIONS = "ann_mentions"          # CMeIE mentions marked per example (session only)
    FREE_MENTIONS = "ann_free_mentions"

    # Versions
    VERSION_NAME = "ann_ver_name"
    VERSION_CREATE = "ann_ver_create"
    DIFF_FROM = "ann_diff_a"
    DIFF_TO = "ann_diff_b"
    DIFF_TABLE = "ann_diff_table"
    DIFF_PICK = "ann_diff_pick"
    DIFF_OPEN = "ann_diff_open"

    # Review queue
    QUEUE_TABLE = "ann_rq_table"
    QUEUE_LAST = "ann_rq_last"
    QUEUE_PICK = "ann_rq_pick"
    QUEUE_OPEN = "ann_rq_open"

    # Agreement
    ANNOTATOR_A = "ann_ag_a"
    ANNOTATOR_B = "ann_ag_b"
    ADJ_EXAMPLE = "ann_adj_idx"
    ADJ_SEEN = "ann_adj_seen"          # (example, revision) the adjudicator is shown
    ADJ_RELOAD = "ann_adj_reload"
    ADJ_SAVE = "ann_adj_save"

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
    def adj_label(example: int) -> str:
        return f"ann_adj_label::{example}"

    @staticmethod
    def adj_item(example: int, n: int) -> str:
        return f"ann_adj::{example}::{n}"
