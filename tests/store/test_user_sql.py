"""User SQL filters: every known attack is refused by name, allowed filters give plain DuckDB's
answers, and the sandbox that runs them can read nothing and is stopped on time."""
from __future__ import annotations

import dataclasses
import re
import threading
import time

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from cblue_core.store.sandbox import PredicateSandbox, PredicateTimeout, filter_indices, timeout_from_env
from cblue_core.store.schema import DDL, EXAMPLE_COLUMNS
from cblue_core.store.user_sql import MAX_NODES, PredicateRefused, SafePredicate, parse_predicate


def _example_column_types() -> dict[str, str]:
    """The filterable columns with the types the `examples` table declares for them."""
    body = re.search(r"CREATE TABLE IF NOT EXISTS examples \((.*?)\n\);", DDL, re.DOTALL)
    assert body is not None
    declared = {}
    for line in body.group(1).splitlines():
        parts = line.strip().rstrip(",").split()
        if len(parts) >= 2:
            declared[parts[0]] = parts[1]
    return {name: declared[name] for name in EXAMPLE_COLUMNS}


COLUMNS = _example_column_types()


def _table() -> pa.Table:
    rows = [
        # idx, key, text, label, types, n_spans, nesting_depth, text_length
        (0, "k0", "患者发热三天", "1", ["dis", "sym"], 3, 0, 6),
        (1, "k1", "Fever and COUGH", "0", ["sym"], 1, 1, 15),
        (2, "k2", "肺炎", "2", ["dis"], 1, 2, 2),
        (3, "k3", None, "x", [], 0, 3, None),
        (4, None, "it's fine", "10", None, 5, 4, 9),
        (5, "k5", "abc", None, ["dru", "dis", "sym"], 7, 0, 3),
    ]
    names = ["idx", "key", "text", "label", "types", "n_spans", "nesting_depth", "text_length"]
    kinds = [pa.int32(), pa.string(), pa.string(), pa.string(), pa.list_(pa.string()),
             pa.int32(), pa.int32(), pa.int32()]
    columns = [pa.array([r[i] for r in rows], type=kind) for i, kind in enumerate(kinds)]
    table = pa.table(dict(zip(names, columns, strict=True)))
    # The other example columns, all NULL, so every declared column exists.
    for name in EXAMPLE_COLUMNS:
        if name not in table.column_names:
            kind = pa.int32() if COLUMNS[name] == "INTEGER" else pa.string()
            table = table.append_column(name, pa.nulls(len(rows), type=kind))
    return table


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return _table()


@pytest.fixture(scope="module")
def sandbox(table):
    with PredicateSandbox(table) as box:
        yield box


def _balanced(sql: str) -> bool:
    depth = 0
    for ch in re.sub(r"'(?:[^']|'')*'", "''", sql):  # parentheses inside strings do not count
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


# --------------------------------------------------------------------------- refusals

