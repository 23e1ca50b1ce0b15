"""User-typed SQL filters that can do no harm.

Users type a WHERE predicate over the example columns (the Datasets page filter, saved slices,
Compare). Pasting that text into a query on the workspace connection behind a keyword check
let all of these through:

* file and network access: ``exists(from<TAB>glob('/*'))`` (the tab beat a ``"from "`` check),
  ``read_text('/etc/passwd')``, ``from 'https://...'`` (which installs and loads httpfs);
* SQL built at run time: ``query('SEL' || 'ECT ...')``;
* leaving the dataset: ``1=1) OR (1=1`` closes the caller's parenthesis, so the filter on
  ``dataset_id`` no longer applies;
* unbounded work: ``exists(from range(10^12) ...)``, recursive CTEs,
  ``length(repeat('x', 2000000000))``, a four-way self join;
* extension downloads: ``nesting_depth >>= 3`` is an ``inet`` operator, so DuckDB tries to
  fetch that extension when it binds the query.

A keyword list can never be complete, so this module inverts the check:

1. **Parse** the text with DuckDB's own parser (``json_serialize_sql``) on a private in-memory
   connection that is locked down (no external access, no extension auto-install or
   auto-load, configuration locked) before it sees any user text; the text travels as a bound
   parameter, never as SQL. Parsing neither binds nor runs anything, so ``>>=`` cannot reach
   the extension loader.
2. **Allow-list** the tree: exactly one ``SELECT * FROM t WHERE (...)``, and in the WHERE
   expression only the listed columns, small constants and a short list of operators and
   functions whose cost is linear in the row. Anything else is refused with a message that
   names it.
3. **Rebuild** the SQL text from the tree. What runs is our text, not the user's, so quoting
   tricks, comments and unbalanced parentheses cannot survive: ``1=1) OR (1=1`` comes back as
   ``((1 = 1) OR (1 = 1))``, one boolean. The rebuilt text is bound against an empty table of
   the same columns, so type errors surface before anything runs.
4. **Sandbox** the evaluation (:mod:`cblue_core.store.sandbox`): a locked in-memory database
   that holds nothing but the current split's examples, in a worker process killed at the
   time limit (:mod:`cblue_core.store.filter_worker`).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import duckdb

from .lockdown import locked_connection
from .sql_hints import with_hint

__all__ = [
    "MAX_NODES",
    "MAX_STRING_LENGTH",
    "PredicateRefused",
    "SafePredicate",
    "one_line_error",
    "parse_predicate",
]

MAX_NODES: Final = 200
MAX_STRING_LENGTH: Final = 1_000
# A 200-node predicate with long strings stays far below this; the cap keeps the parser's
# own work bounded before the node count can be checked.
MAX_TEXT_LENGTH: Final = 20_000
# HUGEINT holds 38 digits; beyond that DuckDB silently turns an integer literal into a DOUBLE.
MAX_INTEGER_DIGITS: Final = 38

_PREFIX: Final = "SELECT * FROM t WHERE ("
_MAX_DEPTH: Final = 250


class PredicateRefused(ValueError):
    """The filter is not allowed, could not be parsed, or failed when it ran; the message says why."""


@dataclass(frozen=True)
class SafePredicate:
    """A filter that passed the allow-list: the user's text and the SQL rebuilt from its tree."""

    source: str
    sql: str


# ---------------------------------------------------------------------------------- errors

_QUOTED_PATH = re.compile(r"""(["'])/[^"'\n]*\1""")


