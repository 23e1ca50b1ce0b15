"""The workspace schema. Every table and column the product stores is declared here."""

# 1: the first schema; 2: the marker names the application (see versioning.py);
# 3: datasets.line_ending (the line ending of the ingested file, written back by exports);
# 4: default_datasets (which dataset of a task split everyone opens);
# 5: run_training_sets and run_seen_examples (which examples of a run its model was trained on);
# 6: run_derived (what the Errors page derives from a whole run, kept);
# 7: response_cache (answers of LLM endpoints, store/responses.py);
# 8: annotation_events.provenance (the suggestions an edit accepted, store/annotations.py);
# 9: workspace_users and audit_events (roles and the audit trail), runs.created_by, slices.created_by;
# 10: blind_datasets and own_events (blind double annotation, store/blind_pass.py, store/own_copies.py).
SCHEMA_VERSION = 11

# What pages derive from a whole run (bucket scores, per-example statistics...), computed once
# and kept: a run never changes once stored, and deriving took seconds (the train split read,
# the run re-scored). `version` names the code and inputs that produced the payload, so a
# change of either makes the row stale (read as absent, then replaced). `payload` is typed
# JSON (cblue_core.io.typed_json). Deleting a run deletes its rows.
RUN_DERIVED_DDL = """
CREATE TABLE IF NOT EXISTS run_derived (
    run_id INTEGER NOT NULL,
    kind VARCHAR NOT NULL,
    version VARCHAR NOT NULL,
    payload VARCHAR NOT NULL,
    created_at TIMESTAMP DEFAULT current_timestamp
);
"""

