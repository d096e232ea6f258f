"""Replay: the rounds a recording, a video or a folder of frames contains, as JSON.

A *recording* (``vision.record`` format) is replayed without any model: its stored
detections go through the same tracker and round machine as live, and the people's
actions (corrections, settlement with its bets, void, manual clear) are re-applied after
the frame they name.  The replayed events are compared with the recorded ones, so
``matches_recording`` is a check, not a claim.  ``redetect`` additionally runs the model
on the stored key frames and lists where it now reads differently.

A *video* or *frame folder* has no detections yet: the card model reads every frame
(frames are taken in order, none dropped) and the rounds are whatever the machine saw.

Output, one dict per round, oldest first::

    {"round": 1, "state": "settled",
     "seats": {"banker": ["AS", ...], "1": [...]},          # the round's record per seat
     "results": {"banker": {HandResult.to_json()},
                 "1": {HandResult.to_json(), "vs_banker": "win"}},
     "settlement": Settlement.to_json() | None,
     "alerts": [{"code", "seat", "card", "frame_no", "message"}],
     "frames": [first, last], "started": ts, "ended": ts,
     # recordings only:
     "recording": path, "matches_recording": true, "differences": [],
     "warnings": ["the folder's name says round 7, its meta.json round 8", ...],
     "notes": ["recorded before settlements named who banked: ..."],  # how an older recording was read
     "rules_code": {"recorded": "9f0c...", "replayed": "9f0c..."},  # the tracker's and round machine's
                                                          # code (vision.record.RULES_CODE), where recorded
     "seal": {"seq": 237, "ok": true, "changes": []},     # a kiosk recording with its audit log
                                                          # (or in an unzipped package: "package": its folder,
                                                          # "verified", "signature": see below)
     "seal_unchecked": "why",                             # a recording with no audit log beside it, or
                                                          # whose seal record cannot be read (DamagedRecord's words)
     "seal_damaged": 237,                                 # the seq of that unreadable seal record, where it is one
     "log": {"corrections_after_recording": [{"seq", "type", "seat", "old", "new", "approved_by", "reason", ...}],
                                                          # (one that cannot be read: {"seq", "type", "damaged"})
             "status", "hands", "lines": {seat: {"outcome", "net"}}, "settlement"},  # only when corrected after
     "redetect": {"model", "frames", "differences": [...]}}   # with redetect=True

A replay that matches says the recording is consistent with itself, not that it is the one the
table made: a whole folder can be swapped.  So a kiosk recording (one under
``<data dir>/recordings/<table>/`` beside an ``audit.sqlite3``, or with ``data_dir`` given) is
also checked against its ``recording_sealed`` record in the audit log (:class:`SealBook`), and
a folder whose name says another round than its ``meta.json`` is always warned about.  A
recording inside an unzipped evidence package (``recording/<folder>`` beside the package's
``audit.json`` and ``MANIFEST.json``) is checked against the package's records instead.

A package's records vouch for nothing by themselves: whoever can change a key frame can
rewrite its seal in ``audit.json`` and list the new ``audit.json`` in ``MANIFEST.json`` (QA50
review M1).  Only the table's signature over the manifest (``SIGNATURE.json``) ties them to the
table, so a package's seal says ``"verified": true`` only when that signature was checked with
the key the casino published (``public_key``, ``niuniu replay --public-key KEY``, by the same
``kiosk.signing.check_signature`` that ``niuniu audit check-evidence`` uses); otherwise
``"verified": false``, and the text says the seal is the package's own and how to check it.
A signature that does not hold (or a package the key cannot vouch for) is the seal's
``error``: the replay exits 1.  ``"signature"`` says what was found: the signer's key, or
that the package is not signed.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections import defaultdict
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any


from scoring.cards import Card, CardError
from scoring.compare import compare
from scoring.errors import NiuniuError
from scoring.evaluate import evaluate
from scoring.rules import Banking, Preset, load_preset
from scoring.settle import Bet
from vision.corners import Detection
from vision.images import ImageError, read_image
from vision.pipeline import Detector, TablePipeline, normalise_detections
from vision.record import (DETECTIONS, EVENTS, FORMAT, FRAMES, META, RECORDINGS, RULES_CODE, RecordingError,
                           find_recordings, preroll_frames, read_jsonl, recording_digests, round_in_name,
                           seal_changes)
from vision.round import CAMERA_KINDS, HAND_SIZE, EventKind, RoundEvent, RoundMachine
from vision.sources import IMAGE_SUFFIXES, VIDEO_SUFFIXES, FrameSource, ImageFilesSource, VideoFileSource
from vision.table import TableConfig, ZoneMap, load_table_config, table_config_from_dict
from vision.tracker import TRACKER_VERSION

CONFIG_NAMES = ("table.yaml", "table.yml", "table.toml", "table.json")
_OUTCOME = {1: "win", -1: "lose", 0: "push"}


class ReplayError(NiuniuError):
    """A path that cannot be replayed; the message says what was expected there."""


def replay(path: str | Path, config: TableConfig | str | Path | None = None, redetect: bool = False, *,
           detector: Detector | None = None, model: str | Path | None = None, fps: float | None = None,
           data_dir: str | Path | None = None, public_key: str | Path | None = None) -> list[dict]:
    """Every round found at ``path`` (a round folder, a folder of them, a video or a frame folder).

    In a folder of recordings a recording that cannot be read does not hide the others: it
    becomes an entry ``{"recording": folder, "error": why}`` among the rounds (as does a frame
    of a frame folder that cannot be read: ``{"frame": file, "error": why}``, skipped as a
    dropped frame).  A single recording that cannot be read raises :class:`ReplayError`."""
    path = Path(path)
    if not path.exists():
        raise ReplayError(f"{path} does not exist; give a round recording, a video file or a folder of frames")
    if fps is not None and not (math.isfinite(fps) and fps > 0):
        raise ReplayError(f"fps {fps}: give a frame rate above 0 (frames per second)")
    if isinstance(config, (str, Path)):
        config = load_table_config(config)
    if path.is_dir() and is_damaged_recording(path):
        raise ReplayError(damaged_message(path))
    recordings = find_recordings(path)
    damaged = damaged_recordings(path) if path.is_dir() else []
    if recordings or damaged:
        checker = (detector or load_detector(model)) if redetect else None
        seals = SealBook(data_dir, public_key)
        if recordings == [path]:
            return [seals.check(path, replay_recording(path, config, redetect_with=checker))]
        out = []
        for folder in recordings:
            try:
                out.append(seals.check(folder, replay_recording(folder, config, redetect_with=checker)))
            except NiuniuError as exc:   # one damaged round must not hide the rest of the day
                out.append({"recording": str(folder), "error": str(exc)})
        out += [{"recording": str(folder), "error": damaged_message(folder)} for folder in damaged]
        return out
    if redetect:
        raise ReplayError(f"{path} is not a recording; --redetect compares a recording's stored detections "
                          "with the model's (a video or frame folder is always read by the model)")
    media = find_media(path)    # what there is to read comes first: no --config asked for an empty folder
    config = config or find_config(path)
    source = media_source(media, fps or config.camera.fps)
    return replay_source(source, config, detector or load_detector(model))


class SealBook:
    """The ``recording_sealed`` records of the audit logs the replayed recordings lie beside.

    A recording at ``<data dir>/recordings/<table>/<round>`` with ``<data dir>/audit.sqlite3``
    is a kiosk's: its seal is looked up there (or in ``data_dir``'s log when given, for a
    recording copied elsewhere).  Each log is read once however many rounds are replayed.
    The log belongs to the kiosk package, imported only here: a recording without a log
    replays with vision alone.

    A recording at ``<package>/recording/<round>`` of an unzipped evidence package is checked
    against the package's ``audit.json``, the round's records as the kiosk exported them (QA49
    watch L6: the officer holding only the package was told "seal not checked", and the replay
    named none of the corrections the package holds).  That file is used only while it is
    the one the package's ``MANIFEST.json`` lists, and vouched for only where the table's
    signature over that manifest holds under ``public_key`` (the casino's published key): the
    module docstring says why."""

    def __init__(self, data_dir: str | Path | None = None, public_key: str | Path | None = None) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self.public_key = None
        if public_key is not None:
            # The kiosk's loader and verifier, imported only here: a replay without a key needs
            # no cryptography.  A key that cannot be read is an error before any replay.
            from kiosk.signing import load_public_key

            self.public_key = load_public_key(public_key)
        self._logs: dict[Path, dict[tuple[str, str], Any] | str] = {}
        # the log's recording_sealed records that cannot be read: one may be the replayed round's own
        self._unread_seals: dict[Path, list] = {}
        # an unzipped package's folder -> its audit.json records and signature, or why they cannot be used
        self._packages: dict[Path, tuple[list, dict] | str] = {}
        # (table, round) -> its card and settlement corrections, read with the seals
        self._corrections: dict[Path, dict[tuple[str, int], list]] = {}

    def log_dir(self, folder: Path) -> Path | None:
        if self.data_dir is not None:
            return self.data_dir
        parents = folder.resolve().parents
        if len(parents) >= 3 and parents[1].name == RECORDINGS and (parents[2] / "audit.sqlite3").is_file():
            return parents[2]
        return None

    def check(self, folder: Path, summary: dict) -> dict:
        """Add the folder's warnings and its seal check to its replay ``summary``."""
        folder = Path(folder)
        warnings = summary.setdefault("warnings", [])
        named = round_in_name(folder.name)
        if named is not None and named != summary.get("round"):
            warnings.append(f"the folder's name says round {named} but its {META} says round {summary.get('round')}: "
                            "the folder was renamed or another round's recording was put in its place")
        log_dir = self.log_dir(folder)
        if log_dir is None and (package := package_of(folder)) is not None:
            return self._check_in_package(folder, package, summary)
        if log_dir is None:
            # Said, not left out: a replay that matches proves only that the recording agrees with
            # itself, and an officer reading an unzipped evidence package must know what checks the rest.
            key = (" (--public-key checks only a recording inside an unzipped evidence package: "
                   f"<package>/{PACKAGE_RECORDING}/<folder> beside {PACKAGE_RECORDS} and {PACKAGE_MANIFEST})"
                   if self.public_key is not None else "")
            summary["seal_unchecked"] = (
                f"no kiosk audit log beside {folder.name} (not under <data dir>/{RECORDINGS}/<table>/): check "
                "the evidence package it came from with `niuniu audit check-evidence PACKAGE.zip --data-dir DIR` "
                f"(or --public-key KEY), or replay it with --data-dir DIR{key}")
            return summary
        seals = self._seals(log_dir)
        if isinstance(seals, str):
            summary["seal"] = {"seq": None, "ok": False, "changes": [], "error": seals}
            return summary
        table = folder.parent.name
        seal = seals.get((table, folder.name)) or next(
            (record for (_, name), record in seals.items() if name == folder.name), None)
        unsealed = self._unread_seals.get(log_dir, [])
        tables = {t for t, _ in seals} | {r.table_id for r in unsealed}
        unread = None if seal is not None else own_unread_seal(unsealed, folder, summary,
                                                                 table if table in tables else None)
        if unread is not None:
            # Not "no seal": the round was sealed, and what the seal held is lost, so the recording
            # cannot be checked against it; the corrections after it are still named.
            summary["seal_unchecked"] = unreadable(unread)
            summary["seal_damaged"] = unread.seq        # a finding, said on stderr too (not "no log beside")
            self._add_log(log_dir, unread.table_id, unread.seq, summary)
            return summary
        if seal is None:
            summary["seal"] = {"seq": None, "ok": True, "changes": [],
                               "note": f"the audit log in {log_dir} has no recording_sealed record for {folder.name} "
                                       "(recorded before sealing, or the kiosk stopped before sealing it)"}
            return summary
        changes = seal_changes(recording_digests(folder), seal.data.get("files", {}))
        summary["seal"] = {"seq": seal.seq, "ok": not changes, "changes": changes, "log": str(log_dir)}
        self._add_log(log_dir, seal.table_id, seal.seq, summary)
        return summary

    def _check_in_package(self, folder: Path, package: Path, summary: dict) -> dict:
        """The seal and later corrections of a recording in an unzipped package, from its audit.json."""
        from kiosk.audit import AuditType
        from kiosk.rounds import ROUND_TYPES, fold_round
        from kiosk.seals import readable

        read = self._package_records(package)
        if isinstance(read, str):
            summary["seal"] = {"seq": None, "ok": False, "changes": [], "error": read, "package": str(package),
                               "verified": False}
            return summary
        records, signed = read
        seal = next((r for r in reversed(records) if r.type == AuditType.RECORDING_SEALED
                     and readable(r).get("folder") == folder.name), None)
        unread = None if seal is not None else own_unread_seal(
            [r for r in records if r.type == AuditType.RECORDING_SEALED and r.damage is not None], folder, summary)
        if unread is not None:
            summary["seal_unchecked"] = f"{unreadable(unread)} (the package's {PACKAGE_RECORDS} holds it so)"
            summary["seal_damaged"] = unread.seq
            seal = unread
        elif seal is None:
            summary["seal"] = {"seq": None, "ok": True, "changes": [], "package": str(package), **signed,
                               "note": f"the package's {PACKAGE_RECORDS} has no recording_sealed record for "
                                       f"{folder.name} (recorded before sealing, or the kiosk stopped before "
                                       "sealing it)"}
            return summary
        else:
            changes = seal_changes(recording_digests(folder), seal.data.get("files", {}))
            summary["seal"] = {"seq": seal.seq, "ok": not changes, "changes": changes, "package": str(package),
                               **signed}
        round_no = summary.get("round")
        if isinstance(round_no, int):
            ours = [r for r in records if r.round_no == round_no and r.table_id == seal.table_id]
            corrections = self._corrected_after(ours, seal.seq)
            if corrections:
                summary["log"] = _as_corrected(corrections, fold_round([r for r in ours if r.type in ROUND_TYPES]))
        return summary

    def _package_records(self, package: Path) -> tuple[list, dict] | str:
        """The package's audit records and what its signature says of them (``verified``,
        ``signature``), or why they cannot stand in for the kiosk's log."""
        if package not in self._packages:
            self._packages[package] = _read_package_records(package, self.public_key)
        return self._packages[package]

    @staticmethod
    def _corrected_after(records: list, sealed_seq: int) -> list:
        """The corrections of a round made after its recording was sealed (a confirmed card is none)."""
        from kiosk.audit import AuditType
        from kiosk.rounds import is_change

        # One that cannot be read is listed: whether it changed a card is lost, not that it was made.
        return [r for r in records if r.seq > sealed_seq and r.type in (AuditType.CARD_CORRECTED,
                                                                        AuditType.SETTLEMENT_CORRECTED)
                and (r.type == AuditType.SETTLEMENT_CORRECTED or (data := r.read()[0]) is None or is_change(data))]

    def _add_log(self, log_dir: Path, table_id: str, sealed_seq: int, summary: dict) -> None:
        """The round as the log has it now, where people corrected it after its recording was
        sealed: the replay shows the recording (what the camera saw and the table settled), and
        without this a corrected round's replay would contradict the review page unexplained."""
        from kiosk.audit import AuditError, AuditLog
        from kiosk.rounds import load_round

        round_no = summary.get("round")
        if not isinstance(round_no, int):
            return
        corrections = self._corrected_after(self._corrections.get(log_dir, {}).get((table_id, round_no), []),
                                            sealed_seq)
        if not corrections:
            return      # the common case: no second read of the log
        try:
            log = AuditLog.in_dir(log_dir, read_only=True)
        except AuditError:
            return      # the seal's own read already said why the log cannot be read
        try:
            now = load_round(log, round_no, table_id=table_id)
        finally:
            log.close()
        if now is None:
            return
        summary["log"] = _as_corrected(corrections, now)

    def _seals(self, log_dir: Path) -> dict[tuple[str, str], Any] | str:
        """``(table, folder)`` -> its latest seal, or why the log cannot be read."""
        if log_dir not in self._logs:
            from kiosk.audit import AuditError, AuditLog, AuditType

            try:
                log = AuditLog.in_dir(log_dir, read_only=True)
            except AuditError as exc:
                self._logs[log_dir] = f"the recording's seal cannot be checked: {exc}"
            else:
                try:
                    # A damaged seal of another round is none of this replay's business, and must not
                    # stop it (QA52 review M6): only a readable seal can be matched to a folder.
                    seals, unread = {}, []
                    for r in log.iter_records(types=[AuditType.RECORDING_SEALED]):
                        data, why = r.read()
                        if why is None:
                            seals[(r.table_id, str(data.get("folder", "")))] = r
                        else:
                            unread.append(r)
                    self._logs[log_dir], self._unread_seals[log_dir] = seals, unread
                    corrections = self._corrections[log_dir] = {}
                    for r in log.iter_records(types=[AuditType.CARD_CORRECTED, AuditType.SETTLEMENT_CORRECTED]):
                        corrections.setdefault((r.table_id, r.round_no), []).append(r)
                finally:
                    log.close()
        return self._logs[log_dir]


# An evidence package's round records and its manifest (kiosk.evidence writes them beside recording/).
PACKAGE_RECORDS = "audit.json"
PACKAGE_MANIFEST = "MANIFEST.json"
PACKAGE_RECORDING = "recording"


def own_unread_seal(unread: list, folder: Path, summary: dict, table: str | None = None) -> Any:
    """The latest of ``unread`` (seals that cannot be read) that is the replayed round's, or None.

    What it sealed is lost with its payload, so it is known by the columns its hash covers: its
    round (the folder's name, as the seal names the folder, else meta.json's) and ``table``.
    ``None`` takes any table's: a folder away from its table's folder (replayed with
    --data-dir), whose readable seal is found by name alone, or a package's, of one table."""
    round_no = round_in_name(folder.name)
    round_no = summary.get("round") if round_no is None else round_no
    return next((r for r in reversed(unread) if r.round_no == round_no and table in (None, r.table_id)), None)


def unreadable(record: Any) -> str:
    """A record of the round that cannot be read, in :class:`kiosk.audit.DamagedRecord`'s words:
    the replay goes on without it and says so, rather than stopping on it (QA52 review M6)."""
    from kiosk.audit import DamagedRecord

    return str(DamagedRecord(record, record.damage))


def package_of(folder: Path) -> Path | None:
    """The unzipped evidence package a recording folder lies in (``<package>/recording/<folder>``), or None."""
    root = folder.resolve().parent
    if root.name != PACKAGE_RECORDING:
        return None
    root = root.parent
    return root if (root / PACKAGE_RECORDS).is_file() and (root / PACKAGE_MANIFEST).is_file() else None


def _read_package_records(package: Path, published=None) -> tuple[list, dict] | str:
    """audit.json's records, where it is the file MANIFEST.json lists and each record matches
    its own hash, with what the package's signature says of them; otherwise why not (a replay
    must not vouch for a seal or corrections someone wrote into the package after its export).

    The signature is checked by ``kiosk.signing.check_signature``, as ``niuniu audit
    check-evidence`` checks it (one verifier): with ``published`` (the casino's key) a signature
    that holds makes the records ``verified``; without it a signature that holds only names its
    key, since anyone can sign a rewritten manifest with a key of their own."""
    import hashlib

    from kiosk.audit import AuditRecord
    from kiosk.signing import SIGNATURE, check_signature

    check = ("check the package with `niuniu audit check-evidence PACKAGE.zip --public-key KEY` "
             "(or --data-dir DIR at the kiosk)")
    try:
        raw = (package / PACKAGE_RECORDS).read_bytes()
        raw_manifest = (package / PACKAGE_MANIFEST).read_bytes()
        manifest = json.loads(raw_manifest)
        listed = manifest.get("files", {}).get(PACKAGE_RECORDS) if isinstance(manifest, dict) else None
        signature = (package / SIGNATURE).read_bytes() if (package / SIGNATURE).is_file() else None
    except (OSError, ValueError, AttributeError) as exc:
        return f"the package in {package} cannot be read ({exc}); {check}"
    problems: list[str] = []
    facts: list[str] = []
    check_signature(signature, raw_manifest, manifest, published, None, problems, facts)
    if problems:
        return (f"the package's signature check failed: {'; '.join(problems)}; neither the package's seal nor its "
                "corrections are used")
    if signature is None:
        signed = {"verified": False, "signature": f"absent: the package has no {SIGNATURE}"}
    else:
        signed = {"verified": published is not None, "signature": facts[0] if facts else "present"}
    if listed != hashlib.sha256(raw).hexdigest():
        return (f"the package's {PACKAGE_RECORDS} is not the file the package's {PACKAGE_MANIFEST} lists: it was "
                f"changed after export, so neither its seal nor its corrections are used; {check}")
    try:
        records = [AuditRecord(**item) for item in json.loads(raw)]
    except (ValueError, TypeError) as exc:
        return f"the package's {PACKAGE_RECORDS} cannot be read as audit records ({exc}); {check}"
    # A record damaged on the kiosk's disk is packed as the log held it, failing its hash; it holds
    # nothing the replay could use, so it is named where it counts, not a reason to use no record.
    # One that reads but fails its hash was edited.
    bad = [r.seq for r in records if r.expected_hash() != r.hash and r.damage is None]
    if bad:
        return f"record seq {bad[0]} of the package's {PACKAGE_RECORDS} does not match its own hash; {check}"
    return records, signed


def _as_corrected(corrections: list, now: dict) -> dict:
    """The replay's ``log`` entry: the corrections after the recording and the round they left.

    A correction that cannot be read is listed with ``damaged`` (why) in place of what it
    changed.  The round's fold passes over it, so where the last settlement correction is one,
    the lines as corrected are unknown (empty): the lines before it would read as the round's last word."""
    listed = []
    for r in corrections:
        data, why = r.read()
        listed.append({"seq": r.seq, "ts": r.ts, "type": r.type, "actor": r.actor,
                       **({"damaged": unreadable(r)} if why is not None else
                          {k: data.get(k) for k in ("seat", "old", "new", "action", "approved_by", "requested_by",
                                                    "reason", "difference") if k in data})})
    last = next((c for c in reversed(listed) if c["type"] == "settlement_corrected"), {})
    unknown = bool(last.get("damaged"))
    return {
        "corrections_after_recording": listed,
        "status": now.get("status"),
        "hands": now.get("hands", {}),
        "lines": {} if unknown else {seat: {"outcome": line.get("outcome"), "net": line.get("net")}
                                     for seat, line in (now.get("lines") or {}).items()},
        "settlement": None if unknown else now.get("settlement"),
    }


def is_damaged_recording(folder: Path) -> bool:
    """A round folder that lost its meta.json: its detections and events are still there, and
    reading its key frames as a frame folder would make up a round from a dozen stills."""
    return not (folder / META).is_file() and any((folder / name).is_file() for name in (DETECTIONS, EVENTS))


def damaged_recordings(root: Path) -> list[Path]:
    """Every damaged round folder at or below ``root`` (:func:`is_damaged_recording`)."""
    found = {p.parent for name in (DETECTIONS, EVENTS) for p in root.rglob(name)}
    return sorted(folder for folder in found if is_damaged_recording(folder))


def damaged_message(folder: Path) -> str:
    held = " and ".join(name for name in (DETECTIONS, EVENTS) if (folder / name).is_file())
    return (f"{folder} holds {held} but no {META}: the recording is damaged; restore {META} from a backup "
            "(niuniu backup keeps the recordings) to replay it")


def load_detector(model: str | Path | None) -> Detector:
    from vision.detector import CardDetector  # imports the ML stack only when a model is needed

    return CardDetector(model)


def find_config(path: Path) -> TableConfig:
    folder = path if path.is_dir() else path.parent
    for name in CONFIG_NAMES:
        if (folder / name).is_file():
            return load_table_config(folder / name)
    raise ReplayError(f"no table config for {path}: pass --config table.yaml (or put {CONFIG_NAMES[0]} beside it)")


def find_media(path: Path) -> Path:
    """The video, image or frame folder to read at ``path`` (a folder may hold the frames,
    one video, or frames/); ReplayError when there is none."""
    if path.is_file():
        return path
    try:
        entries = [p for p in path.iterdir() if p.is_file()]
    except OSError as exc:
        raise ReplayError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if any(p.suffix.lower() in IMAGE_SUFFIXES for p in entries):
        return path
    videos = sorted(p for p in entries if p.suffix.lower() in VIDEO_SUFFIXES)
    if len(videos) == 1:
        return videos[0]
    if len(videos) > 1:
        raise ReplayError(f"{path} holds {len(videos)} videos ({', '.join(v.name for v in videos)}); name one")
    if (path / "frames").is_dir():
        return find_media(path / "frames")
    raise ReplayError(f"{path} holds no recording (meta.json), no video and no images "
                      f"({', '.join(IMAGE_SUFFIXES)}) to replay")


def media_source(path: Path, fps: float) -> FrameSource:
    """The video or frame folder at ``path`` (a folder may hold the frames, one video, or frames/).

    A frame that cannot be read is skipped as a dropped frame (and reported), not the end of
    every round read before it."""
    path = find_media(path)
    if path.is_file():
        if path.suffix.lower() in IMAGE_SUFFIXES:
            return ImageFilesSource([path], f"image {path}", start_ts=0.0, fps=fps)
        return VideoFileSource(path, start_ts=0.0)
    return ImageFilesSource.from_folder(path, start_ts=0.0, fps=fps, skip_unreadable=True)


# ------------------------------------------------------------ summaries


class RoundCollector:
    """Groups a machine's events by round and turns each round into the replay dict."""

    def __init__(self, machine: RoundMachine) -> None:
        self.machine = machine
        self.events: dict[int, list[RoundEvent]] = defaultdict(list)
        machine.add_listener(self._on_event)

    def _on_event(self, event: RoundEvent) -> None:
        if event.kind not in CAMERA_KINDS and event.round_no > 0:
            self.events[event.round_no].append(event)

    def summaries(self) -> list[dict]:
        return [summarise_round(events, self.machine) for _, events in sorted(self.events.items())]


def summarise_round(events: list[RoundEvent], machine: RoundMachine) -> dict:
    round_no = events[0].round_no
    cleared = next((e for e in reversed(events) if e.kind == EventKind.round_cleared), None)
    if cleared is not None:
        state, seats = cleared.data.get("previous_state"), cleared.data.get("seats", {})
    else:  # the stream ended mid-round: the machine still holds it
        state = str(machine.state)
        seats = {seat: list(hand.codes) for seat, hand in machine.hands.items()} if machine.round_no == round_no else {}
    settled = next((e for e in reversed(events) if e.kind == EventKind.round_settled), None)
    frames = [e.frame_no for e in events if e.frame_no is not None]
    return {
        "round": round_no,
        "state": state,
        "seats": seats,
        "results": hand_results(seats, machine.preset),
        "settlement": settled.data.get("settlement") if settled else None,
        "alerts": [{"code": e.data.get("code"), "seat": e.seat, "card": e.card, "frame_no": e.frame_no,
                    "message": e.data.get("message")} for e in events if e.kind == EventKind.alert],
        "frames": [min(frames), max(frames)] if frames else None,
        "started": events[0].ts,
        "ended": events[-1].ts,
    }


def not_scored(codes: list[str]) -> str:
    """The label of a seat that does not hold a hand: a sixth card must not keep the label the
    seat had at five (QA48 dispute L3: "Bull 5" on six cards), nor four read as an error."""
    return f"{len(codes)} card{'' if len(codes) == 1 else 's'} — not scored"


def hand_results(seats: dict[str, list[str]], preset) -> dict[str, dict]:
    """Each seat's hand scored with the preset, players against the banker; unscorable hands say
    why (``error``), and one with other than five cards is labelled as not scored."""
    out: dict[str, dict] = {}
    banker = None
    if "banker" in seats:
        try:
            banker = evaluate(seats["banker"], preset)
        except CardError as exc:
            out["banker"] = {"error": str(exc)}
    for seat, codes in seats.items():
        if seat == "banker":
            if banker is not None:
                out[seat] = banker.to_json()
            elif len(codes) != HAND_SIZE:
                out[seat]["label"] = not_scored(codes)
            continue
        try:
            hand = evaluate(codes, preset)
        except CardError as exc:
            out[seat] = {"error": str(exc)}
            if len(codes) != HAND_SIZE:
                out[seat]["label"] = not_scored(codes)
            continue
        entry = hand.to_json()
        if banker is not None:
            entry["vs_banker"] = _OUTCOME[compare(hand, banker, preset)]
        out[seat] = entry
    return out


# ------------------------------------------------------------ media (model needed)


def replay_source(source: FrameSource, config: TableConfig, detector: Detector) -> list[dict]:
    pipeline = TablePipeline(config, None, detector)    # its machine holds no round: nobody settles a video
    collector = RoundCollector(pipeline.machine)
    try:
        for frame in source.frames():
            pipeline.step(frame)
    except NiuniuError:
        raise
    except Exception as exc:  # a decoder failure names the file, not a traceback
        raise ReplayError(f"{source.description} failed at frame {pipeline.frames_processed}: {exc}") from None
    skipped = list(getattr(source, "skipped", []))
    if pipeline.frames_processed == 0:
        reason = f" ({skipped[0][1]})" if skipped else ""
        raise ReplayError(f"{source.description} has no frames that can be read{reason}")
    return collector.summaries() + [
        {"frame": str(frame), "error": f"{why}; skipped, as a dropped frame"} for frame, why in skipped]


# ------------------------------------------------------------ recordings (no model needed)


class _RecordedModel:
    """Stands in for the detector a recording was made with: its detections are on disk."""

    def __init__(self, name: str) -> None:
        self.name = name

    def detect(self, image, regions=None):  # pragma: no cover - never called: replay uses process()
        raise ReplayError("a recording's detections are replayed, not detected again")


def read_meta(folder: Path) -> dict:
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReplayError(f"{folder / META} cannot be read: {exc}") from None
    if not isinstance(meta, dict):
        raise ReplayError(f"{folder / META} is not a {FORMAT} recording (it holds a {type(meta).__name__}, "
                          "not a mapping)")
    if meta.get("format") != FORMAT:
        raise ReplayError(f"{folder / META} is not a {FORMAT} recording (format: {meta.get('format')!r})")
    for key in ("round_no", "table"):
        if key not in meta:
            raise ReplayError(f"{folder / META} has no {key!r}; the recording is incomplete")
    if not isinstance(meta["round_no"], int) or isinstance(meta["round_no"], bool) or meta["round_no"] < 1:
        raise ReplayError(f"{folder / META}: round_no {meta['round_no']!r} is not a round number")
    if not isinstance(meta["table"], dict):
        raise ReplayError(f"{folder / META}: table is not a table config")
    return meta


def replay_recording(folder: str | Path, config: TableConfig | None = None, *,
                     redetect_with: Detector | None = None) -> dict:
    """Re-run one recorded round from its detections; compare with what was recorded."""
    folder = Path(folder)
    meta = read_meta(folder)
    # The table in force when it was recorded, as it was (checks added since are not applied).
    config = config or table_config_from_dict(meta["table"], folder / META, as_recorded=True)
    made_with = meta.get("tracker")
    if not isinstance(made_with, int) or made_with < 4:    # before accept_after_s and recheck_s: as it ran
        config = config.with_thresholds(accept_after_s=0.0, recheck_s=0.0)
    try:
        lines = read_jsonl(folder / DETECTIONS)
        events = read_jsonl(folder / EVENTS)
        for name, rows in ((DETECTIONS, lines), (EVENTS, events)):
            bad = next((i for i, row in enumerate(rows, 1) if not isinstance(row, dict)), None)
            if bad is not None:
                raise RecordingError(f"{folder / name}: entry {bad} is not a JSON object")
        recorded = [RoundEvent.from_json(e) for e in events]
    except (OSError, NiuniuError) as exc:
        raise ReplayError(f"recording {folder} cannot be read: {exc}") from None
    cut_short = _cut_short(folder, meta, lines, recorded)

    model = (meta.get("model") or {}).get("name") or "recorded"
    pipeline = TablePipeline(config, None, _RecordedModel(model), round_no=int(meta["round_no"]) - 1)
    pipeline.machine.ignore_present(tuple(entry) for entry in meta.get("ignored_at_start", []))
    # As it ran: before 5 no changed card was reported and a lone card on a finished round
    # started a round; 5 explained a change by any new track and a lone card waited only on a
    # settled or voided round (a later release's recording is replayed with today's rules)
    rules = min(made_with, TRACKER_VERSION) if isinstance(made_with, int) else 0
    pipeline.tracker.rules = pipeline.machine.rules = rules
    # As the kiosk ran: one recorded before unsettled rounds were held ended them on an empty
    # table, and a kiosk that holds them ends one with no bets (which a recording does not
    # hold: the empty table's clear among its events says so).
    ended_empty = any(e.kind == EventKind.round_cleared and not e.is_manual
                      and e.data.get("previous_state") in ("dealing", "complete") for e in recorded)
    pipeline.machine.hold_unsettled = meta.get("unsettled") == "held" and not ended_empty
    collector = RoundCollector(pipeline.machine)
    produced: list[RoundEvent] = []
    pipeline.machine.add_listener(produced.append)

    # People's actions go back in after the frame they name (the frame on screen when they acted).
    frame_nos = {line.get("frame_no") for line in lines}
    first = lines[0].get("frame_no") if lines else None
    before: list[RoundEvent] = []
    after_frame: dict[int, list[RoundEvent]] = defaultdict(list)
    at_end: list[RoundEvent] = []
    for event in recorded:
        if not event.is_manual:
            continue
        if event.frame_no in frame_nos:
            after_frame[event.frame_no].append(event)
        elif event.frame_no is None or (first is not None and event.frame_no < first):
            before.append(event)
        else:
            at_end.append(event)

    # The pre-roll (the frames before the recorded round_start) is there for the tracker's
    # votes only.  Live, the machine spent those frames on the round before (settled, its
    # cards being swept); a replay's machine starts idle, and letting it watch them would
    # deal the last round's cards again as a round of their own.  So it takes its first
    # look where the live machine started this round.
    round_no = int(meta["round_no"])
    started_at = next((e.frame_no for e in recorded if e.kind == EventKind.round_start and e.round_no == round_no),
                      None)
    problems: list[dict] = []
    warnings: list[str] = []
    if isinstance(meta.get("dropped_detections"), dict):
        warnings.append(_dropped_lines(meta["dropped_detections"]))
    if cut_short:
        warnings.append(cut_short)
    cut = meta.get("preroll_cut") if isinstance(meta.get("preroll_cut"), dict) else None
    left_overs = meta.get("ignored_tracks") if isinstance(meta.get("ignored_tracks"), list) else None
    # The round's own cards, never taken for left-overs: those a cut pre-roll could not reach back
    # to, and those the round accepted as it started (lying since a restart, before any frame was kept).
    dealt = {(str(c[0]), str(c[1])) for c in (cut or {}).get("cards") or () if isinstance(c, list) and len(c) > 1}
    dealt |= {(str(e.seat), str(e.card)) for e in recorded if e.kind == EventKind.card_accepted
              and e.round_no == round_no and started_at is not None and e.frame_no == started_at}
    for event in before:
        _reapply(pipeline.machine, event, problems)
    for line in lines:
        if cut is not None and started_at is not None and line.get("frame_no", started_at) >= started_at:
            warnings += _cut_preroll(pipeline.tracker, cut, recorded, round_no, lines[0].get("frame_no"))
            cut = None
        try:
            detections = [Detection.from_json(d) for d in line["detections"]]
            frame_no, ts = int(line["frame_no"]), float(line["ts"])
            # The tracker's clock as it ran live: the monotonic one, or, in a recording made
            # before it was recorded, the wall time it then used.
            mono = None if line.get("mono") is None else float(line["mono"])
            if started_at is not None and frame_no < started_at:
                pipeline.tracker.update(normalise_detections(detections), frame_no, ts if mono is None else mono,
                                        tuple(line["size"]))
            elif left_overs is not None:
                # The machine's first look: first which physical card each left-over is, as the
                # live machine knew it when the round started (rules 7: by track, not by code).
                hands = pipeline.tracker.update(normalise_detections(detections), frame_no,
                                                ts if mono is None else mono, tuple(line["size"]))
                if _restore_left_overs(pipeline.tracker, left_overs, first, preroll_frames(config), dealt):
                    hands = pipeline.tracker.hands()
                pipeline.machine.ignore_on_tracks(_left_over_tracks(left_overs, hands, first))
                left_overs = None
                pipeline.machine.observe(hands, frame_no, ts, mono=ts if mono is None else mono)
            else:
                pipeline.process(frame_no, ts, tuple(line["size"]), detections, mono=mono)
        except (KeyError, TypeError, ValueError, CardError) as exc:
            raise ReplayError(f"{folder / DETECTIONS}: frame {line.get('frame_no')!r} is malformed: {exc}") from None
        for event in after_frame.pop(frame_no, []):
            _reapply(pipeline.machine, event, problems)
    for event in at_end:
        _reapply(pipeline.machine, event, problems)

    # A round cleared by the next deal ends on a frame that also starts the next round: only
    # this round's events are compared.
    notes: list[str] = []
    ours = [_with_banking(e, pipeline.machine.preset, notes) for e in recorded if e.round_no == round_no]
    differences = problems + diff_events(ours, [e for e in produced if e.round_no == round_no])
    summaries = collector.summaries()
    summary = next((s for s in summaries if s["round"] == meta["round_no"]), None) or {
        "round": meta["round_no"], "state": None, "seats": {}, "results": {}, "settlement": None, "alerts": [],
        "frames": None, "started": meta.get("started"), "ended": meta.get("ended"),
    }
    summary["recording"] = str(folder)
    if warnings:
        summary["warnings"] = warnings
    if notes:
        summary["notes"] = notes[:1]
    summary["matches_recording"] = not differences
    summary["differences"] = differences
    # The rules the replay ran (QA50 review L5: it said today's of a recording replayed as it ran)
    summary["tracker"] = {"recorded": meta.get("tracker"), "replayed": rules}
    if isinstance(meta.get("rules_code"), str):     # QA52 upgrade M2: which code, not only which rules
        summary["rules_code"] = {"recorded": meta["rules_code"], "replayed": RULES_CODE}
    if redetect_with is not None:
        summary["redetect"] = redetect(folder, config, lines, redetect_with)
    return summary


def _with_banking(event: RoundEvent, preset: Preset, notes: list[str]) -> RoundEvent:
    """A recorded settlement made before settlements said who banked (0cd674f, 2026-12-06),
    completed from the preset it names, as the audit log reads it (``kiosk.rounds.banking_of``).

    Left absent, every settled round of a table's first days replayed as DIFFERS for a field
    its release never wrote (QA52 upgrade M1).  Completed rather than passed over: the replay
    still compares who banked with what that preset says (a house-banked round replayed as
    player-banked differs), and a recorded ``banking`` is compared as recorded.  A preset that
    cannot be told (a preset file not beside the recording) leaves it absent, a difference."""
    settlement = event.data.get("settlement")
    if not isinstance(settlement, dict) or "banking" in settlement:
        return event
    name = settlement.get("preset")
    try:
        banking = (preset if name == preset.name else load_preset(str(name))).banking
    except (NiuniuError, OSError, ValueError):
        return event
    notes.append(f"recorded before settlements named who banked: compared as banked by "
                 f"{'the house' if banking is Banking.HOUSE else 'a player'}, as its preset {name} says")
    return replace(event, data={**event.data, "settlement": {**settlement, "banking": banking.value}})


def _cut_short(folder: Path, meta: dict, lines: list[dict], recorded: list[RoundEvent]) -> str | None:
    """Whether ``detections.jsonl`` ends before the frame its finished ``meta.json`` names: a warning
    where the round's start is still in it, a :class:`ReplayError` where it is not.

    The recorder sets ``last_frame`` from the lines it wrote (dropped ones aside), so a finished
    recording's file ends there; one ending earlier lost its end after the round (a power cut before
    the disk had the last lines, a copy that stopped, a damaged disk).  Cut before the round's start,
    the machine saw no round, and the people's actions came out as a DIFFERS with the dealer's words
    ("deal a round first") under ``Round 5: None`` (QA51 L4): a damaged recording, not a changed
    game.  A recording the kiosk never finished (a crash) has no ``last_frame``, and its torn last
    line is skipped as before."""
    last = meta.get("last_frame")
    if not isinstance(last, int) or isinstance(last, bool):
        return None
    ends = lines[-1].get("frame_no") if lines else None
    if isinstance(ends, int) and not isinstance(ends, bool) and ends >= last:
        return None
    where = "holds no whole line" if not lines else f"ends at frame {ends}"
    start = next((e.frame_no for e in recorded if e.kind == EventKind.round_start
                  and e.round_no == meta.get("round_no")), None)
    if not lines or (isinstance(ends, int) and isinstance(start, int) and ends < start):
        raise ReplayError(f"{folder / DETECTIONS} {where}, before the round's start (frame {start}), but the round "
                          f"was recorded to frame {last} ({META}): the file was cut after it was written, so the "
                          "round cannot be replayed; restore the recording from a backup or its evidence package")
    return (f"{DETECTIONS} {where}, but the round was recorded to frame {last} ({META}): its last lines were lost "
            "after they were written (a power cut as the round ended, or a cut copy), so a difference from there "
            "on may come from them, not from a changed recording")


def _dropped_lines(dropped: dict) -> str:
    """What a recording's ``dropped_detections`` means for its replay: said, so that a difference
    from those frames on is not read as a changed recording."""
    runs = [run for run in dropped.get("frames") or () if isinstance(run, list) and len(run) == 2]
    shown = ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in runs[:5]) + (", ..." if len(runs) > 5 else "")
    return (f"{dropped.get('count')} frame(s) of detections were not recorded, the disk too far behind"
            f"{' (frames ' + shown + ')' if shown else ''}: the replay's tracker did not see them, so a difference "
            "from there on may come from them, not from a changed recording")