REFUSED = [
    ("exists(from\tglob('/*'))", "subqueries"),
    ("query('SEL'||'ECT 1') IS NOT NULL", "function 'query' is not allowed"),
    ("read_text('/etc/passwd') IS NOT NULL", "function 'read_text' is not allowed"),
    ("length(repeat('x', 2000000000)) > 0", "function 'repeat' is not allowed"),
    ("lpad(text, 10, 'x') = 'x'", "function 'lpad' is not allowed"),
    ("rpad(text, 10, 'x') = 'x'", "function 'rpad' is not allowed"),
    ("string_agg(text, ',') = 'x'", "function 'string_agg' is not allowed"),
    ("len(range(1000000000000)) > 0", "function 'range' is not allowed"),
    ("exists(from range(10^12) a, range(10^12) b)", "subqueries"),
    ("exists(with recursive r(n) as (select 1 union all select n + 1 from r) select * from r)",
     "subqueries"),
    ("(select count(*) from examples a, examples b, examples c, examples d) > 0", "subqueries"),
    ("idx in (select idx from examples)", "subqueries"),
    ("from 'https://x'", "subqueries"),
    ("exists(from 'https://example.org/x.parquet')", "subqueries"),
    ("1) UNION ALL SELECT * FROM t WHERE (1", "UNION"),
    ("1) GROUP BY (1", "GROUP BY is not allowed"),
    ("1) HAVING (1", "HAVING is not allowed"),
    ("1) ORDER BY (1", "ORDER BY is not allowed"),
    ("1) LIMIT (1", "LIMIT"),
    ("1) QUALIFY (1", "QUALIFY is not allowed"),
    ("1); DROP TABLE t; SELECT (1", "one boolean expression"),
    ("1); SELECT 42 WHERE (1", "one boolean expression"),
    ("foo = 1", "unknown column 'foo' (allowed: idx, key, text"),
    ("examples.idx = 1", "qualified column names are not allowed"),
    ("text.lower() = 'x'", "qualified function names are not allowed"),
    ("main.length(text) > 1", "qualified function names are not allowed"),
    ("idx = ?", "parameters are not allowed"),
    ("idx = $1", "parameters are not allowed"),
    ("types = [1, 2]", "list constructors"),
    ("{'a': 1} IS NULL", "struct constructors"),
    ("list_transform(types, x -> x) = types", "function 'list_transform' is not allowed"),
    ("list_contains(types, x -> x)", "lambdas are not allowed"),
    ("count(*) OVER () > 1", "window functions are not allowed"),
    ("COLUMNS(*) = 1", "star expressions"),
    ("label COLLATE nocase = 'x'", "COLLATE is not allowed"),
    ("CASE WHEN idx = 1 THEN true END", "CASE expressions are not allowed"),
    ("types[1] = 'dis'", "indexing with [] is not allowed"),
    ("coalesce(label, 'x') = 'x'", "coalesce"),
    ("CAST(label AS BOOLEAN)", "CAST to BOOLEAN is not allowed"),
    ("CAST(label AS DATE) IS NULL", "CAST to DATE is not allowed"),
    ("label SIMILAR TO 'x'", "'regexp_full_match' is not allowed"),
    ("label LIKE 'x' ESCAPE '!'", "like_escape"),
    ("regexp_matches(text, label)", "constant string pattern"),
    ("len(text) > 1", "len() takes a list column (list columns: types)"),
    ("length(text := 'x') > 1", "named arguments"),
    ("length(text) FILTER (WHERE true) > 1", "FILTER"),
    ("idx IN (1, n_spans)", "IN takes a list of constants"),
    ("idx = 1e999", "too large"),
    ("idx = 123456789012345678901234567890123456789", "at most 38 digits"),
    ("nesting_depth", "one boolean expression (this one gives INTEGER)"),
    ("text || 'x'", "operator '||' is not allowed"),
]


@pytest.mark.parametrize(("text", "culprit"), REFUSED, ids=[t for t, _ in REFUSED])
def test_refused_naming_the_culprit(text, culprit):
    with pytest.raises(PredicateRefused) as info:
        parse_predicate(text, COLUMNS)
    message = str(info.value)
    assert culprit in message
    assert "\n" not in message and "Traceback" not in message


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_empty_filter_refused(text):
    with pytest.raises(PredicateRefused, match="empty"):
        parse_predicate(text, COLUMNS)


def test_inet_operator_refused_quickly_without_extension_download():
    start = time.perf_counter()
    with pytest.raises(PredicateRefused, match="'>>=' is not allowed"):
        parse_predicate("nesting_depth >>= 3", COLUMNS)
    elapsed = time.perf_counter() - start
    print(f"'>>=' refused in {elapsed * 1000:.0f} ms")
    assert elapsed < 1.0


def test_long_string_literal_refused():
    with pytest.raises(PredicateRefused, match="longer than 1,000 characters"):
        parse_predicate("text = '" + "x" * 1001 + "'", COLUMNS)
    assert parse_predicate("text = '" + "y" * 1000 + "'", COLUMNS).sql.count("y") == 1000


def test_too_many_nodes_refused():
    text = " OR ".join(["idx = 1"] * 70)  # 70 comparisons of 2 leaves each, plus the OR
    with pytest.raises(PredicateRefused, match=f"more than {MAX_NODES} parts"):
        parse_predicate(text, COLUMNS)
    parse_predicate(" OR ".join(["idx = 1"] * 60), COLUMNS)


def test_deep_nesting_refused_cleanly():
    with pytest.raises(PredicateRefused, match="nested too deeply"):
        parse_predicate("NOT " * 900 + "true", COLUMNS)
    # DuckDB 2 counts parentheses towards its depth limit; DuckDB 1 drops them.
    try:
        assert parse_predicate("(" * 1500 + "true" + ")" * 1500, COLUMNS).sql == "TRUE"
    except PredicateRefused as exc:
        assert "nested too deeply" in str(exc)


def test_parser_error_is_one_line_without_query_echo():
    with pytest.raises(PredicateRefused) as info:
        parse_predicate("idx = (", COLUMNS)
    message = str(info.value)
    assert message.startswith("SQL error: syntax error")
    assert "\n" not in message and "LINE" not in message and "SELECT" not in message


def test_type_error_found_before_running():
    with pytest.raises(PredicateRefused, match="length"):
        parse_predicate("length(idx) > 1", COLUMNS)


# --------------------------------------------------------------------------- rebuilding

