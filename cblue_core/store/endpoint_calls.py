"""The calls a visitor makes to an LLM endpoint from the Live page, kept in the audit trail.

A Live answer is not cached and changes nothing in the workspace, but it is spent from the
endpoint's operator (money or GPU time) on a visitor's behalf: each one needs a role and
leaves an audit event saying who asked which endpoint and how many tokens it cost. The event
is the whole record, so :meth:`EndpointCallStore.record` writes nothing else.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .access import Access, writes
from .database import Database

ASK = "endpoint.ask"


def _tokens(value: Any) -> str:
    return "?" if value is None else str(value)


def _detail(a: Mapping[str, Any]) -> str:
    return (f"model {a['model']}; prompt_tokens {_tokens(a['prompt_tokens'])}; completion_tokens "
            f"{_tokens(a['completion_tokens'])}; {a['chars']} characters; {a['ended']}")


class EndpointCallStore:
    READS = ()

    def __init__(self, db: Database, access: Access) -> None:
        self.db = db
        self.access = access

    @writes(ASK, target=lambda a: str(a["endpoint"]), detail=_detail)
    def record(self, endpoint: str, model: str, prompt_tokens: int | None, completion_tokens: int | None,
               chars: int, ended: str) -> None:
        """One endpoint call made for the acting user (``endpoint``: its ``endpoint:NAME``; a count
        None when the endpoint did not say), kept as its audit event; refused, and the refusal
        kept, when the user's role does not allow asking an endpoint."""