def _restore_left_overs(tracker, left_overs: list, first_frame, window: int, dealt=()) -> bool:
    """Put the cards that lay on the table since before the recording began back as the live
    tracker had them when the round started (rules 7); True if any was changed.

    The live tracker accepted them when they were dealt, on clear reads; the replay's sees them
    only from the pre-roll on, when the next card over an index (or a chip) may have one read as
    another for most frames.  Every card shown as the round started lies further in than
    ``window`` frames (:func:`vision.record.preroll_frames`), so a track the replay shows from the
    recording's first ``window`` frames is a left-over, or a card the live tracker no longer showed,
    unless it is one of ``dealt``, the (seat, card) the round accepted as it started or a cut pre-roll
    names (the pipeline started, or the MAX_PREROLL frames kept began, after they were laid):

    * a left-over (``ignored_tracks``, shown) none of the seat's tracks is accepted as is the seat's
      track accepted as a card no left-over of the seat names, the one read as the left-over's card
      most often: it gets that card (QA51: the replay took KC for KS, and the machine, told to
      ignore seat 4's KC, dealt the KS into the new round; 2 of 15 busy-sim rounds did not replay);
    * any other such track is dropped: live, that card's track had ended (a round's QD read as KD
      under the next card, swept, and ended by the next deal's QD; the replay's KD was dealt into
      the new round and then taken away)."""
    if first_frame is None:
        return False
    missing: dict[str, list[Card]] = defaultdict(list)
    codes: dict[str, set[str]] = defaultdict(set)
    for entry in left_overs:
        if not isinstance(entry, dict):
            continue
        seat, code, track = str(entry.get("seat")), str(entry.get("card")), entry.get("track")
        codes[seat].add(code)
        if entry.get("shown") and isinstance(track, int) and track < first_frame:
            try:
                missing[seat].append(Card.parse(code))
            except CardError:
                continue
    older = [t for t in tracker.tracks if t.accepted is not None and t.first_frame < first_frame + window
             and t.accepted.code not in codes[t.seat] and (t.seat, t.accepted.code) not in dealt]
    restored = False
    for seat, cards in missing.items():
        for card in cards:
            free = [t for t in older if t.seat == seat]
            if not free or any(t.seat == seat and t.accepted == card for t in tracker.tracks):
                continue
            track = max(free, key=lambda t: (_readings(t, card), -t.first_frame, -t.track_id))
            track.accepted = card
            older.remove(track)
            restored = True
    for track in older:
        tracker.end(track)     # as the live tracker had ended it
        restored = True
    return restored


