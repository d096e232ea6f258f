"""QA49 watch L2: a printed round is filed with a case, so it has somewhere to sign, and each
sheet says which round it is and which page of how many."""

from __future__ import annotations

import re


def test_the_printed_round_has_a_sign_off_block_and_numbered_pages(played):
    page = played.get("/review/round/2").get_data(as_text=True)
    block = re.search(r'<section class="panel print-only" id="sign-off">(.*?)</section>', page, re.S)
    assert block, "no sign-off block on the printed round"
    assert "round #2, table t1" in block.group(1)
    fields = re.findall(r"<tr><th>(.*?)</th><td></td></tr>", block.group(1))
    assert fields == ["Case number", "Reviewed by (name, role)", "Date", "Signature"]
    # each sheet's foot names the round (kiosk.css: @page titled, "Round 2 · table t1 · page 1 of 3")
    assert re.search(r'<html lang="en" data-print-title="Round 2 · table t1">', page)