def one_line_error(exc: BaseException) -> str:
    """DuckDB's message without the echoed query, caret lines or hints, and without paths.

    Later lines repeat the query (ours, which can confuse) and the first line of a
    permission error can name a server directory.
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    first = lines[0] if lines else type(exc).__name__
    return with_hint(_QUOTED_PATH.sub(r"\1<path>\1", first))


# --------------------------------------------------------------------------------- columns

_TYPE_TEXT = re.compile(r"^[A-Za-z][A-Za-z0-9_ ]*(\[\])?$")
_NAME_TEXT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class _Column:
    name: str
    type: str

    @property
    def is_list(self) -> bool:
        return self.type.endswith("[]")


def _columns(columns: Mapping[str, str]) -> dict[str, _Column]:
    # The mapping comes from our code, but its names and types are written into DDL on the
    # parser connection, so they get the same suspicion as anything else that becomes SQL.
    if not columns:
        raise ValueError("no columns to filter on")
    out: dict[str, _Column] = {}
    for name, sql_type in columns.items():
        if not _NAME_TEXT.match(name) or not _TYPE_TEXT.match(sql_type.strip()):
            raise ValueError(f"bad column declaration {name!r} {sql_type!r}")
        out[name.lower()] = _Column(name, sql_type.strip().upper())
    return out


def _quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _quote_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


# ---------------------------------------------------------------------------------- parsing

def _parser_connection(columns: Mapping[str, _Column]) -> duckdb.DuckDBPyConnection:
    # The depth cap makes the parser refuse deep nesting before json.loads or the walk recurse.
    con = locked_connection({"threads": 1, "memory_limit": "64MB"}, max_expression_depth=_MAX_DEPTH)
    try:
        # An empty table of the same columns, so the rebuilt predicate can be bound (type
        # errors surface now) without any data behind it.
        ddl = ", ".join(f"{_quote_identifier(c.name)} {c.type}" for c in columns.values())
        con.execute(f"CREATE TABLE t ({ddl})")
    except BaseException:
        con.close()
        raise
    return con


def _strip_locations(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_locations(v) for k, v in node.items()
                if k not in ("query_location", "query_location_length")}
    if isinstance(node, list):
        return [_strip_locations(v) for v in node]
    return node


def _serialise(con: duckdb.DuckDBPyConnection, text: str) -> dict[str, Any]:
    # A newline before the closing parenthesis lets a filter end in a `--` comment.
    row = con.execute("SELECT json_serialize_sql(? || ? || chr(10) || ')')", [_PREFIX, text]).fetchone()
    if row is None or not isinstance(row[0], str):
        raise PredicateRefused("the filter could not be parsed")
    try:
        tree = json.loads(row[0])
    except RecursionError:
        raise PredicateRefused("the filter is nested too deeply") from None
    if not isinstance(tree, dict):
        raise PredicateRefused("the filter could not be parsed")
    if tree.get("error"):
        message = str(tree.get("error_message") or "syntax error").splitlines()[0]
        if "expression depth" in message:
            raise PredicateRefused("the filter is nested too deeply")
        if tree.get("error_type") == "not implemented":
            # json_serialize_sql says so when a later statement is not a SELECT.
            raise PredicateRefused("the filter must be one boolean expression (no ';' or second statement)")
        position = tree.get("position")
        if isinstance(position, str) and position.isdigit():
            at = int(position) - len(_PREFIX)
            if 0 <= at < len(text):
                message += f" (at character {at + 1})"
        raise PredicateRefused(f"SQL error: {message}")
    return tree


_MODIFIER_NAMES: Final = {
    "ORDER_MODIFIER": "ORDER BY",
    "LIMIT_MODIFIER": "LIMIT/OFFSET",
    "LIMIT_PERCENT_MODIFIER": "LIMIT/OFFSET",
    "DISTINCT_MODIFIER": "DISTINCT",
}


def _where_clause(tree: Mapping[str, Any], skeleton: Mapping[str, Any]) -> Any:
    """The WHERE expression of the one statement, if the rest is exactly ``SELECT * FROM t``."""
    statements = tree.get("statements")
    if not isinstance(statements, list) or len(statements) != 1:
        raise PredicateRefused("the filter must be one boolean expression (no ';' or second statement)")
    statement = statements[0]
    if not isinstance(statement, dict) or not isinstance(statement.get("node"), dict):
        raise PredicateRefused("the filter must be one boolean expression")
    if statement.get("named_param_map"):
        raise PredicateRefused("parameters are not allowed")
    node: dict[str, Any] = statement["node"]
    kind = node.get("type")
    if kind == "SET_OPERATION_NODE":
        raise PredicateRefused("UNION/INTERSECT/EXCEPT is not allowed")
    if kind != "SELECT_NODE":
        raise PredicateRefused("the filter must be one boolean expression")
    if (node.get("cte_map") or {}).get("map"):
        raise PredicateRefused("WITH (common table expressions) is not allowed")
    for modifier in node.get("modifiers") or []:
        name = _MODIFIER_NAMES.get(str(modifier.get("type")), "a query modifier")
        raise PredicateRefused(f"{name} is not allowed")
    if node.get("group_expressions") or node.get("group_sets"):
        raise PredicateRefused("GROUP BY is not allowed")
    for key, name in (("having", "HAVING"), ("qualify", "QUALIFY"), ("sample", "USING SAMPLE")):
        if node.get(key) is not None:
            raise PredicateRefused(f"{name} is not allowed")
    where = node.get("where_clause")
    if where is None:
        raise PredicateRefused("the filter must be one boolean expression")
    # Whatever the parser may add in a later version: everything but the WHERE clause must be
    # what `SELECT * FROM t WHERE (TRUE)` gives.
    rest = _strip_locations({**statement, "node": {k: v for k, v in node.items() if k != "where_clause"}})
    if rest != skeleton:
        raise PredicateRefused("the filter must be one boolean expression")
    return where


def _skeleton(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    tree = _serialise(con, "TRUE")
    statement = tree["statements"][0]
    node = {k: v for k, v in statement["node"].items() if k != "where_clause"}
    result: dict[str, Any] = _strip_locations({**statement, "node": node})
    return result


# ------------------------------------------------------------------------------- rebuilding

_COMPARISONS: Final = {
    "COMPARE_EQUAL": "=",
    "COMPARE_NOTEQUAL": "<>",
    "COMPARE_LESSTHAN": "<",
    "COMPARE_GREATERTHAN": ">",
    "COMPARE_LESSTHANOREQUALTO": "<=",
    "COMPARE_GREATERTHANOREQUALTO": ">=",
}
_CONJUNCTIONS: Final = {"CONJUNCTION_AND": "AND", "CONJUNCTION_OR": "OR"}
_ARITHMETIC: Final = frozenset({"+", "-", "*", "/", "%"})
# The parser turns LIKE and friends into these operators.
_LIKE: Final = {"~~": "LIKE", "!~~": "NOT LIKE", "~~*": "ILIKE", "!~~*": "NOT ILIKE"}
_ONE_ARGUMENT: Final = frozenset({"length", "lower", "upper", "len"})
_TWO_ARGUMENTS: Final = frozenset({"contains", "starts_with", "list_contains", "regexp_matches"})
_LIST_ONLY: Final = frozenset({"list_contains", "len"})
_CAST_TYPES: Final = {
    "integer": "INTEGER", "int": "INTEGER", "int4": "INTEGER", "int32": "INTEGER",
    "signed": "INTEGER",
    "bigint": "BIGINT", "int8": "BIGINT", "int64": "BIGINT", "long": "BIGINT",
    "double": "DOUBLE", "float8": "DOUBLE",
    "varchar": "VARCHAR", "text": "VARCHAR", "string": "VARCHAR", "char": "VARCHAR",
    "bpchar": "VARCHAR", "nvarchar": "VARCHAR",
}
# Node classes that are refused outright, with what to call them.
_REFUSED_CLASSES: Final = {
    "SUBQUERY": "subqueries (SELECT, FROM, EXISTS, IN (SELECT ...)) are not allowed",
    "WINDOW": "window functions are not allowed",
    "STAR": "star expressions (*, COLUMNS(...)) are not allowed",
    "PARAMETER": "parameters are not allowed",
    "LAMBDA": "lambdas are not allowed",
    "COLLATE": "COLLATE is not allowed",
    "CASE": "CASE expressions are not allowed",
    "POSITIONAL_REFERENCE": "positional references (#n) are not allowed",
    "FUNCTION_REF": "table functions are not allowed",
    "LAMBDA_REF": "lambdas are not allowed",
    "DEFAULT": "DEFAULT is not allowed",
}
_REFUSED_OPERATORS: Final = {
    "ARRAY_EXTRACT": "indexing with [] is not allowed",
    "ARRAY_SLICE": "slicing with [:] is not allowed",
    "STRUCT_EXTRACT": "struct fields are not allowed",
    "OPERATOR_COALESCE": "function 'coalesce' is not allowed",
    "OPERATOR_TRY": "TRY(...) is not allowed",
    "OPERATOR_UNPACK": "unpacking (*expr) is not allowed",
    "ARRAY_CONSTRUCTOR": "list constructors are not allowed",
}
# Function names the parser uses for constructors, so the refusal can say what was written.
_CONSTRUCTORS: Final = {
    "list_value": "list constructors ([...]) are not allowed",
    "struct_pack": "struct constructors ({...}) are not allowed",
    "row": "row constructors are not allowed",
    "map": "map constructors are not allowed",
}
_INTEGER_TEXT = re.compile(r"^-?[0-9]+$")
_DECIMAL_TEXT = re.compile(r"^-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def _is_string_constant(node: Any) -> bool:
    if not isinstance(node, dict) or node.get("class") != "CONSTANT":
        return False
    literal = node.get("literal")
    if isinstance(literal, dict):
        return literal.get("kind") == "STRING"
    value = node.get("value")
    return isinstance(value, dict) and (value.get("type") or {}).get("id") == "VARCHAR"


class _Rebuilder:
    """Walks the parser's expression tree and writes our own SQL for it, or refuses."""

    def __init__(self, columns: Mapping[str, _Column]):
        self.columns = columns
        self.nodes = 0

    # -- entry points
    def predicate(self, node: Any) -> str:
        return self.expression(node)

    def expression(self, node: Any) -> str:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise PredicateRefused(f"the filter is too long (more than {MAX_NODES} parts)")
        if not isinstance(node, dict):
            raise PredicateRefused("the filter could not be read")
        cls = str(node.get("class"))
        kind = str(node.get("type"))
        if cls in _REFUSED_CLASSES:
            raise PredicateRefused(_REFUSED_CLASSES[cls])
        if cls == "COLUMN_REF":
            return self.column(node)
        if cls == "CONSTANT":
            return self.constant(node)
        if cls == "COMPARISON":
            if kind not in _COMPARISONS:
                raise PredicateRefused(f"the comparison {kind.removeprefix('COMPARE_')} is not allowed")
            return f"({self.expression(node.get('left'))} {_COMPARISONS[kind]} {self.expression(node.get('right'))})"
        if cls == "CONJUNCTION":
            if kind not in _CONJUNCTIONS:
                raise PredicateRefused(f"{kind} is not allowed")
            parts = [self.expression(child) for child in self.children(node)]
            if len(parts) < 2:
                raise PredicateRefused("the filter could not be read")
            return "(" + f" {_CONJUNCTIONS[kind]} ".join(parts) + ")"
        if cls == "OPERATOR":
            return self.operator(node, kind)
        if cls == "BETWEEN":
            return (f"({self.expression(node.get('input'))} BETWEEN {self.expression(node.get('lower'))}"
                    f" AND {self.expression(node.get('upper'))})")
        if cls == "FUNCTION":
            return self.function(node)
        if cls == "CAST":
            return self.cast(node)
        raise PredicateRefused(f"{cls.lower().replace('_', ' ')} expressions are not allowed")

    # -- leaves
    def column(self, node: Mapping[str, Any]) -> str:
        names = node.get("column_names")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise PredicateRefused("the filter could not be read")
        if len(names) > 1:
            raise PredicateRefused(f"qualified column names are not allowed ({'.'.join(names)!r}); "
                                   "use the bare column name")
        column = self.columns.get(names[0].lower())
        if column is None:
            allowed = ", ".join(c.name for c in self.columns.values())
            raise PredicateRefused(f"unknown column {names[0]!r} (allowed: {allowed})")
        return _quote_identifier(column.name)

    def constant(self, node: Mapping[str, Any]) -> str:
        literal = node.get("literal")
        if isinstance(literal, dict):  # DuckDB 2.x: the literal's text as written
            return self.literal(str(literal.get("kind")), literal.get("text"))
        value = node.get("value")
        if isinstance(value, dict):  # DuckDB 1.x: a typed Value
            return self.value(value)
        raise PredicateRefused("the filter could not be read")

    def literal(self, kind: str, text: Any) -> str:
        if not isinstance(text, str):
            raise PredicateRefused("the filter could not be read")
        if kind == "NULL_LITERAL":
            return "NULL"
        if kind == "BOOLEAN":
            if text.lower() not in ("true", "false"):
                raise PredicateRefused("the filter could not be read")
            return text.upper()
        if kind == "STRING":
            return self.string(text)
        if kind == "INTEGER":
            return self.integer(text.replace("_", ""))
        if kind == "NUMERIC":
            return self.decimal(text.replace("_", ""))
        raise PredicateRefused(f"{kind.lower()} constants are not allowed")

    def value(self, value: Mapping[str, Any]) -> str:
        type_info = value.get("type") or {}
        type_id = str(type_info.get("id"))
        if value.get("is_null") or type_id == "NULL":
            return "NULL"
        raw = value.get("value")
        if type_id == "VARCHAR" and isinstance(raw, str):
            return self.string(raw)
        if type_id in ("HUGEINT", "UHUGEINT") and isinstance(raw, dict):
            raw = int(raw.get("upper", 0)) * 2 ** 64 + int(raw.get("lower", 0))
        if type_id in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UBIGINT", "UHUGEINT") \
                and isinstance(raw, int | str):
            return self.integer(str(raw))
        if type_id == "DECIMAL" and isinstance(raw, int | str):
            scale = int((type_info.get("type_info") or {}).get("scale") or 0)
            return self.number(int(str(raw)) / 10 ** scale)
        if type_id in ("DOUBLE", "FLOAT") and isinstance(raw, int | float):
            return self.number(float(raw))
        if type_id == "BOOLEAN" and isinstance(raw, bool):
            return "TRUE" if raw else "FALSE"
        raise PredicateRefused(f"{type_id.lower()} constants are not allowed")

    def string(self, text: str) -> str:
        if len(text) > MAX_STRING_LENGTH:
            raise PredicateRefused(f"a string constant is longer than {MAX_STRING_LENGTH:,} characters")
        if "\x00" in text:
            raise PredicateRefused("a string constant contains a NUL character")
        return _quote_string(text)

    def integer(self, text: str) -> str:
        if not _INTEGER_TEXT.match(text) or len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
            raise PredicateRefused(f"the number {text[:40]!r} is not allowed (at most {MAX_INTEGER_DIGITS} digits)")
        number = int(text)
        # Parenthesised so that `a - -1` can never be written as the comment `a --1`.
        return f"({number!r})" if number < 0 else repr(number)

    def decimal(self, text: str) -> str:
        if not _DECIMAL_TEXT.match(text):
            raise PredicateRefused(f"the number {text[:40]!r} is not allowed")
        return self.number(float(text))

    def number(self, value: float) -> str:
        if not math.isfinite(value):
            raise PredicateRefused("the number is too large")
        return f"({value!r})" if math.copysign(1.0, value) < 0 else repr(value)

    # -- operators and functions
    @staticmethod
    def children(node: Mapping[str, Any]) -> list[Any]:
        children = node.get("children")
        if not isinstance(children, list):
            raise PredicateRefused("the filter could not be read")
        return children

    def operator(self, node: Mapping[str, Any], kind: str) -> str:
        children = self.children(node)
        if kind == "OPERATOR_NOT" and len(children) == 1:
            return f"(NOT {self.expression(children[0])})"
        if kind == "OPERATOR_IS_NULL" and len(children) == 1:
            return f"({self.expression(children[0])} IS NULL)"
        if kind == "OPERATOR_IS_NOT_NULL" and len(children) == 1:
            return f"({self.expression(children[0])} IS NOT NULL)"
        if kind in ("COMPARE_IN", "COMPARE_NOT_IN") and len(children) >= 2:
            probe = self.expression(children[0])
            items = []
            for child in children[1:]:
                # Only literals: a list of expressions would be an easy way around the
                # per-row cost bound.
                if not isinstance(child, dict) or child.get("class") != "CONSTANT":
                    raise PredicateRefused("IN takes a list of constants, e.g. label IN ('a', 'b')")
                items.append(self.expression(child))
            keyword = "IN" if kind == "COMPARE_IN" else "NOT IN"
            return f"({probe} {keyword} ({', '.join(items)}))"
        if kind in _REFUSED_OPERATORS:
            raise PredicateRefused(_REFUSED_OPERATORS[kind])
        raise PredicateRefused(f"the operator {kind.removeprefix('OPERATOR_').lower()} is not allowed")

    def arguments(self, node: Mapping[str, Any]) -> list[Any]:
        arguments = node.get("arguments")
        if isinstance(arguments, list):  # DuckDB 2.x: [{"name": ..., "expression": ...}]
            out = []
            for argument in arguments:
                if not isinstance(argument, dict):
                    raise PredicateRefused("the filter could not be read")
                if argument.get("name"):
                    raise PredicateRefused("named arguments (name := value) are not allowed")
                out.append(argument.get("expression"))
            return out
        children = self.children(node)  # DuckDB 1.x: a named argument is an aliased child
        if any(isinstance(child, dict) and child.get("alias") for child in children):
            raise PredicateRefused("named arguments (name := value) are not allowed")
        return children

    def function(self, node: Mapping[str, Any]) -> str:
        name = str(node.get("function_name")).lower()
        path = (node.get("qualified_name") or {}).get("path") or [name]
        if name in _CONSTRUCTORS:  # before the schema check: DuckDB 1.x puts these in `main`
            raise PredicateRefused(_CONSTRUCTORS[name])
        if node.get("schema") or node.get("catalog") or len(path) > 1:
            qualified = ".".join(str(p) for p in path) if len(path) > 1 else name
            raise PredicateRefused(f"qualified function names are not allowed ({qualified!r}); "
                                   f"write {name}(column) instead")
        allowed = name in _ARITHMETIC or name in _LIKE or name in _ONE_ARGUMENT or name in _TWO_ARGUMENTS
        if not allowed:
            what = "operator" if node.get("is_operator") else "function"
            raise PredicateRefused(f"{what} {name!r} is not allowed")
        if node.get("filter") is not None:
            raise PredicateRefused(f"FILTER on {name!r} is not allowed")
        if (node.get("order_bys") or {}).get("orders"):
            raise PredicateRefused(f"ORDER BY inside {name!r} is not allowed")
        if node.get("distinct") or node.get("export_state"):
            raise PredicateRefused(f"DISTINCT/EXPORT_STATE inside {name!r} is not allowed")
        args = self.arguments(node)
        # The arguments first, so that a refused function nested inside (len(range(...)))
        # is the one the message names.
        rendered = [self.expression(a) for a in args]
        if name in _ARITHMETIC:
            if len(args) == 2:
                return f"({rendered[0]} {name} {rendered[1]})"
            if len(args) == 1 and name in ("-", "+"):
                return f"({name} {rendered[0]})"
            raise PredicateRefused(f"operator {name!r} takes two operands")
        if name in _LIKE:
            if len(args) != 2:
                raise PredicateRefused("LIKE takes one pattern (ESCAPE is not allowed)")
            return f"({rendered[0]} {_LIKE[name]} {rendered[1]})"
        expected = 1 if name in _ONE_ARGUMENT else 2
        if len(args) != expected:
            raise PredicateRefused(f"{name}() takes {expected} argument{'s' if expected > 1 else ''} here")
        if name in _LIST_ONLY:
            first = args[0]
            column = None
            if isinstance(first, dict) and first.get("class") == "COLUMN_REF":
                names = first.get("column_names") or []
                column = self.columns.get(str(names[0]).lower()) if len(names) == 1 else None
            if column is None or not column.is_list:
                lists = ", ".join(c.name for c in self.columns.values() if c.is_list) or "none"
                raise PredicateRefused(f"{name}() takes a list column (list columns: {lists})")
        if name == "regexp_matches" and not _is_string_constant(args[1]):
            # A constant pattern is compiled once; one from a column would be compiled per row.
            raise PredicateRefused("regexp_matches() takes a constant string pattern as its second argument")
        return f"{name}({', '.join(rendered)})"

    def cast(self, node: Mapping[str, Any]) -> str:
        legacy = self.legacy_boolean(node)
        if legacy is not None:
            return legacy
        target = self.cast_type(node)
        keyword = "TRY_CAST" if node.get("try_cast") else "CAST"
        return f"{keyword}({self.expression(node.get('child'))} AS {target})"

    @staticmethod
    def legacy_boolean(node: Mapping[str, Any]) -> str | None:
        """DuckDB 1.x writes TRUE as CAST('t' AS BOOLEAN): give that back as the constant."""
        if (node.get("cast_type") or {}).get("id") != "BOOLEAN" or node.get("try_cast"):
            return None
        child = node.get("child")
        value = child.get("value") if isinstance(child, dict) else None
        if (isinstance(value, dict) and (value.get("type") or {}).get("id") == "VARCHAR"
                and value.get("value") in ("t", "f")):
            return "TRUE" if value["value"] == "t" else "FALSE"
        return None

    def cast_type(self, node: Mapping[str, Any]) -> str:
        type_expr = node.get("type_expr")
        if isinstance(type_expr, dict):  # DuckDB 2.x
            name = str(type_expr.get("type_name"))
            if type_expr.get("schema") or type_expr.get("catalog") or type_expr.get("children"):
                raise PredicateRefused(f"CAST to {name} is not allowed (INTEGER, BIGINT, DOUBLE, VARCHAR)")
        else:  # DuckDB 1.x
            cast_type = node.get("cast_type") or {}
            name = str(cast_type.get("id"))
            if cast_type.get("type_info") is not None:
                raise PredicateRefused(f"CAST to {name} is not allowed (INTEGER, BIGINT, DOUBLE, VARCHAR)")
        target = _CAST_TYPES.get(name.lower())
        if target is None:
            raise PredicateRefused(f"CAST to {name} is not allowed (INTEGER, BIGINT, DOUBLE, VARCHAR)")
        return target