def _readings(track, card: Card) -> int:
    """How often a track was read as ``card``: its sightings until its recheck, and its window's."""
    evidence = track.evidence.get(card)
    return (evidence.sightings if evidence is not None else 0) + sum(
        1 for vote in track.votes if vote is not None and vote[0] == card)


def _left_over_tracks(left_overs: list, hands: dict, first_frame) -> list[tuple[str, str, int | None, bool]]:
    """``ignored_tracks`` (rules 7) as this replay's tracks.  A track is named by its first
    frame, so one begun within the recording keeps its name; a left-over lying since before the
    pre-roll began has a later one here: it is the earliest track of its card the replay shows
    (a card of its code dealt since began later, and the pre-roll reaches back to it)."""
    out = []
    for entry in left_overs:
        if not isinstance(entry, dict):
            continue
        seat, code, track = str(entry.get("seat")), str(entry.get("card")), entry.get("track")
        if track is not None and entry.get("shown"):
            hand = hands.get(seat)
            tracks = [t for c, t in zip(hand.cards, hand.first_frames) if c.code == code and t is not None] \
                if hand is not None else []
            if tracks and track not in tracks and (first_frame is None or track < first_frame):
                track = min(tracks)
        try:
            out.append((seat, code, track if track is None else int(track), bool(entry.get("seen"))))
        except (TypeError, ValueError):
            continue
    return out


