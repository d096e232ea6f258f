"""``niuniu check``: is this device ready to run its table?  One line per part, with the fix.

A technician installing or repairing a table finds out what is wrong one restart at a time
from the journal: a table file that does not load, a model file missing after a copy, a
camera another process holds, a camera bumped since calibration, a clock NTP never set, a
backup drive never mounted.  This asks each in turn, as the kiosk would, and says what to do
— without starting the kiosk (the camera check needs it stopped: one process owns a camera).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from kiosk.audit import AUDIT_FILE, AuditLog
from kiosk.backup import DATABASES, BackupError, backup_status, restored_after, writable_dir
from kiosk.db import KIOSK_DB, SECRET_FILE, SETUP_CODE_FILE, account_roles, private_file_problem
from scoring.errors import NiuniuError
from vision.aim import MIN_VIEW_FEATURES, TableView, ViewError, load_view, view_path
from vision.record import RECORDINGS, recordings_dir
from vision.retention import disk_of
from vision.table import TableConfig, load_table_config

OK, WARN, FAIL = "ok", "warn", "fail"
CAMERA_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Finding:
    part: str
    level: str       # ok, warn (the table runs, something is missing) or fail (it cannot run right)
    message: str

    def to_json(self) -> dict:
        return asdict(self)


def check_device(table_file: str | Path, data_dir: str | Path, *, source: str | None = None, camera: bool = True,
                 reader: Callable[[], object] | None = None) -> list[Finding]:
    """Every check; ``reader`` builds the card reader as the kiosk does (None: not checked)."""
    findings: list[Finding] = []
    try:
        config = load_table_config(table_file)
    except NiuniuError as exc:
        return [Finding("table file", FAIL, str(exc))]
    findings.append(Finding("table file", OK, f"{table_file}: table {config.table_id}, rules {config.rules}, "
                                              f"seats {', '.join(config.seat_names)}, times in {config.timezone}"))
    view = _view(table_file, config, findings)
    if reader is not None:
        findings.append(_reader(reader))
    if camera:
        findings.append(_camera(source or config.camera.source, config, view))
    findings += _data(Path(data_dir), config)
    if config.audit_forward is not None:
        findings.append(_collector(config, Path(data_dir)))
    findings.append(_clock())
    return findings


def _view(table_file, config: TableConfig, findings: list[Finding]) -> TableView | None:
    """The calibration picture, ready to compare the camera's frame with, if it can be."""
    path = view_path(table_file)
    if config.camera.move_limit == 0:
        findings.append(Finding("camera aim", OK, "not checked (camera.move_limit: 0)"))
        return None
    try:
        view = load_view(path)
    except ViewError as exc:
        findings.append(Finding("camera aim", FAIL, str(exc)))
        return None
    if view is None:
        findings.append(Finding("camera aim", WARN, f"no calibration picture ({path}): the kiosk compares the camera "
                                                    "with its own view at start; calibrate with --source to keep one"))
        return None
    cam = config.camera
    if cam.width and cam.height and abs(view.shape[1] / view.shape[0] - cam.width / cam.height) > 0.01:
        findings.append(Finding("camera aim", WARN, f"{path} is {view.shape[1]}x{view.shape[0]}, but the camera is "
                                                    f"set to {cam.width}x{cam.height}: calibrate again"))
        return None
    table = TableView(view, [z.polygon for z in config.seats])
    features = len(table.keypoints)
    if features < MIN_VIEW_FEATURES:
        findings.append(Finding("camera aim", WARN, f"{path} shows {features} features outside the seat zones, under "
                                                    f"the {MIN_VIEW_FEATURES} a comparison needs: the aim is not "
                                                    "checked (plain cloth or a dark picture)"))
        return None
    findings.append(Finding("camera aim", OK, f"{path}: {features} table features to compare with"))
    return table


