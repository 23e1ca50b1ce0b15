"""The house rule for text on a page, checked on the source (AST): whatever reaches Streamlit's
Markdown (messages, captions, titles, widget labels, tooltips, the option labels of radio
buttons, pills and segmented controls) is a literal, or goes through ``md()`` (which makes data
inert), or is a number formatted as one.

A name counts as a literal when every binding of it in the module is a literal (a string, a number,
or a list/tuple of them, or an item a ``for`` loop takes from such a list) and nothing changes it in
place; a parameter, an import, an augmented assignment or ``X.append(...)`` makes it data."""
from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

# Streamlit calls whose first argument (or `body=`/`label=`) is rendered as Markdown.
MARKDOWN_CALLS = {
    "markdown", "caption", "error", "warning", "info", "success", "toast", "write", "title", "header",
    "subheader", "expander", "metric", "button", "checkbox", "toggle", "radio", "selectbox",
    "multiselect", "text_input", "text_area", "number_input", "slider", "select_slider",
    "download_button", "file_uploader", "form_submit_button", "popover", "tabs", "page_link",
    "segmented_control", "pills", "link_button", "status", "spinner",
}
# Calls whose *options* are shown as Markdown too (their `format_func` result, else the options
# themselves, and radio's `captions`). Selectbox and multiselect options are plain text.
MARKDOWN_OPTION_CALLS = {"radio", "pills", "segmented_control", "select_slider"}
# Keyword arguments rendered as Markdown on any call above (the tooltip), and on st.progress.
MARKDOWN_KEYWORDS = {"help"}
PROGRESS_CALLS = {"progress"}      # st.progress(value, text=...): only `text` is Markdown
# Functions whose result is safe to put in Markdown (from app_pages.common, or app_pages.markdown
# where md and md_name are defined; a page that defines or assigns a name of its own with one of
# these names gets no trust for it).
SAFE_CALLS = {"md", "md_name", "num", "pct", "counted"}
SAFE_MODULES = ("app_pages.common", "app_pages.markdown")
SAFE_FILES = ("app_pages/common.py", "app_pages/markdown.py")
# Format specs that only numbers accept (a string would raise), e.g. `{n:,}` or `{f:.3f}`.
NUMERIC_SPEC_CHARS = set("bcdeEfFgGnoxX%,_")
# Methods that change a list or dict in place: a name they are called on is no constant.
MUTATORS = {"append", "extend", "insert", "__setitem__", "__iadd__", "setdefault", "update", "add"}


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    call: str
    part: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: st.{self.call}(...) gets {self.part} without md()"


