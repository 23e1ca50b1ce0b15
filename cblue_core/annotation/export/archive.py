"""Zip archives of export files (a brat, doccano or Label Studio export as one download)."""
from __future__ import annotations

import io
import zipfile
from collections.abc import Mapping


def zip_files(files: Mapping[str, str | bytes]) -> bytes:
    """A zip archive of named files (a brat export for download)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            zf.writestr(name, content.encode("utf-8") if isinstance(content, str) else content)
    return buf.getvalue()


def unzip_files(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n).decode("utf-8") for n in zf.namelist() if not n.endswith("/")}