def test_closing_parenthesis_cannot_leave_the_expression(table, sandbox):
    pred = parse_predicate("1=1) OR (1=1", COLUMNS)
    assert pred.sql == "((1 = 1) OR (1 = 1))"
    assert _balanced(pred.sql)
    # Put where the caller puts it, it is one boolean: the caller's own condition still holds.
    rows = sandbox.connection.execute(
        f"SELECT idx FROM examples WHERE idx < 2 AND {pred.sql} ORDER BY idx").fetchall()
    assert rows == [(0,), (1,)]


def test_rebuilt_sql_quotes_everything_itself():
    pred = parse_predicate("TEXT = 'it''s' -- a trailing comment", COLUMNS)
    assert pred.sql == "(\"text\" = 'it''s')"
    assert pred.source == "TEXT = 'it''s' -- a trailing comment"
    assert parse_predicate("idx - -1 = 2", COLUMNS).sql == '(("idx" - (-1)) = 2)'
    with pytest.raises(dataclasses.FrozenInstanceError):
        pred.sql = "true"  # type: ignore[misc]


ALLOWED = [
    ("idx >= 2 AND idx <> 4", [2, 3, 5]),
    ("n_spans = 1 OR NOT nesting_depth < 3", [1, 2, 3, 4]),
    ("label != '1' AND idx <= 3", [1, 2, 3]),
    ("label IN ('0', '2', 'x')", [1, 2, 3]),
    ("label NOT IN ('0', '2', 'x')", [0, 4]),
    ("n_spans BETWEEN 1 AND 3", [0, 1, 2]),
    ("n_spans NOT BETWEEN 1 AND 3", [3, 4, 5]),
    ("text LIKE '%COUGH'", [1]),
    ("text NOT LIKE '%a%'", [0, 2, 4]),
    ("text ILIKE 'fever%'", [1]),
    ("text NOT ILIKE '%C%'", [0, 2, 4]),
    ("text ~~ '肺%'", [2]),
    ("regexp_matches(text, '发热|肺')", [0, 2]),
    ("regexp_matches(text, '^[a-z]+$')", [5]),
    ("length(text) > 5", [0, 1, 4]),
    ("lower(text) = 'fever and cough' OR upper(text) = 'ABC'", [1, 5]),
    ("contains(text, 'fine') OR starts_with(text, '患者')", [0, 4]),
    ("list_contains(types, 'dis')", [0, 2, 5]),
    ("len(types) >= 2", [0, 5]),
    ("length(types) = 0", [3]),
    ("CAST(nesting_depth AS VARCHAR) = '3'", [3]),
    ("nesting_depth::DOUBLE / 2 = 1.5", [3]),
    ("CAST(n_spans AS BIGINT) * 2 + 1 = 11", [4]),
    ("n_spans % 2 = 1 AND -n_spans < -2", [0, 4, 5]),
    ("TRY_CAST(label AS INTEGER) >= 2", [2, 4]),
    ("text IS NULL OR key IS NULL", [3, 4]),
    ("text_length IS NOT NULL AND text_length < 6", [2, 5]),
    ("idx = 1.5e0 + -0.5", [1]),
    ("(((idx = 0)))", [0]),
    ("true", [0, 1, 2, 3, 4, 5]),
    ("NULL", []),
]


@pytest.mark.parametrize(("text", "expected"), ALLOWED, ids=[t for t, _ in ALLOWED])
def test_allowed_filters_match_plain_duckdb(text, expected, table, sandbox):
    pred = parse_predicate(text, COLUMNS)
    assert _balanced(pred.sql)
    got = sandbox.matching_indices(pred)
    plain = duckdb.connect()
    try:
        plain.register("examples", table)
        reference = [r[0] for r in plain.execute(
            f"SELECT idx FROM examples WHERE ({text}) ORDER BY idx").fetchall()]
    finally:
        plain.close()
    assert got == reference == expected
    assert sandbox.count(pred) == len(expected)


def test_filter_indices_convenience(table):
    assert filter_indices(table, "list_contains(types, 'sym') AND n_spans > 1", COLUMNS) == [0, 5]
    with pytest.raises(PredicateRefused, match="'glob'"):
        filter_indices(table, "len(glob('/*')) > 0", COLUMNS)


def test_runtime_error_is_one_line(sandbox):
    with pytest.raises(PredicateRefused) as info:
        sandbox.matching_indices(parse_predicate("CAST(label AS INTEGER) = 1", COLUMNS))
    message = str(info.value)
    assert "Conversion Error" in message
    assert "\n" not in message and "LINE" not in message
    assert not isinstance(info.value, PredicateTimeout)