def _cut_preroll(tracker, cut: dict, recorded: list[RoundEvent], round_no: int, kept_from) -> list[str]:
    """Give the cards a cut pre-roll hid (``preroll_cut``: a card waited longer than the
    recorder keeps frames) the confidence the live tracker accepted them with, as recorded:
    the frames kept cannot show it, and a replay must not call an honest recording changed
    for that (QA49 review M4).  Said in a warning, since the replay does not check it."""
    out = []
    for entry in cut.get("cards") or ():
        try:
            seat, code, since = str(entry[0]), str(entry[1]), entry[2]
        except (IndexError, TypeError):
            continue
        accepted = next((e for e in recorded if e.kind == EventKind.card_accepted and e.round_no == round_no
                         and e.seat == seat and e.card == code), None)
        track = next((t for t in tracker.tracks if t.seat == seat and t.accepted is not None
                      and t.accepted.code == code), None)
        head = (f"{code} on seat {seat} waited alone from frame {since}, longer than the recording's pre-roll "
                f"reaches (it keeps frames from {kept_from}; from {cut.get('needed_from')} were needed)")
        if accepted is None or track is None:
            out.append(f"{head}: its confidence could not be re-derived")
            continue
        live = (float(accepted.data.get("confidence", 0.0)), bool(accepted.data.get("needs_confirmation")))
        if (round(track.confidence, 4), track.needs_confirmation) != live:
            out.append(f"{head}: its confidence is taken from the recording ({live[0]}; the frames kept give "
                       f"{round(track.confidence, 4)}), not re-derived")
            track.confidence, track.needs_confirmation = live
    return out


