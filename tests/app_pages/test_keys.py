"""Widget keys and URL parameters are declared once (app_pages/keys.py): no page spells a key or
a query parameter as a bare string, no two pages share a key by accident, and a deep link seeds
a widget through app_pages.url_state."""
from __future__ import annotations

import ast
from pathlib import Path

from streamlit.testing.v1 import AppTest

from app_pages import keys

ROOT = Path(__file__).resolve().parents[2]
PAGE_MODULES = sorted(p for p in (ROOT / "app_pages").rglob("*.py") if p.name != "keys.py")
STATE_CALLS = {"get", "pop", "setdefault"}


def bare_keys(source: str) -> list[tuple[int, str]]:
    """``key="..."`` on a call, ``st.session_state["..."]`` / ``.get("...")`` / attribute access,
    and ``st.query_params["..."]`` / ``.get("...")`` with a literal name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            record = isinstance(node.func, ast.Name) and node.func.id == "Example"   # Example(key=...): a field
            for kw in node.keywords:
                literal = isinstance(kw.value, ast.JoinedStr) or (
                    isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str))
                if kw.arg == "key" and literal and not record:
                    found.append((node.lineno, "key="))
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in STATE_CALLS and _is_state(f.value) and node.args \
                    and isinstance(node.args[0], ast.Constant):
                found.append((node.lineno, f"{f.attr}({node.args[0].value!r})"))
        if isinstance(node, ast.Subscript) and _is_state(node.value) and isinstance(node.slice, ast.Constant):
            found.append((node.lineno, f"[{node.slice.value!r}]"))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and node.value.attr in ("session_state", "query_params") and node.attr not in (
                    "get", "pop", "setdefault", "update", "clear", "keys", "items", "to_dict", "from_dict"):
            found.append((node.lineno, f".{node.attr}"))
    return found


def _is_state(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in ("session_state", "query_params")


def test_no_page_spells_a_key_or_parameter_as_a_bare_string():
    offenders = {str(p.relative_to(ROOT)): hits for p in PAGE_MODULES
                 if (hits := bare_keys(p.read_text(encoding="utf-8")))}
    assert not offenders, offenders


def test_the_check_finds_bare_keys():                     # positive control
    src = ('import streamlit as st\nst.button("x", key="go")\nst.session_state["a"] = 1\n'
           'st.session_state.b = 2\nst.query_params.get("run")\nst.session_state.get(K.OK)\n')
    assert [what for _, what in bare_keys(src)] == ["key=", "['a']", ".b", "get('run')"]


def test_keys_are_unique_across_pages():
    seen: dict[str, str] = {}
    for cls in (keys.Sidebar, keys.Datasets, keys.Live, keys.Runs, keys.Errors, keys.Compare, keys.Annotate):
        for name, value in vars(cls).items():
            if name.isupper() and isinstance(value, str):
                assert value not in seen, f"{cls.__name__}.{name} = {value!r} is also {seen[value]}"
                seen[value] = f"{cls.__name__}.{name}"


def _seeded_page():
    import streamlit as st

    from app_pages import url_state

    url_state.seed("pick", "run", url_state.int_in({1, 2, 3}))
    run = st.selectbox("Run", [1, 2, 3], key="pick")
    url_state.show({"run": run})


def test_a_deep_link_seeds_the_widget_once_and_the_url_follows():
    at = AppTest.from_function(_seeded_page)
    at.query_params["run"] = "3"
    at.run()
    assert at.selectbox(key="pick").value == 3
    at.selectbox(key="pick").set_value(2).run()          # the widget wins afterwards
    assert at.selectbox(key="pick").value == 2 and at.query_params["run"] in ("2", ["2"])
    bad = AppTest.from_function(_seeded_page)
    bad.query_params["run"] = "9"                         # not an option: ignored
    bad.run()
    assert bad.selectbox(key="pick").value == 1 and not bad.exception
