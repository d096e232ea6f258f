"""A card the camera read wrong as it landed and right after (QA48 dealing H2).

At 30 fps a 4H blurred into AH for the 0.1 s it slid in was accepted as AH, never flagged,
and the seat was settled as Bull 5 (-100) where Niu Niu won (+95).  Now the tracker waits
``accept_after_s`` before accepting, and readings in the ``recheck_s`` after acceptance
that name another card hold the settlement until a person looks.
"""

from __future__ import annotations

from scoring.cards import Card
from vision.corners import Detection
from vision.tracker import SeatTracker
from kiosk.audit import AuditType
from kiosk_testing import zone

SIZE = (1000, 600)
BANKER = "4S 6H QD 9C 9H".split()     # bull 8
SEAT1 = "KS QS JS 4D 4H".split()      # bull 8, KS beats the banker's QD: a win


def box(seat, i):
    (x, y), _, _, _ = zone(seat)
    left, top = x * SIZE[0] + 10 + 30 * i, y * SIZE[1] + 20
    return (left, top, left + 24, top + 34)


class Table:
    """Cards on the layout as a 30 fps camera's detector reads them, through the real tracker."""

    def __init__(self, service, fps=30.0):
        self.service, self.fps = service, fps
        self.tracker = SeatTracker(service.config)
        self.frame_no, self.cards = 0, {}

    def frames(self, seconds, misread=None):
        for _ in range(max(1, round(seconds * self.fps))):
            self.frame_no += 1
            dets = [Detection(Card.parse((misread or {}).get(code, code)), 0.93 if code not in (misread or {})
                              else 0.8, b) for code, b in self.cards.items()]
            hands = self.tracker.update(dets, self.frame_no, self.frame_no / self.fps, SIZE)
            self.service.observe(hands, self.frame_no, 1_700_000_000 + self.frame_no / self.fps)

    def deal(self, seat, i, code, misread_first=0.0, as_=None):
        self.cards[code] = box(seat, i)
        if misread_first:
            self.frames(misread_first, misread={code: as_})
        self.frames(1.0)


def deal_round(dealer, service, misread_s):
    """Seat 1 stakes 100; the round is dealt, seat 1's last card (4H) read AH for ``misread_s``."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "equal"})
    table = Table(service)
    for i in range(5):
        table.deal("banker", i, BANKER[i])
        table.deal("1", i, SEAT1[i], misread_first=misread_s if i == 4 else 0.0, as_="AH")
    return dealer.state()


def test_a_card_blurred_into_another_as_it_lands_is_read_right(dealer, service, audit):
    state = deal_round(dealer, service, 0.1)
    seat1 = next(s for s in state["seats"] if s["name"] == "1")
    assert [c["code"] for c in seat1["cards"]] == SEAT1 and state["round"]["can_settle"]
    dealer.post("/dealer/api/settle")
    [line] = [r for r in audit.records() if r.type == AuditType.SETTLEMENT_LINE]
    assert line.data["net"] == "95.00"


def test_a_longer_misread_that_the_next_second_contradicts_holds_settle_until_a_person_looks(dealer, service):
    state = deal_round(dealer, service, 0.5)
    assert not state["round"]["can_settle"]
    assert state["round"]["settle_blocker"] == ("seat 1: card AH has since been read as 4H; look at it, then "
                                                "confirm or correct it first")
    [alert] = state["round"]["alerts"]
    assert alert["code"] == "card_reread" and alert["message"].startswith("AH on seat 1 has been read as 4H since")
    service.correct("1", "AH", "4H", "dealer1", "looked: it is the 4 of hearts")
    state = dealer.state()
    assert state["round"]["can_settle"] and state["round"]["alerts"] == []


def test_a_card_a_person_confirmed_is_not_doubted_again(dealer, service):
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "equal"})
    table = Table(service)
    table.deal("1", 0, "KS", misread_first=0.5, as_="KC")
    assert dealer.state()["round"]["alerts"][0]["code"] == "card_reread"
    service.correct("1", "KC", "KC", "dealer1", "looked: it is the king of clubs")
    table.frames(1.0)
    assert dealer.state()["round"]["alerts"] == []
