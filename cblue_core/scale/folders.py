"""Which files of a shard or predictions folder may be read: named inside the folder, regular
files, and records of bounded size.

A folder comes from whoever runs the job, and its ``manifest.json`` from whoever wrote the
folder: a manifest entry ``"/elsewhere/x.parquet"`` or ``"../../x.parquet"`` must not reach a file
outside the folder, nor tell its writer whether such a file exists, so those names are refused
from their text before anything on disk is looked at; a link that leads out is refused as well.
A FIFO named ``a.parquet`` would block its reader forever (with the workspace locked), and a
device never ends, so only regular files are opened (:func:`cblue_core.io.limits.check_regular_file`).
"""
from __future__ import annotations

from pathlib import Path, PurePath

from ..io.limits import MAX_FILE_BYTES, check_regular_file, human_size

# A CBLUE record is at most a few tens of kilobytes (an IMCS-V2 dialogue); a longer one is not
# a record but a way to hand the tokenizer a text it panics on.
MAX_RECORD_BYTES = 1 << 20


class OutsideFolder(ValueError):
    """A name in a folder's manifest, or a link in the folder, that leads out of the folder."""


def member_path(folder: Path, name: object, label: str) -> Path:
    """The path ``name`` (relative, as a manifest lists it) gives inside ``folder``; OutsideFolder
    when it is not a relative name inside the folder, decided from the text before the disk."""
    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        raise OutsideFolder(f"{label}: expected the name of a file in the folder, not {name!r}")
    pure = PurePath(name)
    if pure.is_absolute() or name.startswith("~") or ".." in pure.parts:
        raise OutsideFolder(f"{label}: {name!r} is not inside the folder (expected a name relative "
                            "to the folder, without '..')")
    return inside(folder, folder / pure, label)


def inside(folder: Path, path: Path, label: str) -> Path:
    """``path`` when it still lies inside ``folder`` once links are followed; else OutsideFolder."""
    if not path.resolve().is_relative_to(folder.resolve()):
        raise OutsideFolder(f"{label}: {path.name!r} leads outside the folder (a link?); copy the "
                            "file into the folder instead")
    return path


def regular_member(folder: Path, path: Path, max_bytes: int = MAX_FILE_BYTES) -> int:
    """The size of ``path``, a regular file inside ``folder``; FileRefused (missing, a folder,
    a FIFO, socket or device, too large) or OutsideFolder otherwise."""
    inside(folder, path, str(path))
    return check_regular_file(path, str(path), max_bytes)


def record_too_long(size: int) -> str:
    return (f"a record of {human_size(size)}, over the {human_size(MAX_RECORD_BYTES)} limit "
            "(a CBLUE record is a few kilobytes)")
