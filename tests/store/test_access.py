"""Every public method of every store is declared as reading or writing, the declaration holds,
and every writing method checks the acting user's role (issue 22)."""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import sys
import textwrap
from types import FunctionType

import pytest

import cblue_core.store as store_package
from cblue_core.auth.roles import SYSTEM, PermissionDenied, Role, required
from cblue_core.auth.user import User
from cblue_core.store.access import Access, declaration, writes, writes_for_system
from cblue_core.store.audit import REFUSED, AuditFilter
from cblue_core.store.database import Database
from cblue_core.store.ingest import ingest_file
from cblue_core.store.workspace import connect

WRITING_SQL = re.compile(r"\b(INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|COPY|ATTACH|TRUNCATE)\b")
WRITING_CALLS = {"insert_arrow", "transaction", "executemany", "register", "before_commit"}


def store_classes() -> list[type]:
    out = []
    for info in pkgutil.iter_modules(store_package.__path__):
        module = importlib.import_module(f"cblue_core.store.{info.name}")
        out += [c for name, c in vars(module).items()
                if inspect.isclass(c) and name.endswith("Store") and c.__module__ == module.__name__]
    return sorted(out, key=lambda c: c.__name__)


STORES = store_classes()
WRITERS = {name for cls in STORES for name, m in vars(cls).items() if declaration(m)}


def public_methods(cls: type) -> list[str]:
    return sorted(n for n, m in vars(cls).items() if not n.startswith("_") and inspect.isfunction(m))


def undeclared(cls: type) -> list[str]:
    reads = set(getattr(cls, "READS", ()))
    return [n for n in public_methods(cls) if n not in reads and declaration(vars(cls)[n]) is None]


def writes_reached(func: FunctionType, cls: type | None, seen: set[object] | None = None) -> list[str]:
    """What in ``func`` (and the store code it calls) writes: SQL that changes the database, a
    transaction, an Arrow insert, or a call of a store method declared as writing."""
    seen = set() if seen is None else seen
    if func in seen:
        return []
    seen.add(func)
    fn = ast.parse(textwrap.dedent(inspect.getsource(func))).body[0]
    module = sys.modules[func.__module__]
    doc = ast.get_docstring(fn, clean=False)   # type: ignore[arg-type]
    found: list[str] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value != doc:
            found += [f"{func.__qualname__}: {m.group(0)}" for m in WRITING_SQL.finditer(node.value)]
        elif isinstance(node, ast.Name) and isinstance(getattr(module, node.id, None), str):
            found += [f"{func.__qualname__}: {node.id} holds {m.group(0)}"
                      for m in WRITING_SQL.finditer(getattr(module, node.id))]
        elif isinstance(node, ast.Attribute):
            if node.attr in WRITING_CALLS:
                found.append(f"{func.__qualname__}: .{node.attr}")
            elif (isinstance(node.value, ast.Name) and node.value.id == "self" and cls is not None
                  and inspect.isfunction(getattr(cls, node.attr, None))):
                target = getattr(cls, node.attr)
                found += ([f"{func.__qualname__}: calls the writer {node.attr}"] if declaration(target)
                          else writes_reached(target, cls, seen))
            elif isinstance(node.value, ast.Attribute) and node.attr in WRITERS:
                found.append(f"{func.__qualname__}: calls another store's writer {node.attr}")
            elif isinstance(node.value, ast.Name):
                other = getattr(getattr(module, node.value.id, None), node.attr, None)
                if inspect.isfunction(other) and other.__module__.startswith("cblue_core.store"):
                    found += writes_reached(other, None, seen)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            other = getattr(module, node.func.id, None)
            if inspect.isfunction(other) and other.__module__.startswith("cblue_core.store"):
                found += writes_reached(other, None, seen)
    return found


def test_the_stores_are_found():
    names = {c.__name__ for c in STORES}
    assert {"DatasetStore", "RunStore", "AnnotationStore", "SliceStore", "UserStore", "AuditStore",
            "ResponseStore", "DerivedStore", "ResourceStore"} <= names


@pytest.mark.parametrize("cls", STORES, ids=lambda c: c.__name__)
def test_every_public_method_is_declared_reading_or_writing(cls):
    assert undeclared(cls) == [], f"{cls.__name__}: declare these with @writes or in READS"
    stale = sorted(set(getattr(cls, "READS", ())) - set(public_methods(cls)))
    assert stale == [], f"{cls.__name__}.READS names no method: {stale}"


@pytest.mark.parametrize("cls", STORES, ids=lambda c: c.__name__)
def test_reading_methods_reach_no_write(cls):
    found = {name: writes_reached(vars(cls)[name], cls) for name in getattr(cls, "READS", ())}
    assert {n: f for n, f in found.items() if f} == {}


class _FakeStore:
    """What the checks must catch: a new writer nobody declared, and a "reading" method that writes."""

    READS = ("count", "sneaky")

    def __init__(self, db: Database) -> None:
        self.db = db
        self.access = Access()

    def count(self) -> int:
        return int(self.db.scalar("SELECT count(*) FROM slices"))

    def sneaky(self) -> None:
        self._helper()

    def _helper(self) -> None:
        self.db.execute("DELETE FROM slices")

    def wipe(self) -> None:
        self.db.execute("DELETE FROM runs")

    @writes("slice.delete", target=lambda a: "all")
    def declared(self) -> None:
        with self.db.transaction():
            self.db.execute("DELETE FROM slices")


