"""``niuniu demo`` end to end: frames -> detector -> rounds -> default bets -> settled, on a real server."""

from __future__ import annotations

import json


import pytest

from kiosk.demo import DemoError, find_demo_dir
from kiosk_testing import HttpSession, KioskProcess, write_demo

BANKER = "4S 6H QD 9C 9H"       # Bull 8
ROUND_1 = {"banker": BANKER, "1": "KS QS JS 10S 10H", "2": "AS 2S 3D 4D 5C"}      # Niu Niu, Bull 5
ROUND_2 = {"banker": "AH 2H 3H 4H 5S", "1": "KC KD QC QH JC", "3": "7C 8C 2D 6D 6S"}  # No Bull?, Five face...


def test_demo_plays_scores_and_settles_rounds(tmp_path, runner):
    from scoring.evaluate import evaluate
    from scoring.settle import Bet, settle_round
    from decimal import Decimal

    demo = tmp_path / "demo"
    write_demo(demo, [ROUND_1, ROUND_2])
    kiosk = KioskProcess(demo, tmp_path / "data", pause=0.3)
    try:
        assert set(kiosk.accounts) == {"demo-admin", "demo-dealer", "demo-super", "demo-surveillance"}
        assert kiosk.accounts["demo-super"]["pin"] and kiosk.url.startswith("http://127.0.0.1:")
        kiosk.wait_for(lambda: len(kiosk.records("round_settled")) >= 2, 40, "two settled rounds")
        session = HttpSession(kiosk.url)
        session.login("demo-dealer", kiosk.accounts["demo-dealer"]["password"])
        state = json.loads(session.get("/dealer/api/state")[2])["state"]
        assert state["table"]["rules"] == "cambodia"
        history = {h["round"]: h for h in state["history"]}
        first = history[1]
        assert first["status"] == "settled"
        assert first["results"]["banker"]["label"] == "Bull 8"
        assert first["results"]["1"]["label"] == "Niu Niu" and first["results"]["2"]["label"] == "Bull 5"
        # demo bets: 100 on each dealt seat, kinds alternating equal / double
        assert first["bets"] == {"1": {"amount": "100.00", "kind": "equal"},
                                 "2": {"amount": "100.00", "kind": "double"}}
        assert first["lines"]["1"]["net"] == "95.00" and first["lines"]["2"]["net"] == "-200.00"
        second = history[2]
        expected = settle_round("cambodia", ROUND_2["banker"].split(),
                                {"1": (ROUND_2["1"].split(), Bet("1", Decimal(100), "equal")),
                                 "3": (ROUND_2["3"].split(), Bet("3", Decimal(100), "double"))})
        nets = {line.seat: f"{line.net:.2f}" for line in expected.lines}
        assert {s: line["net"] for s, line in second["lines"].items()} == nets
        assert second["results"]["1"]["label"] == evaluate(ROUND_2["1"], "cambodia").label
        status = json.loads(session.get("/live/status")[2])
        assert status["model"] == "scripted-detector" and status["camera"] == "online"
        code, headers, jpeg = session.get("/live/frame.jpg", raw=True)
        assert code == 200 and headers["Content-Type"] == "image/jpeg" and jpeg[:2] == b"\xff\xd8"
    finally:
        assert kiosk.terminate() == 0
    types = [r["type"] for r in kiosk.records()]
    assert types[-1] == "kiosk_stop" and "model_loaded" in types
    accepted = kiosk.records("card_accepted")
    assert all(r["payload"]["frame_no"] is not None and r["payload"]["confidence"] == 0.97 for r in accepted)
    code, out, _ = runner(["audit", "verify", "--data-dir", str(tmp_path / "data")])
    assert code == 0 and out.startswith("OK")
    recordings = list((tmp_path / "data" / "recordings" / "t1").glob("*-round-0001/frames/*.jpg"))
    assert recordings, "key frames of round 1 were recorded for review"
    # Each finished round's files were sealed in the audit log, as they are on the disk.
    from vision.record import recording_digests

    sealed = {r["round"]: r["payload"] for r in kiosk.records("recording_sealed")}
    assert {1, 2} <= set(sealed)
    first = next((tmp_path / "data" / "recordings" / "t1").glob("*-round-0001"))
    assert sealed[1]["folder"] == first.name and sealed[1]["files"] == recording_digests(first)
    assert {"meta.json", "events.jsonl", "detections.jsonl"} <= set(sealed[1]["files"])
    assert recordings[0].relative_to(first).as_posix() in sealed[1]["files"]


def test_missing_demo_directory_is_a_clear_error(tmp_path, runner):
    with pytest.raises(DemoError, match="table.yaml"):
        find_demo_dir(tmp_path)
    (tmp_path / "table.yaml").write_text("x: 1")
    assert find_demo_dir(tmp_path) == tmp_path


def test_fixes_turn_what_was_read_into_what_is_dealt():
    from kiosk.demo import table_fixes

    truth = {"banker": ["4S", "6H"], "1": ["KS", "10H"], "2": ["AS", "2S"]}
    read = {"banker": ["4S"], "1": ["KS", "10D"], "2": ["AS", "2S"]}
    assert table_fixes(read, truth) == [("1", "10D", "10H"), ("banker", None, "6H")]
    # two seats' cards read the other way round: one must leave before the other can come
    swapped = table_fixes({"1": ["KS", "2S"], "2": ["AS", "10H"]}, truth | {"banker": []})
    assert swapped == [("1", "2S", None), ("2", "10H", "2S"), ("1", None, "10H")]
    assert table_fixes(truth, truth) == []


def test_demo_dealer_corrects_what_the_camera_misread_and_settles(tmp_path):
    """The camera misses the banker's 9H and reads seat 1's 10H as 10D; the demo dealer,
    looking at the table (truth.json), fixes both through the audited correction path."""
    demo = tmp_path / "demo"
    write_demo(demo, [{"banker": "4S 6H QD 9C", "1": "KS QS JS 10S 10D", "2": "AS 2S 3D 4D 5C"}], dealt=140)
    truth = {"banker": BANKER.split(), "1": "KS QS JS 10S 10H".split(), "2": "AS 2S 3D 4D 5C".split()}
    (demo / "truth.json").write_text(json.dumps([{"round": 1, "seats": truth}]))
    kiosk = KioskProcess(demo, tmp_path / "data", pause=0.3)
    try:
        kiosk.wait_for(lambda: kiosk.records("round_settled"), 40, "the round settled")
        session = HttpSession(kiosk.url)
        session.login("demo-dealer", kiosk.accounts["demo-dealer"]["password"])
        first = {h["round"]: h for h in json.loads(session.get("/dealer/api/state")[2])["state"]["history"]}[1]
        assert first["results"]["banker"]["label"] == "Bull 8" and first["results"]["1"]["label"] == "Niu Niu"
    finally:
        assert kiosk.terminate() == 0
    fixes = [r["payload"] for r in kiosk.records("card_corrected")]
    assert {(f["seat"], f.get("old"), f.get("new")) for f in fixes} >= {("banker", None, "9H"), ("1", "10D", "10H")}
    assert all(r["actor"] == "demo-dealer" for r in kiosk.records("card_corrected"))
