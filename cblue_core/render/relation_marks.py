"""Error categories of relation triples, gold against prediction, and how each is drawn on an arc."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ..records import Triple
from .marks import mark_style
from .mentions import mention_key


def _related(a: str, b: str) -> bool:
    return bool(a) and bool(b) and a != b and (a in b or b in a)


def relation_marks(gold: Sequence[Triple], pred: Sequence[Triple]
                   ) -> tuple[dict[Triple, str], dict[Triple, str]]:
    """Error category of each gold and each predicted triple, by exact strings, in the stages of
    the relation taxonomy: ``correct``, ``wrong_predicate`` (same subject and object),
    ``swapped`` (subject and object exchanged), ``argument_boundary`` (same predicate, arguments
    equal or containing one another), then ``missed`` (gold) and ``spurious`` (prediction)."""
    def key(t: Triple) -> tuple[str, str, str]:
        return (mention_key(t.subject), str(t.predicate), mention_key(t.object))

    gmarks: dict[Triple, str] = {}
    pmarks: dict[Triple, str] = {}
    rest_g = list(dict.fromkeys(gold))
    rest_p = list(dict.fromkeys(pred))
    stages: tuple[tuple[str, Callable[[tuple[str, str, str], tuple[str, str, str]], bool]], ...] = (
        ("correct", lambda g, p: g == p),
        ("wrong_predicate", lambda g, p: (g[0], g[2]) == (p[0], p[2]) and g[1] != p[1]),
        ("swapped", lambda g, p: (g[0], g[2]) == (p[2], p[0]) and g[0] != g[2]),
        ("argument_boundary", lambda g, p: g[1] == p[1] and g != p
         and (g[0] == p[0] or _related(g[0], p[0])) and (g[2] == p[2] or _related(g[2], p[2]))),
    )
    for name, match in stages:
        keep_g = []
        for g in rest_g:
            hit = next((p for p in rest_p if match(key(g), key(p))), None)
            if hit is None:
                keep_g.append(g)
            else:
                gmarks[g] = pmarks[hit] = name
                rest_p.remove(hit)
        rest_g = keep_g
    gmarks.update({g: "missed" for g in rest_g})
    pmarks.update({p: "spurious" for p in rest_p})
    return gmarks, pmarks


# how a relation category is drawn: the mark style (symbol, names, label style) it borrows
_ARC_STYLE = {"wrong_predicate": "wrong_type", "argument_boundary": "wrong_boundary",
              "swapped": "wrong_both"}
_CATEGORY_NAMES = {"wrong_predicate": ("关系错误", "wrong predicate"),
                   "argument_boundary": ("论元边界错误", "argument boundary"),
                   "swapped": ("主客颠倒", "subject and object swapped")}


def arc_mark(category: str) -> tuple[str, str, str]:
    """(CSS class, symbol, 'zh / en' name) of a relation error category."""
    key = str(category).strip().lower().replace("-", "_").replace(" ", "_")
    m = mark_style(_ARC_STYLE.get(key, key))
    zh, en = _CATEGORY_NAMES.get(key, (m.zh, m.en))
    name = f"{zh} / {en}" if m.key != "other" or key in _CATEGORY_NAMES else str(category)
    return m.css_class, m.symbol, name