def _reader(build: Callable[[], object]) -> Finding:
    from vision.detector import READING_FILES

    started = time.monotonic()
    try:
        reader = build()
    except NiuniuError as exc:
        return Finding("card model", FAIL, str(exc))
    files = [Path(getattr(reader, attr)).name for attr in READING_FILES if getattr(reader, attr, None) is not None]
    missing = getattr(reader, "orientation_missing", None)
    upright = "" if missing is None else (f"; no orientation model ({missing} is missing): the cards are read "
                                          "without being turned upright, as the classifiers were trained, and are "
                                          f"misread more; restore models/{Path(missing).name} from the repository")
    mirror = "" if getattr(reader, "mirror_judge", None) else "; no mirror judge: a mirroring camera goes unnoticed"
    return Finding("card model", OK if not (mirror or upright) else WARN,
                   f"{' + '.join(files)} loaded in {time.monotonic() - started:.1f} s{upright}{mirror}")


def _camera(spec: str | None, config: TableConfig, view: TableView | None) -> Finding:
    """One frame from the camera, in a thread: a dead RTSP stream may never answer."""
    if not spec:
        return Finding("camera", FAIL, "no camera: set camera.source in the table file (picamera2, 0, a URL)")
    from vision.cli import grab_frame
    from vision.sources import CameraLibraryError, oriented

    got: dict = {}

    def grab() -> None:
        try:
            cam = config.camera      # at the table file's size, as the kiosk opens it (picamera2 would pick 1080p)
            got["image"] = grab_frame(spec, width=cam.width, height=cam.height, fps=cam.fps)
        except CameraLibraryError as exc:   # its own cause and fix: no other process is to blame
            got["library"] = str(exc)
        except Exception as exc:   # any camera library error is the finding
            got["error"] = str(exc)

    thread = threading.Thread(target=grab, name="check-camera", daemon=True)
    thread.start()
    thread.join(CAMERA_TIMEOUT_S)
    if thread.is_alive():
        return Finding("camera", FAIL, f"{spec} gave no frame in {CAMERA_TIMEOUT_S:.0f} s: check the cable or the "
                                       "stream's address")
    if "library" in got:
        return Finding("camera", FAIL, got["library"])
    if "error" in got:
        return Finding("camera", FAIL, f"{got['error']} (is the kiosk running? stop it first: one process owns a "
                                       "camera)")
    image = oriented(got["image"], config.camera.rotate, config.camera.mirror)
    size = f"{image.shape[1]}x{image.shape[0]}"
    cam = config.camera
    if cam.width and cam.height and (got["image"].shape[1], got["image"].shape[0]) != (cam.width, cam.height):
        return Finding("camera", WARN, f"{spec} gives {size} frames, the table file asks for {cam.width}x{cam.height}")
    if view is None or not view.fits(image):
        return Finding("camera", OK, f"{spec} gives {size} frames")
    check = view.compare(image)
    if check.shift is None:
        return Finding("camera", FAIL, f"{spec} gives {size} frames, but does not see the table its zones were "
                                       "marked on (covered, turned away or out of focus)")
    if check.shift > cam.move_limit:
        return Finding("camera", FAIL, f"{spec}: the table lies {check.shift:.1%} of the picture's width from where "
                                       "its zones were marked: put the camera back, or calibrate again")
    return Finding("camera", OK, f"{spec} gives {size} frames; the table lies where its zones were marked "
                                 f"({check.shift:.1%} off)")


