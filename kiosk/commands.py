"""The kiosk's subcommands: ``demo``, ``kiosk``, ``audit verify|export|report``, ``users add|list``.

``niuniu demo`` is the first command a newcomer runs; ``niuniu kiosk`` is what systemd
runs at the table.  Both build the same objects (audit log, table service, camera
pipeline, Flask app) and differ only in where frames come from and who the accounts are.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import socket
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kiosk.audit import AUDIT_FILE, AuditError, AuditLog, AuditType, local_text, parse_period
from kiosk.clockwatch import ClockWatchThread
from kiosk.server import default_data_dir, is_loopback, serve
from scoring.errors import NiuniuError


def register(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser("demo", help="start the dealer kiosk on the recorded demo table (first thing to try)",
                          description="Play datasets/demo as the camera, recognise and score every round, "
                                      "settle it with default bets, and serve the dealer's screen.")
    demo.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    demo.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    demo.add_argument("--data-dir", help="where the demo's audit log and recordings go (default: a new temp folder)")
    demo.add_argument("--dataset", help="demo recording: a folder with table.yaml and frames/ (default datasets/demo)")
    demo.add_argument("--model", help="card detector model file (default: models/)")
    demo.add_argument("--model-format", default="pt", choices=("pt", "onnx", "ncnn"),
                      help="which exported model to load from models/ (default pt)")
    demo.add_argument("--no-tta", action="store_true",
                      help="read each corner index once, not at 4 rotations "
                           "(faster, slightly less accurate; deploy/PERFORMANCE.md)")
    demo.add_argument("--pause", type=float, default=4.0, help="seconds a complete round stays on screen before "
                                                               "the demo dealer settles it (default 4)")
    demo.set_defaults(func=run_demo_command)

    kiosk = sub.add_parser("kiosk", help="run the dealer kiosk for a real table (camera, model, audit log)")
    kiosk.add_argument("--config", required=True, help="table file (table.yaml) from `niuniu calibrate`")
    kiosk.add_argument("--source", help="camera: picamera2, a device index, a URL, a video or a frame folder "
                                        "(default: camera.source in the table file)")
    kiosk.add_argument("--data-dir", help=f"audit log, accounts and recordings (default {default_data_dir()})")
    kiosk.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; anything else "
                                                           "exposes the kiosk on the network)")
    kiosk.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    kiosk.add_argument("--behind-proxy", action="store_true",
                       help="served through a TLS reverse proxy on this machine: the session cookie only over "
                            "TLS, and the client address the proxy forwards (X-Forwarded-For) is the one "
                            "throttled and logged")
    kiosk.add_argument("--model", help="card detector model file (default: models/)")
    kiosk.add_argument("--model-format", default="pt", choices=("pt", "onnx", "ncnn"),
                       help="which exported model to load from models/ (default pt; ncnn on a Raspberry Pi)")
    kiosk.add_argument("--no-tta", action="store_true",
                       help="read each corner index once, not at 4 rotations "
                           "(faster, slightly less accurate; deploy/PERFORMANCE.md)")
    kiosk.set_defaults(func=run_kiosk_command)

    audit = sub.add_parser("audit", help="check or export the tamper-evident audit log, "
                                         "or report a shift's books from it")
    audit_sub = audit.add_subparsers(dest="audit_command", metavar="ACTION")
    audit_sub.required = True
    verify = audit_sub.add_parser("verify",
                                  help="check the hash chain: OK and the record count, or the first broken seq")
    verify.add_argument("--data-dir", required=True, help=f"the kiosk's data directory (holds {AUDIT_FILE})")
    verify.add_argument("--against", metavar="BACKUP_DIR",
                        help="also check the log still holds the head each backup in this directory copied "
                             "(a history rewritten and re-hashed passes the chain check alone)")
    verify.add_argument("--head", action="append", default=[], metavar="SEQ:HASH",
                        help="also check the log still holds this head, as a shift report printed it (repeatable)")
    verify.add_argument("--json", action="store_true", help="print the result as JSON")
    verify.set_defaults(func=run_audit_verify)
    export = audit_sub.add_parser("export", help="write the records of a time range as CSV or JSON")
    export.add_argument("--data-dir", required=True, help=f"the kiosk's data directory (holds {AUDIT_FILE})")
    export.add_argument("--from", dest="since",
                        help="start: 2024-05-01 or 2024-05-01T18:00, in --timezone unless an offset is given")
    export.add_argument("--to", dest="until",
                        help="end: up to, not including, that time (a bare date is the whole day); "
                             "same forms as --from")
    export.add_argument("--timezone", type=_time_zone, default="UTC",
                        help="time zone of --from/--to without an offset (the table file's timezone, "
                             "e.g. Asia/Phnom_Penh; default UTC)")
    export.add_argument("--format", default="csv", choices=("csv", "json"), help="csv (default) or json")
    export.add_argument("--output", "-o", help="file to write (default: standard output); a signed statement of "
                        "its records is written beside it as <file>.statement.json")
    export.add_argument("--statement", help="write the signed statement here instead (needed to sign an export "
                        "to standard output)")
    export.add_argument("--unsigned", action="store_true",
                        help="write no statement: no signing key is read and nothing is logged (the export cannot "
                             "then be proven complete and unchanged)")
    export.add_argument("--by", help="who exports it, for the audit record (default: the console user)")
    export.add_argument("--force", action="store_true",
                        help="overwrite an existing --output file (never a signed export, a statement, or a file "
                             "of the data directory)")
    export.set_defaults(func=run_audit_export)
    report = audit_sub.add_parser("report", help="a period's books: rounds, stakes, commission, house result, "
                                  "per seat (a shift report)")
    report.add_argument("--data-dir", required=True, help=f"the kiosk's data directory (holds {AUDIT_FILE})")
    report.add_argument("--from", dest="since",
                        help="start: 2024-05-01 or 2024-05-01T18:00, in --timezone unless an offset is given; "
                             "rounds count in the period they ended in")
    report.add_argument("--to", dest="until",
                        help="end: up to, not including, that time (a bare date is the whole day); "
                             "same forms as --from")
    report.add_argument("--timezone", type=_time_zone, default="UTC",
                        help="time zone of --from/--to without an offset (the table file's timezone, "
                             "e.g. Asia/Phnom_Penh; default UTC)")
    report.add_argument("--table", help="only this table id (default: every table in the log)")
    report.add_argument("--json", action="store_true", help="print JSON")
    report.set_defaults(func=run_audit_report)

    evidence = audit_sub.add_parser("evidence", help="one round's audit records and recording in a zip, "
                                    "with a manifest the log vouches for (for a dispute)")
    evidence.add_argument("--data-dir", required=True, help=f"the kiosk's data directory (holds {AUDIT_FILE})")
    evidence.add_argument("--round", type=int, required=True, dest="round_no", help="round number")
    evidence.add_argument("--table", help="table id (default: the only table in the log)")
    evidence.add_argument("--by", help="who exports it, for the audit record (default: the console user)")
    evidence.add_argument("--output", "-o", required=True, help="zip file to write")
    evidence.add_argument("--json", action="store_true", help="print the manifest as JSON")
    evidence.set_defaults(func=run_audit_evidence)
    check = audit_sub.add_parser("check-evidence", help="check an evidence package: files as exported, "
                                 "records unchanged, and vouched for by the log (--data-dir) or the table's "
                                 "signature (--public-key)")
    check.add_argument("package", help="the evidence zip")
    _check_args(check, "package")
    check.set_defaults(func=run_audit_check_evidence)
    check_export = audit_sub.add_parser("check-export", help="check an audit export against its signed statement: "
                                        "every record unchanged, none added or left out, signed by the table "
                                        "(--public-key) or vouched for by the log (--data-dir)")
    check_export.add_argument("export", help="the CSV or JSON file `niuniu audit export` or the review page wrote")
    check_export.add_argument("--statement", help="its statement (default: <export>.statement.json beside it)")
    _check_args(check_export, "export")
    check_export.set_defaults(func=run_audit_check_export)
    forwarded = audit_sub.add_parser("check-forwarded", help="check the casino's log collector's copy (the "
                                     "table file's audit_forward): intact, signed by the table, and still what "
                                     "the log holds (--data-dir)")
    forwarded.add_argument("files", nargs="+", help="the collector's log files (other programs' lines are skipped)")
    forwarded.add_argument("--table", help="the table id (default: the only table in the files)")
    _check_args(forwarded, "copy")
    forwarded.set_defaults(func=run_audit_check_forwarded)

    key = audit_sub.add_parser("public-key", help="the public key evidence packages and exports are signed with, "
                               "to publish (made, and logged, on first use)")
    key.add_argument("--data-dir", required=True, help=f"the kiosk's data directory (holds {AUDIT_FILE})")
    key.add_argument("--by", help="who asks, for the audit record if the key is made now (default: the console user)")
    key.add_argument("--output", "-o", help="PEM file to write (default: standard output)")
    key.add_argument("--force", action="store_true",
                     help="overwrite an existing --output file (never a file of the data directory)")
    key.add_argument("--json", action="store_true", help="print {algorithm, fingerprint, public_key} as JSON")
    key.set_defaults(func=run_audit_public_key)

    recs = audit_sub.add_parser("check-recordings", help="check every sealed recording's files against the "
                                "seal the log holds (a key frame changed on disk shows); exit 1 on a change, "
                                "a missing or failed recording, or one left unsealed that should have been "
                                "sealed; recordings made before the table's first run that sealed any (an "
                                "upgraded table's old rounds) are counted apart and do not fail it")
    recs.add_argument("--data-dir", required=True, help=f"the kiosk's data directory (holds {AUDIT_FILE})")
    recs.add_argument("--from", dest="since", help="only recordings sealed from then (forms as in audit report)")
    recs.add_argument("--to", dest="until", help="... until then, not including it (a bare date is the whole day)")
    recs.add_argument("--timezone", type=_time_zone, default="UTC", help="time zone of --from/--to (default UTC)")
    recs.add_argument("--table", help="only this table id")
    recs.add_argument("--json", action="store_true", help="print {ok, intact, changed, gone, missing, failed, "
                      "unsealed, not_yet_sealed, made_before_sealing} as JSON")
    recs.set_defaults(func=run_audit_check_recordings)

    check = sub.add_parser("check", help="is this device ready to run its table? table file, calibration picture, "
                                         "card model, camera, data, audit log, backup, evidence key, clock "
                                         "(kiosk stopped)")
    check.add_argument("--config", required=True, help="the table file the kiosk runs with")
    check.add_argument("--data-dir", help=f"the kiosk's data directory (default {default_data_dir()})")
    check.add_argument("--source", help="camera to try (default: the table file's camera.source)")
    check.add_argument("--no-camera", action="store_true", help="do not open the camera (the kiosk is running)")
    check.add_argument("--model", help="card detector model file (default: models/)")
    check.add_argument("--model-format", default="pt", choices=("pt", "onnx", "ncnn"),
                       help="which exported model the kiosk loads (default pt)")
    check.add_argument("--json", action="store_true", help="print [{part, level, message}] as JSON")
    check.set_defaults(func=run_check)

    backup = sub.add_parser("backup", help="copy the audit log, accounts and table file to another disk "
                                           "while the kiosk runs (the nightly timer runs this)")
    backup.add_argument("--data-dir", required=True, help=f"the kiosk's data directory (holds {AUDIT_FILE})")
    backup.add_argument("--to", required=True, dest="destination",
                        help="a directory on another disk (a USB drive, a NAS mount); each backup is a new "
                             "folder in it")
    backup.add_argument("--config", action="append", default=[],
                        help="a table file to copy too (repeat for more), e.g. /etc/niuniu/table.yaml")
    backup.add_argument("--keep", type=_positive, help="keep only the newest N backups in --to")
    backup.add_argument("--other-disk", action="store_true",
                        help="refuse unless --to is on another disk than --data-dir (the nightly unit passes it: an "
                             "unmounted drive leaves its mount point on the SD card)")
    backup.add_argument("--json", action="store_true", help="print what was backed up as JSON")
    backup.set_defaults(func=run_backup)

    restore = sub.add_parser("restore", help="put a backup back into a data directory (stop the kiosk first); "
                                             "never overwrites a longer log")
    restore.add_argument("backup", help="a niuniu-backup-<time> folder made by `niuniu backup`")
    restore.add_argument("--data-dir", required=True, help="the kiosk's data directory to restore into")
    restore.add_argument("--replace", action="store_true",
                         help="the data directory holds another history: move it aside (replaced-<time>/) "
                              "and restore the backup in its place")
    restore.add_argument("--collector", nargs="+", metavar="FILE",
                         help="the log collector's files (audit_forward): take back the records written after the "
                              "backup that the table signed for")
    restore.add_argument("--accept-damaged", action="store_true",
                         help="restore a backup whose MANIFEST.json names damaged records (the kiosk's log was "
                              "damaged before it was backed up), those records as they are")
    restore.add_argument("--json", action="store_true", help="print what was restored as JSON")
    restore.set_defaults(func=run_restore)

    users = sub.add_parser("users", help="manage kiosk accounts from the console (admins use the Accounts page)")
    users_sub = users.add_subparsers(dest="users_command", metavar="ACTION")
    users_sub.required = True
    add = users_sub.add_parser("add", help="create an account; the password (and a supervisor's PIN) is asked for")
    add.add_argument("--data-dir", required=True, help="the kiosk's data directory")
    add.add_argument("--username", required=True)
    add.add_argument("--role", required=True, choices=("dealer", "supervisor", "surveillance", "admin"))
    add.add_argument("--password-stdin", action="store_true",
                     help="read the password (then a supervisor's PIN) from standard input, one per line")
    add.set_defaults(func=run_users_add)
    lst = users_sub.add_parser("list", help="list accounts")
    lst.add_argument("--data-dir", required=True, help="the kiosk's data directory")
    lst.add_argument("--json", action="store_true", help="print JSON")
    lst.set_defaults(func=run_users_list)


# --------------------------------------------------------------------------- audit


def _check_args(p: argparse.ArgumentParser, what: str) -> None:
    """What ``check-evidence`` and ``check-export`` are checked against, and how they answer."""
    p.add_argument("--data-dir", help=f"the kiosk's data directory, to check the {what} against its log")
    p.add_argument("--public-key", help="the table's published public key (PEM, from `niuniu audit public-key`): "
                   f"check the {what}'s signature, without the log")
    p.add_argument("--json", action="store_true", help="print {ok, facts, problems, against_log, against_key} as JSON")


def _open_audit(data_dir: str, *, read_only: bool = False) -> AuditLog:
    """The data directory's log.  ``read_only`` for the commands that only read it, so that they
    run on a seized disk or a write-protected copy too (``AuditLog``'s ``read_only``)."""
    path = Path(data_dir)
    if path.is_file():          # the log itself, typed for its directory: said as the kiosk says it
        raise AuditError(f"{path} is a file; pass --data-dir the kiosk's data directory (e.g. /var/lib/niuniu"
                         + (f", here {path.parent}" if path.name == AUDIT_FILE else "") + ")")
    if not path.is_dir():
        raise AuditError(f"data directory {path} does not exist; pass the --data-dir the kiosk runs with")
    return AuditLog.in_dir(path, create=False, read_only=read_only)


def _own_file(target: str | Path, data_dir: str) -> None:
    """Refuse an output path that is a directory, or one of the data directory's own files —
    whatever exists there, a name the kiosk uses there (a database's ``-wal`` too, though none
    is there now), or anything under its folders (the recordings): an export written over
    ``audit.sqlite3`` destroyed the log, and a public key written over ``evidence_key`` the
    signing key.  ``--force`` does not lift this."""
    from kiosk.db import KIOSK_DB, SECRET_FILE, SETUP_CODE_FILE
    from kiosk.forward import STATE_FILE
    from kiosk.signing import KEY_FILE

    own = (AUDIT_FILE, KIOSK_DB, SECRET_FILE, SETUP_CODE_FILE, KEY_FILE, STATE_FILE)   # prefixes: -wal, -shm too
    path = Path(target)
    if path.is_dir():
        raise AuditError(f"{path} is a directory; give a file name (e.g. {path / 'audit.csv'})")
    where, home = path.resolve(), Path(data_dir).resolve()
    if where.is_relative_to(home):
        parts = where.relative_to(home).parts
        if len(parts) != 1 or where.exists() or parts[0].startswith(own):
            raise AuditError(f"{path} is {'in ' if len(parts) > 1 else ''}the kiosk's own {parts[0]} in its data "
                             f"directory {home}; write it elsewhere (nothing overwrites the kiosk's files, not even "
                             "--force)")


def run_audit_verify(args) -> int:
    from kiosk.anchors import check_against_backups, check_head, nothing_compared, parse_head, summary

    if args.against and not Path(args.against).is_dir():
        raise AuditError(f"{args.against} is not a directory; pass the NIUNIU_BACKUP_DIR the nightly backup writes "
                         "to (is the drive mounted?)")
    heads = [parse_head(text) for text in args.head]     # a typo fails now, not after the chain's walk
    log = _open_audit(args.data_dir, read_only=True)
    try:
        result = log.verify()
        anchors = check_against_backups(log, args.against) if args.against else None
        written = [check_head(log, seq, digest) for seq, digest in heads]
    finally:
        log.close()
    # Nothing compared is no pass: an empty --against is most often a backup drive not mounted.
    unchecked = nothing_compared(anchors, args.against, args.data_dir) if anchors is not None else None
    ok = result.ok and not unchecked and not any(a.failed for a in [*(anchors or []), *written])
    if args.json:
        extra = {"ok": ok} if anchors is not None or written else {}
        if anchors is not None:
            extra["backups"] = [a.to_json() for a in anchors]
        if unchecked:
            extra["backups_not_checked"] = unchecked
        if written:
            extra["heads"] = [h.to_json() for h in written]
        print(json.dumps({**result.to_json(), **extra}))
    else:
        print(result.summary())
        if anchors is not None:
            print(unchecked or summary(anchors))
        for head in written:
            print(head.line())
    return 0 if ok else 1


def _time_zone(name: str):
    from vision.table import time_zone_of
    try:
        return time_zone_of(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run_audit_export(args) -> int:
    from kiosk.evidence import PARTIAL, write_new
    from kiosk.exports import statement_path

    since, until = parse_period(args.since, args.until, zone=args.timezone)
    statement = None if args.unsigned else args.statement or (statement_path(args.output) if args.output else None)
    if args.output:
        _own_file(args.output, args.data_dir)
        beside = statement_path(args.output)
        if Path(args.output).exists() and beside.exists():
            # Handed out with its statement: overwritten, the statement beside it would vouch for a
            # file it does not describe (check-export then reports records added after export).
            raise AuditError(f"{args.output} is a signed export ({beside} is beside it); give this export a new "
                             "file name (a signed export is never overwritten, not even with --force)")
        if Path(args.output).exists() and not args.force:
            raise AuditError(f"{args.output} exists; give the export a new file name, or pass --force to "
                             "overwrite it")
    if statement:
        _own_file(statement, args.data_dir)
        if Path(statement).exists():
            raise AuditError(f"{statement} exists; give the export a new file name (a statement is never "
                             "overwritten: it proves an export already handed out)")
    # Unsigned, the export only reads the log: it then runs on a write-protected copy too.
    log = _open_audit(args.data_dir, read_only=not statement)
    try:
        head = log.last()
        upto = head.seq if head else 0
        created: list[Path] = []     # half an export, or one without its statement, is no export
        broken: list = []            # (record, problem): exported as the log holds them, and said
        try:
            if args.output:
                # Written whole into <name>.partial, then put in place (over a file only with --force):
                # an export that fails part-way leaves nothing behind to block its retry (QA51 operator M1).
                count = write_new(Path(args.output), lambda fh: _export_into(fh, log, args.format, since, until, upto,
                                                                             broken),
                                  overwrite=args.force)
                created.append(Path(args.output))
            else:
                if args.format == "csv" and hasattr(sys.stdout, "reconfigure"):
                    sys.stdout.reconfigure(errors="surrogateescape")    # as _export_into, for a damaged payload
                count = log.export(sys.stdout, args.format, since=since, until=until, upto_seq=upto, broken=broken)
            if statement:
                _sign_export(args, log, since, until, upto, Path(statement), created)
        except BrokenPipeError:
            raise                     # `export | head`: the reader left; the root command ends quietly
        except BaseException as exc:  # whatever stopped it: no export left without its statement
            for path in created:
                path.unlink(missing_ok=True)
            if isinstance(exc, FileExistsError):      # made meanwhile, by another export: kept
                raise AuditError(f"{exc.filename or args.output} exists; give the export a new file name") from None
            if isinstance(exc, OSError):
                name = str(exc.filename or args.output or "the export to standard output").removesuffix(PARTIAL)
                raise AuditError(f"cannot write {name}: {exc.strerror}") from None
            raise
    finally:
        log.close()
    if args.output:
        signed = f", signed statement {statement}" if statement else " (unsigned)"
        print(f"{count} records written to {args.output}{signed}", file=sys.stderr)
    elif statement:
        print(f"signed statement of {count} records written to {statement}", file=sys.stderr)
    # As `audit evidence` does: the export holds every record, the damaged ones as the log holds
    # them, but it is no clean export, and whoever makes it is the one to call surveillance.
    for record, problem in broken:
        print(f"WARNING: seq {record.seq} ({record.type}) {problem}: it is exported as the log holds it; run niuniu "
              "audit verify and call surveillance", file=sys.stderr)
    return 1 if broken else 0


def _export_into(fh, log: AuditLog, fmt: str, since, until, upto: int, broken: list | None = None) -> int:
    """:meth:`AuditLog.export` into a binary file, as UTF-8 text."""
    import io

    # surrogateescape: a CSV payload with bytes that were not UTF-8 (a damaged record) is written
    # as the very bytes stored, not an encoding error that loses the whole export
    text = io.TextIOWrapper(fh, encoding="utf-8", errors="surrogateescape", newline="")
    try:
        return log.export(text, fmt, since=since, until=until, upto_seq=upto, broken=broken)
    finally:
        text.flush()
        text.detach()      # the file is write_new's to close


def _sign_export(args, log: AuditLog, since, until, upto: int, statement: Path, created: list[Path]) -> None:
    from kiosk.exports import sign_export, statement_bytes, statement_of
    from kiosk.signing import table_key

    by = args.by or _console_user()
    key = table_key(args.data_dir, log, by)
    with open(statement, "xb") as fh:        # never over another export's statement
        created.append(statement)
        try:
            record = sign_export(log, key, actor=by, fmt=args.format, since=since, until=until, upto_seq=upto)
        except sqlite3.Error as exc:
            raise AuditError(f"cannot record the export in the audit log ({exc}); run this as the kiosk's user "
                             "(sudo -u niuniu niuniu audit export ...), or pass --unsigned") from None
        fh.write(statement_bytes(statement_of(log, record)))


def run_audit_evidence(args) -> int:
    from kiosk.evidence import export_record, write_evidence, write_new
    from kiosk.signing import table_key
    from vision.record import recordings_dir, round_folder

    by = args.by or _console_user()
    log = _open_audit(args.data_dir)
    try:
        table_id = args.table or _only_table(log, args.round_no)
        if not log.records(round_no=args.round_no, table_id=table_id, limit=1):
            raise AuditError(f"the audit log has no round {args.round_no} on table {table_id}")
        signer = table_key(args.data_dir, log, by)
        recording = round_folder(recordings_dir(args.data_dir, table_id), args.round_no)
        output = Path(args.output)
        try:
            # written whole or not at all: a failed export leaves nothing that blocks its retry
            manifest = write_new(output, lambda fh: write_evidence(
                fh, log, table_id=table_id, round_no=args.round_no, recording=recording, exported_by=by,
                signer=signer))
        except FileExistsError:
            raise AuditError(f"{output} exists; give a new file name (a package is never overwritten)") from None
        except OSError as exc:
            raise AuditError(f"cannot write {output}: {exc.strerror}") from None
        try:
            log.append(AuditType.EXPORTED, by, export_record(manifest), round_no=args.round_no, table_id=table_id)
        except (sqlite3.Error, OSError) as exc:
            output.unlink(missing_ok=True)     # a package the log does not vouch for is no evidence
            raise AuditError(f"cannot record the export in the audit log ({exc}); run this as the kiosk's user "
                             "(sudo -u niuniu niuniu audit evidence ...)") from None
    finally:
        log.close()
    deleted, missing = manifest["recording_deleted"], manifest.get("recording_missing")
    kept = (f"recording {manifest['recording']}" if recording else
            f"no recording (deleted by retention, audit record {deleted['seq']})" if deleted else
            f"no recording (sealed at log seq {missing['seq']}, not restored from the backup at seq "
            f"{missing['restore_seq']})" if missing and missing["restore_seq"] else
            f"no recording: MISSING (sealed at log seq {missing['seq']}, but gone from the disk and no retention "
            "record deleted it; the package's manifest says so as recording_missing)" if missing else
            "no recording (none on this kiosk for this round)")
    # A package of damaged records is made (it is the disputed round's evidence), but is no clean export.
    broken = manifest.get("broken_records") or []
    if args.json:
        print(json.dumps({"package": str(output), **manifest}))
        return 1 if broken else 0
    print(f"round {args.round_no} of table {table_id}: {manifest['records']} audit records, {kept} -> {output}")
    print("  its summary.txt tells the round in plain words (derived, not sealed; the records are the evidence)")
    if missing and not missing["restore_seq"]:
        print(f"WARNING: round {args.round_no}'s sealed recording {missing['folder']} was deleted or moved by hand "
              "(niuniu audit check-recordings)", file=sys.stderr)
    for b in broken:
        print(f"WARNING: {b['file']} holds seq {b['seq']} ({b['type']}), which {b['problem']}: it is packed as the "
              "log holds it (MANIFEST.json's broken_records names it); run niuniu audit verify and call "
              "surveillance", file=sys.stderr)
    return 1 if broken else 0


def _console_user() -> str:
    try:
        return "console:" + getpass.getuser()
    except (KeyError, OSError):
        return "console"


def _only_table(log: AuditLog, round_no: int) -> str:
    tables = sorted({r.table_id for r in log.records(round_no=round_no, types=[AuditType.ROUND_START])})
    if not tables:
        raise AuditError(f"the audit log has no round {round_no}")
    if len(tables) > 1:
        raise AuditError(f"round {round_no} exists on tables {', '.join(tables)}; pass --table")
    return tables[0]


def run_audit_check_evidence(args) -> int:
    from kiosk.evidence import check_evidence
    from kiosk.signing import load_public_key

    published = load_public_key(args.public_key) if args.public_key else None
    log = _open_audit(args.data_dir, read_only=True) if args.data_dir else None
    try:
        result = check_evidence(args.package, log, published)
    finally:
        if log is not None:
            log.close()
    return _print_check(result, args, log is not None, published is not None, "package")


def run_audit_check_export(args) -> int:
    from kiosk.exports import check_export
    from kiosk.signing import load_public_key

    published = load_public_key(args.public_key) if args.public_key else None
    log = _open_audit(args.data_dir, read_only=True) if args.data_dir else None
    try:
        result = check_export(args.export, args.statement, log, published)
    finally:
        if log is not None:
            log.close()
    return _print_check(result, args, log is not None, published is not None, "export")


def run_audit_check_forwarded(args) -> int:
    from kiosk.forward_check import check_forwarded
    from kiosk.signing import load_public_key

    published = load_public_key(args.public_key) if args.public_key else None
    log = _open_audit(args.data_dir, read_only=True) if args.data_dir else None
    try:
        result = check_forwarded(args.files, table_id=args.table, log=log, public_key=published)
    finally:
        if log is not None:
            log.close()
    return _print_check(result, args, log is not None, published is not None, "copy")


def _print_check(result, args, against_log: bool, against_key: bool, what: str) -> int:
    """A check's verdict as ``check-evidence`` and ``check-export`` print it; 0 when it holds.

    A warning (a hole in the collector's copy that may be loss or removal) exits 1 as a
    problem does: a script reading only the exit code must not take it for a clean copy."""
    warnings = getattr(result, "warnings", [])
    held = result.ok and not warnings
    if args.json:
        print(json.dumps({"ok": held, "facts": result.facts, "warnings": warnings, "problems": result.problems,
                          "against_log": against_log, "against_key": against_key}))
        return 0 if held else 1
    for fact in result.facts:
        print(f"ok: {fact}")
    for warning in warnings:
        print(f"WARNING: {warning}")
    for problem in result.problems:
        print(f"PROBLEM: {problem}")
    if result.ok and not against_log and not against_key:
        print(f"not checked against the log or the published key: pass --data-dir, or --public-key, to confirm "
              f"the {what} is the one the table exported")
    return 0 if held else 1


def run_audit_public_key(args) -> int:
    from kiosk.signing import ALGORITHM, fingerprint, public_pem, table_key

    if args.output:              # refused before a key is made: a wrong -o costs nothing
        _own_file(args.output, args.data_dir)
        if Path(args.output).exists() and not args.force:
            raise AuditError(f"{args.output} exists; give a new file name, or pass --force to overwrite it")
    log = _open_audit(args.data_dir)
    try:
        public = table_key(args.data_dir, log, args.by or _console_user()).public_key()
    finally:
        log.close()
    pem, key_id = public_pem(public), fingerprint(public)
    if args.output:
        from kiosk.evidence import write_new

        try:    # whole or not at all: a 0-byte key left by a full disk blocked the retry (QA51 operator L2)
            write_new(Path(args.output), lambda fh: fh.write(pem.encode("ascii")), overwrite=args.force)
        except FileExistsError:
            raise AuditError(f"{args.output} exists; give a new file name, or pass --force to overwrite it") from None
        except OSError as exc:
            raise AuditError(f"cannot write {args.output}: {exc.strerror}") from None
    if args.json:
        print(json.dumps({"algorithm": ALGORITHM, "fingerprint": key_id, "public_key": pem}))
    elif args.output:
        print(f"{ALGORITHM} public key {key_id} -> {args.output}")
    else:
        print(pem, end="")
        print(f"fingerprint (SHA-256 of the raw key): {key_id}", file=sys.stderr)
    return 0


def run_audit_check_recordings(args) -> int:
    from kiosk.seals import check_recordings

    since, until = parse_period(args.since, args.until, zone=args.timezone)
    log = _open_audit(args.data_dir, read_only=True)
    try:
        if args.table:
            _known_table(log, args.table)
        sweep = check_recordings(log, args.data_dir, table_id=args.table, since=since, until=until)
    finally:
        log.close()
    if args.json:
        print(json.dumps({"ok": sweep.ok, "intact": sweep.intact, "changed": sweep.changed, "gone": sweep.gone,
                          "missing": sweep.missing, "failed": sweep.failed, "unsealed": sweep.unsealed,
                          "not_yet_sealed": sweep.not_yet_sealed, "made_before_sealing": sweep.made_before_sealing}))
        return 0 if sweep.ok else 1
    for label, changes in sweep.changed.items():
        for change in changes:
            print(f"PROBLEM: {label}: {change}")
    for label in sweep.missing:
        print(f"MISSING: {label}: no longer on disk, and no recordings_pruned record says retention deleted it")
    for label in sweep.failed:
        print(f"FAILED: {label}")
    for label in sweep.unsealed:
        print(f"UNSEALED: {label}: no seal in the audit log, so it cannot be checked")
    for label in sweep.not_yet_sealed:
        print(f"NOT YET SEALED: {label}: recorded by the kiosk's last run, which has not stopped (or stopped "
              "without a record): sealed when the round ends, or at the kiosk's next start")
    if sweep.made_before_sealing:
        # One line, not one per folder: an upgraded table holds weeks of them until retention
        # deletes them, and they are no finding (QA53: a nightly script read exit 1 as tampering).
        many = len(sweep.made_before_sealing)
        print(f"MADE BEFORE SEALING: {many} recording{'s' if many != 1 else ''}, from "
              f"{sweep.made_before_sealing_dates()}; nothing to check them against (the audit log shows they were "
              "recorded before this table's first run that sealed recordings; retention deletes them in time)")
    if sweep.unsealed:
        many = len(sweep.unsealed)
        print(f"WARNING: {many} recording{'s have' if many != 1 else ' has'} no seal, and the audit log does not "
              "show them made before this table's recordings were sealed (left by a kiosk that stopped before "
              "sealing them and not among the newest its next start sealed, or put there by hand): they cannot be "
              "checked; a change to their files would not show here")
    print(f"{sweep.intact} recording{'s' if sweep.intact != 1 else ''} as sealed, {len(sweep.changed)} changed since "
          f"sealed, {len(sweep.gone)} deleted as the log records (retention, or a restore), {len(sweep.missing)} "
          f"missing, {len(sweep.failed)} round{'s' if len(sweep.failed) != 1 else ''} whose recording failed "
          f"or is incomplete, {len(sweep.unsealed)} with no seal (not checked), {len(sweep.made_before_sealing)} "
          "made before sealing (nothing to check)")
    return 0 if sweep.ok else 1


def _known_table(log: AuditLog, table_id: str) -> None:
    """Refuse a ``--table`` the log never held: a typo otherwise reads as a clean answer (no
    round ended, no recording changed)."""
    tables = log.tables()
    if table_id not in tables:
        held = f"it holds {', '.join(tables)}" if tables else "it holds no table's records yet"
        raise AuditError(f"the audit log has no table {table_id!r}; {held}")


def run_check(args) -> int:
    from kiosk.preflight import FAIL, check_device

    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    findings = check_device(args.config, data_dir, source=args.source, camera=not args.no_camera,
                            reader=lambda: _detector(args))
    if args.json:
        print(json.dumps([f.to_json() for f in findings]))
    else:
        for f in findings:
            print(f"{f.level.upper():4}  {f.part}: {f.message}")
    return 1 if any(f.level == FAIL for f in findings) else 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def run_backup(args) -> int:
    """Back up, and write the outcome to the live log either way: the admin page shows the
    last one, so a backup that keeps failing at night is seen in the day.

    A backup of a log whose damage the backup before it already named exits 0, with one
    WARNING line on stderr (the journal's): the nightly unit marks any other status failed,
    and an alarm that fires every morning for damage reported once is one nobody reads by
    the time a backup really fails.  New damage still fails (exit 2)."""
    from kiosk.backup import BackupError, damaged_record_text, log_backup, make_backup

    destination = Path(args.destination)
    try:
        made = make_backup(args.data_dir, destination, configs=[Path(c) for c in args.config], keep=args.keep,
                           other_disk=args.other_disk)
    except BackupError as exc:
        try:
            log = _open_audit(args.data_dir)
            try:
                log_backup(log, None, actor=_console_user(), destination=destination, error=exc)
            finally:
                log.close()
        except (AuditError, sqlite3.Error, OSError):
            pass                  # the log itself is out of reach: the error below says why
        raise
    log = _open_audit(args.data_dir)
    try:
        log_backup(log, made, actor=_console_user(), destination=destination)
    finally:
        log.close()
    if made.damaged:
        since = min(d["since"] for d in made.damaged)
        print(f"WARNING: the audit log holds {len(made.damaged)} damaged record(s), the same the backup of {since} "
              f"found and reported: {'; '.join(damaged_record_text(d) for d in made.damaged[:3])}"
              f"{' ...' if len(made.damaged) > 3 else ''}; copied as the log has them, and any older backup made "
              "before the damage is kept; nothing new is damaged", file=sys.stderr)
    if args.json:
        print(json.dumps({"folder": str(made.folder), "records": made.head_seq, "head_hash": made.head_hash,
                          "bytes": made.bytes, "seconds": round(made.seconds, 2), "removed": made.removed,
                          "held_recordings": made.held, "damaged": list(made.damaged)}))
        return 0
    dropped = f"; removed {len(made.removed)} older" if made.removed else ""
    held = f", {len(made.held)} held recording(s)" if made.held else ""
    print(f"backup {made.folder}: {made.head_seq} audit records (chain checked, head {made.head_hash[:16]}){held}, "
          f"{made.bytes / 1e6:.1f} MB in {made.seconds:.1f} s{dropped}")
    return 0


def run_restore(args) -> int:
    from kiosk.backup import restore_backup

    done = restore_backup(args.backup, args.data_dir, actor=_console_user(), replace=args.replace,
                          collector=args.collector, accept_damaged=args.accept_damaged)
    if args.json:
        print(json.dumps({"records": done.records, "replaced": str(done.replaced) if done.replaced else None,
                          "held_recordings": done.held, "configs": done.configs, "recovered": done.recovered,
                          "recorded_later": done.recorded_later, "damaged": list(done.damaged)}))
        return 0
    if done.recorded_later:
        print(f"{args.data_dir} already holds this backup's {done.records} audit records, put in place by an earlier "
              "run of this restore that could not record it: recorded the restore (backup_restored) now")
    else:
        print(f"restored {done.records} audit records (chain checked) into {args.data_dir}"
              + (f"; the previous files are in {done.replaced}" if done.replaced else ""))
    if done.damaged:
        print(done.damage_line())
    if done.recovered is not None:
        _print_recovered(done.recovered)
    for file in done.configs:
        where = f"it was {file['from']}" if file.get("from") else "it goes in /etc/niuniu/"
        print(f"{file.get('kind', 'table file')} in the backup: {Path(args.backup) / 'config' / file['name']} "
              f"({where}: copy it back there on a new device)")
    return 0


def _print_recovered(recovered: dict) -> None:
    if recovered["records"]:
        print(f"taken back from the collector: {recovered['records']} records written after the backup, seq "
              f"{recovered['first_seq']}..{recovered['last_seq']}, each signed for by the table")
    else:
        print("the collector's copy holds no record after the backup that the table signed for")
    if recovered["unvouched"] and recovered.get("other_keys"):
        print(f"not taken: {recovered['unvouched']} more records in the copy, signed for by a key this backup does not "
              f"hold ({', '.join(recovered['other_keys'])}): the table's signing key was made after this backup, so "
              "nothing here proves they are the table's. A newer backup (made after the key) takes them back; make "
              "one as soon as audit_forward is set up")
    elif recovered["unvouched"]:
        print(f"not taken: {recovered['unvouched']} more records in the copy that no head signed by the table covers "
              "(the batch the failure cut short)")
    if recovered["stopped"]:
        print(f"the copy's chain ends early: {recovered['stopped']}")


def run_audit_report(args) -> int:
    from kiosk.report import period_report

    since, until = parse_period(args.since, args.until, zone=args.timezone)
    log = _open_audit(args.data_dir, read_only=True)
    try:
        if args.table:
            _known_table(log, args.table)
        reports = period_report(log, table_id=args.table, since=since, until=until)
        last = log.last()           # the report's own anchor: written down, it outlives a rewrite
        head = {"seq": last.seq, "hash": last.hash} if last else None
    finally:
        log.close()
    # Books read off records that fail their hash are no books to sign: a script sees it in the status.
    status = 1 if any(r.broken for r in reports.values()) else 0
    if args.json:
        print(json.dumps([{**r.to_json(), "chain_head": head} for r in reports.values()]))
        return status
    if not reports:
        where = f"on table {args.table} " if args.table else ""
        zone_name = getattr(args.timezone, "key", "UTC")
        print(f"no round ended {where}between "
              f"{f'{local_text(since, args.timezone)} {zone_name}' if since else 'the first record'} and "
              f"{f'{local_text(until, args.timezone)} {zone_name}' if until else 'now'}", file=sys.stderr)
        return 0
    for report in reports.values():
        _print_report(report, args.timezone)
    if head:
        print(f"audit chain head when made: {head['seq']}:{head['hash']} "
              f"(niuniu audit verify --head {head['seq']}:{head['hash'][:16]} checks the log still holds it)")
    return status


def _print_columns(head: tuple[str, ...], totals: dict, shown=str) -> None:
    """Rows of rounds/stakes/net under ``head``, each column as wide as its widest cell;
    ``shown`` writes a figure as a person reads it."""
    rows = [head] + [(name, str(t["rounds"]), shown(t["stakes"]), shown(t["net"])) for name, t in totals.items()]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  " + "  ".join(cell.rjust(width) if i else cell.ljust(width)
                               for i, (cell, width) in enumerate(zip(row, widths))))


