"""KUAKE-IR's TSV records: a query with its relevant documents, and a submission's ranked ones."""
from __future__ import annotations

from typing import ClassVar

from ...records import Example
from ...tasks import TaskSpec
from ..offsets import INCLUSIVE
from .base import Codec, DecodeContext, RecordError


class RetrievalCodec(Codec):
    """KUAKE-IR (our documented TSV shape): ``query_id<TAB>query[<TAB>doc_id,doc_id...]``."""

    GOLD: ClassVar[str | None] = "column 3 (relevant doc ids)"

    def carries_gold(self, rec: object, task: TaskSpec) -> bool:
        return isinstance(rec, list) and len(rec) > 2

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        cols = _columns(rec)
        if len(cols) < 2:
            raise RecordError(None, "fewer than 2 tab-separated columns", "query_id, query[, doc ids]")
        qid, query = cols[0].strip(), cols[1].strip()
        docs = [d.strip() for d in cols[2].split(",") if d.strip()] if len(cols) > 2 else []
        return Example(key=qid, index=index, text=query, terms=docs, raw=rec)

    def encode(self, ex: Example, task: TaskSpec, convention: str = INCLUSIVE) -> str:
        return f"{ex.key}\t{','.join(ex.terms)}"

    def key(self, rec: object, task: TaskSpec) -> str:
        cols = _columns(rec)
        return cols[0].strip() if cols else ""


def _columns(rec: object) -> list[str]:
    """A TSV record's columns; nothing for anything else (a stored record comes back from JSON)."""
    return [str(c) for c in rec] if isinstance(rec, list) else []


class RetrievalPredictionCodec(RetrievalCodec):
    """KUAKE-IR submission: ``query_id<TAB>doc1,doc2,...,doc10`` (ranked)."""

    GOLD = None

    def carries_gold(self, rec: object, task: TaskSpec) -> bool:
        return True

    def decode(self, rec: object, index: int, ctx: DecodeContext) -> Example:
        cols = _columns(rec)
        if len(cols) < 2:
            raise RecordError(None, "fewer than 2 tab-separated columns", "query_id and ranked doc ids")
        docs = [d.strip() for d in cols[1].split(",") if d.strip()]
        if len(docs) != 10:
            ctx.warn(f"{len(docs)} doc ids", field="column 2", expected="exactly 10 comma-separated doc ids",
                     code="format")
        return Example(key=cols[0].strip(), index=index, terms=docs, raw=rec)

