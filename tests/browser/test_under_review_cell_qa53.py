"""A round under review is marked across its whole row, its first cell too (review R2 L1): the
first column of a review table is kept in view as the table scrolls sideways, and that sticky
cell's own background hid the mark in the Round column — the one an officer scans."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CSS = Path(__file__).resolve().parents[2] / "kiosk" / "static" / "kiosk.css"
ROW = """<html><head><link rel="stylesheet" href="kiosk.css"></head><body class="page"><div class="panel">
<div class="table-wrap"><table class="list"><tbody><tr class="under-review"><td id="round">7</td>
<td id="staff">dealer1</td></tr></tbody></table></div></div></body></html>"""


def test_the_under_review_mark_reaches_the_sticky_first_cell(browser, tmp_path):
    shutil.copy(CSS, tmp_path / "kiosk.css")
    (tmp_path / "row.html").write_text(ROW)
    browser.get((tmp_path / "row.html").as_uri())
    colour = "return getComputedStyle(document.getElementById(arguments[0])).backgroundColor"
    assert browser.execute_script(colour, "round") == browser.execute_script(colour, "staff") != "rgba(0, 0, 0, 0)"
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    assert browser.execute_script(colour, "round") == "rgba(0, 0, 0, 0)"      # paper: no fill
