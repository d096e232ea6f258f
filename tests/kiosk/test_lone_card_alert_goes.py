"""The lone-card alert (``card_after_round``) leaves the dealer's screen with the card.

It told the dealer to take a card off a settled round's table, and stayed there after the card
was taken off until the next round began: a dealer who did as told still read "take it off the
table", and an alert that is not true any more teaches the dealer to stop reading the alerts.
The audit log and the round's history keep it, as they keep every alert raised."""

from __future__ import annotations

import json

from kiosk.audit import AuditType
from test_next_deal_bets import NEXT_SEAT1, lay, settled_round

GONE_S = 3.5    # the tracker's remove_after_s (3 s) and a little: a card unseen so long has left


def lone_alerts(state):
    return [a for a in state["round"]["alerts"] if a["code"] == "card_after_round"]


def test_the_lone_card_alert_goes_when_the_card_is_taken_off(dealer, service, audit):
    table = settled_round(dealer, service)
    lay(table, "1", 0, NEXT_SEAT1[0])
    table.frames(6.0)                                  # it has lain there 5 s, alone: the alert
    [alert] = lone_alerts(dealer.state())
    assert "take it off the table" in alert["message"]
    assert not dealer.state()["round"]["bets_open"]

    del table.cards[NEXT_SEAT1[0]]                     # the dealer takes it off
    table.frames(GONE_S)
    state = dealer.state()
    assert (state["round"]["no"], state["round"]["state"]) == (1, "settled")   # the round has not moved on
    assert lone_alerts(state) == [] and state["round"]["bets_open"]
    # the screen was told, not only a fresh page: the newest pushed state has no alert either
    pushed = json.loads(service.latest()[1])
    assert pushed["round"]["alerts"] == [] and pushed["round"]["bets_open"]
    # the log keeps the alert raised
    raised = [r for r in audit.records(round_no=1) if r.type == AuditType.ALERT
              and r.data.get("code") == "card_after_round"]
    assert len(raised) == 1


def test_a_card_put_back_is_alerted_once_not_twice(dealer, service):
    table = settled_round(dealer, service)
    lay(table, "1", 0, NEXT_SEAT1[0])
    table.frames(6.0)
    assert len(lone_alerts(dealer.state())) == 1
    del table.cards[NEXT_SEAT1[0]]
    table.frames(GONE_S)
    lay(table, "1", 0, NEXT_SEAT1[0])                  # put down again: it lies there alone once more
    table.frames(6.0)
    [alert] = lone_alerts(dealer.state())              # one alert for the one card, not the old one too
    assert alert["card"] == NEXT_SEAT1[0]


def test_the_lone_card_alert_stays_while_the_card_lies_there(dealer, service):
    table = settled_round(dealer, service)
    lay(table, "1", 0, NEXT_SEAT1[0])
    table.frames(6.0)
    table.frames(3.0)
    assert len(lone_alerts(dealer.state())) == 1
