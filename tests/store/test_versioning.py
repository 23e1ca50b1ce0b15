"""Which files the app opens as workspaces: new, current, older (migrated), unmarked but ours
(adopted), anybody else's (refused untouched); and read-only mode."""
from __future__ import annotations

import duckdb
import pytest

from cblue_core.auth.roles import Role
from cblue_core.store.errors import WorkspaceError
from cblue_core.store.ingest import ingest_file
from cblue_core.store.responses import CachedResponse, cache_key
from cblue_core.store.schema import SCHEMA_VERSION
from cblue_core.store.training_sets import TRAINING_SET_TABLES
from cblue_core.store.versioning import APP_MARKER
from cblue_core.store.workspace import connect


def marker(path):
    con = duckdb.connect(str(path), read_only=True)
    try:
        return dict(con.execute("SELECT key, value FROM meta").fetchall())
    finally:
        con.close()


def file_bytes(path):
    return path.read_bytes()


SCHEMA_10_UNDO = ("DROP TABLE blind_datasets", "DROP TABLE own_events", "DROP SEQUENCE own_event_ids")
SCHEMA_9_UNDO = (*SCHEMA_10_UNDO, "DROP TABLE workspace_users", "DROP TABLE audit_events",
                 "DROP SEQUENCE audit_event_ids", "ALTER TABLE runs DROP COLUMN created_by",
                 "ALTER TABLE slices DROP COLUMN created_by")


def drop_schema_9(con) -> None:
    """What schema 9 and 10 added, taken away again: an older workspace's tables."""
    for sql in SCHEMA_9_UNDO:
        con.execute(sql)


def test_new_file_gets_the_marker(tmp_path):
    path = tmp_path / "new.duckdb"
    connect(path).close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_version_1_workspace_is_migrated_keeping_its_data(tmp_path, cmeee_file):
    path = tmp_path / "old.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    # what version 1 wrote: no app marker, schema_version 1
    ws.db.execute("DELETE FROM meta WHERE key = 'app'")
    ws.db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    ws.close()
    ws = connect(path)
    assert [d.records for d in ws.datasets.all()] == [3]
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def as_written_by(ws, path, version: int, *undo: str) -> None:
    """Make ``ws`` what schema ``version`` wrote (``undo``: drop what later versions added), close
    it, and check that read-only mode refuses it until it is migrated."""
    for sql in undo:
        ws.db.execute(sql)
    ws.db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(version)])
    ws.close()
    with pytest.raises(WorkspaceError, match=f"older schema {version}"):
        connect(path, read_only=True)


def test_version_2_workspace_gains_the_line_ending_column(tmp_path, cmeee_file):
    path = tmp_path / "v2.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    as_written_by(ws, path, 2, "ALTER TABLE datasets DROP COLUMN line_ending", "DROP TABLE default_datasets",
                  "DROP TABLE run_derived", "DROP TABLE response_cache",
                  *(f"DROP TABLE {table}" for table in TRAINING_SET_TABLES))
    ws = connect(path)
    did = ws.datasets.all()[0].dataset_id
    assert [d.records for d in ws.datasets.all()] == [3]
    assert ws.datasets.line_ending(did) is None          # unknown for a dataset ingested before
    ingest_file(ws, cmeee_file, split="train")         # new ingests record it
    assert [ws.datasets.line_ending(d.dataset_id) for d in ws.datasets.all()][-1] == "lf"
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_version_3_workspace_keeps_its_first_dataset_of_each_split_as_the_default(tmp_path, cmeee_file):
    path = tmp_path / "v3.duckdb"
    ws = connect(path)
    first = ingest_file(ws, cmeee_file).result.dataset_id
    other = cmeee_file.with_name("CMeEE_dev_upload.json")
    other.write_text(cmeee_file.read_text(encoding="utf-8")[:-2] + ", {\"text\": \"发热\", \"entities\": []}]",
                     encoding="utf-8")
    latest = ingest_file(ws, other, task="CMeEE", split="dev").result.dataset_id
    # what version 3 wrote: no default_datasets (the latest dataset of a split opened)
    ws.db.execute("DROP TABLE default_datasets")
    for table in TRAINING_SET_TABLES:       # schema 5's
        ws.db.execute(f"DROP TABLE {table}")
    ws.db.execute("DROP TABLE run_derived")
    ws.db.execute("DROP TABLE response_cache")
    ws.db.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    ws.close()
    ws = connect(path)
    assert latest != first and ws.datasets.find("CMeEE", "dev").dataset_id == first
    assert ws.db.rows("SELECT task, split, dataset_id FROM default_datasets") == [("CMeEE", "dev", first)]
    ws.close()
    assert marker(path)["schema_version"] == str(SCHEMA_VERSION)


