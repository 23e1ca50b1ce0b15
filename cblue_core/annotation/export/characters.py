"""Which characters each export format can hold, and what happens to the others.

Every target format is read by a tool with rules of its own, and a character it reads as
syntax would inject lines, break the file or shift offsets:

- **Line breaks** (:data:`LINE_BREAKS`): brat reads ``.ann`` files line by line (brat 1.3 on
  Python 2 read them through ``codecs``, which splits where ``str.splitlines`` does; its
  ``source=`` reader still calls ``splitlines``), so a mention or a display name holding one
  would start a line of the attacker's choosing (``T9``, ``R1``, a ``visual.conf`` entry).
  JSON lines split at the same characters in readers built on ``splitlines`` (ours included):
  inside JSON strings they are written as ``\\u`` escapes.
- **XML 1.0** (Label Studio's labeling config) cannot hold C0 controls other than tab, LF and
  CR, U+FFFE, U+FFFF or surrogates, not even as character references: refused.
- **Lone surrogates** cannot be written as UTF-8: escaped in JSON, refused elsewhere.

A refusal is a :class:`ValueError` naming the example, the field and the character, raised
before anything is written.
"""
from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LINE_BREAK = re.compile("[" + re.escape(LINE_BREAKS) + "]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# JSON escapes every C0 control itself; these remain raw in json.dumps(ensure_ascii=False).
_JSON_RAW_BREAKS = re.compile("[\x85\u2028\u2029\ud800-\udfff]")
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_INVISIBLE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Cn"}


def describe(ch: str) -> str:
    """``U+2028 (LINE SEPARATOR)``: a character as an error message names it."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name})" if name else "")


def visible(text: str) -> str:
    """``text`` with controls, format characters, separators, surrogates and noncharacters
    written as ``\\xNN`` / ``\\uNNNN`` escapes: a name as a person reads it in a display label,
    a README or a message, on one line and with nothing hidden."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in _INVISIBLE:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                       else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def refusal(where: str, field: str, value: str, ch: str, why: str) -> ValueError:
    """The error for a value a format cannot hold: the example, the field, the value as it
    reads (cut at 80 characters), the character and why."""
    shown = visible(value)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return ValueError(f"{where}, {field}: '{shown}' holds {describe(ch)}, {why}")


def check_utf8(where: str, field: str, value: str) -> None:
    """Refuse a lone surrogate, which no UTF-8 file can hold."""
    m = _SURROGATE.search(value)
    if m:
        raise refusal(where, field, value, m.group(), "which cannot be written as UTF-8")


def check_xml(where: str, field: str, value: str, tool: str) -> None:
    """Refuse a character XML 1.0 cannot hold (even as a character reference)."""
    m = _NOT_XML.search(value)
    if m:
        raise refusal(where, field, value, m.group(),
                      f"which {tool} (XML 1.0) cannot hold; rename it before exporting")


def json_text(obj: Any, indent: int | None = None) -> str:
    """``json.dumps(obj, ensure_ascii=False)`` with U+0085, U+2028, U+2029 and lone surrogates
    written as ``\\u`` escapes (they can only occur inside strings, where JSON allows them), so
    that the text splits into lines only where its own line breaks are and encodes as UTF-8."""
    return escape_json_breaks(json.dumps(obj, ensure_ascii=False, indent=indent))


def escape_json_breaks(text: str) -> str:
    """JSON text with U+0085, U+2028, U+2029 and lone surrogates written as ``\\u`` escapes
    (outside strings JSON text is ASCII, so only characters inside strings change)."""
    return _JSON_RAW_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
