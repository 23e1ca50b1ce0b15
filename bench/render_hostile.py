"""Rendering hostile records: HTML size and time of one example, which must stay linear in the
record (targets: every case under 2 million characters and 2 s; n and 2n spans about 2x).

1. CMeEE: n nested entities [0, i) over a 2,000-character record;
2. CMeIE: n triples over nested mentions (prefixes of the text);
3. CMeIE: n triples whose mentions occur at every offset of a 2,000-character record.

    python bench/render_hostile.py [N ...]      # default: 200 500 1000 2000
"""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cblue_core.records import Example, Span, Triple
from cblue_core.render.example import example_html
from cblue_core.tasks import get_task

LENGTH = 2_000


def nested_entities(n: int) -> Example:
    text = "字" * LENGTH
    return Example(key="x", index=0, text=text, spans=[Span(0, i, "dis", text[:i]) for i in range(1, n + 1)])


def nested_mentions(n: int) -> Example:
    rng = random.Random(1)
    text = "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(LENGTH))
    return Example(key="x", index=0, text=text, triples=[Triple(text[:k + 1], "临床表现", text[:k + 2], "疾病", "症状")
                                       for k in range(n)])


def mentions_everywhere(n: int) -> Example:
    return Example(key="x", index=0, text="字" * LENGTH, triples=[Triple("字" * (k % 5 + 1), "临床表现", "字" * (k % 7 + 1),
                                                       "疾病", "症状") for k in range(n)])


CASES = (("CMeEE nested entities", "CMeEE", nested_entities),
         ("CMeIE nested mentions", "CMeIE", nested_mentions),
         ("CMeIE mentions at every offset", "CMeIE", mentions_everywhere))


def main(sizes: list[int]) -> None:
    for title, task, make in CASES:
        spec = get_task(task)
        for n in sizes:
            ex = make(n)
            t = time.perf_counter()
            out = example_html(ex, spec)
            dt = time.perf_counter() - t
            print(f"{title:32s} n={n:5d}: {len(out.encode()):>12,} bytes  {dt:6.2f} s")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [200, 500, 1000, 2000])