def test_version_5_workspace_gains_the_derived_data_table(tmp_path, cmeee_file):
    path = tmp_path / "v5.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    did = ws.datasets.all()[0].dataset_id
    run = ws.runs.create(did, "r", source="test", predictions=[], metrics={})
    as_written_by(ws, path, 5, "DROP TABLE run_derived", "DROP TABLE response_cache")
    ws = connect(path)
    assert [r.run_id for r in ws.runs.all()] == [run] and ws.derived.kinds(run) == {}
    assert ws.derived.put(run, "buckets", "v", "[]")
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_version_6_workspace_gains_the_response_cache(tmp_path, cmeee_file):
    path = tmp_path / "v6.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    # what version 6 wrote: no response_cache table
    ws.db.execute("DROP TABLE response_cache")
    ws.db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    ws.close()
    with pytest.raises(WorkspaceError, match="older schema 6"):
        connect(path, read_only=True)
    ws = connect(path)
    assert [d.records for d in ws.datasets.all()] == [3]
    assert ws.responses.count() == 0
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_version_7_workspace_gains_the_provenance_of_annotation_events(tmp_path, cmeee_file):
    from cblue_core.annotation.model import Annotation
    from cblue_core.annotation.provenance import Provenance, Suggestion, SuggestionSource

    path = tmp_path / "v7.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    did = ws.datasets.all()[0].dataset_id
    gold, _ = ws.annotations.current(did, 0)
    old = ws.annotations.save(did, 0, Annotation(gold.spans[1:]), author="a", base_revision=0)
    # what version 7 wrote: annotation_events without provenance, no access tables
    as_written_by(ws, path, 7, "ALTER TABLE annotation_events DROP COLUMN provenance", *SCHEMA_9_UNDO)
    ws = connect(path)
    assert [(e.event_id, e.provenance) for e in ws.annotations.events(did)] == [(old.event_id, ())]
    prov = (Provenance(SuggestionSource("model", "m"), (Suggestion(gold.spans[0], 0.5),)),)
    ws.annotations.save(did, 0, gold, author="a", base_revision=1, provenance=prov)
    assert [e.provenance for e in ws.annotations.events(did)] == [(), prov]
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_version_8_workspace_gains_roles_and_the_audit_trail(tmp_path, cmeee_file):
    """Schema 9 adds workspace_users, audit_events and who stored each run and slice: a version 8
    file keeps its runs (their author unknown) and can store roles and audit events."""
    path = tmp_path / "v8.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    did = ws.datasets.all()[0].dataset_id
    # what version 8 wrote: no access tables, no created_by columns
    drop_schema_9(ws.db.con)
    ws.db.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    ws.db.execute("INSERT INTO runs (dataset_id, name, source, metrics) VALUES (?, 'old', 'import', '{}')", [did])
    ws.close()
    with pytest.raises(WorkspaceError, match="older schema 8"):
        connect(path, read_only=True)
    ws = connect(path)
    assert [(r.name, r.created_by) for r in ws.runs.all()] == [("old", None)]
    ws.users.set_role("ann", Role.ANNOTATOR)
    assert [(e.action, e.target) for e in ws.audit.events()] == [("role.set", "user ann")]
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_version_9_workspace_gains_blind_double_annotation(tmp_path, cmeee_file):
    """Schema 10 adds blind passes and own copies: a version 9 file keeps its gold events (no
    dataset in a blind pass) and can start a pass and keep an annotator's own copy."""
    from cblue_core.annotation.model import Annotation
    from cblue_core.auth.user import User

    path = tmp_path / "v9.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    did = ws.datasets.all()[0].dataset_id
    gold, _ = ws.annotations.current(did, 0)
    ws.annotations.save(did, 0, Annotation(gold.spans[1:]), base_revision=0)
    as_written_by(ws, path, 9, *SCHEMA_10_UNDO)
    ws = connect(path)
    assert ws.blind.setting(did) is None and ws.annotations.current(did, 0)[1] == 1
    ws.users.set_role("ann", Role.ANNOTATOR)
    ws.blind.set_blind(did, True)
    own = ws.acting_as(User("ann", "oidc")).own.editing(did)
    own.save(0, Annotation(gold.spans[:1]), reason="", base_revision=0)
    assert own.current(0) == (Annotation(gold.spans[:1]), 1) and ws.annotations.current(did, 0)[1] == 1
    ws.close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_unmarked_workspace_with_the_schema_9_tables_is_adopted_and_migrated(tmp_path):
    path = tmp_path / "unmarked_v9.duckdb"
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM meta")
    for sql in SCHEMA_10_UNDO:
        con.execute(sql)
    con.close()
    with pytest.raises(WorkspaceError, match="older schema 9"):
        connect(path, read_only=True)
    connect(path).close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_unmarked_workspace_with_our_tables_is_adopted(tmp_path):
    path = tmp_path / "unmarked.duckdb"
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM meta")
    con.close()
    connect(path).close()
    assert marker(path)["app"] == APP_MARKER


