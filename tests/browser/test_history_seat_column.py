"""The history dialog's Seat column keeps each seat's name on one line at the kiosk's 1280x800.

With a round corrected after Settle the dialog holds a second table (where each seat's chips
stand), six columns of long words, and its Seat column was squeezed until "Seat 1" broke into
"Seat" over "1": read down the column, a row of bare numbers beside the amounts."""

from __future__ import annotations

import pytest

from kiosk.table_service import Approval
from test_dealer_screen import click, drawn, settled_two_seats, wait_text

pytestmark = pytest.mark.browser
SUPER = Approval(requested_by="dealer1", approved_by="super1")

# How many lines of text each cell of every table's first column (Seat) in the dialog takes:
# the distinct tops of its text's line boxes.
SEAT_COLUMN_LINES = """
return [...document.querySelectorAll('#history-detail table')].map(table =>
  [...table.querySelectorAll('tr > :first-child')].map(cell => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    return [cell.textContent, tops.size];
  }));
"""


def test_the_seat_column_does_not_wrap_at_the_kiosks_screen_size(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    assert driver.execute_script("return [window.innerWidth, window.innerHeight]") == [1280, 800]
    settled_two_seats(driver, live_kiosk)
    service.correct("2", "4D", "9D", "dealer1", "9 read as 4", SUPER, round_no=1)
    service.correct("1", "10H", "9S", "dealer1", "last card a nine", SUPER, round_no=1)
    drawn(driver, service)
    service.observe([], 2)
    click(driver, '.tile[data-round="1"]')
    wait_text(driver, "#history-detail", "Still owed")
    shots(driver, "dealer-history-seat-column")
    tables = driver.execute_script(SEAT_COLUMN_LINES)
    assert len(tables) == 2, tables            # the round's hands, and where the chips stand
    cells = [cell for table in tables for cell in table]
    assert {"Seat 1", "Seat 2", "Banker"} <= {text for text, _ in cells}
    assert all(lines == 1 for _, lines in cells), cells
