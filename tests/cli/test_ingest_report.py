"""`ingest` of a folder says what it passed over and ends with a summary; the usage line names the
command the user typed; test failures are logged outside the project."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cblue_core.cli import main, program_name

ROOT = Path(__file__).resolve().parents[2]
QIC = [{"id": "q1", "query": "头痛吃什么药", "label": "治疗方案"}]


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "KUAKE-QIC"
    (folder / "originals").mkdir(parents=True)
    (folder / "KUAKE-QIC_dev.json").write_text(json.dumps(QIC, ensure_ascii=False), encoding="utf-8")
    (folder / "README.txt").write_text("about", encoding="utf-8")
    (folder / "example_gold.json").write_text("[]", encoding="utf-8")
    (folder / "originals" / "val_data.txt").write_text("x", encoding="utf-8")
    (folder / "symptom_norm.csv").write_text("a,b", encoding="utf-8")
    return folder


def test_ingest_lists_every_file_passed_over_and_ends_with_a_summary(tmp_path, capsys):
    assert main(["ingest", str(_folder(tmp_path)), "--db", str(tmp_path / "w.duckdb")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    skipped = {Path(line.split()[1].rstrip(":")).name: line for line in lines if line.startswith("skipped")}
    assert set(skipped) == {"README.txt", "example_gold.json", "val_data.txt", "symptom_norm.csv"}
    assert "documentation" in skipped["README.txt"] and "(.csv)" in skipped["symptom_norm.csv"]
    assert lines[-1] == ("done: 1 dataset(s) and 0 reference list(s) stored or already present (1 new records),"
                         " 4 file(s) skipped, 0 refused")


def test_a_folder_with_nothing_to_ingest_says_why(tmp_path, capsys):
    folder = tmp_path / "IMCS-V2"
    folder.mkdir()
    (folder / "symptom_norm.csv").write_text("a,b", encoding="utf-8")
    assert main(["ingest", str(folder), "--db", str(tmp_path / "w.duckdb")]) == 1
    out = capsys.readouterr().out
    assert "skipped" in out and "symptom_norm.csv" in out
    assert "no dataset or reference-list file in this folder (1 file(s) passed over, listed above)" in out
    assert out.strip().splitlines()[-1].endswith("1 file(s) skipped, 1 refused")


def test_usage_line_names_the_command_typed():
    assert program_name("/usr/local/bin/cblue-studio") == "cblue-studio"
    assert program_name("/repo/cblue_core/__main__.py") == "python -m cblue_core"
    code = "import sys; from cblue_core.cli import main; sys.argv[0] = '/venv/bin/cblue-studio'; main(['--help'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False).stdout
    assert out.startswith("usage: cblue-studio ")


def test_the_suite_logs_outside_the_project():
    log = Path(os.environ["CBLUE_STUDIO_LOG"]).resolve()
    assert not log.is_relative_to(ROOT)