def test_unmarked_workspace_with_the_older_tables_is_adopted_and_migrated(tmp_path):
    """A workspace written before the marker existed has the tables of schema 1 (no
    datasets.line_ending, no default_datasets, no run_derived): adopted, then migrated."""
    path = tmp_path / "unmarked_v1.duckdb"
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM meta")
    con.execute("ALTER TABLE datasets DROP COLUMN line_ending")
    con.execute("DROP TABLE default_datasets")
    for table in TRAINING_SET_TABLES:       # schema 5's
        con.execute(f"DROP TABLE {table}")
    con.execute("DROP TABLE run_derived")
    con.execute("DROP TABLE response_cache")
    con.execute("ALTER TABLE annotation_events DROP COLUMN provenance")
    drop_schema_9(con)
    con.close()
    with pytest.raises(WorkspaceError, match="older schema 2"):
        connect(path, read_only=True)
    connect(path).close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}
    con = duckdb.connect(str(path), read_only=True)
    assert ("line_ending",) in con.execute("SELECT column_name FROM information_schema.columns"
                                           " WHERE table_name = 'datasets'").fetchall()
    con.close()


def test_another_programs_database_is_refused_untouched(tmp_path):
    path = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE invoices (id INTEGER, amount DOUBLE)")
    con.execute("INSERT INTO invoices VALUES (1, 9.5)")
    con.execute("CHECKPOINT")
    con.close()
    before = file_bytes(path)
    with pytest.raises(WorkspaceError, match="not a CBLUE Studio workspace.*invoices"):
        connect(path)
    assert file_bytes(path) == before
    con = duckdb.connect(str(path), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert tables == {"invoices"}


def test_a_foreign_marker_or_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "w.duckdb"
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 1)])
    con.close()
    with pytest.raises(WorkspaceError, match="newer CBLUE Studio"):
        connect(path)
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = 'other-app' WHERE key = 'app'")
    con.close()
    with pytest.raises(WorkspaceError, match="not a CBLUE Studio workspace"):
        connect(path)