DDL = """
CREATE SEQUENCE IF NOT EXISTS dataset_ids START 1;
CREATE SEQUENCE IF NOT EXISTS run_ids START 1;

CREATE TABLE IF NOT EXISTS meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR
);

-- One row per ingested file (a task split). sha256 detects re-ingesting the same content.
-- line_ending: the file's line ending ('lf', 'crlf' or 'cr'; NULL when unknown or none), last
-- because version 3 added it to existing tables (ALTER TABLE appends).
CREATE TABLE IF NOT EXISTS datasets (
    dataset_id INTEGER PRIMARY KEY DEFAULT nextval('dataset_ids'),
    task VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    source VARCHAR,
    sha256 VARCHAR NOT NULL,
    container VARCHAR,
    offset_convention VARCHAR,
    records INTEGER,
    annotations INTEGER,
    report JSON,
    created_at TIMESTAMP DEFAULT current_timestamp,
    line_ending VARCHAR,
    UNIQUE (task, split, sha256)
);

-- One row per record. `raw` is the record exactly as read (JSON text): an export of untouched
-- records writes it back, and the typed Example is decoded from it by the task's codec.
-- No primary key: DuckDB's zone maps serve the (dataset_id, idx) lookups, and an ART index
-- would double the ingest time of a 60k-record file.
CREATE TABLE IF NOT EXISTS examples (
    dataset_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    key VARCHAR,
    text VARCHAR,
    text2 VARCHAR,
    label VARCHAR,
    target VARCHAR,
    sub_task VARCHAR,
    types VARCHAR[],
    n_spans INTEGER,
    n_triples INTEGER,
    n_terms INTEGER,
    n_events INTEGER,
    n_turns INTEGER,
    nesting_depth INTEGER,
    text_length INTEGER,
    raw VARCHAR
);

-- Gold annotations as rows, for SQL filters, statistics and (later) versioned edits.
-- version 0 is the file as ingested; annotation events add later versions.
CREATE TABLE IF NOT EXISTS gold_spans (
    dataset_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    turn INTEGER NOT NULL,          -- -1 when the span is on the example text itself
    start_pos INTEGER NOT NULL,     -- half-open [start_pos, end_pos)
    end_pos INTEGER NOT NULL,
    type VARCHAR NOT NULL,
    mention VARCHAR,
    version INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS gold_triples (
    dataset_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    subject VARCHAR,
    predicate VARCHAR,
    object VARCHAR,
    subject_type VARCHAR,
    object_type VARCHAR,
    combined BOOLEAN,
    version INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS gold_terms (
    dataset_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    term VARCHAR NOT NULL,
    version INTEGER NOT NULL DEFAULT 0
);

-- Reference lists: ICD-10 terms (CHIP-CDN), CTC categories, CMeIE schemas.
CREATE TABLE IF NOT EXISTS resources (
    kind VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL,
    rows INTEGER,
    created_at TIMESTAMP DEFAULT current_timestamp,
    PRIMARY KEY (kind, sha256)
);
CREATE TABLE IF NOT EXISTS icd_terms (code VARCHAR, term VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS ctc_categories (label VARCHAR, zh VARCHAR, topic_group VARCHAR);
CREATE TABLE IF NOT EXISTS cmeie_schemas (subject_type VARCHAR, predicate VARCHAR, object_type VARCHAR);
CREATE TABLE IF NOT EXISTS surgery_terms (mention VARCHAR, code VARCHAR, term VARCHAR);

-- Runs and predictions (filled by imports and model runs).
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY DEFAULT nextval('run_ids'),
    dataset_id INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    source VARCHAR,                 -- 'import' or 'model'
    model VARCHAR,
    params JSON,
    device VARCHAR,
    created_at TIMESTAMP DEFAULT current_timestamp,
    metrics JSON,
    created_by VARCHAR              -- who stored it (NULL before schema 9)
);

CREATE TABLE IF NOT EXISTS predictions (
    run_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,           -- the gold example's record number
    record VARCHAR,                 -- the typed prediction (Example.to_dict) as JSON
    raw VARCHAR                     -- the predicted record (or raw generation) as imported
);

-- One row per error (or per correct item, category 'correct'), for confusion matrices,
-- taxonomy charts and click-through to examples.
CREATE TABLE IF NOT EXISTS errors (
    run_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    turn INTEGER,
    category VARCHAR NOT NULL,
    tags VARCHAR[],
    gold_label VARCHAR,             -- entity type, predicate, class label or term
    pred_label VARCHAR,
    gold_start INTEGER,
    gold_end INTEGER,
    pred_start INTEGER,
    pred_end INTEGER,
    gold_text VARCHAR,
    pred_text VARCHAR
);

-- Which examples of a run were in its model's training records (store/training_sets.py): one
-- row per run whose training set is settled; declared = false when the model declares no
-- training records (an import, a user checkpoint), so seen/unseen is unknown for it.
CREATE TABLE IF NOT EXISTS run_training_sets (
    run_id INTEGER NOT NULL,
    declared BOOLEAN NOT NULL,
    model VARCHAR,                  -- the model whose records define "seen"
    seen_examples INTEGER,
    unseen_metrics JSON             -- headline, metrics, intervals, examples on the unseen part
);
CREATE TABLE IF NOT EXISTS run_seen_examples (
    run_id INTEGER NOT NULL,
    idx INTEGER NOT NULL            -- a record number of the run's split in the training records
);

-- Saved slices: a name and a SQL predicate over the examples view.
CREATE TABLE IF NOT EXISTS slices (
    name VARCHAR PRIMARY KEY,
    task VARCHAR,
    predicate VARCHAR NOT NULL,
    created_at TIMESTAMP DEFAULT current_timestamp,
    created_by VARCHAR              -- who saved it (NULL before schema 9)
);

-- Answers of LLM endpoints (store/responses.py), written as each arrives so that a rerun of a
-- killed run re-sends only the prompts without one. No API key is stored, and the address only
-- without credentials (in settings, which keys the row since schema 11).
CREATE TABLE IF NOT EXISTS response_cache (
    cache_key VARCHAR PRIMARY KEY,   -- sha256 of (model, settings, prompt): responses.cache_key()
    model VARCHAR NOT NULL,          -- the model name the endpoint serves
    settings JSON,                   -- base_url (no credentials), mode, max_tokens, temperature, ...
    prompt VARCHAR NOT NULL,
    answer VARCHAR NOT NULL,
    finish_reason VARCHAR,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    latency_s DOUBLE,
    created_at TIMESTAMP DEFAULT current_timestamp
);
""" + RUN_DERIVED_DDL

