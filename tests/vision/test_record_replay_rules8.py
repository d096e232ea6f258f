"""Rounds recorded under round rules 8 replay as they ran: a chip over a settled card past
remove_after_s as the next deal begins (QA50 dealing3 M1), the case whose recording replayed as
DIFFERS under rules 7 (H2: the card's left-over track had ended, and the card seen again counted live).

Detections go through the real TablePipeline (tracker, round machine, RoundRecorder), as in
test_record_replay_rules7."""

from __future__ import annotations

from test_record_replay_rules7 import ROUND1, ROUND2, RecordedTable

from vision.record import find_recordings
from vision.replay import replay
from vision.round import RoundState


def test_a_chip_over_a_settled_card_as_the_next_deal_begins_replays_as_matching(tmp_path):
    table = RecordedTable(tmp_path)
    table.deal(ROUND1)
    table.settle()
    chip = ("8C", table.lying.pop("8C"))                       # a chip over seat 2's 8C
    table.run(0.5)
    table.put(ROUND2["1"][0], "1", 0, dy=45)                   # the next deal begun below the old row
    table.run(0.7)
    table.put(ROUND2["banker"][0], "banker", 0, dy=45)
    table.run(2.5)                                             # 8C's track ends under the chip
    for seat in ("1", "banker", "2"):                          # round 1 swept, seat 2 around the chip
        for code in [c for c in ROUND1[seat] if c in table.lying]:
            del table.lying[code]
        table.run(0.3)
    table.lying[chip[0]] = chip[1]                             # the chip lifted: 8C in its place
    table.run(1.0)
    assert table.machine.round_no == 2 and "2" not in table.machine.hands
    del table.lying["8C"]
    table.run(0.5)
    for code in (ROUND2["1"][0], ROUND2["banker"][0]):
        x, y = table.lying[code]
        table.lying[code] = (x, y - 45)
    table.deal(ROUND2, skip={("1", 0), ("banker", 0)})
    table.settle()
    assert table.machine.hands["2"].codes == tuple(ROUND2["2"])
    table.lying.clear()
    table.run(4.0)
    table.pipeline.stop()

    assert table.machine.state in (RoundState.cleared, RoundState.idle)
    results = [r for folder in find_recordings(tmp_path) for r in replay(folder)]
    assert [r["state"] for r in results] == ["settled"] * 2
    for result in results:
        assert result["matches_recording"], (result["round"], result["differences"][:2])