def _reapply(machine: RoundMachine, event: RoundEvent, problems: list[dict]) -> None:
    data = event.data
    try:
        if event.kind == EventKind.card_corrected:
            machine.correct_card(event.seat, data.get("old"), data.get("new"), data.get("actor", ""),
                                 data.get("reason", ""), ts=event.ts)
        elif event.kind == EventKind.round_settled:
            bets = {seat: Bet(seat, Decimal(b["amount"]), b["kind"], int(b.get("multiple", 1)))
                    for seat, b in data.get("bets", {}).items()}
            stack = data.get("banker_stack")
            machine.settle(bets, ts=event.ts, actor=data.get("actor"), banker_bid=int(data.get("banker_bid", 1)),
                           banker_stack=Decimal(stack) if stack is not None else None)
        elif event.kind == EventKind.round_void:
            machine.void(data.get("actor", ""), data.get("reason", ""), ts=event.ts)
        elif event.kind == EventKind.round_cleared:
            machine.clear(ts=event.ts, actor=data.get("actor"))
    except (NiuniuError, KeyError, ValueError, TypeError) as exc:
        problems.append({"frame_no": event.frame_no, "kind": str(event.kind),
                         "problem": f"the recorded {event.kind} could not be re-applied: {exc}"})


def diff_events(recorded: list[RoundEvent], produced: list[RoundEvent], limit: int = 10) -> list[dict]:
    """Where the replayed events differ from the recorded ones (camera events aside)."""
    want = [e.to_json() for e in recorded if e.kind not in CAMERA_KINDS]
    got = [e.to_json() for e in produced if e.kind not in CAMERA_KINDS]
    out: list[dict] = []
    for index in range(max(len(want), len(got))):
        a = want[index] if index < len(want) else None
        b = got[index] if index < len(got) else None
        if not _same(a, b):
            out.append({"index": index, "recorded": a, "replayed": b})
            if len(out) >= limit:
                break
    return out