def test_concurrent_sessions_share_a_sandbox(sandbox):
    preds = {"list_contains(types, 'dis')": [0, 2, 5], "n_spans = 1": [1, 2]}
    failures: list[str] = []

    def work(text: str, expected: list[int]) -> None:
        pred = parse_predicate(text, COLUMNS)
        for _ in range(20):
            if sandbox.matching_indices(pred, timeout=10) != expected:
                failures.append(text)

    threads = [threading.Thread(target=work, args=item) for item in preds.items() for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


# --------------------------------------------------------------------------- the sandbox

def _setting(con: duckdb.DuckDBPyConnection, name: str) -> object:
    row = con.execute("SELECT current_setting(?)", [name]).fetchone()
    assert row is not None
    return row[0]


def test_sandbox_is_locked_down(table):
    with PredicateSandbox(table, memory_limit="256MB", threads=8) as box:
        con = box.connection
        assert _setting(con, "enable_external_access") is False
        assert _setting(con, "autoinstall_known_extensions") is False
        assert _setting(con, "autoload_known_extensions") is False
        assert _setting(con, "lock_configuration") is True
        assert _setting(con, "threads") == 2
        assert _setting(con, "memory_limit") == "244.1 MiB"  # DuckDB shows 256 MB in MiB
        assert _setting(con, "temp_directory") == ""
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("SET enable_external_access = true")
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("SET memory_limit = '100GB'")
    with PredicateSandbox(table) as box:
        assert _setting(box.connection, "memory_limit") == "488.2 MiB"  # the 512MB default


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM 'https://example.org/x.csv'",
    "INSTALL httpfs",
    "ATTACH '/tmp/cblue-sandbox-probe.duckdb'",
    "COPY (SELECT 1) TO '/tmp/cblue-sandbox-probe.csv'",
])
def test_sandbox_connection_cannot_reach_out_even_directly(sandbox, sql):
    with pytest.raises(duckdb.Error):
        sandbox.connection.execute(sql)


def test_sandbox_refuses_a_forged_predicate(sandbox):
    # Defence in depth: if a hole in the allow-list ever let a file read through, the
    # sandbox still could not read it, and the message would not echo the path.
    forged = SafePredicate("forged", "EXISTS (SELECT * FROM read_text('/etc/passwd'))")
    with pytest.raises(PredicateRefused) as info:
        sandbox.matching_indices(forged)
    assert "/etc/passwd" not in str(info.value)


def test_sandbox_sees_no_python_variables(sandbox):
    secret = pa.table({"password": ["hunter2"]})
    plain = duckdb.connect()
    try:  # a default connection finds a table by its Python variable name ...
        assert plain.execute("SELECT * FROM secret").fetchall() == [("hunter2",)]
    finally:
        plain.close()
    with pytest.raises(duckdb.Error, match="secret"):  # ... the sandbox does not
        sandbox.connection.execute("SELECT * FROM secret")
    del secret


# --------------------------------------------------------------------------- timeouts

@pytest.fixture(scope="module")
def big_sandbox():
    n = 5_000_000
    idx = np.arange(n, dtype=np.int32)
    words = np.array(["aaaa", "abab", "xyz", "ab", "aaaaaaaab"], dtype=object)
    table = pa.table({"idx": idx, "text": pa.array(words[idx % len(words)], type=pa.string())})
    with PredicateSandbox(table) as box:
        yield box


# Allowed, cheap per row, but seconds over 5,000,000 rows.
COSTLY = " OR ".join(f"regexp_matches(text, '(a|b)*{c}(a|b){{20}}')" for c in "cdefghijklmnopqrs")
BIG_COLUMNS = {"idx": "INTEGER", "text": "VARCHAR"}


def test_long_filter_is_stopped(big_sandbox):
    pred = parse_predicate(COSTLY, BIG_COLUMNS)
    start = time.perf_counter()
    with pytest.raises(PredicateTimeout, match=r"ran longer than 0.2 s and was stopped"):
        big_sandbox.matching_indices(pred, timeout=0.2)
    elapsed = time.perf_counter() - start
    print(f"stopped after {elapsed:.2f} s")
    assert elapsed < 2.0
    # The sandbox is still usable afterwards.
    assert big_sandbox.matching_indices(parse_predicate("idx < 3", BIG_COLUMNS), timeout=10) == [0, 1, 2]


def test_timeout_defaults_to_the_environment(big_sandbox, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_SQL_TIMEOUT", "0.3")
    pred = parse_predicate(COSTLY, BIG_COLUMNS)
    start = time.perf_counter()
    with pytest.raises(PredicateTimeout, match="0.3 s"):
        big_sandbox.count(pred)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize(("value", "expected"), [
    (None, 3.0), ("0.5", 0.5), ("10", 10.0), ("abc", 3.0), ("", 3.0), ("-1", 3.0), ("0", 3.0),
    ("nan", 3.0), ("inf", 3.0),
])
def test_timeout_from_env(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv("CBLUE_STUDIO_SQL_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("CBLUE_STUDIO_SQL_TIMEOUT", value)
    assert timeout_from_env() == expected
