"""A left-over misread while the next round begins replays as it ran (QA51, rec_sim100 15 15 8 rounds
7 and 8).  The live tracker accepted the left-over on clear reads when it was dealt; the next card
over its index then had it read as another card for seconds.  The next round's recording begins
after that, so the replay's tracker saw only the misread: it accepted the other card, which no
left-over names, and dealt it into the new round.  An honest round, settled on the cards dealt,
replayed as "DIFFERS" ("seat 2: card 8C was read with low confidence", "seat 4 has 6 cards").

Detections go through the real TablePipeline (tracker, round machine, RoundRecorder), ten frames a
second, on make_config()'s table (the banker above, seat 1 bottom left, seat 2 bottom right)."""

from __future__ import annotations

import json

from test_record_replay_rules7 import ROUND1, RecordedTable

from scoring.cards import Card
from vision.corners import Detection
from vision.record import find_recordings
from vision.replay import replay
from vision.round import RoundState

ROUND2 = {"1": "2S 3S 4S 5D 6D".split(), "2": "7D AD 2D 3C 4H".split(), "banker": "7H 8H 9D 10D JD".split()}
MISREAD = ("8C", "KS")     # round 1's 8C on seat 2, read as KS (a card no hand holds) under the next card


class MisreadTable(RecordedTable):
    """Reads one lying card as another while ``misread`` is set."""

    misread: tuple[str, str] | None = None

    def run(self, seconds):
        for _ in range(round(seconds * 10)):
            self.frame_no += 1
            seen = [Detection(Card.parse(self._read(code)), 0.9, (x - 10, y - 15, x + 10, y + 15))
                    for code, (x, y) in self.lying.items()]
            self.pipeline.process(self.frame_no, 1_700_000_000.0 + self.frame_no / 10, (400, 300), seen,
                                  mono=self.frame_no / 10)

    def _read(self, code):
        return self.misread[1] if self.misread is not None and code == self.misread[0] else code


def test_a_left_over_misread_before_the_recording_began_stays_a_left_over_in_the_replay(tmp_path):
    table = MisreadTable(tmp_path)
    table.deal(ROUND1)
    table.settle()
    table.machine.clear(ts=1_700_000_000.0 + table.frame_no / 10, actor="dealer1")   # before the sweep
    table.misread = MISREAD
    table.run(4.0)              # longer than the next recording's pre-roll reaches back
    # round 2's first cards below the left-overs, then the sweep, then the rest of the deal
    table.put(ROUND2["1"][0], "1", 0, dy=45)
    table.run(0.7)
    table.put(ROUND2["2"][0], "2", 0, dy=45)
    table.run(0.7)
    assert table.machine.round_no == 2, "round 2 started beside the left-overs"
    for code in [c for hand in ROUND1.values() for c in hand]:     # the sweep
        del table.lying[code]
    table.run(0.3)
    for code in (ROUND2["1"][0], ROUND2["2"][0]):
        x, y = table.lying[code]
        table.lying[code] = (x, y - 45)
    table.misread = None
    table.deal(ROUND2, skip={("1", 0), ("2", 0)})
    table.settle()
    table.lying.clear()
    table.run(4.0)
    table.pipeline.stop()

    assert table.machine.round_no == 2 and table.machine.state in (RoundState.cleared, RoundState.idle)
    folders = find_recordings(tmp_path)
    meta = json.loads((folders[1] / "meta.json").read_text())
    left_over = next(t for t in meta["ignored_tracks"] if t["card"] == "8C")
    assert left_over["shown"] and left_over["track"] < meta["first_frame"], "the left-over lay before the pre-roll"
    (result,) = replay(folders[1])
    assert result["state"] == "settled"
    assert result["seats"]["2"] == ROUND2["2"]
    assert result["matches_recording"], result["differences"][:2]


def test_a_misread_card_swept_and_dealt_again_is_not_dealt_twice_in_the_replay(tmp_path):
    """Its next copy dealt elsewhere on the seat ended its track live; the replay's tracker, which
    took it for the card it was misread as, kept that track and dealt it into the new round."""
    table = MisreadTable(tmp_path)
    table.deal(ROUND1)
    table.settle()
    table.misread = MISREAD
    table.machine.clear(ts=1_700_000_000.0 + table.frame_no / 10, actor="dealer1")   # before the sweep
    table.run(4.0)
    again = dict(ROUND2, **{"2": ["8C", *ROUND2["2"][1:]]})  # round 1's 8C, dealt again in slot 0
    table.put(again["1"][0], "1", 0, dy=45)                  # the next deal's first card, then the sweep
    table.run(0.7)
    for code in [c for hand in ROUND1.values() for c in hand]:
        del table.lying[code]
    table.misread = None
    table.run(0.7)              # longer than the tracker's window: a new track, not the old one moved
    table.put(again["2"][0], "2", 0, dy=45)
    table.run(0.7)
    assert table.machine.round_no == 2, "round 2 started with round 1's 8C on seat 2"
    for code in (again["1"][0], again["2"][0]):
        x, y = table.lying[code]
        table.lying[code] = (x, y - 45)
    table.deal(again, skip={("1", 0), ("2", 0)})
    table.settle()
    table.lying.clear()
    table.run(4.0)
    table.pipeline.stop()

    assert table.machine.round_no == 2 and table.machine.hands["2"].codes == tuple(again["2"])
    folders = find_recordings(tmp_path)
    meta = json.loads((folders[1] / "meta.json").read_text())
    assert not any(t["card"] == "8C" for t in meta.get("ignored_tracks", [])), "live, round 1's 8C had left"
    (result,) = replay(folders[1])
    assert result["state"] == "settled"
    assert result["seats"]["2"] == again["2"]
    assert result["matches_recording"], result["differences"][:2]


def test_cards_lying_since_a_restart_replay_as_the_rounds_not_as_left_overs(tmp_path):
    """The recording's first frames are the pipeline's first: the round's cards lay there from its
    first frame, beside the last round's left-overs (restored from the audit log), and the replay
    keeps them as the round's own, as the round accepted them."""
    table = MisreadTable(tmp_path)
    table.machine.ignore_present([("1", code) for code in ROUND1["1"]], forget_after=40)   # as the kiosk does
    for slot, code in enumerate(ROUND1["1"]):
        table.put(code, "1", slot)
    table.put(ROUND2["2"][0], "2", 0)
    table.put(ROUND2["banker"][0], "banker", 0)
    table.run(1.0)
    assert table.machine.round_no == 1, "the round started on the cards lying since the restart"
    for code in ROUND1["1"]:                                  # the left-overs swept
        del table.lying[code]
    table.run(3.5)
    table.deal(ROUND2, skip={("2", 0), ("banker", 0)})
    table.settle()
    table.lying.clear()
    table.run(4.0)
    table.pipeline.stop()

    (folder,) = find_recordings(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["ignored_tracks"] and meta["first_frame"] == 1
    (result,) = replay(folder)
    assert result["state"] == "settled" and result["seats"]["2"] == ROUND2["2"]
    assert result["matches_recording"], result["differences"][:2]
