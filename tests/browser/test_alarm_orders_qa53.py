"""The alarms that stop the game say so where a short screen shows them (review R1 M1).

At 1280x720/800 each alarm is one line ending in "…": the AUDIT LOG FAILURE's words put "stop
the game" about 250 characters in, past the "…" even on a row of its own, and a third alarm beside
the camera's cut "STOP DEALING" off.  The dealer saw a blinking "AUDIT LOG FAILURE — the audit log
could not be wr…" and dealt on, unrecorded."""

from __future__ import annotations

import pytest
from test_dealer_fits_qa53 import HEADLINE, HIDDEN, alarmed, bet_seven, deal_seven, two_alarms
from test_dealer_screen import SEVEN, log_in, wait_text

pytestmark = pytest.mark.browser

# table_service's words for a disk that refused an audit record
AUDIT_ERROR = ("the audit log could not be written (database or disk is full: nothing was written to the audit log "
               "/var/lib/niuniu/audit.sqlite3; free space on the data disk (/var/lib/niuniu), or check the disk if "
               "it is not full, then try again); stop the game and call the supervisor: events are not being recorded")


@pytest.mark.parametrize("live_kiosk", [SEVEN], indirect=True)
@pytest.mark.parametrize("size", [(1280, 720), (1280, 800)])
def test_stop_the_game_and_stop_dealing_are_shown_whole_beside_a_third_alarm(browser, live_kiosk, size):
    driver, service = browser, live_kiosk.service
    driver.viewport(*size)
    bet_seven(service)
    log_in(driver, live_kiosk.url, "dealer1")
    deal_seven(service)
    wait_text(driver, '.seat[data-seat="7"] .category', "Bull")
    alarmed(driver, live_kiosk, dict(two_alarms(), audit_error=AUDIT_ERROR))
    for alarm, words in (("audit-alarm", "STOP THE GAME"), ("camera-alarm", "STOP DEALING"),
                         ("disk-warning", "DATA DISK LOW")):
        shown = driver.execute_script(HEADLINE, alarm, words)
        assert shown["whole"], (size, alarm, words, shown)
    assert not driver.execute_script(HIDDEN), size
