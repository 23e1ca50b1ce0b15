"""Our fast xlsx reader gives the same cells as openpyxl on the reference lists."""
from __future__ import annotations

import pytest

from cblue_core.io.errors import FileRefused
from cblue_core.io.resources import read_ctc_categories, read_icd10
from cblue_core.io.xlsx import read_first_sheet
from tests.conftest import SAMPLE_DATA

FILES = [SAMPLE_DATA / "cblue/CHIP-CDN/icd10_terms.xlsx", SAMPLE_DATA / "cblue/CHIP-CTC/category.xlsx"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_same_cells_as_openpyxl(path):
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.load_workbook(path, read_only=True)
    expected = []
    for row in wb.worksheets[0].iter_rows(values_only=True):
        row = list(row)
        while row and row[-1] is None:
            row.pop()
        expected.append(row)
    assert read_first_sheet(path) == expected


def test_real_category_file_matches_openpyxl(cblue_dir):
    openpyxl = pytest.importorskip("openpyxl")
    path = cblue_dir / "CHIP-CTC/category.xlsx"
    wb = openpyxl.load_workbook(path, read_only=True)
    expected = [[c for c in r] for r in wb.worksheets[0].iter_rows(values_only=True)]
    for row in expected:
        while row and row[-1] is None:
            row.pop()
    assert read_first_sheet(path) == expected


def test_sample_reference_lists():
    icd = read_icd10(FILES[0])
    assert len(icd) > 50 and all(t.term for t in icd)
    cats = read_ctc_categories(FILES[1])
    assert len(cats) == 44


def test_not_a_workbook(tmp_path):
    p = tmp_path / "icd10.xlsx"
    p.write_bytes(b"not a zip")
    with pytest.raises(FileRefused, match="not an .xlsx"):
        read_first_sheet(p)
