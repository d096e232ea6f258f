"""`niuniu audit check-export --data-dir` of an honest export once the log's record that would
vouch for it is damaged (QA52 review M3): the table's key record or the export's own record.
Neither is tampering with the statement: the check says which record cannot be read, in
DamagedRecord's words, as the key check does, instead of "the statement was changed after
export" or "not signed by this log's kiosk"."""

from __future__ import annotations

from kiosk.audit import AuditType
from test_damaged_record_kiosk import damage


def exported(app, runner, tmp_path):
    """An export of the played log and its statement; returns the export and the data directory."""
    data_dir = app.extensions["niuniu"].data_dir
    out_file = tmp_path / "period.csv"
    code, _, err = runner(["audit", "export", "--data-dir", str(data_dir), "--output", str(out_file)])
    assert code == 0, err
    return out_file, data_dir


def test_a_damaged_key_record_leaves_the_export_record_vouching_and_names_the_key_record(app, audit, runner,
                                                                                       tmp_path):
    out_file, data_dir = exported(app, runner, tmp_path)
    [key] = audit.records(types=[AuditType.SIGNING_KEY_CREATED])
    [record] = audit.records(types=[AuditType.EXPORTED])
    damage(audit.path, key.seq)
    code, out, _ = runner(["audit", "check-export", str(out_file), "--data-dir", str(data_dir)])
    assert code == 1
    assert "the statement was changed after export" not in out and "differs from the statement" not in out
    assert f"ok: the log records this export: seq {record.seq}" in out
    assert f"which no readable record of this log made: audit record seq {key.seq} (signing_key_created) cannot be " \
           "read" in out


def test_a_damaged_export_record_is_named_not_taken_for_a_statement_never_signed(app, audit, runner, tmp_path):
    out_file, data_dir = exported(app, runner, tmp_path)
    [record] = audit.records(types=[AuditType.EXPORTED])
    damage(audit.path, record.seq)
    code, out, _ = runner(["audit", "check-export", str(out_file), "--data-dir", str(data_dir)])
    assert code == 1
    assert "it was not signed by this log's kiosk as it is" not in out
    assert (f"PROBLEM: the log's record of this export cannot be read: audit record seq {record.seq} (audit_exported) "
            "cannot be read") in out
    assert "whether it is this export's cannot be told" in out


def test_an_edited_statement_is_still_called_changed_when_the_key_record_is_damaged(app, audit, runner, tmp_path):
    """The damaged key record excuses nothing: the fields the log's readable export record holds
    are still compared, and one the statement says otherwise is a changed statement."""
    out_file, data_dir = exported(app, runner, tmp_path)
    [key] = audit.records(types=[AuditType.SIGNING_KEY_CREATED])
    damage(audit.path, key.seq)
    statement = out_file.with_name(out_file.name + ".statement.json")
    statement.write_text(statement.read_text().replace('"exported_by": "', '"exported_by": "not '))
    code, out, _ = runner(["audit", "check-export", str(out_file), "--data-dir", str(data_dir)])
    assert code == 1
    assert "differs from the statement in exported_by: the statement was changed after export" in out