def _data(data_dir: Path, config: TableConfig) -> list[Finding]:
    if not data_dir.is_dir():
        return [Finding("data directory", FAIL, f"{data_dir} does not exist: create it, owned by the kiosk's user "
                                                "(deploy/install.sh makes /var/lib/niuniu)")]
    try:
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".check-"):
            pass
    except OSError as exc:
        return [Finding("data directory", FAIL, f"{data_dir} is not writable by {_user()}: {exc.strerror}")]
    free = shutil.disk_usage(disk_of(data_dir)).free / 1e9
    need = config.recordings.min_free_gb
    disk = Finding("data directory", OK if free > 2 * need else WARN,
                   f"{data_dir}: {free:.1f} GB free" + ("" if free > 2 * need else
                                                        f", close to the {need:g} GB retention keeps free"))
    try:
        writable_dir(data_dir, files=DATABASES)
    except BackupError as exc:
        disk = Finding("data directory", FAIL, f"{exc}: the kiosk would stop at its first record")
    files = [*_recordings(data_dir, config), *_private_files(data_dir), *_accounts(data_dir)]
    if not (data_dir / AUDIT_FILE).exists():
        return [disk, *files, Finding("audit log", OK, "none yet: the kiosk starts one"),
                Finding("backup", WARN, "none yet: set NIUNIU_BACKUP_DIR in /etc/niuniu/niuniu.env")]
    log = AuditLog.in_dir(data_dir, create=False)
    try:
        started = time.monotonic()
        result = log.verify()
        backup = backup_status(log)
        restored = restored_after(log, backup)
        key = _evidence_key(data_dir, log)
        history = _history(log, backup)
    finally:
        log.close()
    chain = (Finding("audit log", OK, f"{result.count} records, chain OK ({time.monotonic() - started:.1f} s)")
             if result.ok else Finding("audit log", FAIL, f"{result.summary()}; keep this data directory as it "
                                                          "is and call surveillance"))
    if restored is not None:
        # A log just restored holds no backup_made of its own: "no backup recorded" read like the
        # restore had not happened to the technician who just made it (QA52 L2).  Nor does it hold
        # the record of the backup it was restored from (made after that backup's copy of the log),
        # only older ones: the newest backup it knows is the restored one (QA53).
        saved = Finding("backup", WARN, f"{_restored_from(restored)}, the newest backup this log knows; no "
                                        "backup made since: run niuniu backup, and check NIUNIU_BACKUP_DIR in "
                                        "/etc/niuniu/niuniu.env (README, 'Backup and restore')")
    elif backup is None:
        saved = Finding("backup", WARN, "no backup recorded: set NIUNIU_BACKUP_DIR in /etc/niuniu/niuniu.env "
                                        "(README, 'Backup and restore')")
    elif backup.get("future"):
        # its age says nothing: a clock that ran ahead stamped it (or this one runs behind)
        since = backup.get("records_since")
        saved = Finding("backup", WARN, f"the last backup {'failed and ' if not backup['ok'] else ''}is dated in "
                                        f"the future ({backup['ts']}): check the clock"
                                        + (f"; {since} records written since are not in it" if since is not None
                                           else "") + f" ({backup.get('error') or backup.get('to')})")
    elif not backup["ok"]:
        saved = Finding("backup", WARN, f"the last backup, {_days_ago(backup['age_days'])}, failed: "
                                        f"{backup.get('error') or backup.get('to')}")
    elif backup["stale"]:
        saved = Finding("backup", WARN, f"the last backup was made {_days_ago(backup['age_days'])} (to "
                                        f"{backup.get('to')}): the nightly backup has stopped; check "
                                        "NIUNIU_BACKUP_DIR and the backup drive")
    else:
        saved = Finding("backup", OK, f"last made {backup['ts']} to {backup.get('to')}")
    return [disk, *files, chain, saved, *history, key]


def _restored_from(restored: dict) -> str:
    if restored["damage"]:
        return f"restored from a backup at seq {restored['seq']} (its record cannot be read: {restored['damage']})"
    return (f"restored at {restored['ts']} from {restored['from']} (its log up to seq {restored['head_seq']}; "
            f"restore record seq {restored['seq']})")


def _recordings(data_dir: Path, config: TableConfig) -> list[Finding]:
    """Where the kiosk makes each round's folder: not writable, every round is played and
    settled with no recording (evidence lost), and the kiosk cannot refuse a round for it."""
    folders = (data_dir / RECORDINGS, recordings_dir(data_dir, config.table_id))
    for folder in folders:
        if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
            return [Finding("recordings", FAIL, f"{folder} is not writable by {_user()}: the rounds would be played "
                                                "with no recording; give it back to the kiosk's user (sudo chown -R "
                                                f"niuniu:niuniu {folder}; chmod u+w if it is read-only)")]
    return []


def _private_files(data_dir: Path) -> list[Finding]:
    """The secret key and the first-run setup code: said only when they are wrong (no file
    yet is right: the kiosk makes them)."""
    findings = []
    for part, name, fix in (("secret key", SECRET_FILE, "the kiosk makes a new one at its next start (everyone "
                                                        "logged in then logs in again)"),
                            ("setup code", SETUP_CODE_FILE, "the kiosk makes a new one at its next start and prints "
                                                            "it on its console")):
        try:
            problem = private_file_problem(data_dir / name)
        except NiuniuError as exc:
            findings.append(Finding(part, FAIL, str(exc)))
            continue
        if problem is not None:
            findings.append(Finding(part, WARN, f"{problem}: {fix}"))
    return findings