def _print_report(report, zone) -> None:
    """The report as a supervisor reads it at shift close; the figures are the JSON's, the
    period in the --timezone it was asked in."""
    def when(ts: str | None, missing: str) -> str:
        return f"{local_text(ts, zone)} {getattr(zone, 'key', 'UTC')}" if ts else missing

    from kiosk.report import adjustment_lines, broken_lines, clock_lines

    r = report.to_json()
    m = report.shown                                    # to the table's money unit, thousands grouped
    cur = f" {report.currency}" if report.currency else ""
    print(f"Table {r['table_id']}: rounds that ended between {when(r['from'], 'the first record')} and "
          f"{when(r['to'], 'now')}")
    for line in broken_lines(r) + clock_lines(r, lambda ts: local_text(ts, zone)):   # before the figures
        print(f"  {line}")
    for line in adjustment_lines(r, m, report.currency or "", lambda ts: when(ts, "")):
        print(f"  {line}")
    if r["first_round"] is None:        # only rounds stamped elsewhere, named above
        print("  no round ended in this period by the time on its records")
        return
    counts = ", ".join(f"{n} {status}" for status, n in r["rounds"].items())
    print(f"  rounds       {counts} (rounds {r['first_round']} to {r['last_round']})")
    print(f"  stakes       {m(r['stakes'])}{cur}")
    print(f"  players net  {m(r['players_net'])}{cur}   banker net {m(r['banker_net'])}{cur}   "
          f"commission {m(r['commission'])}{cur}")
    print(f"  house result {m(r['house_result'])}{cur}")
    print(f"  corrections  {r['card_corrections']} card(s) while dealing, {r['settlement_corrections']} "
          f"settlement(s) after it; {r['alerts']} alert(s)")
    if r["largest_win"]:
        w = r["largest_win"]
        print(f"  largest win  {m(w['net'])}{cur} to seat {w['seat']} in round {w['round']} ({w['hand']})")
    if r.get("short_wins"):
        print(f"  short wins   {r['short_wins']} win(s) the banker's stack could not pay in full, "
              f"{m(r['short_total'])} not paid")
    if r["seats"]:
        _print_columns(("seat", "rounds", "stakes" + cur, "net" + cur), r["seats"], m)
    if r["dealers"]:
        _print_columns(("settled by", "rounds", "stakes" + cur, "house" + cur), r["dealers"], m)
    if r["unbalanced_rounds"]:
        print(f"  WARNING: the books of rounds {', '.join(map(str, r['unbalanced_rounds']))} do not balance "
              "(players + banker + commission is not 0) or cannot be read; check them with niuniu audit verify "
              "and the round pages")
    if r["banking_unknown"]:
        print(f"  note: who banked rounds {', '.join(map(str, r['banking_unknown']))} is not recorded and their "
              "preset is not built in; their banker net is left out of the house result")


