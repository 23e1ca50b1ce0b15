"""Where a relation drawing puts things: lines, mention occurrences and arc pieces with their levels.

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
"""
from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..records import Triple
from .mentions import Mention, closest_pair, locate_mentions, mention_key

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
        sm, om = mentions[mention_key(t.subject)], mentions[mention_key(t.object)]
        chosen.append(closest_pair(sm.occurrences, len(sm.text), om.occurrences, len(om.text)))
    used: set[tuple[int, int]] = set()
    for t, c in zip(triples, chosen):
        if c is not None:
            used.add((c[0], c[0] + len(mention_key(t.subject))))
            used.add((c[1], c[1] + len(mention_key(t.object))))
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
            ends_of[(k, "subject")] = (c[0], c[0] + len(mention_key(t.subject)))
            ends_of[(k, "object")] = (c[1], c[1] + len(mention_key(t.object)))
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