def _accounts(data_dir: Path) -> list[Finding]:
    """The accounts database, opened as the kiosk will (a damaged one stops its start)."""
    try:
        roles = account_roles(data_dir)
    except NiuniuError as exc:
        return [Finding("accounts", FAIL, str(exc))]
    if roles is None:
        return []            # none yet: the kiosk makes it, and the first start offers the setup
    if not roles:
        return [Finding("accounts", WARN, f"{data_dir / KIOSK_DB} holds no account: the kiosk's first-run "
                                          "setup page makes the administrator with the code it prints")]
    listed = ", ".join(f"{count} {role}" for role, count in sorted(roles.items()))
    return [Finding("accounts", OK, f"{sum(roles.values())} accounts: {listed}")]


def _days_ago(days: int) -> str:
    return "today" if days == 0 else "yesterday" if days == 1 else f"{days} days ago"


def _history(log: AuditLog, backup: dict | None) -> list[Finding]:
    """The chain walks whole even when rewritten and re-hashed; the backups' heads tell."""
    from kiosk.anchors import against_last_backup

    found = against_last_backup(log, backup)
    if found is None:
        return []            # no backup yet, or its drive not mounted now: the backup line says so
    failed, text = found
    return [Finding("history", FAIL if failed else OK, text)]


def _evidence_key(data_dir: Path, log: AuditLog) -> Finding:
    """Found now, not the day a regulator asks for a round: a key lost or swapped for another."""
    from kiosk.signing import KEY_FILE, SigningError, damaged_key_words, fingerprint, logged_key, read_table_key

    try:
        key = read_table_key(data_dir)
    except SigningError as exc:
        return Finding("evidence key", WARN, f"{exc}; until then no evidence package can be exported")
    if key is None:
        return Finding("evidence key", OK, "none yet: the first evidence export makes it (niuniu audit public-key "
                                           "makes it now, to publish)")
    key_id = fingerprint(key.public_key())
    made = logged_key(log, key_id)
    if made is None and (damaged := damaged_key_words(log)):
        # the key's own record may be the damaged one: moving the key aside would lose the table's key
        return Finding("evidence key", WARN, f"{data_dir / KEY_FILE} ({key_id[:16]}...) is named by no readable "
                                             f"record of this log: {damaged}; keep the file as it is")
    if made is None:
        return Finding("evidence key", WARN, f"{data_dir / KEY_FILE} ({key_id[:16]}...) is not a key this audit "
                                             "log made, so the packages it signs do not check against this log: "
                                             "restore the table's own key from its backup, or move the file aside "
                                             "to make (and publish) a new one")
    return Finding("evidence key", OK, f"Ed25519 {key_id[:16]}..., made at audit record {made.seq} ({made.ts})")


def _collector(config: TableConfig, data_dir: Path) -> Finding:
    """Does the collector answer, and how far has the log reached it?  A collector that does not
    answer costs no record (the kiosk sends them when it does), so it warns, never fails."""
    import json

    from kiosk.forward import STATE_FILE, Collector

    settings = config.audit_forward
    try:
        Collector(settings, timeout=5.0).close()
    except OSError as exc:
        return Finding("log collector", WARN, f"{settings.to} does not answer ({type(exc).__name__}: {exc}): check "
                                              "the address in audit_forward and the collector's firewall; the kiosk "
                                              "keeps every record and sends them when it answers")
    try:
        sent = json.loads((data_dir / STATE_FILE).read_text(encoding="utf-8"))
        sent = sent["seq"] if sent.get("to") == settings.to else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        sent = None
    reached = f"records up to seq {sent} sent" if sent is not None else "nothing sent to it yet"
    answers = "takes connections" if settings.protocol != "udp" else "is set (UDP: no answer to check)"
    return Finding("log collector", OK, f"{settings.to} {answers}; {reached}")


def _clock() -> Finding:
    from kiosk.watchdog import clock_status

    status = clock_status()
    if status.synchronised:
        return Finding("clock", OK, "synchronised")
    return Finding("clock", WARN, status.message)


def _user() -> str:
    try:
        import pwd
        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return "this user"