# --------------------------------------------------------------------------- users


def _read_secret(prompt: str, from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    try:
        first = getpass.getpass(prompt)
        again = getpass.getpass("again: ")
    except EOFError:
        # No terminal and nothing on standard input (ssh without -t, a script, cron).
        raise NiuniuError("no terminal to type the password on: run it in a terminal (ssh -t), or pass "
                          "--password-stdin and send the password on standard input (a supervisor's PIN on "
                          "the next line)") from None
    if again != first:
        raise NiuniuError("the two entries differ; run the command again")
    return first


def run_users_add(args) -> int:
    """Create an account and its ``user_created`` record, both or neither: an account (an
    admin's above all) that no record shows being made is what the log exists to rule out.
    Everything that can be refused is refused before anything is made on disk (an invalid
    name or password creates no data directory); the log is opened before the account is
    written, and the account is committed only once its record is on disk."""
    from kiosk import db
    from kiosk.auth import check_username, create_user, validate_account
    from kiosk.backup import DATABASES, writable_dir

    data_dir = Path(args.data_dir)
    check_username(args.username)            # before the prompts that name it
    password = _read_secret(f"password for {args.username}: ", args.password_stdin)
    pin = _read_secret(f"PIN for supervisor {args.username} (4-8 digits): ", args.password_stdin) \
        if args.role == "supervisor" else None
    validate_account(args.username, args.role, password, pin)
    writable_dir(data_dir, files=DATABASES)
    actor = _console_user()
    data_dir.mkdir(parents=True, exist_ok=True)
    log = AuditLog.in_dir(data_dir)          # a log that cannot be opened stops here, no account made
    try:
        conn = _kiosk_db(data_dir, create=True)
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                created = create_user(conn, args.username, args.role, password, pin, created_by=actor,
                                      method="scrypt")
                # The console opens the log without a table id; the record is still the table's.
                log.append(AuditType.USER_CREATED, actor, created, table_id=log.table())
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except AuditError:
            raise       # the log's own words (a full disk: AuditDiskError, an sqlite3.Error too)
        except sqlite3.Error as exc:
            said = db.write_refused(data_dir / db.KIOSK_DB, exc, what="the accounts database ",
                                    again="run the command again")
            raise NiuniuError(f"{said} (nothing was created)" if said else
                              f"cannot write the account to {data_dir / db.KIOSK_DB}: {exc}; nothing was "
                              "created: check the disk, and run as the kiosk's user (sudo -u niuniu ...)") from None
        finally:
            conn.close()
    finally:
        log.close()
    print(f"created {created['role']} {created['username']}")
    return 0


def _kiosk_db(data_dir: Path, *, create: bool):
    """``kiosk.db.connect`` with SQLite's own failures (a read-only disk, a damaged file) as
    one line naming the database, the data directory's state and the fix."""
    from kiosk import db
    from kiosk.backup import BackupError, writable_dir

    if data_dir.exists() and not data_dir.is_dir():
        raise NiuniuError(f"{data_dir} is a file; pass --data-dir the kiosk's data directory (e.g. /var/lib/niuniu)")
    try:
        return db.connect(data_dir, create=create)
    except sqlite3.Error as exc:
        try:
            writable_dir(data_dir)
        except BackupError as why:
            # SQLite writes beside a WAL database (its -shm) even to read it.
            raise NiuniuError(f"cannot open the accounts in {data_dir / db.KIOSK_DB} ({exc}), which needs a "
                              f"writable disk even to read: {why}") from None
        # A full disk (SQLite cannot make the -shm it reads through), a sqlite3 shell holding
        # the file: said as the kiosk's start says them, not as a damaged database to restore.
        said = db.write_refused(data_dir / db.KIOSK_DB, exc, what="the accounts database ",
                                again="run the command again")
        raise NiuniuError(said or db.damaged_accounts(data_dir / db.KIOSK_DB, exc)) from None


def run_users_list(args) -> int:
    from kiosk.auth import list_users

    conn = _kiosk_db(Path(args.data_dir), create=False)
    try:
        rows = [dict(r) for r in list_users(conn)]
    except sqlite3.Error as exc:
        raise NiuniuError(f"cannot read the accounts in {args.data_dir}: {exc}; is it the kiosk's database? "
                          "(restore it with `niuniu restore`)") from None
    finally:
        conn.close()
    if args.json:
        print(json.dumps([{k: r[k] for k in ("username", "role", "active", "created_at", "created_by")}
                          for r in rows]))
    else:
        for r in rows:
            print(f"{r['username']:24} {r['role']:13} {'active' if r['active'] else 'disabled'}")
        if not rows:
            print(f"no accounts in {args.data_dir}; add one with `niuniu users add`", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- running


def _detector(args):
    """The table's reader, with the mirror judge that checks the camera now and then
    (``vision.mirror.CameraMirrorWatch``).  Without a usable judge the table still runs,
    unchecked: the second build raises the same error if it was the card models that failed."""
    from vision.detector import CardDetector, ModelError

    tta = not getattr(args, "no_tta", False)
    try:
        return CardDetector(args.model, fmt=args.model_format, tta=tta, unmirror=True)
    except ModelError as exc:
        detector = CardDetector(args.model, fmt=args.model_format, tta=tta)
        print(f"warning: {exc}; the camera will not be checked for mirror images", file=sys.stderr)
        return detector


def build_kiosk(config, source, detector, data_dir: Path, *, demo: bool = False, app_config: dict | None = None,
                realtime: bool = True, view=None):
    """Audit log + pipeline + service + app, wired as production runs them."""
    from kiosk.app import create_app
    from kiosk.demo import default_bets
    from kiosk.rounds import round_numbers
    from kiosk.table_service import TableService
    from scoring.rules import load_preset
    from vision.detector import READING_FILES
    from vision.pipeline import TablePipeline

    log = AuditLog.in_dir(data_dir, config.table_id)
    last_round = max(round_numbers(log, table_id=config.table_id, limit=1) or [0])
    pipeline = TablePipeline(config, source, detector, data_dir, realtime=realtime, round_no=last_round, view=view)
    info = {"name": str(getattr(detector, "name", type(detector).__name__))}
    sha = getattr(detector, "file_sha256", None)
    if isinstance(sha, str):
        info["sha256"] = sha
    for attr in READING_FILES:
        if getattr(detector, attr, None) is not None:
            info[attr] = str(getattr(detector, attr))
    if getattr(detector, "orientation_missing", None) is not None:
        info["orientation_missing"] = str(detector.orientation_missing)    # read unturned: on the record
    kinds = load_preset(config.rules).bet_kinds
    service = TableService(config, log, pipeline=pipeline, detector_info=info,
                           auto_bets=default_bets(kinds) if demo else None)
    # No pipeline.on_event: the service listens to the pipeline's round machine, which
    # passes on every event, camera turns included; a second path would deliver each twice.
    app = create_app({"DATA_DIR": str(data_dir), "DEMO": demo, **(app_config or {})}, service=service)
    return app, service, pipeline


def _calibration_view(table_file):
    """The picture the table's zones were marked on, or None (the camera is then compared
    with its picture at start); an unreadable one is said once and does not stop the table."""
    from vision.aim import ViewError, load_view, view_path

    try:
        return load_view(view_path(table_file))
    except ViewError as exc:
        print(f"warning: {exc}", file=sys.stderr)
        return None


def _retention(config, data_dir: Path, service, pipeline):
    """The thread that keeps the data disk from filling with recordings, and checks the
    recordings kept against their seals (not started yet)."""
    from kiosk.retention import RecordingRetention
    from kiosk.seals import SealWatch
    from vision.record import recordings_dir

    recorder = pipeline.recorder
    root = recordings_dir(data_dir, config.table_id)
    return RecordingRetention(root, config.recordings, service.audit,
                              busy=recorder.busy_folders if recorder else list,
                              warn=lambda message: setattr(service, "disk_warning", message),
                              seals=SealWatch(service.audit, root, config.table_id))


def _forwarder(config, data_dir: Path, service):
    """The thread that copies the audit log to the casino's collector, if the table file names
    one (not started yet); the surveillance pages read its status from the service."""
    if config.audit_forward is None:
        return None
    from kiosk.forward import AuditForwarder

    forwarder = AuditForwarder(service.audit, config.audit_forward, data_dir)
    service.forwarder = forwarder
    return forwarder


def _first_run_notice(data_dir: Path, url: str) -> None:
    from kiosk import db
    from kiosk.auth import user_count

    conn = db.connect(data_dir)
    try:
        empty = user_count(conn) == 0
    finally:
        conn.close()
    if empty:
        print(f"First start: no accounts yet. Open {url}auth/setup and enter the setup code "
              f"{db.setup_code(data_dir)} to create the administrator.")


@contextlib.contextmanager
def _port_first(host: str, port: int) -> Iterator[socket.socket]:
    """The port, bound before anything is logged or started (``niuniu kiosk`` and ``niuniu
    demo``): a busy one found after kiosk_start was written left a start with no stop (read
    as a crash at the next start), and the pipeline's threads still running made the
    interpreter abort (exit 134).  Closed again if what is built inside fails; else handed
    to ``serve(listener=...)``."""
    from kiosk.server import listen

    listener = listen(host, port)
    try:
        yield listener
    except BaseException:
        listener.close()
        raise


def run_kiosk_command(args) -> int:
    from kiosk.backup import DATABASES, writable_dir
    from vision.sources import open_source
    from vision.table import load_table_config

    config = load_table_config(args.config)
    spec = args.source or config.camera.source
    if not spec:
        raise NiuniuError(f"no camera given: pass --source (picamera2, 0, a URL, a video or a folder) or set "
                          f"camera.source in {args.config}")
    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    # A file, a read-only disk, a database left owned by root: one line now, not a traceback.
    writable_dir(data_dir, files=DATABASES)
    with _port_first(args.host, args.port) as listener:
        data_dir.mkdir(parents=True, exist_ok=True)
        if not is_loopback(args.host):
            print(f"warning: binding {args.host} exposes the kiosk to the network; keep it on 127.0.0.1 behind a "
                  "TLS reverse proxy (--behind-proxy) and a firewall", file=sys.stderr)
        cam = config.camera
        source = open_source(spec, width=cam.width, height=cam.height, fps=cam.fps)
        detector = _detector(args)
        view = _calibration_view(args.config)
        app, service, pipeline = build_kiosk(config, source, detector, data_dir, realtime=not source.live,
                                             view=view, app_config={"TABLE_FILE": str(Path(args.config).resolve()),
                                                                    "BEHIND_PROXY": args.behind_proxy})
    retention = _retention(config, data_dir, service, pipeline)
    forwarder = _forwarder(config, data_dir, service)
    clock = ClockWatchThread(service.clock_watch)
    pipeline.start()
    retention.start()
    clock.start()
    if forwarder is not None:
        forwarder.start()

    def ready(url: str) -> None:
        print(f"niuniu kiosk: table {config.table_id} ({config.rules}) on {url} · data {data_dir}")
        _first_run_notice(data_dir, url)

    def stopped(why: str) -> None:
        retention.stop_event.set()
        clock.stop_event.set()
        pipeline.stop()
        service.stop(why)
        if forwarder is not None:      # after the service's last record, so the collector gets it
            forwarder.stop_event.set()
            forwarder.join(timeout=5)

    return serve(app, args.host, args.port, on_ready=ready, on_stop=stopped, pipeline=pipeline, listener=listener)


def run_demo_command(args) -> int:
    from kiosk.demo import find_demo_dir

    demo_dir = find_demo_dir(args.dataset)
    detector = _detector(args)
    return run_demo(demo_dir, detector, data_dir=Path(args.data_dir) if args.data_dir else None,
                    host=args.host, port=args.port, pause=args.pause)


def run_demo(demo_dir: Path, detector, *, data_dir: Path | None = None, host: str = "127.0.0.1", port: int = 8000,
             pause: float = 4.0, app_config: dict | None = None, out=None) -> int:
    """The demo with any detector (tests pass a scripted one)."""
    from kiosk.demo import DemoDealer, create_demo_accounts, demo_frames, load_truth
    from vision.sources import open_source
    from vision.table import load_table_config

    out = out or sys.stdout
    with _port_first(host, port) as listener:
        config = load_table_config(demo_dir / "table.yaml")
        frames = demo_frames(demo_dir)
        data_dir = data_dir or Path(tempfile.mkdtemp(prefix="niuniu-demo-"))
        data_dir.mkdir(parents=True, exist_ok=True)
        source = open_source(str(frames), fps=config.camera.fps, loop=True)
        table_file = (demo_dir / "table.yaml").resolve()
        app, service, pipeline = build_kiosk(config, source, detector, data_dir, demo=True,
                                             app_config={"TABLE_FILE": str(table_file), **(app_config or {})},
                                             view=_calibration_view(table_file))
        accounts = create_demo_accounts(data_dir, service.audit,
                                        method=(app_config or {}).get("PASSWORD_HASH_METHOD"))
    dealer = DemoDealer(service, pause=pause, truth=load_truth(demo_dir))
    retention = _retention(config, data_dir, service, pipeline)
    clock = ClockWatchThread(service.clock_watch)

    def ready(url: str) -> None:
        print(f"Niu Niu demo: table {config.table_id}, rules {config.rules}, camera = {frames}", file=out)
        print(f"Open {url} and log in. Demo accounts (this demo only, passwords are new each start):", file=out)
        for a in accounts:
            extra = f"  PIN {a['pin']}" if a["pin"] else ""
            print(f"  {a['role']:13} {a['username']:18} password {a['password']}{extra}", file=out)
        print(f"Audit log and recordings: {data_dir}  (check: niuniu audit verify --data-dir {data_dir})", file=out)
        print("Ctrl-C stops the demo.", file=out)
        out.flush()
        pipeline.start()
        dealer.start()
        retention.start()
        clock.start()

    def stopped(why: str) -> None:
        dealer.stop_event.set()
        if dealer.is_alive():
            dealer.join(timeout=5)      # its last action before the kiosk_stop record, not after
        retention.stop_event.set()
        clock.stop_event.set()
        pipeline.stop()
        service.stop(why)

    return serve(app, host, port, on_ready=ready, on_stop=stopped, pipeline=pipeline, listener=listener)
