"""Replaying a recording made before settlements named who banked (QA52 upgrade M1).

Releases before 0cd674f (2026-12-06) wrote ``round_settled`` without ``settlement.banking``;
replayed by a later release every such settled round read "replay DIFFERS" and ``niuniu replay``
exited 1, though cards, results and money matched.  The recordings here are made live and then
written back as the old release wrote them."""

from __future__ import annotations

import json

import pytest
from test_record_replay import ROUND_A, dealing, run_live, settle_when_complete

from kiosk.cli import main
from vision import record
from vision.record import EVENTS, META, find_recordings


def recorded_by_an_old_release(tmp_path, edit=lambda settlement: None):
    """A settled round's recording whose settlement lacks ``banking``, then ``edit``-ed."""
    run_live(dealing(ROUND_A), tmp_path / "data", settle_when_complete)
    [folder] = find_recordings(tmp_path / "data")

    def as_old(settlement):
        assert settlement.pop("banking") == "house"     # cambodia: the house banks
        edit(settlement)

    rewrite_settlement(folder, as_old)
    return folder


def rewrite_settlement(folder, edit):
    rows = [json.loads(line) for line in (folder / EVENTS).read_text(encoding="utf-8").splitlines()]
    settled = [row["data"]["settlement"] for row in rows if row["kind"] == "round_settled"]
    assert len(settled) == 1
    edit(settled[0])
    (folder / EVENTS).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def replay_cli(capsys, folder, *extra):
    code = main(["replay", str(folder), *extra])
    out, _ = capsys.readouterr()
    return code, out


def test_a_round_settled_before_settlements_named_who_banked_replays_as_matching(tmp_path, capsys):
    folder = recorded_by_an_old_release(tmp_path)
    code, out = replay_cli(capsys, folder)
    assert code == 0, out
    assert "replay matches the recording" in out and "DIFFERS" not in out
    # one quiet note says how the missing field was read, not a warning
    assert out.count("note: recorded before settlements named who banked") == 1
    assert "banked by the house, as its preset cambodia says" in out and "WARNING" not in out
    code, out = replay_cli(capsys, folder, "--json")
    [result] = json.loads(out)
    assert code == 0 and result["matches_recording"] is True and result["differences"] == []
    assert len(result["notes"]) == 1

    # a field the recording holds is compared as it holds it: who banked, present and different
    rewrite_settlement(folder, lambda settlement: settlement.update(banking="player"))
    code, out = replay_cli(capsys, folder)
    assert code == 1
    assert "replay DIFFERS from the recording: 1 difference(s)" in out
    assert 'differs in data.settlement.banking "player" -> "house"\n' in out
    assert "note: recorded before settlements named who banked" not in out


@pytest.mark.parametrize("edit, differs_in", [
    # a figure changed in an old recording is the one difference named (not the missing field too)
    (lambda settlement: settlement.update(banker_net="-75.00"),
     'differs in data.settlement.banker_net "-75.00" -> "-180.00"\n'),
    # who banked is completed from the preset the recording names, not copied from the replay:
    # a round recorded as settled under a player-banked preset still differs on who banked
    (lambda settlement: settlement.update(preset="grab-banker"),
     'differs in data.settlement.banking "player" -> "house"; data.settlement.preset "grab-banker" -> "cambodia"\n'),
], ids=["a changed figure", "a player-banked preset named"])
def test_an_old_recording_with_a_changed_settlement_still_differs(tmp_path, capsys, edit, differs_in):
    folder = recorded_by_an_old_release(tmp_path, edit)
    code, out = replay_cli(capsys, folder)
    assert code == 1
    assert "replay DIFFERS from the recording: 1 difference(s)" in out and differs_in in out


def test_a_replay_that_differs_says_when_other_code_made_the_recording(tmp_path, capsys):
    """QA52 upgrade M2: rounds a kiosk recorded while its tracker was being changed replayed, after
    it changed under the same TRACKER_VERSION, as DIFFERS with nothing to say why."""
    run_live(dealing(ROUND_A), tmp_path / "data", settle_when_complete)
    [folder] = find_recordings(tmp_path / "data")
    meta = json.loads((folder / META).read_text(encoding="utf-8"))
    assert meta.get("rules_code") == record.RULES_CODE and len(record.RULES_CODE) == 16
    code, out = replay_cli(capsys, folder, "--json")
    [result] = json.loads(out)
    assert code == 0 and result["rules_code"] == {"recorded": record.RULES_CODE, "replayed": record.RULES_CODE}

    # the live tracker accepted a card with another confidence than this code gives it
    rows = [json.loads(line) for line in (folder / EVENTS).read_text(encoding="utf-8").splitlines()]
    accepted = next(row for row in rows if row["kind"] == "card_accepted")
    accepted["data"]["confidence"] = 0.5
    (folder / EVENTS).write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    code, out = replay_cli(capsys, folder)
    assert code == 1 and "replay DIFFERS" in out
    assert "other tracker and round machine code" not in out    # same code: nothing explains it away

    meta["rules_code"] = "0123456789abcdef"     # made by other code under the same rules
    (folder / META).write_text(json.dumps(meta), encoding="utf-8")
    code, out = replay_cli(capsys, folder)
    assert code == 1 and "replay DIFFERS" in out
    assert (f"note: recorded by other tracker and round machine code than this replay runs (rules_code "
            f"0123456789abcdef, here {record.RULES_CODE}), under the same tracker rules {meta['tracker']}") in out
