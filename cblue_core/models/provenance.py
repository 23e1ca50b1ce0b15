"""Which records a model was trained on, so a run on those records can say so.

A built-in model's folder holds ``training_records.sha1.gz``: one SHA-1 per record it learnt
from with supervision (its own task's training split, and any other labelled data it used,
such as CMeIE's auxiliary CMeEE entities), of the NFC-normalised text; for sentence pairs the
two texts joined by a tab. Hashes rather than texts: the folder stays small and carries no
benchmark text. Unsupervised pretraining corpora are listed in the card separately; they do
not make a score dishonest in the same way and are not hashed here.
"""
from __future__ import annotations

import gzip
import hashlib
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..records import Example

RECORDS_FILE = "training_records.sha1.gz"
FINGERPRINT = "sha1 of the NFC-normalised text (pairs: text TAB text2)"


def fingerprint(ex: Example) -> str:
    """The SHA-1 that identifies a record's input text, whatever file or split it came from."""
    text = unicodedata.normalize("NFC", ex.text or "")
    if ex.text2:
        text += "\t" + unicodedata.normalize("NFC", ex.text2)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def write_training_records(folder: str | Path, examples: Iterable[Example], *,
                           sources: list[str], also: Iterable[str] = ()) -> dict[str, Any]:
    """Write the fingerprints of ``examples`` (and the fingerprints ``also``) beside a model;
    returns the card's entry for them."""
    hashes = sorted({fingerprint(ex) for ex in examples} | set(also))
    path = Path(folder) / RECORDS_FILE
    # mtime=0: the same records give the same bytes, so a retrained model does not churn git.
    with path.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write(("\n".join(hashes) + "\n").encode("ascii"))
    return {"file": RECORDS_FILE, "records": len(hashes), "fingerprint": FINGERPRINT, "sources": sources}


def read_training_records(folder: str | Path) -> frozenset[str] | None:
    """The fingerprints a model folder declares, or None when it declares none (a user
    checkpoint, whose training data we cannot know)."""
    path = Path(folder) / RECORDS_FILE
    if not path.is_file():
        return None
    with gzip.open(path, "rt", encoding="ascii") as f:
        return frozenset(line.strip() for line in f if line.strip())


def overlapping(examples: Iterable[Example], records: frozenset[str]) -> list[int]:
    """Positions (in ``examples``) of the examples whose text is among ``records``."""
    return [i for i, ex in enumerate(examples) if fingerprint(ex) in records]