def test_the_checks_catch_an_undeclared_writer_and_a_writing_reader():
    assert undeclared(_FakeStore) == ["wipe"]
    assert writes_reached(vars(_FakeStore)["count"], _FakeStore) == []
    assert writes_reached(vars(_FakeStore)["sneaky"], _FakeStore) == ["_FakeStore._helper: DELETE"]


# ---------------------------------------------------------------------------- the checks at work

def _call_with_nothing(ws_store, name):
    """Call a writer with None for every argument: the role check comes before the body."""
    method = getattr(ws_store, name)
    params = [p for p in inspect.signature(method).parameters.values() if p.default is p.empty]
    positional = [None for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    keywords = {p.name: None for p in params if p.kind is p.KEYWORD_ONLY}
    return method(*positional, **keywords)


def _guarded_writers(memory_ws):
    for attr, store in vars(memory_ws).items():
        for name, method in vars(type(store)).items() if hasattr(store, "db") else ():
            found = declaration(method)
            if found and required(found.action) is not SYSTEM:
                yield attr, name, found.action


def test_every_guarded_writer_refuses_nobody_and_a_viewer_and_records_it(memory_ws):
    writers = list(_guarded_writers(memory_ws))
    assert len(writers) >= 14
    for bound in (memory_ws.acting_as(None), memory_ws.acting_as(User("vic", "proxy"))):
        for attr, name, action in writers:
            with pytest.raises(PermissionDenied, match=action):
                _call_with_nothing(getattr(bound, attr), name)
    refused = memory_ws.audit.events(AuditFilter(outcome=REFUSED, limit=1000))
    assert sorted({e.action for e in refused}) == sorted({a for _, _, a in writers})
    assert {e.user for e in refused} == {None, "vic"}
    assert memory_ws.audit.events(AuditFilter(outcome="done")) == []


def test_a_refusal_says_who_what_and_the_role_needed(memory_ws):
    memory_ws.users.set_role("ann", Role.ANNOTATOR)
    with pytest.raises(PermissionDenied) as caught:
        memory_ws.acting_as(User("ann", "proxy")).slices.save("x", "idx > 0")
    assert str(caught.value) == "slice.save refused for ann (annotator): it needs the admin role"
    assert memory_ws.slices.all() == []


def test_a_write_and_its_audit_event_are_committed_together(memory_ws, cmeee_file):
    ingest_file(memory_ws, cmeee_file)
    did = memory_ws.datasets.all()[0].dataset_id
    admin = memory_ws.acting_as(User("ada", "oidc"))
    memory_ws.users.set_role("ada", Role.ADMIN)

    class Boom(Exception):
        pass

    def fail(db):
        raise Boom
    admin.db.before_commit(fail)      # a failure inside the commit: neither the run nor its event stays
    with pytest.raises(Boom):
        admin.runs.create(did, "r", source="test", predictions=[], metrics={})
    assert memory_ws.runs.all() == [] and memory_ws.audit.events(AuditFilter(action="run")) == []
    run = admin.runs.create(did, "r", source="test", predictions=[], metrics={})
    assert [(r.run_id, r.created_by) for r in memory_ws.runs.all()] == [(run, "ada")]
    [event] = memory_ws.audit.events(AuditFilter(action="run.create"))
    assert (event.user, event.source, event.outcome, event.target) == ("ada", "oidc", "done", f"dataset {did}")


def test_a_refusal_is_kept_when_the_caller_rolls_back(memory_ws):
    viewer = memory_ws.acting_as(User("vic", "proxy"))
    viewer.db.execute("BEGIN TRANSACTION")
    with pytest.raises(PermissionDenied):
        viewer.slices.delete("x")
    viewer.db.execute("ROLLBACK")
    assert [e.action for e in memory_ws.audit.events()] == ["slice.delete"]


def test_roles_apply_at_once_and_cursors_keep_their_actor(memory_ws):
    cur = memory_ws.cursor(actor=User("cur", "proxy"))
    assert cur.role() == Role.VIEWER and cur.cursor().actor == User("cur", "proxy")
    memory_ws.users.set_role("cur", Role.ADMIN)
    cur.slices.save("long", "text_length > 10")
    assert [(s.name, s.created_by) for s in memory_ws.slices.all()] == [("long", "cur")]
    memory_ws.users.remove("cur")
    with pytest.raises(PermissionDenied):
        cur.slices.delete("long")


def test_admins_named_by_the_environment(monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_ADMINS", " boss , other")
    memory_ws = connect(":memory:", actor=User("boss", "proxy"))
    assert memory_ws.role() == Role.ADMIN
    assert connect(":memory:", actor=None).role() is None


def test_declarations_are_checked_when_made():
    with pytest.raises(ValueError, match="derived.put is a system write"):
        writes("derived.put", target=lambda a: "")
    with pytest.raises(ValueError, match="run.delete needs a role"):
        writes_for_system("run.delete")
    with pytest.raises(KeyError, match="undeclared action 'gold.burn'"):
        writes("gold.burn", target=lambda a: "")
