"""The shift report and the adjustments corrections leave (QA49 supervisor M2, M3): what is
still owed is named before the figures, on the page as on the console, and what the period's
adjustment records paid, collected and waived is totalled, by when it was recorded, so that the
house result can be reconciled with the chip tray."""

from __future__ import annotations

from kiosk.audit import AuditType
from kiosk.report import period_report
from kiosk_testing import login
from test_adjustments import ADJUST
from test_paid_and_corrected import correct, settled_round


def test_the_page_names_what_is_owed_before_the_figures(dealer, service, client):
    settled_round(dealer, service)
    correct(dealer, "1", "10H", "9S", "last card a nine")
    login(client, "super1")
    page = client.get("/review/report?from=2000-01-01").get_data(as_text=True)
    assert -1 < page.index('id="report-owed"') < page.index('id="report-totals"')
    assert "Adjustment outstanding in round" in page and "(to collect 95.00 USD)" in page


def test_what_the_period_paid_collected_and_waived_is_totalled(dealer, service, audit, client, runner, app):
    settled_round(dealer, service)                 # seat 1 +285.00, seat 2 -50.00 paid at the table
    correct(dealer, "2", "4D", "9D", "9 read as 4")             # the house owes seat 2 97.50
    basis = correct(dealer, "1", "10H", "9S", "last card a nine")["state"]["round"]["adjustment"]["basis"]
    table = service.config.table_id
    before = audit.last().ts
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "paid", "seats": ["2"]})
    dealer.post(ADJUST, {"round": 1, "basis": basis, "action": "waived", "seats": ["1"], "reason": "player left",
                         "pin": "4321"})
    report = period_report(audit)[table].to_json()
    assert report["adjustments_moved"] == {"paid": "97.50", "collected": "0.00", "waived_pay": "0.00",
                                           "waived_collect": "95.00"}
    # the books count seat 1 at +190.00; the tray paid it +285.00 and never got the 95.00 back
    assert report["players_net"] == "237.50"

    # by record time: a period that ended before the records moved nothing, whatever its rounds
    [first] = audit.records(types=(AuditType.ROUND_SETTLED,))
    earlier = period_report(audit, until=before)[table].to_json()
    assert earlier["first_round"] == 1 and first.ts <= before
    assert earlier["adjustments_moved"] == dict.fromkeys(("paid", "collected", "waived_pay", "waived_collect"),
                                                         "0.00")

    login(client, "super1")
    page = " ".join(client.get("/review/report?from=2000-01-01").get_data(as_text=True).split())
    assert "paid 97.50, collected 0.00; waived: 0.00 not paid, 95.00 not collected" in page
    assert "the house does not collect 95.00 from seat 1" in page
    service.stop()
    code, out, _ = runner(["audit", "report", "--data-dir", app.config["DATA_DIR"]])
    assert code == 0
    assert ("adjustments recorded in this period: paid 97.50 USD, collected 0.00 USD; waived: 0.00 USD not paid, "
            "95.00 USD not collected") in out
    assert out.index("adjustments recorded in this period") < out.index("house result")
