"""Rounds recorded under tracker rules 7 replay as they ran (QA50 dealing3 H2).  The next deal begun
before the sweep made left-overs that rules 7 tell apart by track, not by code, and rounds that
started seconds after their first cards landed: a recording that kept only (seat, card) for each
left-over, and a pre-roll that reached back only to cards waiting alone, replayed such honest
rounds as DIFFERS, which a dispute or a surveillance review would read as a changed recording.

Detections go through the real TablePipeline (tracker, round machine, RoundRecorder), ten frames a
second, on make_config()'s table (the banker above, seat 1 bottom left, seat 2 bottom right)."""

from __future__ import annotations

from test_round import BANKER, SEAT1, SEAT2, bets, make_config

from scoring.cards import Card
from vision.corners import Detection
from vision.pipeline import TablePipeline
from vision.record import find_recordings
from vision.replay import replay
from vision.round import RoundState

SIZE = (400, 300)
ROW = {"1": (20, 225), "2": (220, 225), "banker": (20, 75)}
ROUND1 = {"1": SEAT1, "2": SEAT2, "banker": BANKER}
ROUND2 = {"1": "2S 3S 4S 5D 6D".split(), "2": "7C AD 2D 3C 4H".split(), "banker": "7H 8H 9D 10D JD".split()}
# round 3's first four cards are round 2's codes (one deck reshuffled): "returned", not new
ROUND3 = {"1": "7C AD KH QH JH".split(), "2": "7H 8H 10H 9H 6C".split(), "banker": "8C 9C 10C AS 2H".split()}


class RecordedTable:
    """Physical cards at places, read cleanly each frame, through a recording pipeline."""

    def __init__(self, data_dir):
        self.pipeline = TablePipeline(make_config(), None, None, data_dir=data_dir)
        self.lying: dict[str, tuple[float, float]] = {}
        self.frame_no = 0

    @property
    def machine(self):
        return self.pipeline.machine

    def put(self, code, seat, slot, dy=0):
        x, y = ROW[seat]
        self.lying[code] = (x + 30 * slot, y + dy)

    def run(self, seconds):
        for _ in range(round(seconds * 10)):
            self.frame_no += 1
            seen = [Detection(Card.parse(code), 0.9, (x - 10, y - 15, x + 10, y + 15))
                    for code, (x, y) in self.lying.items()]
            self.pipeline.process(self.frame_no, 1_700_000_000.0 + self.frame_no / 10, SIZE, seen,
                                  mono=self.frame_no / 10)

    def deal(self, hands, skip=()):
        for i in range(5):
            for seat in ("1", "2", "banker"):
                if (seat, i) not in skip:
                    self.put(hands[seat][i], seat, i)
                self.run(0.7)

    def sweep(self, *seats):
        for code in [c for c, (x, y) in self.lying.items() if _seat_of(x, y) in seats]:
            del self.lying[code]
        self.run(0.3)

    def settle(self):
        self.run(2.0)
        self.machine.settle(bets(s1=100, s2=100), ts=1_700_000_000.0 + self.frame_no / 10)
        self.run(1.0)


def _seat_of(x, y):
    return "banker" if y < 150 else ("1" if x < 200 else "2")


def test_rounds_dealt_before_the_sweep_replay_as_matching(tmp_path):
    table = RecordedTable(tmp_path)
    table.deal(ROUND1)
    table.settle()
    # Round 2 begun before round 1 is swept: a first card below seat 1's row, then the sweep, and
    # 7C (round 1's, in slot 1) dealt again in slot 0 of seat 2.
    table.put(ROUND2["1"][0], "1", 0, dy=45)
    table.run(0.7)
    table.sweep("2")
    table.sweep("1", "banker")
    table.put(ROUND2["1"][0], "1", 0)
    table.run(0.7)
    table.deal(ROUND2, skip={("1", 0)})
    table.settle()
    # Round 3 dealt from round 2's codes before the banker's cards are swept: it starts late.
    table.sweep("1", "2")
    for i in range(2):
        for seat in ("1", "2"):
            table.put(ROUND3[seat][i], seat, i, dy=45)
            table.run(0.7)
    table.sweep("banker")
    for code in list(table.lying):
        x, y = table.lying[code]
        table.lying[code] = (x, y - 45)
    table.run(0.7)
    table.deal(ROUND3, skip={(s, i) for s in ("1", "2") for i in range(2)})
    table.settle()
    table.lying.clear()
    table.run(4.0)
    table.pipeline.stop()

    assert table.machine.round_no == 3 and table.machine.state in (RoundState.cleared, RoundState.idle)
    folders = find_recordings(tmp_path)
    assert len(folders) == 3
    results = [r for folder in folders for r in replay(folder)]
    assert [r["state"] for r in results] == ["settled"] * 3
    for result in results:
        assert result["matches_recording"], (result["round"], result["differences"][:2])
