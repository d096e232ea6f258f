"""The banker's stack chip keeps its words on one line at the kiosk's 1280x800 (QA52).

On a settled round the chip reads "Next stack 800.00 USD" (the next round's stack, entered during
the payout); squeezed into the banker box's right column it broke over two lines, a chip twice as
tall as the bid chip above it, and a stack of six figures read "Next stack" over its amount."""

from __future__ import annotations

import pytest

from kiosk_testing import HOUSE_STACK, hand
from test_dealer_screen import BANKER, SEAT_1, SEAT_2, drawn, exact_text, log_in, wait_text

pytestmark = pytest.mark.browser

# The chip's words: how many lines they take (the distinct tops of their line boxes), whether the
# chip shows them whole (nothing cut off inside it), whether it lies inside the banker's box, its
# height, and the height of one line of its words.
CHIP = """
const chip = document.querySelector('[data-stack-chip]');
const range = document.createRange();
range.selectNodeContents(chip);
const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
const box = chip.closest('.seat').getBoundingClientRect(), own = chip.getBoundingClientRect();
const style = getComputedStyle(chip);
const line = document.createElement('span');
line.textContent = 'X';
chip.appendChild(line);
const oneLine = line.getBoundingClientRect().height;
line.remove();
return {text: chip.innerText, lines: tops.size, whole: chip.scrollWidth <= chip.clientWidth,
        inside: own.left >= box.left && own.right <= box.right,
        height: own.height, oneLine: oneLine,
        padding: parseFloat(style.paddingTop) + parseFloat(style.paddingBottom),
        minHeight: parseFloat(style.minHeight)};
"""


@pytest.mark.parametrize("live_kiosk", [{"seats": ("banker", "1", "2", "3"), "rules": str(HOUSE_STACK)},
                                        {"seats": ("banker", "1", "2", "3", "4", "5", "6", "7"),
                                         "rules": str(HOUSE_STACK)}],
                         indirect=True, ids=["three-seats", "seven-seats"])
def test_the_next_stack_chip_stays_on_one_line_on_a_settled_round(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    assert driver.execute_script("return [window.innerWidth, window.innerHeight]") == [1280, 800]
    service.set_bet("1", "100", "standard", "dealer1")
    service.set_bet("2", "50", "standard", "dealer1")
    service.set_stack("1500", "dealer1")
    log_in(driver, live_kiosk.url, "dealer1")
    service.observe([hand("banker", BANKER), hand("1", SEAT_1), hand("2", SEAT_2)], 1)
    service.settle("dealer1")
    wait_text(driver, "#round-state", "SETTLED")
    for amount, words in (("800", "Next stack 800.00 USD"), ("123456", "Next stack 123,456.00 USD")):
        service.set_stack(amount, "dealer1")
        assert exact_text(driver, "[data-stack-chip]", words)
        drawn(driver, service)
        shots(driver, f"dealer-settled-next-stack-{amount}")
        chip = driver.execute_script(CHIP)
        assert chip["text"] == words and chip["lines"] == 1 and chip["whole"] and chip["inside"], chip
        # one line's height: the line, its padding, or the 44 px a finger needs, whichever is more
        assert chip["height"] <= max(chip["oneLine"] + chip["padding"], chip["minHeight"]) + 1, chip
