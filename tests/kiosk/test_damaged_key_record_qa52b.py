"""A damaged ``signing_key_created`` record (QA52 follow-up): the evidence check against the log
goes on and says that the key's record cannot be read, so it cannot vouch for the key, instead
of the whole check stopping at the record with a DamagedRecord error."""

from __future__ import annotations

from kiosk.audit import AuditType
from test_damaged_record_kiosk import damage
from test_evidence import package  # noqa: F401  (a fixture)


def test_check_evidence_says_a_damaged_key_record_cannot_vouch_for_the_key(package, app, audit, runner,  # noqa: F811
                                                                            tmp_path):
    data, _ = package
    [made] = audit.records(types=[AuditType.SIGNING_KEY_CREATED])
    key_id = made.data["fingerprint"]
    damage(audit.path, made.seq)
    path = tmp_path / "evidence.zip"
    path.write_bytes(data)
    data_dir = str(app.extensions["niuniu"].data_dir)
    code, out, err = runner(["audit", "check-evidence", str(path), "--data-dir", data_dir])
    assert code == 1, err
    assert out.count(f"seq {made.seq} (signing_key_created) cannot be read") == 1
    assert f"signed by key {key_id}, which no readable record of this log made: audit record seq {made.seq} " \
           "(signing_key_created) cannot be read: its payload is not JSON" in out
    assert "a key record that cannot be read cannot vouch for a key, though the key may be the one it recorded" in out
    assert "which this log never made" not in out


def test_niuniu_check_does_not_tell_to_move_aside_a_key_whose_record_is_damaged(tmp_path):
    """The key's own record damaged: the check's old advice ("move the file aside to make a new
    one") would have thrown away the table's real key."""
    from kiosk.audit import AuditLog
    from kiosk.preflight import WARN, check_device
    from kiosk.signing import table_key
    from test_preflight import data, table

    config, data_dir = table(tmp_path), data(tmp_path)
    log = AuditLog.in_dir(data_dir, create=False)
    table_key(data_dir, log, "watch1")
    made = log.last()
    log.close()
    damage(log.path, made.seq)
    finding = next(f for f in check_device(config, data_dir, camera=False) if f.part == "evidence key")
    assert finding.level == WARN
    assert f"seq {made.seq} (signing_key_created) cannot be read" in finding.message
    assert "keep the file as it is" in finding.message and "move the file aside" not in finding.message