def test_read_only_opens_an_existing_workspace_and_writes_nothing(tmp_path, cmeee_file):
    path = tmp_path / "w.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    ws.close()
    ro = connect(path, read_only=True)
    assert ro.read_only and ro.cursor().read_only
    assert [d.task for d in ro.datasets.all()] == ["CMeEE"]
    with pytest.raises(duckdb.Error):
        ro.slices.save("s", "idx > 0")
    ro.close()
    with pytest.raises(WorkspaceError, match="read-only mode opens an existing one only"):
        connect(tmp_path / "missing.duckdb", read_only=True)
    assert not (tmp_path / "missing.duckdb").exists()


def test_version_4_workspace_settles_the_training_sets_its_runs_recorded(tmp_path, cmeee_file):
    """Schema 5 stores each run's seen examples: a model run that recorded its overlap in its
    metrics, and an imported run (no model: unknown), are settled by the migration; a model run
    from before training records existed is left for later (its model folder)."""
    path = tmp_path / "v4.duckdb"
    ws = connect(path)
    ingest_file(ws, cmeee_file)
    did = ws.datasets.all()[0].dataset_id
    overlap = {"examples": 2, "share": 2 / 3, "indices": [0, 2],
               "metrics_without_overlap": {"headline": "f1", "metrics": {"f1": 0.5}, "examples": 1}}
    model = ws.runs.create(did, "m", source="model", model="cmeee", predictions=[],
                           metrics={"training_overlap": overlap})
    checkpoint = ws.runs.create(did, "c", source="model", model="ckpt", predictions=[],
                                metrics={"training_overlap": None})
    imported = ws.runs.create(did, "i", source="import", predictions=[], metrics={})
    older = ws.runs.create(did, "o", source="model", model="cmeee", predictions=[], metrics={})
    for table in (*TRAINING_SET_TABLES, "run_derived", "response_cache"):   # what version 4 had: none of these
        ws.db.execute(f"DROP TABLE {table}")
    ws.db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    ws.close()
    ws = connect(path)
    sets = ws.runs.training_sets()
    assert set(sets) == {model, checkpoint, imported}
    assert sets[model].declared and sets[model].seen_examples == 2 and sets[model].model == "cmeee"
    assert sets[model].unseen_metrics["metrics"]["f1"] == 0.5
    assert ws.runs.seen_indices([model]) == [0, 2]
    assert not sets[checkpoint].declared and not sets[imported].declared
    assert older not in sets
    ws.close()
    assert marker(path)["schema_version"] == str(SCHEMA_VERSION)


def test_unmarked_workspace_with_the_schema_4_tables_is_adopted_and_migrated(tmp_path):
    path = tmp_path / "unmarked_v4.duckdb"
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM meta")
    for table in (*TRAINING_SET_TABLES, "run_derived", "response_cache"):
        con.execute(f"DROP TABLE {table}")
    con.execute("ALTER TABLE annotation_events DROP COLUMN provenance")
    drop_schema_9(con)
    con.close()
    connect(path).close()
    assert marker(path) == {"app": APP_MARKER, "schema_version": str(SCHEMA_VERSION)}


def test_the_migration_to_schema_11_drops_answers_keyed_without_the_server(tmp_path):
    path = tmp_path / "v10.duckdb"
    ws = connect(path)
    old = cache_key("m", {"mode": "chat", "max_tokens": 8, "temperature": 0.0}, "问")
    ws.responses.put(old, "m", {"mode": "chat", "max_tokens": 8, "temperature": 0.0}, "问",
                     CachedResponse("旧答", "stop", 1, 1, 0.1))
    ws.close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
    con.close()
    ws = connect(path)
    assert ws.responses.count() == 0
    ws.close()
    con = duckdb.connect(str(path))
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("11",)
    con.close()