def parse_predicate(text: str, columns: Mapping[str, str]) -> SafePredicate:
    """Check a user's WHERE predicate and rebuild it as SQL that can only filter rows.

    ``columns`` maps the column names the filter may use to their DuckDB types (e.g.
    ``{"idx": "INTEGER", "types": "VARCHAR[]"}``). Raises :class:`PredicateRefused`, whose
    message names what is not allowed, for anything outside the allow-list, for a parse or
    type error, and for a predicate that is not boolean.
    """
    if not isinstance(text, str) or not text.strip():
        raise PredicateRefused("the filter is empty")
    if len(text) > MAX_TEXT_LENGTH:
        raise PredicateRefused(f"the filter is longer than {MAX_TEXT_LENGTH:,} characters")
    if "\x00" in text:
        raise PredicateRefused("the filter contains a NUL character")
    allowed = _columns(columns)
    con = _parser_connection(allowed)
    try:
        try:
            skeleton = _skeleton(con)
            tree = _serialise(con, text)
        except duckdb.Error as exc:
            raise PredicateRefused(f"SQL error: {one_line_error(exc)}") from None
        where = _where_clause(tree, skeleton)
        try:
            sql = _Rebuilder(allowed).predicate(where)
        except RecursionError:
            raise PredicateRefused("the filter is nested too deeply") from None
        try:
            types = con.sql(f"SELECT {sql} AS keep FROM t").types
        except duckdb.Error as exc:
            raise PredicateRefused(f"SQL error: {one_line_error(exc)}") from None
    finally:
        con.close()
    result_type = str(types[0]).upper() if types else ""
    # A bare NULL keeps no row; DuckDB 1.x types it INTEGER, 2.x "NULL".
    if result_type != "BOOLEAN" and sql != "NULL" and "NULL" not in result_type:
        raise PredicateRefused(f"the filter must be one boolean expression (this one gives {result_type or 'nothing'})")
    return SafePredicate(source=text, sql=sql)
