"""``transformers.BasicTokenizer(tokenize_chinese_chars=True)`` with its other defaults, in pure Python.

Steps, as in transformers 5.24 (the version the reference outputs were made with):

1. drop NUL, U+FFFD and control characters (Unicode category C*, except tab/newline/CR);
   turn tab, newline, CR and every Zs character into a space;
2. put spaces around every CJK ideograph (the BERT CJK ranges);
3. NFC-normalise (added in transformers 4.3x; older versions skip it, which matters only
   for text that is not already NFC);
4. split on whitespace; lower-case each token and strip accents (NFD, drop category Mn);
5. split every punctuation character (ASCII non-alphanumerics and Unicode P*) into its own
   token; split on whitespace again.
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["basic_tokenize", "tokenized_text"]

_CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)


def _is_cjk(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def _is_whitespace(ch: str) -> bool:
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def _is_control(ch: str) -> bool:
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch).startswith("C")


def _is_punctuation(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _clean(text: str) -> str:
    out = []
    for ch in text:
        if ch == "\x00" or ch == "\ufffd" or _is_control(ch):
            continue
        out.append(" " if _is_whitespace(ch) else ch)
    return "".join(out)


def _space_cjk(text: str) -> str:
    return "".join(f" {ch} " if _is_cjk(ord(ch)) else ch for ch in text)


def _strip_accents(token: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFD", token) if unicodedata.category(ch) != "Mn")


def _split_punct(token: str) -> list[str]:
    pieces: list[str] = []
    current: list[str] = []
    for ch in token:
        if _is_punctuation(ch):
            if current:
                pieces.append("".join(current))
                current = []
            pieces.append(ch)
        else:
            current.append(ch)
    if current:
        pieces.append("".join(current))
    return pieces


def basic_tokenize(text: str) -> list[str]:
    """The tokens ``BasicTokenizer(tokenize_chinese_chars=True).tokenize(text)`` returns."""
    return list(_basic_tokenize(text))


@lru_cache(maxsize=65536)  # gold texts are tokenised by the official and the clean scorer alike
def _basic_tokenize(text: str) -> tuple[str, ...]:
    text = unicodedata.normalize("NFC", _space_cjk(_clean(text)))
    tokens: list[str] = []
    for token in text.split():
        tokens.extend(_split_punct(_strip_accents(token.lower())))
    return tuple(" ".join(tokens).split())


def tokenized_text(text: str) -> str:
    """Tokens joined by single spaces and stripped, as the official ROUGE code feeds them."""
    return " ".join(basic_tokenize(text)).strip()