# Roles per workspace (cblue_core.auth.roles) and the audit trail, apart for the migration to
# version 9. audit_events is append-only: store/audit.py has no update or delete.
ACCESS_DDL = """
CREATE SEQUENCE IF NOT EXISTS audit_event_ids START 1;

CREATE TABLE IF NOT EXISTS workspace_users (
    name VARCHAR PRIMARY KEY,
    role VARCHAR NOT NULL,          -- viewer, annotator, curator or admin
    granted_by VARCHAR NOT NULL,
    granted_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Who did what and when: one row per write of a store (in the write's transaction) and per
-- refused attempt (in its own).
CREATE TABLE IF NOT EXISTS audit_events (
    event_id INTEGER PRIMARY KEY DEFAULT nextval('audit_event_ids'),
    happened_at TIMESTAMP NOT NULL DEFAULT current_timestamp,   -- UTC
    user_name VARCHAR,              -- NULL when no user was bound (a refused attempt)
    source VARCHAR,                 -- how the name was known: local, cli, proxy, oidc, ...
    action VARCHAR NOT NULL,        -- an action of cblue_core.auth.roles.ACTIONS
    target VARCHAR NOT NULL,
    detail VARCHAR NOT NULL DEFAULT '',
    outcome VARCHAR NOT NULL        -- 'done' or 'refused'
);
"""

DEFAULT_DATASETS_DDL = """
-- Which dataset of a task split opens by default, for every visitor: the first ingested, until
-- `ingest --make-default` or the Datasets page's admin control chooses another. A later upload
-- is another version of the split, opened by its uploader's session only.
CREATE TABLE IF NOT EXISTS default_datasets (
    task VARCHAR NOT NULL,
    split VARCHAR NOT NULL,
    dataset_id INTEGER NOT NULL,
    chosen_at TIMESTAMP DEFAULT current_timestamp,
    PRIMARY KEY (task, split)
);
"""
# Blind double annotation (store/blind_pass.py, store/own_copies.py), apart for the migration to version 10. A dataset
# listed in blind_datasets is in a blind pass: below the curator role, each user saves into their own
# copy (own_events: the columns of annotation_events, revisions counted per author) and the gold
# changes only by a curator (adjudication). Append-only like annotation_events.
BLIND_DDL = """
CREATE SEQUENCE IF NOT EXISTS own_event_ids START 1;

CREATE TABLE IF NOT EXISTS blind_datasets (
    dataset_id INTEGER PRIMARY KEY,
    set_by VARCHAR NOT NULL,
    set_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS own_events (
    event_id INTEGER PRIMARY KEY DEFAULT nextval('own_event_ids'),
    dataset_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    revision INTEGER NOT NULL,      -- the author's revision of the example after the event
    base_revision INTEGER NOT NULL,
    kind VARCHAR NOT NULL,          -- 'edit' or 'revert'
    reverts INTEGER,
    author VARCHAR NOT NULL,
    reason VARCHAR NOT NULL DEFAULT '',
    before JSON NOT NULL,
    after JSON NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    provenance JSON,
    UNIQUE (dataset_id, idx, author, revision)
);
"""
DDL += DEFAULT_DATASETS_DDL  # apart, for the migration to version 4 that adds it
DDL += ACCESS_DDL
DDL += BLIND_DDL

# The columns a user's SQL predicate may use (Datasets filter, saved slices), with their types.
EXAMPLE_COLUMN_TYPES = {
    "idx": "INTEGER", "key": "VARCHAR", "text": "VARCHAR", "text2": "VARCHAR", "label": "VARCHAR",
    "target": "VARCHAR", "sub_task": "VARCHAR", "types": "VARCHAR[]", "n_spans": "INTEGER",
    "n_triples": "INTEGER", "n_terms": "INTEGER", "n_events": "INTEGER", "n_turns": "INTEGER",
    "nesting_depth": "INTEGER", "text_length": "INTEGER",
}
EXAMPLE_COLUMNS = tuple(EXAMPLE_COLUMN_TYPES)