_AMOUNT = re.compile(r"-?[0-9]+(\.[0-9]+)?")


# Keys a later release added to what it records, which say how a figure was reached but
# change no figure: absent from an older recording, they are no difference.  (A key the
# recording has and the replay lacks, or any other new key, still is.)
ADDED_SINCE = frozenset({"preset_rules", "new_cards"})


def _same(recorded: Any, replayed: Any) -> bool:
    """Equal, with money compared as amounts: a release that writes ``"100.00"`` where an
    older one wrote ``"100"`` (the settlement's gross) pays the same, and calling that a
    difference would make every older honest recording look doctored — as would a key the
    recording predates (``ADDED_SINCE``)."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        extra = replayed.keys() - recorded.keys()
        return (recorded.keys() <= replayed.keys() and extra <= ADDED_SINCE
                and all(_same(recorded[k], replayed[k]) for k in recorded))
    if isinstance(recorded, list) and isinstance(replayed, list):
        return len(recorded) == len(replayed) and all(map(_same, recorded, replayed))
    if (isinstance(recorded, str) and isinstance(replayed, str) and recorded != replayed
            and _AMOUNT.fullmatch(recorded) and _AMOUNT.fullmatch(replayed)):
        return Decimal(recorded) == Decimal(replayed)
    return recorded == replayed


def redetect(folder: Path, config: TableConfig, lines: list[dict], detector: Detector) -> dict:
    """Run ``detector`` on the stored key frames; list per frame and seat the cards read differently."""
    stored = {int(line["frame_no"]): line for line in lines}
    differences = []
    frames = sorted((folder / FRAMES).glob("*.jpg"))
    conf = config.thresholds.conf
    for path in frames:
        try:
            frame_no = int(path.stem)
        except ValueError:
            continue
        try:
            image = read_image(path, quiet=False)
        except ImageError as exc:
            differences.append({"frame_no": frame_no, "problem": str(exc)})
            continue
        height, width = image.shape[:2]
        zones = ZoneMap(config, width, height)
        fresh = detector.detect(image, regions=list(zones.regions))
        old = [Detection.from_json(d) for d in stored.get(frame_no, {}).get("detections", [])]
        before, after = _cards_by_seat(old, zones, conf), _cards_by_seat(fresh, zones, conf)
        for seat in config.seat_names:
            a, b = before.get(seat, []), after.get(seat, [])
            if sorted(a) != sorted(b):
                differences.append({"frame_no": frame_no, "seat": seat,
                                    "recorded_only": sorted(set(a) - set(b)),
                                    "redetected_only": sorted(set(b) - set(a))})
    return {"model": str(getattr(detector, "name", type(detector).__name__)), "frames": len(frames),
            "differences": differences}


def _cards_by_seat(detections: list[Detection], zones: ZoneMap, conf: float) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for det in detections:
        seat = zones.seat_of(det.box)
        if seat is not None and det.conf >= conf:
            out[seat].append(det.card.code)
    return out


def format_rounds(rounds: list[dict], currency: str = "") -> str:
    """Rounds as text for a person at a terminal."""
    lines: list[str] = []
    for r in rounds:
        if "error" in r:      # a recording or frame that could not be read: the caller reports it
            continue
        frames = f" frames {r['frames'][0]}-{r['frames'][1]}" if r.get("frames") else ""
        state = r.get("state") or "not seen in the replay (no frame of it was read)"
        lines.append(f"Round {r['round']}: {state}{frames}")
        lines_by_seat = {ln["seat"]: ln for ln in (r.get("settlement") or {}).get("lines", [])}
        for seat, cards in r["seats"].items():
            who = "banker" if seat == "banker" else f"seat {seat}"
            result = r["results"].get(seat, {})
            label = result.get("label") or result.get("error", "")
            extra = f"  {result['vs_banker']}" if "vs_banker" in result else ""
            if seat in lines_by_seat:
                extra += f"  net {lines_by_seat[seat]['net']}{(' ' + currency) if currency else ''}"
            lines.append(f"  {who:<8} {' '.join(cards):<22} {label}{extra}")
        for alert in r.get("alerts", []):
            lines.append(f"  ALERT {alert['code']}: {alert['message']} (frame {alert['frame_no']})")
        if "matches_recording" in r:
            lines.append("  replay matches the recording" if r["matches_recording"]
                         else f"  replay DIFFERS from the recording: {len(r['differences'])} difference(s)")
            for diff in r["differences"][:5]:
                lines += [f"    {line}" for line in difference_lines(diff)]
            if len(r["differences"]) > 5:
                lines.append(f"    and {len(r['differences']) - 5} more (--json lists them)")
            lines += _tracker_note(r)
            lines += [f"  note: {note}" for note in r.get("notes", [])]
        for warning in r.get("warnings", []):
            lines.append(f"  WARNING: {warning}")
        if "seal" in r:
            lines.append(f"  {seal_line(r['seal'])}")
        elif r.get("seal_unchecked"):
            lines.append(f"  seal not checked: {r['seal_unchecked']}")
        if r.get("log"):
            lines += [f"  {line}" for line in log_lines(r)]
        if "redetect" in r:
            red = r["redetect"]
            lines.append(f"  re-detected {red['frames']} key frame(s) with {red['model']}: "
                         f"{len(red['differences'])} difference(s)")
            for diff in red["differences"][:10]:
                lines.append(f"    frame {diff['frame_no']} seat {diff.get('seat', '?')}: "
                             f"recorded only {diff.get('recorded_only')}, now only {diff.get('redetected_only')}")
    return "\n".join(lines) if lines else "no rounds found"


def difference_lines(diff: dict) -> list[str]:
    """One difference between the recorded and the replayed events, whole: which fields differ,
    then each side on its own line (QA48 dispute L1: one line cut at 200 characters hid the
    replayed side, the one the officer needs)."""
    if "problem" in diff:      # a person's action that could not be re-applied
        return [f"frame {diff.get('frame_no')}: {diff['problem']}"]
    recorded, replayed = diff.get("recorded"), diff.get("replayed")
    shown = recorded or replayed or {}
    head = f"event {diff.get('index')}: {shown.get('kind')} at frame {shown.get('frame_no')}"
    if recorded is None or replayed is None:
        head += ": only in the " + ("replay" if recorded is None else "recording")
    else:
        fields = [name if len(old) + len(new) > 80 else f"{name} {old} -> {new}"
                  for name, old, new in _differing(recorded, replayed)]
        head += f": differs in {'; '.join(fields)}" if fields else ""
    return [head,
            f"  recorded: {json.dumps(recorded, sort_keys=True)}",
            f"  replayed: {json.dumps(replayed, sort_keys=True)}"]


def _differing(recorded: dict, replayed: dict, prefix: str = "") -> list[tuple[str, str, str]]:
    """The fields that differ (as :func:`_same` compares them): dotted name, recorded and
    replayed value as JSON (``absent`` where a side lacks the key)."""
    out = []
    for key in sorted(set(recorded) | set(replayed), key=str):
        a, b = recorded.get(key), replayed.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differing(a, b, f"{prefix}{key}.")
        elif key not in recorded and key in ADDED_SINCE:
            continue
        elif key not in recorded or key not in replayed or not _same(a, b):
            out.append((f"{prefix}{key}", json.dumps(a) if key in recorded else "absent",
                        json.dumps(b) if key in replayed else "absent"))
    return out


def seal_line(seal: dict) -> str:
    """The recording against its seal in the audit log (or the unzipped package's records), in a line."""
    if seal.get("error"):
        return f"seal NOT CHECKED: {seal['error']}"
    if seal.get("seq") is None:
        return f"seal: none: {seal.get('note', '')}"
    if seal["ok"] and seal.get("package") and not seal.get("verified"):
        return f"seal: every file matches the package's own seal in its {PACKAGE_RECORDS} (seq {seal['seq']}); " \
               f"{unverified(seal)}"
    where = f"the package's {PACKAGE_RECORDS}" if seal.get("package") else "the audit log"
    if seal["ok"]:
        vouched = f", verified: {seal['signature']}" if seal.get("verified") else ""
        return f"seal: every file is as sealed in {where} (seq {seal['seq']}){vouched}"
    shown = "; ".join(seal["changes"][:5]) + (f"; and {len(seal['changes']) - 5} more" if len(seal["changes"]) > 5
                                                  else "")
    return f"seal: the recording is NOT AS SEALED in {where} (seq {seal['seq']}): {shown}"


def unverified(seal: dict) -> str:
    """Why a package's own seal proves nothing yet, and the command that checks it (QA50 review M1)."""
    said = ("UNVERIFIED: the seal is the package's own, and whoever changes a key frame can rewrite it (and the "
            f"corrections beside it) in {PACKAGE_RECORDS} and {PACKAGE_MANIFEST}")
    if str(seal.get("signature", "")).startswith("absent"):
        return (f"{said}; the package is not signed, so only the kiosk's log can vouch for it: "
                "niuniu audit check-evidence PACKAGE.zip --data-dir DIR")
    return (f"{said}; {seal.get('signature')}; to verify: niuniu replay {shlex.quote(seal['package'])} "
            "--public-key TABLE-KEY.pem")


def log_lines(r: dict) -> list[str]:
    """The round as the audit log has it now, beside the replay of its recording: the
    corrections made after the recording was sealed, and the hands and settlement they left."""
    log = r["log"]
    fixes = log["corrections_after_recording"]
    said = []
    for c in fixes:
        if c.get("damaged"):
            said.append(f"seq {c['seq']} {c['type']} that cannot be read")
            continue
        what = (f"seat {c.get('seat')} {c.get('old') or '-'} -> {c.get('new') or '-'}"
                if c["type"] == "card_corrected" else "settlement recomputed")
        why = f"approved by {c['approved_by']}" if c.get("approved_by") else f"by {c.get('actor')}"
        said.append(f"seq {c['seq']} {c['type']} {what}, {why}: {c.get('reason') or 'no reason given'}")
    out = [f"log: {len(fixes)} correction(s) after the recording ({'; '.join(said)})"]
    lost = [c for c in fixes if c.get("damaged")]
    out += [f"the replay cannot name correction seq {c['seq']}: {c['damaged']}" for c in lost]
    unapplied = [str(c["seq"]) for c in lost if c["type"] == "card_corrected"]
    without = f" (without seq {', '.join(unapplied)}, which cannot be read)" if unapplied else ""
    hands = {seat: cards for seat, cards in log.get("hands", {}).items() if cards != r.get("seats", {}).get(seat)}
    if hands:
        out.append(f"hands as corrected{without}: " + "; ".join(
            f"{'banker' if s == 'banker' else 'seat ' + s} {' '.join(c)}" for s, c in hands.items()))
    if any(c["type"] == "settlement_corrected" for c in lost) and not log.get("lines"):
        out.append("settled as corrected: unknown, the last settlement correction cannot be read")
    elif log.get("lines"):
        out.append("settled as corrected: " + ", ".join(
            f"seat {seat} {str(line.get('outcome') or '').upper()} {line.get('net')}"
            for seat, line in sorted(log["lines"].items(), key=lambda kv: (len(kv[0]), kv[0]))))
    out.append("the replay above is the recording as the table dealt and settled it; the log's corrections "
               "came later, so the replay matching the recording does not contradict them")
    return out


def _tracker_note(r: dict) -> list[str]:
    """Why a replay may differ from an honest recording: the tracker's rules changed since, or
    under the same rules, its code (a release's fixes, a tree being worked on: QA52 upgrade M2)."""
    tracker = r.get("tracker") or {}
    if r.get("matches_recording", True):
        return []
    if tracker.get("recorded") == tracker.get("replayed"):
        code = r.get("rules_code") or {}
        if not code or code.get("recorded") == code.get("replayed"):
            return []
        return [f"  note: recorded by other tracker and round machine code than this replay runs (rules_code "
                f"{code.get('recorded')}, here {code.get('replayed') or 'unknown'}), under the same tracker rules "
                f"{tracker.get('recorded')}: differences in accepted cards, and the people's actions that could "
                "then not be re-applied, may come from the changed code, not from the recording; replay it with "
                "the niuniu release that made it to check the recording itself"]
    made = tracker.get("recorded") or "unknown (the recording predates tracker versions)"
    used = tracker.get("replayed") or "the oldest (0)"
    return [f"  note: recorded with tracker rules {made}, replayed with {used}: "
            "differences in accepted cards may come from the changed rules, not from the recording; "
            "replay it with the niuniu release that made it to check the recording itself"]


def jsonable(rounds: list[dict]) -> Any:
    return json.loads(json.dumps(rounds, default=str))
