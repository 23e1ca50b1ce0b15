"""The response cache of LLM endpoints: one row per answered prompt, keyed by (endpoint model,
settings, prompt), the settings being the endpoint's public address and everything that changes
what is sent or kept (``EndpointConfig.settings``); its table ``response_cache`` is declared in
:mod:`.schema`.

A row is written (and committed) as soon as its answer arrives and before anything uses it, so a
run killed at any point loses at most the answers in flight; a rerun finds the rest here. Failed
requests are not stored: a rerun tries them again. The key is never kept, nor a user or
password written into the address.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from .access import Access, writes, writes_for_system
from .database import Database


@dataclass(frozen=True)
class CachedResponse:
    """One answer as the endpoint gave it, with its cost."""

    answer: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float


def cache_key(model: str, settings: Mapping[str, Any], prompt: str) -> str:
    """The same model, settings and prompt give the same key in any process."""
    blob = json.dumps([model, dict(settings), prompt], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseStore:
    READS = ("get_many", "count")

    def __init__(self, db: Database, access: Access | None = None) -> None:
        self.db = db
        self.access = access or Access()

    def get_many(self, keys: Iterable[str]) -> dict[str, CachedResponse]:
        """The stored answers among ``keys`` (the others are absent from the result)."""
        wanted = sorted(set(keys))
        if not wanted:
            return {}
        rows = self.db.rows(
            "SELECT cache_key, answer, finish_reason, prompt_tokens, completion_tokens, latency_s"
            " FROM response_cache WHERE cache_key IN (SELECT unnest(?::VARCHAR[]))", [wanted])
        return {str(k): CachedResponse(str(a), None if f is None else str(f), p, c, float(t or 0.0))
                for k, a, f, p, c, t in rows}

    @writes_for_system("responses.put")
    def put(self, key: str, model: str, settings: Mapping[str, Any], prompt: str,
            response: CachedResponse) -> None:
        """Store one answer; committed when this returns (DuckDB autocommits a statement). A key
        already stored (another session answered the same prompt meanwhile) keeps its answer."""
        try:
            # A plain INSERT: DuckDB's upserts (OR REPLACE, ON CONFLICT) cost ten times as much
            # per row, and a run only puts keys it did not find.
            self.db.execute(
                "INSERT INTO response_cache (cache_key, model, settings, prompt, answer, finish_reason,"
                " prompt_tokens, completion_tokens, latency_s) VALUES (?,?,?,?,?,?,?,?,?)",
                [key, model, json.dumps(dict(settings), sort_keys=True), prompt, response.answer,
                 response.finish_reason, response.prompt_tokens, response.completion_tokens,
                 response.latency_s])
        except duckdb.ConstraintException:
            pass

    @writes_for_system("responses.put")
    def put_many(self, rows: Sequence[tuple[str, str, Mapping[str, Any], str, CachedResponse]]) -> None:
        """Store several answers (key, model, settings, prompt, response) in one commit; a key
        already stored keeps its answer."""
        if not rows:
            return
        values = [[key, model, json.dumps(dict(settings), sort_keys=True), prompt, r.answer, r.finish_reason,
                   r.prompt_tokens, r.completion_tokens, r.latency_s] for key, model, settings, prompt, r in rows]
        try:
            with self.db.transaction():
                self.db.con.executemany(
                    "INSERT INTO response_cache (cache_key, model, settings, prompt, answer, finish_reason,"
                    " prompt_tokens, completion_tokens, latency_s) VALUES (?,?,?,?,?,?,?,?,?)", values)
        except duckdb.ConstraintException:   # rolled back: one at a time, skipping the stored keys
            for row in rows:
                self.put(*row)

    def count(self, model: str | None = None) -> int:
        if model is None:
            return int(self.db.scalar("SELECT count(*) FROM response_cache"))
        return int(self.db.scalar("SELECT count(*) FROM response_cache WHERE model = ?", [model]))

    @writes("responses.clear", target=lambda a: f"responses of {a.get('model') or 'every model'}")
    def clear(self, model: str | None = None) -> int:
        """Forget stored answers (all, or one model's); how many were removed."""
        with self.db.transaction():
            n = self.count(model)
            if model is None:
                self.db.execute("DELETE FROM response_cache")
            else:
                self.db.execute("DELETE FROM response_cache WHERE model = ?", [model])
        return n