def _is_st(node: ast.expr) -> bool:
    """`st`, `st.sidebar`, ... (an attribute chain rooted at the name `st`)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "st"


def _streamlit_call(node: ast.Call) -> str | None:
    """'markdown' for st.markdown(...), c1.markdown(...), st.sidebar.info(...); 'success|error' for
    (st.success if ok else st.error)(...); 'getattr' for getattr(st, level)(...)."""
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in MARKDOWN_CALLS | PROGRESS_CALLS:
        return func.attr
    if isinstance(func, ast.IfExp):
        names = [f.attr for f in (func.body, func.orelse)
                 if isinstance(f, ast.Attribute) and f.attr in MARKDOWN_CALLS]
        return "|".join(names) or None
    if (isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr"
            and func.args and _is_st(func.args[0])):
        return "getattr"
    return None


def _is_literal(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_is_literal(e) for e in node.elts)
    return False


class _Module:
    """What the rule knows about one module: which names are constants (bound only to literals,
    never changed in place), and which safe helpers are really the shared ones."""

    def __init__(self, tree: ast.Module, file: str):
        self.file = file
        bindings: dict[str, list[ast.expr | None]] = defaultdict(list)
        handled: set[int] = set()

        def bind(target: ast.expr, value: ast.expr | None) -> None:
            if isinstance(target, ast.Name):
                handled.add(id(target))
                bindings[target.id].append(value)
            elif isinstance(target, (ast.Tuple, ast.List)):
                values = None
                if (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                        and not any(isinstance(e, ast.Starred) for e in value.elts)):
                    values = value.elts
                for i, t in enumerate(target.elts):
                    bind(t, values[i] if values else None)
            elif isinstance(target, ast.Starred):
                bind(target.value, None)

        nodes = list(ast.walk(tree))
        for node in nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    bind(target, node.value)
            elif isinstance(node, ast.AnnAssign):
                bind(node.target, node.value)
        loops = [n for n in nodes if isinstance(n, (ast.For, ast.AsyncFor))]
        handled |= {id(n) for loop in loops for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        for node in nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in handled:
                bindings[node.id].append(None)          # augmented assignment, with, comprehension, :=
            elif isinstance(node, ast.arg):
                bindings[node.arg].append(None)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bindings[node.name].append(None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not (node.name in SAFE_CALLS and file.replace("\\", "/").endswith(SAFE_FILES)):
                    bindings[node.name].append(None)    # (the shared helpers are defined there)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    name = (alias.asname or alias.name).split(".")[0]
                    if not (isinstance(node, ast.ImportFrom) and node.module in SAFE_MODULES
                            and alias.name == name and name in SAFE_CALLS):
                        bindings[name].append(None)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    bindings[name].append(None)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in MUTATORS and isinstance(node.func.value, ast.Name):
                bindings[node.func.value.id].append(None)   # TABS.append(name)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                    and isinstance(node.value, ast.Name):
                bindings[node.value.id].append(None)        # TABS[0] = name
        # Loops last: what they iterate over must be known in full (bound once, never changed).
        looped = {n.id for loop in loops for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        for node in loops:
            elements = self._elements(node.iter, bindings, looped)
            if elements is None:
                bind(node.target, None)
            for element in elements or []:
                bind(node.target, element)
        self.constants = {name for name, values in bindings.items()
                          if values and all(_is_literal(v) for v in values)}
        self.safe_calls = {name for name in SAFE_CALLS if not bindings.get(name)}

    @staticmethod
    def _elements(node: ast.expr, bindings, looped: set[str]) -> list[ast.expr] | None:
        """The items a `for` loop takes from a literal list/tuple (or a name bound once to one,
        or enumerate() of either); None when they cannot be known."""
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "enumerate"
                and len(node.args) == 1 and not node.keywords):
            items = _Module._elements(node.args[0], bindings, looped)
            return None if items is None else [ast.Tuple([ast.Constant(i), e], ast.Load())
                                               for i, e in enumerate(items)]
        if isinstance(node, ast.Name) and node.id not in looped and len(bindings.get(node.id, [])) == 1:
            node = bindings[node.id][0]
        if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            return list(node.elts)
        return None

    # ------------------------------------------------------------------ expressions
    def unsafe_parts(self, node: ast.expr) -> list[str]:
        """The parts of an expression that may carry data into Markdown unescaped."""
        if isinstance(node, ast.Constant):
            return []
        if isinstance(node, ast.Name) and node.id in self.constants:
            return []
        if isinstance(node, ast.JoinedStr):
            out = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    if value.format_spec is not None and _numeric_spec(value.format_spec):
                        continue
                    out += self.unsafe_parts(value.value)
            return out
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id in self.safe_calls:
                return []
            if isinstance(node.func, ast.Attribute) and node.func.attr in SAFE_CALLS \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "common":
                return []                                   # common.md(x)
            if isinstance(node.func, ast.Attribute) and node.func.attr == "join":   # "sep".join(parts)
                return self.unsafe_parts(node.func.value) + [p for a in node.args for p in self._iter_parts(a)]
            return [ast.unparse(node)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
            return self.unsafe_parts(node.left) + self.unsafe_parts(node.right)
        if isinstance(node, ast.IfExp):
            return self.unsafe_parts(node.body) + self.unsafe_parts(node.orelse)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [p for e in node.elts for p in self.unsafe_parts(e)]
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.unsafe_parts(node.elt)
        return [ast.unparse(node)]

    def _iter_parts(self, node: ast.expr) -> list[str]:
        """For `sep.join(<generator of parts>)`: the element expression must be safe."""
        if isinstance(node, (ast.GeneratorExp, ast.ListComp)):
            return self.unsafe_parts(node.elt)
        return self.unsafe_parts(node)

    def format_func_parts(self, node: ast.expr) -> list[str]:
        """A radio/pills/segmented-control `format_func`: a lambda whose result is safe, or md."""
        if isinstance(node, ast.Lambda):
            return self.unsafe_parts(node.body)
        if isinstance(node, ast.Name) and node.id in self.safe_calls:
            return []
        return [f"format_func={ast.unparse(node)}"]

    # ------------------------------------------------------------------ calls
    def check_call(self, node: ast.Call, call: str) -> list[Finding]:
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        targets: list[ast.expr] = []
        if call in PROGRESS_CALLS:
            targets += node.args[1:2] or [keywords[k] for k in ("text",) if k in keywords]
        else:
            first = node.args[0] if node.args else next(
                (keywords[k] for k in ("body", "label") if k in keywords), None)
            targets += [first] if first is not None else []
            targets += [keywords[k] for k in MARKDOWN_KEYWORDS if k in keywords]
        parts = [p for t in targets for p in self.unsafe_parts(t)]
        if call in MARKDOWN_OPTION_CALLS:
            if "format_func" in keywords:
                parts += self.format_func_parts(keywords["format_func"])
            else:
                options = node.args[1] if len(node.args) > 1 else keywords.get("options")
                parts += self.unsafe_parts(options) if options is not None else []
            if "captions" in keywords:
                parts += self.unsafe_parts(keywords["captions"])
        return [Finding(self.file, node.lineno, call, part) for part in parts]


def _numeric_spec(spec: ast.expr) -> bool:
    if isinstance(spec, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in spec.values):
        text = "".join(str(v.value) for v in spec.values)  # type: ignore[union-attr]
        return bool(text) and text[-1] in NUMERIC_SPEC_CHARS
    return False


def check_source(source: str, file: str = "<page>") -> list[Finding]:
    tree = ast.parse(source)
    module = _Module(tree, file)
    findings = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        call = _streamlit_call(node)
        if call is not None:
            findings += module.check_call(node, call)
    return findings


def check_file(path: Path, root: Path) -> list[Finding]:
    return check_source(path.read_text(encoding="utf-8"), str(path.relative_to(root)))
