"""Text2DT decision trees: the guideline text plus a table of the tree's nodes.

``meta["tree"]`` is the pre-order node list of a binary tree: a condition node (role ``C``)
has two children (yes branch, then no branch), a decision node (``D``) is a leaf. Depth and
branch are derived from that order; when the list does not fit that shape they are left blank.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .base import document, esc, heading, text_block

_ROLE = {"C": "条件 / condition", "D": "决策 / decision"}


def tree_positions(nodes: Sequence[Any]) -> list[tuple[int, str]] | None:
    """(depth, branch) per node for a well-formed pre-order list, else ``None``.
    branch: '' for the root, '是 yes' / '否 no' for the first / second child of a condition."""
    out: list[tuple[int, str]] = []
    stack: list[list[int]] = []  # [depth of parent, children seen]
    for i, node in enumerate(nodes):
        role = node.get("role") if isinstance(node, dict) else None
        if i > 0 and not stack:
            return None
        if stack:
            parent = stack[-1]
            branch = "是 yes" if parent[1] == 0 else "否 no"
            depth = parent[0] + 1
            parent[1] += 1
            if parent[1] == 2:
                stack.pop()
        else:
            branch, depth = "", 0
        out.append((depth, branch))
        if role == "C":
            stack.append([depth, 0])
    return out if not stack else None


def _triples_text(triples: Any) -> str:
    if not isinstance(triples, (list, tuple)):
        return esc(triples)
    parts = []
    for tr in triples:
        if isinstance(tr, (list, tuple)) and len(tr) == 3:
            parts.append(f"{esc(tr[0])} —{esc(tr[1])}→ {esc(tr[2])}")
        else:
            parts.append(esc(tr))
    return "<br>".join(parts)


def tree_body(text: str, nodes: Any, *, relation_name: Callable[[str], str] | None = None) -> str:
    out = [text_block(text)]
    if not isinstance(nodes, (list, tuple)) or not nodes:
        out.append('<div class="cbr-muted">无决策树 / no tree</div>')
        return "".join(out)
    rname = relation_name or (lambda r: str(r))
    pos = tree_positions(nodes)
    rows = []
    for i, node in enumerate(nodes):
        if isinstance(node, dict):
            role = str(node.get("role", ""))
            triples = node.get("triples", [])
            if isinstance(triples, list):
                triples = [[t[0], rname(t[1]), t[2]] if isinstance(t, (list, tuple)) and len(t) == 3
                           else t for t in triples]
            logic = node.get("logical_rel", "")
        else:
            role, triples, logic = "", node, ""
        depth, branch = pos[i] if pos else (0, "")
        indent = f'<span class="cbr-depth" style="width:{depth * 1.2:.1f}em"></span>'
        rows.append(f"<tr><td>{i + 1}</td><td>{indent}{esc(branch)}</td>"
                    f"<td>{esc(_ROLE.get(role, role))}</td><td>{_triples_text(triples)}</td>"
                    f"<td>{esc(logic)}</td></tr>")
    out.append(heading("决策树节点", f"tree nodes ({len(nodes)})"))
    if pos is None:
        out.append('<div class="cbr-note">节点序列不是完整的前序二叉树 / the node list is not a '
                   'complete pre-order binary tree</div>')
    out.append('<table class="cbr-tab"><tr><th>#</th><th>分支 branch</th><th>角色 role</th>'
               '<th>三元组 triples</th><th>逻辑 logic</th></tr>' + "".join(rows) + "</table>")
    return "".join(out)


def tree_html(text: str, nodes: Any, *, big: bool = False,
              relation_name: Callable[[str], str] | None = None) -> str:
    return document(tree_body(text, nodes, relation_name=relation_name), big=big)
