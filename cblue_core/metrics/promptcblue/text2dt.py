"""Text2DT decision-tree scores as the official ``text2dt_eval_func.py`` computes them.

A tree is a pre-order list of nodes ``{"role": "C"|"D", "logical_rel", "triples": [[s, r, o]]}``.
:func:`tree_counts` returns the 12 per-tree counts of ``text2dt_eval_single_tree`` (as a
:class:`TreeCounts`), and :func:`aggregate` turns a list of them into the task scores
(``tree_lenv_radio``, ``node_f1``, ``path_f1``) exactly as ``calc_text2dt_task_scores`` does:
counts start at 1e-6, the edit distance and its maximum at integer 0.

Behaviour kept on purpose (docs/metrics.md section 3):

* triples are lower-cased into tuples; a triple whose ``len`` is not 3 is an
  ``AssertionError("the triple format is wrong")``;
* the node matrix is built by at most 101 reduction passes (invalid trees just stop);
  an empty node list is an ``IndexError``;
* exceptions inside the edit distance are swallowed (the distance so far is kept), and
  inside the decision paths they give 0 correct paths with the path counts reached so far;
* ``node_f1`` counts every equal (predicted, gold) node *pair*; ``path_f1`` counts a
  predicted root-to-leaf path once if it equals any gold path.

The input trees are deep-copied; they are never modified.
"""
from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

__all__ = ["TreeCounts", "aggregate", "node_matrix", "prepare_tree", "tree_counts"]

Node = dict[str, Any]      # {"role", "logical_rel", "triples"}
Tree = list[Node]          # pre-order
Matrix = list[list[Any]]   # 0, or "F" / "L" / "R" (see node_matrix)

_MISSING_NODE: Node = {"role": "", "triples": [], "logical_rel": "null"}


class TreeCounts(NamedTuple):
    """The tuple ``text2dt_eval_single_tree`` returns, in its order."""

    tree_num: int
    correct_tree: int
    correct_triplet: int
    predict_triplet: int
    gold_triplet: int
    correct_path: int
    predict_path: int
    gold_path: int
    edit_dis: int
    correct_node: int
    predict_node: int
    gold_node: int

    @property
    def max_edit(self) -> int:
        """This tree pair's contribution to the maximum edit distance."""
        return (self.predict_triplet + self.predict_node * 2) + (self.gold_triplet + self.gold_node * 2)


def prepare_tree(tree: Tree) -> Tree:
    """A deep copy with every triple lower-cased into a tuple (asserting length 3)."""
    tree = copy.deepcopy(tree)
    for node in tree:
        triples = node["triples"]
        for i in range(len(triples)):
            t = triples[i]
            if len(t) != 3:
                raise AssertionError("the triple format is wrong")
            triples[i] = (t[0].lower(), t[1].lower(), t[2].lower())
    return tree


def node_matrix(tree: Sequence[Node]) -> Matrix:
    """``matrix[i][j]`` is 'F', 'L' or 'R' when node j is the parent/left/right child of node i."""
    roles = [node["role"] for node in tree]
    n = len(roles)
    matrix: Matrix = [[0] * n for _ in range(n)]
    passes = 0
    while roles[0] != "D":  # IndexError on an empty tree, as in the official code
        for i in range(n):
            if roles[i] != "C":
                continue
            left: int | None = None
            reduced = False
            for j in range(i + 1, n):
                if roles[j] == "C":
                    break
                if roles[j] != "D":
                    continue
                if left is None:
                    left = j
                    continue
                roles[i] = "D"
                matrix[left][i] = matrix[j][i] = "F"
                matrix[i][left] = "L"
                matrix[i][j] = "R"
                for k in range(i + 1, j + 1):
                    roles[k] = "X"
                reduced = True
                break
            if reduced:
                break
        passes += 1
        if passes > 100:
            break
    return matrix


def _node_dis(a: Node, b: Node | None) -> int:
    if b is None:
        b = _MISSING_NODE
    dis = 0
    if a["role"] != b["role"]:
        dis += 1
    if a["logical_rel"] != b["logical_rel"]:
        dis += 1
    return dis + len(set(a["triples"]) ^ set(b["triples"]))


def _is_leaf(row: list[Any]) -> bool:
    return "L" not in row and "R" not in row


def _extra_subtree_costs(tree: Tree, matrix: Matrix, root: int) -> Iterator[int]:
    """Costs of the children of ``root`` (recursively) against missing nodes, one by one, so
    that a failure half-way keeps what was added before it (as the official loop does)."""
    stack = [matrix[root].index("R"), matrix[root].index("L")]
    while stack:
        k = stack.pop()
        yield _node_dis(tree[k], None)
        if "L" in matrix[k] and "R" in matrix[k]:
            stack.append(matrix[k].index("R"))
            stack.append(matrix[k].index("L"))


def _edit_distance(pred: Tree, gold: Tree, pm: Matrix, gm: Matrix) -> int:
    dis = 0
    stack_p, stack_g = [0], [0]
    try:
        while stack_p:
            s1, s2 = stack_p.pop(), stack_g.pop()
            pred_leaf, gold_leaf = _is_leaf(pm[s1]), _is_leaf(gm[s2])
            pred_full = "L" in pm[s1] and "R" in pm[s1]
            gold_partial = "L" not in gm[s2] or "R" not in gm[s2]
            if pred_leaf and not gold_leaf:
                dis += _node_dis(pred[s1], gold[s2])
                for cost in _extra_subtree_costs(gold, gm, s2):
                    dis += cost
            elif pred_full and gold_partial:
                dis += _node_dis(pred[s1], gold[s2])
                for cost in _extra_subtree_costs(pred, pm, s1):
                    dis += cost
            elif pred_leaf and gold_leaf:
                dis += _node_dis(pred[s1], gold[s2])
            else:
                stack_p.extend((pm[s1].index("R"), pm[s1].index("L")))
                stack_g.extend((gm[s2].index("R"), gm[s2].index("L")))
                dis += _node_dis(pred[s1], gold[s2])
    except Exception:  # noqa: BLE001, S110 - the official code swallows everything here
        pass
    return dis


