"""Relations between string mentions (CMeIE, CMedCausal), drawn brat-style as arcs over the text.

CMeIE gives its subjects and objects as strings, not offsets, so every mention is first located in
the text (:func:`locate_mentions`, every occurrence) and each triple takes the CLOSEST pair of
occurrences of its subject and object (:func:`closest_pair`).

Layout (HTML and CSS only: ``st.html`` sanitises with DOMPurify, which drops SVG and scripts):

* The sentence is shown once, wrapped into lines of at most ``line_em`` em (:func:`wrap_lines`;
  a break prefers punctuation and avoids cutting a mention). A line is a row of inline-block
  *runs* whose widths are fixed here: a CJK (wide or ambiguous-width) character is 1em, any other
  character .6em in a monospace font, so every character offset has an exact horizontal position
  in em, whatever the fonts (a glyph a little narrower or wider never moves an arc). Runs are
  cut at mention boundaries, so a mention is a box of its own: its background is the entity
  type's palette colour and its type bar (with nested / overlapping mentions stacked as in
  :mod:`.spans`) sits below the characters.
* Above each line, its arcs: one row per level, highest first. In a row, arcs are laid out with
  inline-block spacers and boxes whose widths are offsets in em, so no ``left`` is needed; a box
  has a top border and side borders (the legs) whose bottom padding reaches the line's text, an
  arrowhead at the object's leg and the predicate's Chinese name on the bar (at the widest stretch
  between legs). Arcs are levelled per line like an interval graph (:func:`level_intervals`):
  shortest first, each on the lowest level where it overlaps no arc already there (labels
  included) and above every arc it nests, so arcs on one level never overlap and an arc nesting
  another goes above it. Several arcs ending on one mention get distinct anchor points across its
  width, ordered so that nested arcs do not cross there.
* An arc whose ends are on different lines is two half-arcs (:class:`ArcPiece`), open at the
  line break with a continuation mark ``»``: one above each end's line. Arcs crossing line breaks
  from one hub (CMeIE's usual star: one disease, many findings) share their half-arc at the hub
  (``临床表现 ×5``) and, on each other line, one half-arc with a leg per arc.

Below the sentence: one note per ambiguous mention (it occurs several times; arcs use the closest
occurrence, the other occurrences have a dashed bar), one list of mentions not found in the text,
the legends, and a compact table of every triple (subject, predicate, object, types, notes).

Gold / prediction comparisons (:func:`relation_marks`) mark each triple with an error category,
drawn on its arc (missed: dashed and faded; spurious: dotted, in vermillion; wrong predicate:
dashed, in orange...). Everything from the data is escaped; colours come from palette classes.
"""
from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..records import Example, Span, Triple
from ..tasks import Label, TaskSpec
from .base import RenderContext, chip, document, esc, heading, task_label_name
from .marks import mark_style
from .palette import PALETTE, Colour, color_for
from .spans import STEP_EM, assign_levels, label_width, legend_body

# ---------------------------------------------------------------- mentions


def find_all(text: str, mention: str) -> list[int]:
    """Start offsets of every occurrence of ``mention`` in ``text`` (overlapping ones too)."""
    if not mention:
        return []
    out, i = [], text.find(mention)
    while i != -1:
        out.append(i)
        i = text.find(mention, i + 1)
    return out


@dataclass(frozen=True)
class Mention:
    """A distinct subject/object string of an example's triples, located in the text."""

    text: str
    number: int                    # 1-based, by first occurrence (missing mentions last)
    occurrences: tuple[int, ...]   # start offsets
    roles: tuple[str, ...]         # "subject" and/or "object"
    types: tuple[str, ...]         # subject_type / object_type values seen

    @property
    def ambiguous(self) -> bool:
        return len(self.occurrences) > 1

    @property
    def missing(self) -> bool:
        return not self.occurrences

    @property
    def type(self) -> str:
        """The first type seen ('' when none)."""
        return self.types[0] if self.types else ""

    def spans(self) -> list[Span]:
        return [Span(o, o + len(self.text), f"#{self.number}", self.text) for o in self.occurrences]


def _mention_key(value: object) -> str:
    return "" if value is None else str(value)


def locate_mentions(text: str, triples: Iterable[Triple]) -> dict[str, Mention]:
    """Every distinct subject/object of ``triples`` with all its occurrences in ``text``."""
    roles: dict[str, list[str]] = {}
    types: dict[str, list[str]] = {}
    for t in triples:
        for mention, role, typ in ((t.subject, "subject", t.subject_type),
                                   (t.object, "object", t.object_type)):
            mention = _mention_key(mention)
            r = roles.setdefault(mention, [])
            if role not in r:
                r.append(role)
            ty = types.setdefault(mention, [])
            if typ and str(typ) not in ty:
                ty.append(str(typ))
    found = {m: find_all(text, m) for m in roles}
    order = sorted(roles, key=lambda m: (0, found[m][0], -len(m)) if found[m] else (1, 0, 0))
    return {m: Mention(m, n, tuple(found[m]), tuple(roles[m]), tuple(types[m]))
            for n, m in enumerate(order, start=1)}


