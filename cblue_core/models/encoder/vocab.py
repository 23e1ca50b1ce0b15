"""The character vocabulary and its Hugging Face tokenizer.

The tokenizer is a stock ``BertTokenizerFast`` (lower-cased, Chinese characters split): every CJK
character and punctuation mark is a token of its own, and a run of other characters (digits,
Latin letters, symbols such as ℃) is a "word" that WordPiece splits into its first character and
``##``-prefixed continuations. The vocabulary is counted on exactly those pieces, so that a kept
character is never turned into [UNK] for want of its ``##`` form.

Saved as ``vocab.txt`` (one token per line, in id order) *and* ``tokenizer.json`` +
``tokenizer_config.json``: transformers 5 builds the fast tokenizer from ``tokenizer.json``; from a
lone ``vocab.txt`` it silently yields an all-[UNK] tokenizer.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
VOCAB_FILE = "vocab.txt"


def _splitters():
    """The normalizer and pre-tokenizer of the very tokenizer :func:`make_tokenizer` builds."""
    backend = make_tokenizer(SPECIALS, 8).backend_tokenizer
    return backend.normalizer, backend.pre_tokenizer


def count_pieces(texts: Iterable[str]) -> Counter[str]:
    """How often each WordPiece piece (``c`` or ``##c``) occurs when ``texts`` are tokenized."""
    norm, pre = _splitters()
    counts: Counter[str] = Counter()
    for text in texts:
        for word, _ in pre.pre_tokenize_str(norm.normalize_str(text)):
            counts[word[0]] += 1
            counts.update("##" + ch for ch in word[1:])
    return counts


def build_vocab(texts: Iterable[str], min_count: int = 2, max_size: int | None = None) -> list[str]:
    """Special tokens, then the pieces seen at least ``min_count`` times, most frequent first
    (ties by the piece itself, so the list is deterministic)."""
    counts = count_pieces(texts)
    kept = sorted((p for p, n in counts.items() if n >= min_count and p not in SPECIALS),
                  key=lambda p: (-counts[p], p))
    if max_size is not None:
        kept = kept[:max(0, max_size - len(SPECIALS))]
    return SPECIALS + kept


def make_tokenizer(tokens: list[str], model_max_length: int):
    """A ``BertTokenizer`` over ``tokens`` (ids in list order): in transformers 5 the one class,
    backed by the Rust tokenizers library (``BertTokenizerFast`` is the same class)."""
    from transformers import BertTokenizer

    # vocab=dict: vocab_file= silently gives an all-[UNK] tokenizer in transformers 5
    return BertTokenizer(vocab={t: i for i, t in enumerate(tokens)}, do_lower_case=True,
                             tokenize_chinese_chars=True, strip_accents=None,
                             model_max_length=model_max_length)


def save_tokenizer(tokens: list[str], folder: str | Path, model_max_length: int) -> None:
    """``vocab.txt``, ``tokenizer.json`` and ``tokenizer_config.json`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    make_tokenizer(tokens, model_max_length).save_pretrained(folder)
    (folder / VOCAB_FILE).write_text("".join(t + "\n" for t in tokens), encoding="utf-8")


def read_vocab(folder: str | Path) -> list[str]:
    return (Path(folder) / VOCAB_FILE).read_text(encoding="utf-8").splitlines()


def load_tokenizer(folder: str | Path):
    """The tokenizer of a saved folder, as any user would load it (no remote code)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder))