def _paths(tree: Tree, matrix: Matrix, out: list[list[Any]]) -> None:
    leaves = [i for i, row in enumerate(matrix) if _is_leaf(row)]
    for node in leaves:
        path: list[Any] = [tree[node]]
        while node != 0:
            parent = matrix[node].index("F")
            path.append(matrix[parent][node])
            path.append(tree[parent])
            node = parent
        out.append(path)


def _same_node(a: Node, b: Node) -> bool:
    return a["role"] == b["role"] and a["logical_rel"] == b["logical_rel"] and set(a["triples"]) == set(b["triples"])


def _same_path(p1: list[Any], p2: list[Any]) -> bool:
    if len(p1) != len(p2):
        return False
    for x, y in zip(p1, p2):
        if isinstance(x, dict) and isinstance(y, dict):
            if not _same_node(x, y):
                return False
        elif x != y:
            return False
    return True


def _decision_paths(pred: Tree, gold: Tree, pm: Matrix, gm: Matrix) -> tuple[int, int, int]:
    paths_p: list[list[Any]] = []
    paths_g: list[list[Any]] = []
    try:
        _paths(pred, pm, paths_p)
        _paths(gold, gm, paths_g)
        correct = sum(1 for p1 in paths_p if any(_same_path(p1, p2) for p2 in paths_g))
    except Exception:  # noqa: BLE001 - the official code swallows everything here
        correct = 0
    return correct, len(paths_p), len(paths_g)


def _tree_equal(pred: Tree, gold: Tree) -> int:
    if len(pred) != len(gold):
        return 0
    return int(all(_same_node(p, g) for p, g in zip(pred, gold)))


def _distinct_triples(tree: Tree) -> set[tuple[str, str, str]]:
    return {t for node in tree for t in node["triples"]}


def tree_counts(pred_tree: Tree, gold_tree: Tree) -> TreeCounts:
    """The official per-tree counts (``text2dt_eval_single_tree(pred, gold)``)."""
    pred = prepare_tree(pred_tree)
    gold = prepare_tree(gold_tree)
    pm = node_matrix(pred)
    gm = node_matrix(gold)
    tree_num = 0 if pred == [] else 1
    correct_tree = _tree_equal(pred, gold)
    pt, gt = _distinct_triples(pred), _distinct_triples(gold)
    correct_path, predict_path, gold_path = _decision_paths(
        copy.deepcopy(pred), copy.deepcopy(gold), copy.deepcopy(pm), copy.deepcopy(gm))
    edit = _edit_distance(pred, gold, pm, gm)
    pred_nodes = [n for n in pred if len(n["triples"]) > 0]
    gold_nodes = [n for n in gold if len(n["triples"]) > 0]
    correct_node = sum(1 for a in pred_nodes for b in gold_nodes if len(a["triples"]) > 0 and _same_node(a, b))
    return TreeCounts(tree_num, correct_tree, len(gt & pt), len(pt), len(gt), correct_path, predict_path,
                      gold_path, edit, correct_node, len(pred_nodes), len(gold_nodes))


def _f1(correct: float, predicted: float, gold: float) -> float:
    p, r = correct / predicted, correct / gold
    return 2 * p * r / (p + r)


def aggregate(counts: Sequence[TreeCounts]) -> dict[str, float]:
    """``{"tree_lenv_radio", "node_f1", "path_f1"}`` from per-tree counts, summed in order.

    Raises ``ZeroDivisionError`` when no tree has a triple (as the official code does).
    """
    eps = 0.000001
    c_path = p_path = g_path = eps
    c_node = p_node = g_node = eps
    edit = max_edit = 0
    for c in counts:
        c_path += c.correct_path
        p_path += c.predict_path
        g_path += c.gold_path
        edit += c.edit_dis
        max_edit += c.max_edit
        c_node += c.correct_node
        p_node += c.predict_node
        g_node += c.gold_node
    path_f1 = _f1(c_path, p_path, g_path)
    ratio = 1 - edit / max_edit
    node_f1 = _f1(c_node, p_node, g_node)
    return {"tree_lenv_radio": ratio, "node_f1": node_f1, "path_f1": path_f1}


def sanitize_tree(tree: Any) -> tuple[Tree, int]:
    """For clean mode: a copy in which malformed parts are dropped instead of failing.

    Triples that are not 3 strings are dropped, nodes that are not dicts are dropped, missing
    keys get ``role=""``, ``logical_rel="null"``, ``triples=[]``, and an empty tree becomes the
    post-processor's default node. Returns ``(tree, number of dropped triples/nodes)``.
    """
    dropped = 0
    out: Tree = []
    for node in tree if isinstance(tree, list) else []:
        if not isinstance(node, dict):
            dropped += 1
            continue
        triples = []
        raw = node.get("triples")
        for t in raw if isinstance(raw, (list, tuple)) else []:
            if isinstance(t, (list, tuple)) and len(t) == 3 and all(isinstance(x, str) for x in t):
                triples.append(list(t))
            else:
                dropped += 1
        out.append({"role": node.get("role", ""), "logical_rel": node.get("logical_rel", "null"),
                    "triples": triples})
    if not out:
        out = [{"role": "D", "logical_rel": "null", "triples": []}]
    return out, dropped