def closest_pair(subject_starts: Sequence[int], subject_len: int,
                 object_starts: Sequence[int], object_len: int) -> tuple[int, int] | None:
    """The (subject start, object start) pair of occurrences that are closest in the text.

    Preference: two distinct occurrences over the same one (a triple whose subject and object are
    the same string), then disjoint over overlapping ones, then the fewest characters between
    them, then the closest centres, then the earliest. None when either side has no occurrence.
    """
    best: tuple[tuple[int, ...], tuple[int, int]] | None = None
    for s in subject_starts:
        se = s + subject_len
        for o in object_starts:
            oe = o + object_len
            same = (s, se) == (o, oe)
            overlap = s < oe and o < se
            gap = max(0, max(s, o) - min(se, oe))
            key = (int(same), int(overlap), gap, abs((s + se) - (o + oe)), s, o)
            if best is None or key < best[0]:
                best = (key, (s, o))
    return None if best is None else best[1]


# ---------------------------------------------------------------- geometry

WIDE_EM = 1.0      # a CJK / fullwidth character
NARROW_EM = 0.6    # any other character, set in a monospace font
PAD_EM = 1.0       # left padding of a line (room for continuation marks)
OPEN_EM = 0.6      # how far an arc piece runs past the text at a line break
CONT_EM = 0.86     # room kept clear of labels at an open end, for its continuation mark
ROW_EM = 1.3       # height of one arc level
BAR_TOP_EM = 0.6   # an arc's bar, from the top of its row (CSS .cbr-rl-arc margin-top)
GAP_EM = 0.12      # between an arc's legs and the text
FOOT_EM = 0.45     # below the lowest level (CSS .cbr-rl-arcs padding-bottom): legs reach below labels
CELL_EM = 1.5      # height of the text runs (CSS .cbr-rl-r)
TYPE_TOP_EM = 1.58  # first mention-type bar, from the top of the runs
LINE_EM = 40.0     # default line width
BIG_LINE_EM = 26.0  # line width in big mode


def char_em(ch: str) -> float:
    """Width of one character in the drawing, in em: wide, fullwidth and East Asian ambiguous
    characters (①, ℃, ±, “...) get a full cell, since CJK fonts draw them 1em wide."""
    return WIDE_EM if unicodedata.east_asian_width(ch) in ("W", "F", "A") else NARROW_EM


_BREAK_AFTER = set("，。；：、！？,.;:!?）)」』】》 \t")
_NO_LINE_START = set("，。；：、！？,.;:!?）)」』】》")


