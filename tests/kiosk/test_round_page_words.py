"""What the round page says about cards that changed after a hand was scored: a sixth card
(QA48 dispute L3), a card that ended a settled round (M8), a frame kept only for an alert."""

from __future__ import annotations

from types import SimpleNamespace

from kiosk.audit import AuditType
from kiosk.rounds import load_round
from kiosk.timeline import frame_captions, record_words, Say
from kiosk_testing import hand, login
from datetime import timezone


def test_a_sixth_card_unscores_the_hand_it_joined(dealer, service, audit, app):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "10", "kind": "equal"})
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "AS 2S 3D 4D 5C")], 1)
    assert load_round(audit, 1, table_id=service.config.table_id)["results"]["1"]["label"] == "Bull 5"
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "AS 2S 3D 4D 5C KH")], 2)
    summary = load_round(audit, 1, table_id=service.config.table_id)
    assert summary["hands"]["1"] == "AS 2S 3D 4D 5C KH".split() and "1" not in summary["results"]
    assert summary["results"]["banker"]["label"]                 # the banker's five still score
    client = app.test_client()
    login(client, "watch1")
    page = client.get("/review/round/1").get_data(as_text=True)
    assert "<td>6 cards — not scored</td>" in page        # the hands table; the timeline keeps what was said then


def record(kind, data, actor="camera"):
    return SimpleNamespace(type=kind, data=data, actor=actor, ts="2026-12-07T08:00:00.000000Z", seq=1)


def test_a_frame_kept_for_an_alert_says_which_and_a_clear_names_the_card_that_ended_the_round():
    alert = record(AuditType.ALERT, {"code": "card_after_round", "seat": "3", "card": "KH", "frame_no": 240,
                                     "message": "KH appeared on seat 3 after round 1 was settled"})
    camera = record(AuditType.ALERT, {"code": "table_empty_unsettled", "frame_no": 250, "message": "…"})
    captions = frame_captions([alert, camera], ["00000240", "00000250"], timezone.utc)
    assert captions["00000240"] == "frame 240 · 08:00:00 · ⚠ card after round (KH on seat 3)"
    assert captions["00000250"] == "frame 250 · 08:00:00 · ⚠ table empty unsettled"
    cleared = record(AuditType.ROUND_CLEARED, {"previous_state": "settled", "reason": "new card dealt",
                                               "frame_no": 260, "new_cards": [["3", "KH"], ["banker", "2S"]]})
    said = record_words(cleared, Say(None)).text
    assert said.endswith("new card dealt (KH on seat 3; 2S on the banker, after this round ended)")
