"""kill -9 in the middle of a round loses no accepted card and no settlement (real processes)."""

from __future__ import annotations

from kiosk_testing import KioskProcess, write_demo

BANKER = "4S 6H QD 9C 9H"


def test_kill_mid_round_keeps_every_card_and_marks_the_round_interrupted(tmp_path, runner):
    demo, data = tmp_path / "demo", tmp_path / "data"
    write_demo(demo, [{"banker": BANKER, "1": "KS QS JS"}], empty=2, dealt=30)   # never complete
    first = KioskProcess(demo, data, pause=0.2)
    accepted = first.wait_for(lambda: len(first.records("card_accepted")) >= 8 and first.records("card_accepted"),
                              30, "eight accepted cards")
    first.kill9()
    seen = {(r["payload"]["seat"], r["payload"]["card"]) for r in accepted}
    assert len(seen) == 8

    second = KioskProcess(demo, data, pause=0.2)
    try:
        interrupted = second.records("round_interrupted")
        assert len(interrupted) == 1 and interrupted[0]["round"] == 1
        hands = interrupted[0]["payload"]["hands"]
        assert {(s, c) for s, cards in hands.items() for c in cards} == seen
        start = second.records("kiosk_start")[-1]
        assert start["payload"]["previous_run"] == "crashed or killed"
        # The round's recording, never finished, is sealed at the restart and says so.
        sealed = second.wait_for(lambda: second.records("recording_sealed"), 20, "the left-over recording sealed")
        assert [(r["round"], r["payload"]["interrupted"], r["payload"]["after_restart"]) for r in sealed] == [
            (1, True, "crashed or killed")]
        # the next round continues the numbering instead of reusing round 1
        second.wait_for(lambda: any(r["round"] == 2 for r in second.records("round_start")), 20, "round 2")
    finally:
        second.terminate()
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data)])
    assert code == 0, out


def test_kill_right_after_settlement_keeps_the_settlement(tmp_path, runner):
    demo, data = tmp_path / "demo", tmp_path / "data"
    write_demo(demo, [{"banker": BANKER, "1": "KS QS JS 10S 10H"}], empty=2, dealt=400)
    first = KioskProcess(demo, data, pause=0.2)
    first.wait_for(lambda: first.records("round_settled"), 30, "a settlement")
    first.kill9()

    second = KioskProcess(demo, data, pause=0.2)
    try:
        records = [r for r in second.records() if r["round"] == 1]
        kinds = [r["type"] for r in records]
        assert "round_settled" in kinds and "round_interrupted" not in kinds
        lines = [r["payload"] for r in records if r["type"] == "settlement_line"]
        assert [(line["seat"], line["net"]) for line in lines] == [("1", "95.00")]
        sealed = second.wait_for(lambda: second.records("recording_sealed"), 20, "the left-over recording sealed")
        assert [r["round"] for r in sealed] == [1] and sealed[0]["payload"]["after_restart"] == "crashed or killed"
    finally:
        second.terminate()
    code, out, _ = runner(["audit", "verify", "--data-dir", str(data)])
    assert code == 0, out