def wrap_lines(text: str, line_em: float = LINE_EM,
               keep: Iterable[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Cut ``text`` into lines ``[start, end)`` of at most ``line_em`` em.

    A line break in the text always ends a line (the break character belongs to no line).
    Otherwise a full line is cut after punctuation or a space near its end when there is one,
    else before a ``keep`` span (the mentions drawn) rather than inside it, else where it is full.
    """
    keep = [(a, b) for a, b in keep if b - a > 1]

    def inside(c: int) -> bool:
        return any(a < c < b for a, b in keep)

    def cut(start: int, i: int) -> int:
        near = max(start + 1, i - 12, start + (i - start) * 2 // 3)
        half = max(start + 1, start + (i - start) // 2)
        for c in range(i, near - 1, -1):
            if text[c - 1] in _BREAK_AFTER and text[c] not in _NO_LINE_START and not inside(c):
                return c
        for c in range(i, half - 1, -1):
            if not inside(c) and text[c] not in _NO_LINE_START:
                return c
        return i

    lines: list[tuple[int, int]] = []
    start, width, i, n = 0, 0.0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\r\n":
            lines.append((start, i))
            i += 2 if ch == "\r" and text[i + 1:i + 2] == "\n" else 1
            start, width = i, 0.0
            continue
        w = char_em(ch)
        if width + w > line_em + 1e-9 and i > start:
            c = cut(start, i)
            lines.append((start, c))
            start = c
            width = sum(char_em(x) for x in text[start:i])
        width += w
        i += 1
    if start < n or not lines:
        lines.append((start, n))
    return lines


def level_intervals(extents: Sequence[tuple[float, float]],
                    spans: Sequence[tuple[float, float]] | None = None) -> list[int]:
    """A level per interval such that intervals on one level never overlap (interval-graph
    levelling), shortest first, each on the lowest level where it overlaps nothing placed.

    ``spans``: the arcs themselves (between their legs) when ``extents`` are wider (labels).
    The shortest span goes first, and an arc is always above every arc nested in it, so that no
    leg ever crosses a bar of an arc it encloses.
    """
    spans = spans if spans is not None else extents
    order = sorted(range(len(extents)), key=lambda i: (spans[i][1] - spans[i][0], spans[i][0], i))
    levels = [0] * len(extents)
    placed: list[int] = []
    for i in order:
        lo, hi = extents[i]
        s0, s1 = spans[i]
        lvl = max((levels[j] + 1 for j in placed if s0 <= spans[j][0] and spans[j][1] <= s1), default=0)
        used = {levels[j] for j in placed if extents[j][0] < hi - 1e-6 and lo < extents[j][1] - 1e-6}
        while lvl in used:
            lvl += 1
        levels[i] = lvl
        placed.append(i)
    return levels


def label_em(label: str) -> float:
    """Approximate width of an arc label in em of the text (set at .72em, with padding)."""
    return 0.62 + sum(0.72 if char_em(ch) == WIDE_EM else 0.42 for ch in label)


@dataclass(frozen=True)
class ArcPiece:
    """What is drawn above one line for one triple's arc, or for a bundle of arcs that cross the
    same line break (all x in em from the line's left edge).

    An arc within a line is one piece with two legs. An arc from line i to a later line j is two
    half-arcs: one on line i, open to the right, and one on line j, open to the left, each with
    a continuation mark at its open end. Arcs that leave one mention occurrence for later lines
    with the same label share their half-arc on line i (label ``预防 ×3``); those of them that
    arrive on the same line j share one half-arc there, with one leg per arc (``legs``).
    """

    arcs: tuple[int, ...]   # indices of the triples drawn by this piece
    line: int
    level: int
    lo: float
    hi: float
    open_left: bool     # comes from an earlier line
    open_right: bool    # goes on to a later line
    arrow: str          # "left", "right" or "" (the object's leg is on another line)
    label: str          # "" when it does not fit (the arc's other half-arc carries it)
    label_x: float      # centre of the label: on the widest stretch of bar between legs
    ext: tuple[float, float]   # horizontal extent with the label, used for levelling
    legs: tuple[float, ...] = ()   # x of the legs between lo and hi (bundles)

    @property
    def arc(self) -> int:
        return self.arcs[0]


@dataclass(frozen=True)
class RelationLayout:
    text: str
    mentions: dict[str, Mention]
    lines: list[tuple[int, int]]
    line_widths: list[float]
    chosen: list[tuple[int, int] | None]   # per triple: (subject start, object start)
    pieces: list[ArcPiece]

    def arcs(self) -> set[int]:
        """Indices of the triples drawn as arcs."""
        return {k for p in self.pieces for k in p.arcs}

    def levels(self, line: int) -> int:
        """Number of arc levels above ``line``."""
        return max((p.level + 1 for p in self.pieces if p.line == line), default=0)


def short_name(name: str) -> str:
    """The first part of a display name ('临床表现 / clinical manifestation (sym)' -> '临床表现')."""
    head = name.split(" / ", 1)[0]
    head = head.split(" (", 1)[0]
    return head.strip() or name


def layout_relations(text: str, triples: Sequence[Triple], *, line_em: float = LINE_EM,
                     labels: Sequence[str] | None = None) -> RelationLayout:
    """Where every arc goes: lines, chosen occurrences and arc pieces with their levels.

    ``labels[i]``: the label drawn on triple ``i``'s arc (default: its predicate).
    """
    triples = list(triples)
    labels = list(labels) if labels is not None else [str(t.predicate) for t in triples]
    mentions = locate_mentions(text, triples)
    chosen: list[tuple[int, int] | None] = []
    for t in triples:
        sm, om = mentions[_mention_key(t.subject)], mentions[_mention_key(t.object)]
        chosen.append(closest_pair(sm.occurrences, len(sm.text), om.occurrences, len(om.text)))
    used: set[tuple[int, int]] = set()
    for t, c in zip(triples, chosen):
        if c is not None:
            used.add((c[0], c[0] + len(_mention_key(t.subject))))
            used.add((c[1], c[1] + len(_mention_key(t.object))))
    lines = wrap_lines(text, line_em, used)

    # line and x (em from the start of the line's text) of every character
    n = len(text)
    line_of = [0] * (n + 1)
    x_of = [0.0] * (n + 1)
    widths: list[float] = []
    for li, (a, b) in enumerate(lines):
        x = 0.0
        for i in range(a, b):
            line_of[i], x_of[i] = li, x
            x += char_em(text[i])
        widths.append(x)
        nxt = lines[li + 1][0] if li + 1 < len(lines) else n + 1
        for i in range(b, nxt):  # line-break characters: at the end of the line they close
            line_of[i], x_of[i] = li, x

    def occ_x(a: int, b: int) -> tuple[int, float, float]:
        li = line_of[a]
        last = max(a, min(b, lines[li][1]) - 1)
        return li, x_of[a], x_of[last] + (char_em(text[last]) if last < n else 0.0)

    ends_of: dict[tuple[int, str], tuple[int, int]] = {}
    for k, (t, c) in enumerate(zip(triples, chosen)):
        if c is not None:
            ends_of[(k, "subject")] = (c[0], c[0] + len(_mention_key(t.subject)))
            ends_of[(k, "object")] = (c[1], c[1] + len(_mention_key(t.object)))
    other_role = {"subject": "object", "object": "subject"}

    # Arcs crossing a line break are bundled at their hub: of an arc's two ends, the one whose
    # occurrence (with the same role and label) has more line-crossing arcs, the earlier on a tie.
    # The arcs of a hub share one endpoint there and one half-arc on the hub's line; on each
    # other line, their half-arcs form one piece with a leg per arc.
    def line_at(end: tuple[int, str]) -> int:
        return line_of[ends_of[end][0]]

    crossing = [k for k in range(len(triples)) if (k, "subject") in ends_of
                and line_at((k, "subject")) != line_at((k, "object"))]
    hub_count: dict[tuple[tuple[int, int], str, str], int] = {}
    for k in crossing:
        for role in ("subject", "object"):
            hk = (ends_of[(k, role)], role, labels[k])
            hub_count[hk] = hub_count.get(hk, 0) + 1
    members: dict[tuple[object, ...], list[tuple[int, str]]] = {}
    for (k, role) in ends_of:
        members[("one", k, role)] = [(k, role)]
    for k in crossing:
        first, second = sorted(("subject", "object"), key=lambda r: (line_at((k, r)), r))
        hub = first if (hub_count[(ends_of[(k, first)], first, labels[k])]
                        >= hub_count[(ends_of[(k, second)], second, labels[k])]) else second
        del members[("one", k, hub)]
        members.setdefault(("hub", ends_of[(k, hub)], hub, labels[k], hub == first), []).append((k, hub))

    ends: dict[tuple[int, int], list[tuple[tuple[float, ...], tuple[object, ...]]]] = {}
    for eid, ms in members.items():
        k, role = ms[0]
        own = ends_of[(k, role)]
        centre = own[0] + own[1]
        theirs_all = [sum(ends_of[(kk, other_role[rr])]) for kk, rr in ms]
        # ordered so that nested arcs do not cross at a shared mention: arcs to the left first,
        # the longest rightmost; then arcs to the right, the longest leftmost
        if eid[0] == "hub" and eid[4]:
            key: tuple[float, ...] = (2, -max(theirs_all), min(kk for kk, _ in ms))
        elif eid[0] == "hub":
            key = (0, -min(theirs_all), -max(kk for kk, _ in ms))
        elif theirs_all[0] > centre:
            key = (2, -theirs_all[0], k)
        elif theirs_all[0] < centre:
            key = (0, -theirs_all[0], -k)
        else:
            key = (1, k, 0 if role == "subject" else 1)
        ends.setdefault(own, []).append((key, eid))
    at: dict[tuple[object, ...], tuple[int, float]] = {}
    for (a, b), items in ends.items():
        items.sort()
        li, x0, x1 = occ_x(a, b)
        m = min(0.15, (x1 - x0) / 4)
        for j, (_, eid) in enumerate(items):
            at[eid] = (li, PAD_EM + x0 + m + (x1 - x0 - 2 * m) * (j + 0.5) / len(items))
    anchor = {end: at[eid] for eid, ms in members.items() for end in ms}

    # raw pieces: (arcs, line, lo, hi, open left, open right, arrow, legs, show the label always)
    Raw = tuple[tuple[int, ...], int, float, float, bool, bool, str, tuple[float, ...], bool]
    raw: list[Raw] = []
    far: dict[tuple[tuple[object, ...], int], list[tuple[int, float]]] = {}
    for eid, ms in members.items():
        if eid[0] == "hub":
            role, earlier = str(eid[2]), bool(eid[4])
            li, x = at[eid]
            arrow = "" if role != "object" else ("left" if earlier else "right")
            if earlier:
                raw.append((tuple(k for k, _ in ms), li, x, PAD_EM + widths[li] + OPEN_EM, False, True,
                            arrow, (), True))
            else:
                raw.append((tuple(k for k, _ in ms), li, PAD_EM - OPEN_EM, x, True, False, arrow, (), True))
            for k, end_role in ms:
                lj, xj = anchor[(k, other_role[end_role])]
                far.setdefault((eid, lj), []).append((k, xj))
            continue
        k, role = ms[0]
        if role != "subject" or k in crossing:
            continue
        s, o = anchor[(k, "subject")], anchor[(k, "object")]
        xl, xr = sorted((s[1], o[1]))
        if xr - xl < 0.3:
            mid = (xl + xr) / 2
            xl, xr = mid - 0.15, mid + 0.15
        raw.append(((k,), s[0], xl, xr, False, False, "right" if o[1] >= s[1] else "left", (), True))
    for (eid, lj), ends_here in far.items():
        ends_here.sort(key=lambda e: (e[1], e[0]))
        arcs = tuple(k for k, _ in ends_here)
        to_object = str(eid[2]) == "subject"   # the legs here are the objects' legs
        if eid[4]:   # the hub is on an earlier line: these half-arcs come from the left
            raw.append((arcs, lj, PAD_EM - OPEN_EM, ends_here[-1][1], True, False,
                        "right" if to_object else "", tuple(x for _, x in ends_here[:-1]), False))
        else:        # the hub is on a later line: these half-arcs go on to the right
            raw.append((arcs, lj, ends_here[0][1], PAD_EM + widths[lj] + OPEN_EM, False, True,
                        "left" if to_object else "", tuple(x for _, x in ends_here[1:]), False))
    raw.sort(key=lambda r: (r[1], r[2], r[3], r[0]))

    limit = PAD_EM + line_em + OPEN_EM + 0.4
    pieces: list[ArcPiece] = []
    for li in range(len(lines)):
        on_line = [r for r in raw if r[1] == li]
        exts: list[tuple[float, float]] = []
        shown: list[tuple[str, float]] = []
        for arcs, _, lo, hi, ol, orr, _ar, legs, always in on_line:
            text_ = labels[arcs[0]] + (f" ×{len(arcs)}" if len(arcs) > 1 else "")
            w = label_em(text_)
            # the label goes on the widest stretch of the bar between two legs / continuation marks
            left, right = lo + (CONT_EM if ol else 0.0), hi - (CONT_EM if orr else 0.0)
            stops = sorted([left, right, *(x for x in legs if left < x < right)])
            sa, sb = max(itertools.pairwise(stops), key=lambda ab: ab[1] - ab[0] + 1e-9 * ab[0])
            if not always and sb - sa < w + 0.3:
                exts.append((lo - 0.15, hi + 0.15))
                shown.append(("", (lo + hi) / 2))
                continue
            cx = (sa + sb) / 2
            cx = min(cx, (right if orr else limit) - w / 2)
            cx = max(cx, (left if ol else 0.05) + w / 2)
            exts.append((min(lo, cx - w / 2) - 0.15, max(hi, cx + w / 2) + 0.15))
            shown.append((text_, cx))
        levels = level_intervals(exts, [(r[2], r[3]) for r in on_line])
        for r, lvl, ext, (label, cx) in zip(on_line, levels, exts, shown):
            arcs, _, lo, hi, ol, orr, ar, legs, _always = r
            pieces.append(ArcPiece(arcs, li, lvl, lo, hi, ol, orr, ar, label, cx, ext, legs))
    return RelationLayout(text, mentions, lines, widths, chosen, pieces)


# ---------------------------------------------------------------- gold / prediction marks


def _related(a: str, b: str) -> bool:
    return bool(a) and bool(b) and a != b and (a in b or b in a)


def relation_marks(gold: Sequence[Triple], pred: Sequence[Triple]
                   ) -> tuple[dict[Triple, str], dict[Triple, str]]:
    """Error category of each gold and each predicted triple, by exact strings, in the stages of
    the relation taxonomy: ``correct``, ``wrong_predicate`` (same subject and object),
    ``swapped`` (subject and object exchanged), ``argument_boundary`` (same predicate, arguments
    equal or containing one another), then ``missed`` (gold) and ``spurious`` (prediction)."""
    def key(t: Triple) -> tuple[str, str, str]:
        return (_mention_key(t.subject), str(t.predicate), _mention_key(t.object))

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


def _arc_mark(category: str) -> tuple[str, str, str]:
    """(CSS class, symbol, 'zh / en' name) of a relation error category."""
    key = str(category).strip().lower().replace("-", "_").replace(" ", "_")
    m = mark_style(_ARC_STYLE.get(key, key))
    zh, en = _CATEGORY_NAMES.get(key, (m.zh, m.en))
    name = f"{zh} / {en}" if m.key != "other" or key in _CATEGORY_NAMES else str(category)
    return m.css_class, m.symbol, name


# ---------------------------------------------------------------- HTML

_ROLE_ZH = {"subject": "主体", "object": "客体"}

#: Colour order of the usual CMeIE / CMedCausal entity types (others: a stable hash).
ENTITY_TYPE_ORDER = ("疾病", "症状", "检查", "药物", "其他治疗", "手术治疗", "流行病学", "社会学",
                     "部位", "预后", "其他")
_NO_TYPE = PALETTE[-1]


def type_colour(typ: str) -> Colour:
    return color_for(typ, ENTITY_TYPE_ORDER) if typ else _NO_TYPE


def _em(v: float) -> str:
    return f"{max(0.0, v):.2f}em"


@dataclass(frozen=True)
class _Occ:
    start: int
    end: int
    colour: Colour
    label: str
    tip: str
    used: bool


def _occurrences(layout: RelationLayout, triples: Sequence[Triple], names: Sequence[str],
                 extra_spans: Iterable[Span]) -> list[_Occ]:
    text = layout.text
    uses: dict[tuple[int, int], list[int]] = {}
    for k, (t, c) in enumerate(zip(triples, layout.chosen)):
        if c is not None:
            uses.setdefault((c[0], c[0] + len(_mention_key(t.subject))), []).append(k)
            uses.setdefault((c[1], c[1] + len(_mention_key(t.object))), []).append(k)
    out: list[_Occ] = []
    for m in layout.mentions.values():
        n = len(m.occurrences)
        roles = " / ".join(f"{_ROLE_ZH[r]} {r}" for r in m.roles)
        types = f" [{', '.join(m.types)}]" if m.types else ""
        for j, o in enumerate(m.occurrences, start=1):
            span = (o, o + len(m.text))
            arcs = uses.get(span, [])
            tip = f"{m.text}{types} — {roles}"
            if n > 1:
                tip += f"; 第 {j} 处，共 {n} 处 / occurrence {j} of {n}"
            if arcs:
                tip += "; 弧线 / arcs: " + ", ".join(f"{k + 1} {names[k]}" for k in arcs)
            elif n > 1:
                tip += "; 没有弧线用这一处 / no arc uses this occurrence"
            # an occurrence no arc uses: a faint dashed bar, no label (its tooltip says why)
            used = bool(arcs) or n == 1
            label = (m.type + (f" {j}/{n}" if n > 1 else "")).strip() if used else ""
            out.append(_Occ(o, o + len(m.text), type_colour(m.type), label, tip, used))
    for s in extra_spans:
        if isinstance(s.start, int) and isinstance(s.end, int) and 0 <= s.start < s.end <= len(text):
            out.append(_Occ(s.start, s.end, type_colour(str(s.type)), str(s.type),
                            f"{s.type}: {text[s.start:s.end]}", True))
    return out


def _text_line(text: str, a: int, b: int, occs: Sequence[_Occ], levels: Sequence[int],
               brk: str) -> str:
    """One line of the text: runs of fixed width, mentions highlighted, type bars below."""
    here = [i for i, o in enumerate(occs) if o.start < b and a < o.end]
    cuts = {a, b}
    for i in here:
        cuts.update(c for c in (occs[i].start, occs[i].end) if a < c < b)
    for i in range(a + 1, b):
        if (char_em(text[i]) == WIDE_EM) != (char_em(text[i - 1]) == WIDE_EM):
            cuts.add(i)
    bounds = sorted(cuts)
    depth = max((levels[i] for i in here), default=-1)
    pad = (TYPE_TOP_EM - CELL_EM + depth * STEP_EM + 0.85) if depth >= 0 else 0.15
    out = [f'<div class="cbr-rl-txt" style="padding-bottom:{_em(pad)}">']
    for x, y in itertools.pairwise(bounds):
        piece = text[x:y]
        wide = char_em(piece[0]) == WIDE_EM
        cover = [i for i in here if occs[i].start <= x and y <= occs[i].end]
        cls = ["cbr-rl-r"] + ([] if wide else ["cbr-rl-n"])
        inner = [i for i in cover if occs[i].used]
        if inner:
            best = min(inner, key=lambda i: (occs[i].end - occs[i].start, -occs[i].start))
            cls += [occs[best].colour.css_class, "cbr-rl-hl"]
        bars = []
        for i in sorted(cover, key=lambda i: levels[i]):
            o = occs[i]
            bcls = ["cbr-bar", o.colour.css_class]
            if o.start == x:
                bcls.append("cbr-bs")
            if o.end == y:
                bcls.append("cbr-be")
            if not o.used:
                bcls.append("cbr-rl-unused")
            label = f'<span class="cbr-lbl">{esc(o.label)}</span>' if o.start == x and o.label else ""
            top = TYPE_TOP_EM + levels[i] * STEP_EM
            bars.append(f'<span class="{" ".join(bcls)}" style="top:{_em(top)}">{label}</span>')
        tip = "\n".join(occs[i].tip for i in cover)
        title = f' title="{esc(tip)}"' if tip else ""
        width = sum(char_em(ch) for ch in piece)
        out.append(f'<span class="{" ".join(cls)}" style="width:{_em(width)}"{title}>'
                   f'{esc(piece)}{"".join(bars)}</span>')
    out.append(esc(brk) + "</div>")
    return "".join(out)


def _arc_rows(layout: RelationLayout, li: int, tips: Sequence[str],
              mark_of: Sequence[tuple[str, str, str] | None]) -> str:
    mine = [p for p in layout.pieces if p.line == li]
    if not mine:
        return ""
    top = max(p.level for p in mine)
    rows = []
    for lvl in range(top, -1, -1):
        cursor = 0.0
        cells = []
        for p in sorted((p for p in mine if p.level == lvl), key=lambda p: p.lo):
            if p.lo - cursor > 0.005:
                cells.append(f'<span class="cbr-rl-gap" style="width:{_em(p.lo - cursor)}"></span>')
            legs = (lvl + 1) * ROW_EM + FOOT_EM - BAR_TOP_EM - GAP_EM - 0.13
            cls = ["cbr-rl-arc"] + [f"cbr-rl-k{k}" for k in p.arcs]
            if p.arrow:
                cls.append("cbr-rl-al" if p.arrow == "left" else "cbr-rl-ar")
            if p.open_left:
                cls.append("cbr-rl-nl")
            if p.open_right:
                cls.append("cbr-rl-nr")
            mk = mark_of[p.arc]
            if mk is not None:
                cls.append(mk[0])
            label = (f'<span class="cbr-rl-at" style="width:{_em(p.label_x - p.lo)}">'
                     f'<span class="cbr-lbl cbr-rl-lbl">{esc(p.label)}</span></span>') if p.label else ""
            tip = "\n".join(tips[k] for k in p.arcs)
            if p.open_left or p.open_right:
                tip += "\n（跨行 / continues across the line break）"
            cont = ('<span class="cbr-rl-cont cbr-rl-cl"></span>' if p.open_left else "") + (
                '<span class="cbr-rl-cont cbr-rl-cr"></span>' if p.open_right else "")
            leg_cls = "cbr-rl-leg" + (" cbr-rl-lega" if p.arrow else "")
            cont += "".join(f'<span class="{leg_cls}" style="width:{_em(x - p.lo)}"></span>' for x in p.legs)
            cells.append(f'<span class="cbr-rl-slot" style="width:{_em(p.hi - p.lo)}">'
                         f'<span class="{" ".join(cls)}" style="padding-bottom:{_em(legs)}" '
                         f'title="{esc(tip)}">{label}{cont}</span></span>')
            cursor = p.hi
        rows.append(f'<div class="cbr-rl-row">{"".join(cells)}</div>')
    return f'<div class="cbr-rl-arcs">{"".join(rows)}</div>'


def _mention_cell(text: str, typ: str, m: Mention | None) -> str:
    label = text if text else "（空 / empty）"
    extra = "cbr-missing" if m is not None and m.missing else ""
    tip = text + (f" [{typ}]" if typ else "")
    if m is not None and m.missing:
        tip += " — 原文中未找到 / not found in the text"
    code = f' <span class="cbr-code">{esc(typ)}</span>' if typ else ""
    return chip(label, type_colour(typ), title=tip, extra=extra) + code


def relations_body(text: str, triples: Sequence[Triple], *,
                   label_name: Callable[[str], str] | None = None,
                   extra_spans: Iterable[Span] = (),
                   short_label: Callable[[str], str] | None = None,
                   marks: Mapping[Triple, str] | None = None,
                   line_em: float = LINE_EM) -> str:
    """Fragment: the sentence with its triples as arcs over it, notes, legends, triple table.

    ``label_name(predicate)``: the predicate's full display name (tooltips, table);
    ``short_label(predicate)``: the name on the arc (default: the first part of the full name);
    ``marks``: triple -> error category (see :func:`relation_marks`), drawn on the arcs;
    ``extra_spans``: more spans to highlight; ``line_em``: the width of a line in em.
    """
    triples = list(triples)
    text = "" if text is None else str(text)
    name = label_name or (lambda p: str(p))
    short = short_label or (lambda p: short_name(name(p)))
    marks = dict(marks or {})
    mark_of = [_arc_mark(marks[t]) if t in marks else None for t in triples]
    arc_labels = [(f"{mk[1]} " if mk else "") + short(t.predicate) for t, mk in zip(triples, mark_of)]
    layout = layout_relations(text, triples, line_em=line_em, labels=arc_labels)
    mentions = layout.mentions
    names = [name(t.predicate) for t in triples]

    tips = []
    for k, t in enumerate(triples):
        st = f" [{t.subject_type}]" if t.subject_type else ""
        ot = f" [{t.object_type}]" if t.object_type else ""
        tip = f"{k + 1}. {t.subject}{st} → {names[k]} → {t.object}{ot}"
        if t.combined:
            tip += "\nCombined=True"
        mk = mark_of[k]
        if mk is not None:
            tip += f"\n{mk[1]} {mk[2]}"
        tips.append(tip)

    occs = _occurrences(layout, triples, names, extra_spans)
    levels = assign_levels([Span(o.start, o.end, o.label) for o in occs],
                           [label_width(o.label) for o in occs])
    out: list[str] = []
    if text:
        fig = ['<div class="cbr-rl">']
        for li, (a, b) in enumerate(layout.lines):
            nxt = layout.lines[li + 1][0] if li + 1 < len(layout.lines) else len(text)
            fig.append(f'<div class="cbr-rl-line">{_arc_rows(layout, li, tips, mark_of)}'
                       f'{_text_line(text, a, b, occs, levels, text[b:nxt])}</div>')
        fig.append("</div>")
        out.append("".join(fig))

    notes = []
    for m in mentions.values():
        if m.ambiguous:
            notes.append(f'<div class="cbr-note">「{esc(m.text)}」出现 {len(m.occurrences)} 次，弧线连接最近的一处 / '
                         f'{esc(m.text)} occurs {len(m.occurrences)} times; arcs use the closest '
                         f'occurrence</div>')
    missing = [m for m in mentions.values() if m.missing]
    if missing:
        listed = "，".join(f"「{esc(m.text) if m.text else '（空 / empty）'}」" for m in missing)
        notes.append(f'<div class="cbr-warn">原文中未找到 / not in the text: {listed}</div>')
    out.extend(notes)

    types = list(dict.fromkeys(m.type for m in mentions.values() if m.type and not m.missing))
    if types:
        ordered = [t for t in ENTITY_TYPE_ORDER if t in types] + [t for t in types if t not in ENTITY_TYPE_ORDER]
        out.append(legend_body(ordered, order=ENTITY_TYPE_ORDER))
    present = list(dict.fromkeys(mk for mk in mark_of if mk is not None))
    if present:
        out.append('<div class="cbr-legend">' + "".join(
            f'<span class="cbr-chip"><span class="cbr-rl-sw {css}"></span>{esc(sym)} {esc(nm)}</span>'
            for css, sym, nm in present) + "</div>")

    if not triples:
        out.append('<div class="cbr-muted">无关系 / no relations</div>')
        return "".join(out)
    rows = [('<tr><th>#</th><th>主体 / subject</th><th>关系 / predicate</th><th>客体 / object</th>'
             '<th>备注 / notes</th></tr>')]
    for k, t in enumerate(triples):
        sm, om = mentions[_mention_key(t.subject)], mentions[_mention_key(t.object)]
        cell_notes = []
        mk = mark_of[k]
        if mk is not None:
            cell_notes.append(f'<span class="cbr-badge">{esc(mk[1])} {esc(mk[2])}</span>')
        if t.combined:
            cell_notes.append('<span class="cbr-badge" title="Combined=True: 由多句组合得出的关系 / '
                              'relation combined across sentences">⊕ Combined</span>')
        if layout.chosen[k] is None:
            lost = [r for r, m in (("subject", sm), ("object", om)) if m.missing]
            cell_notes.append('<span class="cbr-muted">无弧线：' + "、".join(_ROLE_ZH[r] for r in lost)
                              + " 不在原文 / no arc: " + " and ".join(lost) + " not in the text</span>")
        rows.append(f'<tr><td>{k + 1}</td><td>{_mention_cell(sm.text, t.subject_type, sm)}</td>'
                    f'<td title="{esc(tips[k])}">{esc(names[k])}</td>'
                    f'<td>{_mention_cell(om.text, t.object_type, om)}</td><td>{"".join(cell_notes)}</td></tr>')
    out.append(heading("关系", f"relations ({len(triples)})"))
    out.append(f'<table class="cbr-tab cbr-rl-tab">{"".join(rows)}</table>')
    return "".join(out)


def _short_labels(task: TaskSpec) -> Callable[[str], str]:
    table: dict[str, Label] = {}
    for lab in task.labels[::-1]:
        table[lab.zh] = lab
    for lab in task.labels[::-1]:
        table[lab.code] = lab

    def short(code: str) -> str:
        lab = table.get(str(code))
        return (lab.zh or lab.code) if lab else str(code)
    return short


def render_relations(ex: Example, task: TaskSpec, ctx: RenderContext,
                     marks: Mapping[Triple, str] | None = None) -> str:
    """The renderer of the relations kind: ``ex.triples`` as arcs over ``ex.text``."""
    return relations_body(ex.text, ex.triples, label_name=task_label_name(task),
                          short_label=_short_labels(task), marks=marks,
                          line_em=BIG_LINE_EM if ctx.big else LINE_EM)


def relations_html(text: str, triples: Sequence[Triple], *,
                   label_name: Callable[[str], str] | None = None,
                   big: bool = False,
                   marks: Mapping[Triple, str] | None = None,
                   line_em: float | None = None) -> str:
    """Self-contained HTML of ``text`` with the relation ``triples`` drawn as arcs over it.

    ``label_name(predicate)`` gives the predicate's display name (default: as stored);
    ``marks`` maps triples to error categories; ``line_em`` sets the line width in em.
    """
    width = line_em if line_em is not None else (BIG_LINE_EM if big else LINE_EM)
    return document(relations_body(text, triples, label_name=label_name, marks=marks, line_em=width),
                    big=big)
