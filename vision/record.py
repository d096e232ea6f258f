"""Round recordings: what surveillance replays when a round is disputed.

On-disk format ``niuniu-round/1``
=================================

Recordings live under ``<data dir>/recordings/<table_id>/``, one folder per round,
named ``<UTC start, YYYYmmddTHHMMSSZ>-round-<round_no, 4 digits>`` (a ``-2``, ``-3`` suffix
if that name exists)::

    20250101T200000Z-round-0007/
        meta.json          what, where, with which model
        detections.jsonl   one line per processed frame: the detector's raw output
        events.jsonl       one line per RoundEvent, in the order the machine made them
        frames/            JPEG key frames, <frame_no, 8 digits>.jpg
        hold.json          only while surveillance holds the recording against retention
                           (vision.retention: who, when, why)

``meta.json`` (written when the round starts, rewritten atomically when it ends)::

    {"format": "niuniu-round/1",
     "table_id": "t1", "preset": "cambodia", "currency": "USD", "round_no": 7,
     "model": {"name": "cards-yolo11n.onnx", "sha256": "ab12..."},   # sha256 may be null
     "tracker": 3,                   # vision.tracker.TRACKER_VERSION (absent before it existed)
     "rules_code": "9f0c...",        # RULES_CODE: the tracker's and round machine's source it ran
                                     # (absent before QA52)
     "unsettled": "held",            # an empty table left an unsettled round open ("held") or
                                     # ended it ("cleared"; absent in older recordings: cleared)
     "started": 1735761600.12,       # ts of round_start, UTC epoch seconds
     "ended": 1735761690.40,         # ts of the last event (null while recording)
     "state": "cleared",             # machine state when the recording ended
     "outcome": "settled",           # state the round was in when cleared (settled, complete,
                                     # dealing, void); null if it never was
     "interrupted": false,           # true if the process stopped mid-round
     "first_frame": 1203, "last_frame": 1650, "frame_size": [1920, 1080],
     "ignored_at_start": [["3", "KH"]],   # left-overs of the previous round being ignored
                                          # ([seat, card, frames]: forgotten if unseen that long)
     "ignored_tracks": [{"seat": "3", "card": "KH", "track": 1012, "seen": true, "shown": true}],
                                     # tracker rules 7 only: the track (first frame) each left-over
                                     # lies on, so a replay ignores that physical card and not
                                     # another of its code (absent: left-overs go by code)
     "dropped_key_frames": [1410],   # only where the disk fell too far behind (see below)
     "dropped_detections": {"count": 40, "frames": [[1500, 1539]]},   # the same, for detection lines
     "table": {...}}                 # the whole table config in force (thresholds too)

``detections.jsonl``: ``{"frame_no": 1203, "ts": 1735761599.7, "mono": 81234.56, "size": [1920, 1080],
"detections": [{"card": "AS", "conf": 0.9731, "box": [x1, y1, x2, y2]}, ...]}`` for every
frame the pipeline processed while the round was open, starting with a *pre-roll* of the
``3 n + 5`` frames just before ``round_start`` (the tracker needs them to accept the first
card; they may also be in the previous round's file when that round ended on this frame).
A round begun with a card that waited alone for a second one (on a finished round's table,
or beside its left-overs after a manual clear: ``vision.round``) has a longer pre-roll, from
``3 n + 5`` frames before that card was first seen alone: the tracker accepted it back then,
and a replay's tracker must see it accepted on the same frames to give it the same confidence.
Under tracker rules 7 the pre-roll reaches back the same way to the first frame of every card
shown when the round starts that is not a left-over (a round often starts seconds after its first
cards landed, returned or over another card, never alone).  It does not reach back to the left-overs
(that would hold most of the round before): the replay takes a card it sees from the pre-roll's first
frames for a left-over, with the card ``ignored_tracks`` names (read as another under the next card
for the frames it sees, it is still that card), or, where none names it, for a card whose track the
live tracker had ended (``vision.replay``).
A pre-roll is at most ``MAX_PREROLL`` frames: one that could not reach back far enough is
marked in ``meta.json`` (``"preroll_cut": {"needed_from": frame, "cards": [[seat, card,
frame first seen alone], ...]}``), and a replay takes those cards' confidence from the
recording and says so in a warning, instead of calling an honest recording changed.
Confidences are rounded to 4 places and boxes to 0.1 px, and the live pipeline tracks
the *rounded* values, so a replay sees exactly the numbers the live run saw.  ``ts`` is
the wall clock (what a person reads); ``mono`` the frame's monotonic time
(:attr:`vision.sources.Frame.mono`, meaningful only as differences within the recording),
on which the tracker measured how long a card was unseen, so a replay measures the same
even where NTP stepped the wall clock mid-round.  A line without ``mono`` (recorded before
it was, or a frame that had none) was tracked on its ``ts``, and is replayed so.

``events.jsonl``: ``RoundEvent.to_json()`` per line (``kind, round_no, ts, frame_no, seat,
card, data``), from ``round_start`` to ``round_cleared``, including the people's actions
(``card_corrected``, ``round_settled`` with the bets, ``round_void``, a manual
``round_cleared``) which a replay re-applies after the frame they name, and any
camera turn (``camera_offline``/``camera_online``, ``camera_mirrored``/``camera_mirror_cleared``,
``camera_moved``/``camera_move_cleared``) while the round was open (kept, not compared).
What each kind carries in ``data`` is listed at :class:`vision.round.RoundEvent`.

``frames/``: a key frame at every frame where a card was accepted or removed, where the round
became complete, where an alert was raised (a card read as another since, a card put on a
settled hand), and where it was settled, voided or cleared (for a person's action, the frame
on screen when they acted, the one the event names), as the camera delivered it (no overlay).
Every file is written by one writer thread, in the order the recorder was told (see
:class:`RoundRecorder`): the camera never waits for the disk.  A disk so slow that
``MAX_QUEUED_KEY_FRAMES`` key frames already wait for it gets no more of the camera's until it
catches up: each one dropped is named in ``meta.json`` (``dropped_key_frames``) and in the
pipeline status's ``recording_warning`` (what the round being recorded lost while recording goes
on; cleared as the next round starts), not its ``recording_error`` (a failure that stopped a
recording; cleared once a later round's folder is made).  A person's action's key frame (Settle,
Void, a manual Clear: a few per round, and what a dispute turns on) is never dropped.  Nor are
events and a round's end: the queue of events is not capped (a few per second at most).  The
queue of detection lines is (``MAX_QUEUED_LINES``, QA50 review L2: it grew memory without bound
while the disk stalled): past it a frame's line is dropped, counted in ``meta.json``
(``dropped_detections``: how many, and the runs of frames) and in ``recording_warning``, and a
replay warns that a difference from there on may come from them.

Every line is flushed as it is written, so a crash loses at most what the writer had not
written yet (the line being written, unless the disk was behind); a disk error stops this
round's recording (reported in the pipeline status), never the pipeline.  Either way the round is
played on, so what its recording lost is told to ``RoundRecorder.on_failed`` once a round (a failure
as it happens, dropped key frames or lines at the round's end): the kiosk logs it under the round
(``recording_failed``), and ``niuniu audit check-recordings`` names it (QA51 H4: a recordings
folder the kiosk could not write lost every round's recording, and only the journal said so).

A finished folder is told to ``RoundRecorder.on_finished``; the kiosk then seals it: the
SHA-256 of every file goes into the audit log (``recording_sealed``), so a key frame
swapped on the disk later shows against the tamper-evident log (:func:`seal_changes`).
``hold.json``, surveillance's hold written beside a finished recording, is not part of it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import cv2
import numpy as np

from scoring.errors import NiuniuError
from vision import round as round_machine, tracker
from vision.corners import Detection
from vision.round import EventKind, RoundEvent
from vision.table import TableConfig
from vision.tracker import TRACKER_VERSION

log = logging.getLogger(__name__)

FORMAT = "niuniu-round/1"
META = "meta.json"
DETECTIONS = "detections.jsonl"
EVENTS = "events.jsonl"
FRAMES = "frames"
HOLD = "hold.json"       # surveillance's hold on a finished recording (vision.retention), not sealed
# A key frame where the camera saw something happen, and where a person acted (the frame on
# screen when they did: the latest one processed, which the action names): a card's removal,
# the settlement, a void and the sweep or manual clear are what a dispute asks to see.
_KEY_FRAME_KINDS = (EventKind.card_accepted, EventKind.card_removed, EventKind.round_complete,
                    EventKind.round_settled, EventKind.round_void, EventKind.round_cleared, EventKind.alert)
# The longest pre-roll a round gets (see detections.jsonl above): a lone card left for minutes
# on a settled table must not make the next recording hold minutes of frames before its start.
MAX_PREROLL = 1200
# The most key frames waiting for the writer thread at once: each is a whole camera frame in
# memory (some 9 MB at 2304x1296), so a stalled disk holds at most ~300 MB of them.
MAX_QUEUED_KEY_FRAMES = 32
# The most detection lines waiting for the writer thread at once: a minute at 30 fps, some 20 KB each
# at a full table (QA50 review L2: a disk falling behind grew the queue without bound).  Past it a
# frame's line is dropped (counted in meta.json); events and a round's end never are.
MAX_QUEUED_LINES = 1800
# How long the writer thread waits for more to write before it ends (the next write starts one).
WRITER_IDLE_S = 5.0


def _rules_code() -> str | None:
    """The SHA-256 (16 hex digits) of the source of the code that decides what a recording's
    detections mean: the tracker and the round machine, as this process loaded them.

    TRACKER_VERSION says which rules a recording was made under, not which code: a kiosk run
    from a tree whose tracker was being changed wrote rounds that a later state of that tree,
    under the same version number, replayed as DIFFERS, their Settle and Clear "could not be
    re-applied", with nothing to say why (QA52 upgrade M2, taken for the machine's load).  With
    the code's digest in ``meta.json`` the replay can say the code differs."""
    try:
        return hashlib.sha256("".join(sha256_file(Path(module.__file__))
                                      for module in (tracker, round_machine)).encode()).hexdigest()[:16]
    except (OSError, TypeError):     # no source beside the modules (a frozen build): not known
        return None


def preroll_frames(config: TableConfig) -> int:
    """The frames a round's pre-roll holds at least before its first cards were seen: ``3 n + 5``,
    enough for the tracker to accept a card on the frames it did live.  A replay relies on it: a
    card seen within that many frames of a recording's first frame lay there before the pre-roll
    began, so it was not one of the round's cards (their pre-roll reaches back further)."""
    return 3 * config.thresholds.n + 5


def detections_line(frame_no: int, ts: float, size: tuple[int, int], detections: list[Detection],
                    mono: float | None = None) -> dict:
    line: dict[str, Any] = {"frame_no": frame_no, "ts": ts}
    if mono is not None:   # the tracker's clock for this frame; without it, ts was (and is replayed as) that
        line["mono"] = mono
    line["size"] = [int(size[0]), int(size[1])]
    line["detections"] = [d.to_json() for d in detections]
    return line


RECORDINGS = "recordings"
FOLDER_TIME = "%Y%m%dT%H%M%SZ"      # a round folder's start, UTC: names sort by time


def recordings_dir(data_dir: str | Path, table_id: str) -> Path:
    """Where one table's round recordings live under a data directory."""
    return Path(data_dir) / RECORDINGS / table_id


def folder_time(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime(FOLDER_TIME)


def round_suffix(round_no: int) -> str:
    """The part of a folder name that says which round it holds (4 digits, more past 9999)."""
    return f"-round-{round_no:04d}"


def round_in_name(name: str) -> int | None:
    """The round a folder's name says it holds (:func:`round_suffix`), or None."""
    match = re.search(r"-round-(\d+)", name)
    return int(match.group(1)) if match else None


def key_frame_name(frame_no: int) -> str:
    return f"{frame_no:08d}.jpg"


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


class _RoundFiles:
    """One round's folder, made, written and finished by the recorder's writer thread only.

    ``pending_keys``, ``keys``, ``dropped``, ``close_after``, ``last_frame`` and the dropped lines are
    the recorder's bookkeeping of what it queued (under its lock).  Write failures stop this round's
    files, never the caller."""

    def __init__(self, base: Path, meta: dict, jpeg_quality: int, on_error) -> None:
        self.base, self.meta, self.jpeg_quality, self.on_error = base, meta, jpeg_quality, on_error
        self.folder: Path | None = None        # once the writer has made it
        # the first write failure: the one this round's recording_failed names (told once a round)
        self.failure: str | None = None
        self.det_fh: TextIO | None = None
        self.ev_fh: TextIO | None = None
        # key frames whose frame has not come yet -> whether a person's action named it
        self.pending_keys: dict[int, bool] = {}
        self.keys: set[int] = set()            # key frames queued (or dropped): each once
        self.dropped: set[int] = set()         # of those, the camera's dropped (a person's action may take one)
        self.close_after: int | None = None    # cleared at this frame, not come yet
        self.last_frame: int | None = None     # the last frame whose detections line is queued
        # frames whose detections line was dropped, the disk too far behind: [first, last] runs
        self.dropped_lines: list[list[int]] = []
        self.dropped_line_count = 0

    def fail(self, message: str) -> None:
        self.on_error(self, message)

    def queued(self, frame_no: int | None) -> bool:
        return frame_no is None or (self.last_frame is not None and frame_no <= self.last_frame)

    def open(self, preroll: list[dict]) -> None:
        folder, suffix = self.base, 1
        while folder.exists():
            suffix += 1
            folder = self.base.with_name(f"{self.base.name}-{suffix}")
        try:
            (folder / FRAMES).mkdir(parents=True)
            write_json_atomic(folder / META, self.meta)
            self.det_fh = open(folder / DETECTIONS, "a", encoding="utf-8")
            self.ev_fh = open(folder / EVENTS, "a", encoding="utf-8")
        except OSError as exc:
            self._close_files()
            self.fail(f"cannot start recording in {folder}: {exc}")
            return
        self.folder = folder
        for line in preroll:  # frames before the round's start: the pre-roll
            self.write_detections(line)

    def write_detections(self, line: dict) -> None:
        if self._write(self.det_fh, line, DETECTIONS):
            self.meta["last_frame"] = line["frame_no"]
            self.meta["frame_size"] = line["size"]

    def write_event(self, event: RoundEvent) -> None:
        if self._write(self.ev_fh, event.to_json(), EVENTS):
            self.meta["ended"] = event.ts
            if event.data.get("state"):
                self.meta["state"] = event.data["state"]
            if event.kind == EventKind.round_cleared:
                self.meta["outcome"] = event.data.get("previous_state")

    def write_key_frame(self, frame_no: int, image: np.ndarray) -> None:
        if self.folder is None:
            return
        path = self.folder / FRAMES / key_frame_name(frame_no)
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.jpeg_quality])
        if not ok:
            log.warning("key frame %s could not be encoded", frame_no)
            return
        try:
            path.write_bytes(buf.tobytes())
        except OSError as exc:
            self.fail(f"cannot write key frame {path}: {exc}")
            return
        dropped = self.meta.get("dropped_key_frames", [])
        if frame_no in dropped:        # dropped as the camera's, then named by a person's action
            dropped.remove(frame_no)
            if not dropped:
                del self.meta["dropped_key_frames"]

    def note_dropped(self, frame_no: int) -> None:
        self.meta.setdefault("dropped_key_frames", []).append(frame_no)

    def drop_line(self, frame_no: int) -> None:
        """Count a frame whose detections line is not written (runs of frames, so an hour's stall
        stays a short list)."""
        self.dropped_line_count += 1
        if self.dropped_lines and self.dropped_lines[-1][1] < frame_no <= self.dropped_lines[-1][1] + 1:
            self.dropped_lines[-1][1] = frame_no
        else:
            self.dropped_lines.append([frame_no, frame_no])

    def finish(self, interrupted: bool) -> None:
        self._close_files()
        self.meta["interrupted"] = interrupted
        if self.dropped_line_count:   # no longer counted: the round's last line is behind us
            self.meta["dropped_detections"] = {"count": self.dropped_line_count,
                                               "frames": [list(run) for run in self.dropped_lines]}
        try:
            write_json_atomic(self.folder / META, self.meta)
        except OSError as exc:
            self.fail(f"cannot finish {self.folder / META}: {exc}")

    def _write(self, fh: TextIO | None, data: dict, name: str) -> bool:
        if fh is None:
            return False
        try:
            fh.write(json.dumps(data, separators=(",", ":")) + "\n")
            fh.flush()
            return True
        except OSError as exc:
            self.fail(f"cannot write {self.folder / name}: {exc}")
            self._close_files()
            return False

    def _close_files(self) -> None:
        for fh in (self.det_fh, self.ev_fh):
            if fh is not None:
                try:
                    fh.close()
                except OSError:
                    pass
        self.det_fh = self.ev_fh = None


class RoundRecorder:
    """Writes one folder per round from the pipeline's frames and the machine's events.

    ``on_event`` is a :class:`~vision.round.RoundMachine` listener (it may run on the
    kiosk's thread); ``on_frame`` is called by the pipeline after each frame was observed,
    so the events of frame F arrive before frame F's detections.  A round cleared at frame
    F therefore stays open until F is queued (a replay needs F to see the table empty),
    even when the next round starts on that same frame.

    Neither touches the disk: they queue what is to be written, under the recorder's lock,
    for one writer thread that writes it in that order with no lock held, and finishes a
    round (its ``meta.json``, then ``on_finished``) after everything queued for it.  A JPEG
    of a full-size frame on a slow SD card, written by whoever reported its event, held a
    Settle and every screen on the round machine's lock (QA48 concurrency L1), or the camera
    at a round's end (QA49); a person's action's key frame is queued when they act, so a
    round settled and cleared with the camera offline is still finished and sealed (QA49
    review M2); ``close`` waits for the writer, so no round is lost at a stop or finished
    (and sealed) after it (QA49 review L1).  ``stale_cards`` tells which left-overs the
    machine was ignoring when a round started, so a replay can ignore them;
    ``waiting_cards`` which cards were waiting to start a round, and since which frame, so
    its pre-roll reaches back to them.
    """

    def __init__(self, root: str | Path, config: TableConfig, *, model_name: str, model_sha256: str | None = None,
                 stale_cards=lambda: [], preroll: int | None = None, hold_unsettled=lambda: True,
                 waiting_cards=lambda: [], stale_tracks=lambda: [], shown_cards=lambda: []) -> None:
        self.root = Path(root)
        self.config = config
        self.model = {"name": model_name, "sha256": model_sha256}
        self._stale_cards = stale_cards
        self._hold_unsettled = hold_unsettled
        self._preroll_frames = preroll or preroll_frames(config)
        self._preroll: deque[dict] = deque(maxlen=MAX_PREROLL)
        self._waiting_cards = waiting_cards
        self._stale_tracks = stale_tracks
        self._shown_cards = shown_cards
        # (seat, card, frame first seen alone) waiting to start a round, as of the last frame:
        # the pre-roll reaches back to them (the machine forgets them as the round starts)
        self._waiting: list = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)   # a write queued, or one done
        # (write, args) for the writer thread, in order; the one being written stays first
        self._tasks: deque[tuple[Callable, tuple]] = deque()
        self._writer: threading.Thread | None = None
        self._current: _RoundFiles | None = None
        self._closing: list[_RoundFiles] = []  # cleared at a frame not yet queued
        self._last_image: tuple[int, np.ndarray] | None = None
        # A failure that stopped (part of) a recording: cleared once a later round's folder is
        # made, as recording works again.  ``warning``: what the round being recorded lost while it
        # went on (key frames or detection lines dropped, the disk too far behind), cleared as the
        # next round starts (QA50 review L2: one dropped key frame read "recording stopped" until
        # a restart).  Both are logged; the round's meta.json names what was dropped.
        self.error: str | None = None
        self.warning: str | None = None
        self._queued_lines = 0               # detection lines waiting for the writer (MAX_QUEUED_LINES)
        self._warned: set[str] = set()       # what this round's warning was logged for
        self.finished: deque[Path] = deque(maxlen=100)  # the latest finished round folders
        # Told (folder, meta) of each finished folder, on the writer thread with no lock held:
        # the kiosk seals the folder's files in its audit log.
        self.on_finished: Callable[[Path, dict], None] | None = None
        # Told (round_no, what was lost) once a round whose recording failed or lost part of itself,
        # on the writer thread with no lock held: the kiosk logs it under the round
        # (``recording_failed``, QA51 H4), so a round played with no recording is on record before a
        # dispute asks for it.  A failure is told as it happens (``stopped``: true); dropped key
        # frames or lines, where nothing failed, at the round's end (``stopped``: false).
        self.on_failed: Callable[[int, dict], None] | None = None

    @property
    def current_dir(self) -> Path | None:
        current = self._current
        return current.folder if current is not None else None

    def busy_folders(self) -> list[Path]:
        """Folders still being written: the open round, one closing on a later frame, and any
        the writer has not finished yet."""
        with self._lock:
            rounds = ([self._current] if self._current else []) + self._closing
            rounds += [args[0] for fn, args in self._tasks if fn == self._finish]
            return [f.folder for f in rounds if f.folder is not None]

    # ------------------------------------------------------------ inputs

    def on_frame(self, frame_no: int, ts: float, size: tuple[int, int], detections: list[Detection],
                 image: np.ndarray | None = None, *, mono: float | None = None) -> None:
        line = detections_line(frame_no, ts, size, detections, mono)
        waiting = list(self._waiting_cards())    # the machine's lock, never taken under this one
        with self._lock:
            if image is not None:
                self._last_image = (frame_no, image)
            for files in list(self._closing):
                self._queue_frame(files, line, image)
                if frame_no >= files.close_after:
                    self._closing.remove(files)
                    self._put(self._finish, files, False)
            if self._current is not None:
                self._queue_frame(self._current, line, image)
            # Always kept, even while a round is open: the next round may start on the very
            # frame that clears this one, and its tracker needs the frames before it.
            # All MAX_PREROLL frames are kept: which cards the next round holds (so how far its
            # pre-roll must reach back) is known only when it starts (``_open`` cuts it then).
            self._preroll.append(line)
            self._waiting = waiting

    def on_event(self, event: RoundEvent) -> None:
        with self._lock:
            if event.kind == EventKind.round_start:
                if self._current is not None:  # never cleared (cannot happen with the machine): close it
                    self._put(self._finish, self._current, True)
                self._current = self._open(event)
                self._waiting = []
                self.warning, self._warned = None, set()     # what the last round lost is in its meta.json
            files = self._current
            if files is None:
                return  # between rounds: camera events go to the audit log, not to a round
            self._put(files.write_event, event)
            if event.kind in _KEY_FRAME_KINDS and event.frame_no is not None:
                person = event.is_manual
                if not files.queued(event.frame_no):
                    files.pending_keys[event.frame_no] = files.pending_keys.get(event.frame_no, False) or person
                elif self._last_image is not None and self._last_image[0] == event.frame_no:
                    self._queue_key(files, event.frame_no, self._last_image[1], person=person)   # a person's action
            if event.kind == EventKind.round_cleared:
                self._current = None
                if files.queued(event.frame_no):
                    self._put(self._finish, files, False)
                else:
                    files.close_after = event.frame_no
                    self._closing.append(files)

    def close(self, timeout: float = 60.0) -> None:
        """Stop recording; a round still open is marked interrupted.  Returns once the writer
        has written, finished and told every round (QA49 review L1: a stalled disk let the
        seal start after the kiosk's stop record), or after ``timeout`` seconds (logged)."""
        with self._lock:
            for files in self._closing:
                self._put(self._finish, files, False)
            self._closing.clear()
            if self._current is not None:
                self._put(self._finish, self._current, True)
                self._current = None
        if not self.flush(timeout):
            log.error("recording: writes still wait for the disk %.0f s after the stop", timeout)

    def flush(self, timeout: float = 60.0) -> bool:
        """Wait until the writer has written everything queued so far (a round ended by then
        finished and told); False if it had not after ``timeout`` seconds."""
        with self._lock:
            return self._changed.wait_for(lambda: not self._tasks, timeout)

    # ------------------------------------------------------------ queued (under the lock)

    def _needed_from(self, shown=()) -> int | None:
        """The first frame a pre-roll needs for the cards waiting to start a round, and for the
        round's cards already shown as it starts (``shown``, rules 7), if any."""
        since = [frame for _, _, frame in list(self._waiting) + list(shown)]
        return min(since) - self._preroll_frames if since else None

    def _cut_to(self, needed: int | None) -> list[dict]:
        """The pre-roll a round starting now keeps: its last ``preroll`` frames, and back to
        ``needed``."""
        frames = list(self._preroll)
        keep = max(0, len(frames) - self._preroll_frames)
        while keep > 0 and needed is not None and frames[keep - 1]["frame_no"] >= needed:
            keep -= 1
        return frames[keep:]

    def _open(self, event: RoundEvent) -> _RoundFiles:
        shown = [tuple(card) for card in self._shown_cards()]
        needed = self._needed_from(shown)
        preroll = self._cut_to(needed)
        meta = {
            "format": FORMAT,
            "table_id": self.config.table_id,
            "preset": self.config.rules,
            "currency": self.config.currency,
            "round_no": event.round_no,
            "model": dict(self.model),
            "tracker": TRACKER_VERSION,
            "rules_code": RULES_CODE,
            "unsettled": "held" if self._hold_unsettled() else "cleared",
            "started": event.ts,
            "ended": None,
            "state": "dealing",
            "outcome": None,
            "interrupted": False,
            "first_frame": preroll[0]["frame_no"] if preroll else event.frame_no,
            "last_frame": None,
            "frame_size": preroll[-1]["size"] if preroll else None,
            "ignored_at_start": [list(p) for p in self._stale_cards()],
            "table": self.config.model_dump(mode="json"),
        }
        tracks = [dict(t) for t in self._stale_tracks()]
        if tracks:   # rules 7: which physical card each left-over is (older readers skip the key)
            meta["ignored_tracks"] = tracks
        if needed is not None and preroll and preroll[0]["frame_no"] > needed \
                and len(self._preroll) == self._preroll.maxlen:   # frames were let go, not never seen
            # QA49 review M4: a card waited longer than MAX_PREROLL frames; what the replay
            # cannot see is said, not left to look like a changed recording
            waiting = {(seat, code) for seat, code, _ in self._waiting}
            cut = [card for card in shown if (card[0], card[1]) not in waiting
                   and card[2] - self._preroll_frames < preroll[0]["frame_no"]]
            meta["preroll_cut"] = {"needed_from": needed, "cards": [list(w) for w in list(self._waiting) + cut]}
        base = self.root / f"{folder_time(event.ts)}{round_suffix(event.round_no)}"
        files = _RoundFiles(base, meta, self.config.camera.jpeg_quality, self._fail)
        self._put(self._start, files, preroll)
        files.last_frame = preroll[-1]["frame_no"] if preroll else None
        return files

    def _queue_frame(self, files: _RoundFiles, line: dict, image: np.ndarray | None) -> None:
        frame_no = files.last_frame = line["frame_no"]
        if self._queued_lines < MAX_QUEUED_LINES:
            self._queued_lines += 1
            self._put(files.write_detections, line)
        else:       # the disk too far behind: the line goes, never an event (what a dispute reads)
            files.drop_line(frame_no)
            self._warn("lines", f"{files.dropped_line_count} detection line(s) of round {files.meta['round_no']} "
                       f"dropped: {MAX_QUEUED_LINES} lines still wait for the disk (check the data disk: a "
                       "failing SD card?); its events and people's key frames are still written, and "
                       "meta.json counts the lines in dropped_detections (its replay may differ there)")
        if frame_no in files.pending_keys and image is not None:
            self._queue_key(files, frame_no, image, person=files.pending_keys.pop(frame_no))

    def _queue_key(self, files: _RoundFiles, frame_no: int, image: np.ndarray, *, person: bool = False) -> None:
        """A key frame for the writer, or, where the disk is too far behind, its drop noted.

        Only the camera's own key frames are dropped: a person's action's (``person``: Settle,
        Void, a manual Clear) is what a dispute turns on, and they are a few per round, so
        they never make the frames waiting much more than ``MAX_QUEUED_KEY_FRAMES`` (QA50
        review L1: the Settle frame was dropped like any other)."""
        if frame_no in files.keys and not (person and frame_no in files.dropped):
            return                      # a person acted on the frame the camera made a key frame
        files.keys.add(frame_no)
        if person or sum(fn == self._write_key for fn, _ in self._tasks) < MAX_QUEUED_KEY_FRAMES:
            files.dropped.discard(frame_no)
            self._put(self._write_key, files, frame_no, image)
            return
        files.dropped.add(frame_no)
        self._warn("key frames", f"{len(files.dropped)} key frame(s) of round {files.meta['round_no']} dropped, "
                   f"the last {frame_no}: {MAX_QUEUED_KEY_FRAMES} key frames still wait for the disk (check the "
                   "data disk: a failing SD card?); recording goes on, and the round's meta.json names them "
                   "in dropped_key_frames")
        self._put(files.note_dropped, frame_no)

    def _put(self, write: Callable, *args) -> None:
        self._tasks.append((write, args))
        self._changed.notify_all()
        if self._writer is None:
            self._writer = threading.Thread(target=self._write, name="record:writer", daemon=True)
            self._writer.start()

    # ------------------------------------------------------------ the writer thread

    def _write(self) -> None:
        while True:
            with self._lock:
                if not self._changed.wait_for(lambda: self._tasks, WRITER_IDLE_S):
                    self._writer = None     # decided under the lock: a write queued after starts another
                    return
                write, args = self._tasks[0]
            try:
                write(*args)
            except Exception:     # one frame cv2 cannot encode must not cost the rest
                log.exception("recording: %s failed", getattr(write, "__name__", write))
            with self._lock:
                self._tasks.popleft()
                if getattr(write, "__func__", None) is _RoundFiles.write_detections:
                    self._queued_lines -= 1
                self._changed.notify_all()

    def _start(self, files: _RoundFiles, preroll: list[dict]) -> None:
        """Make a round's folder; once made, an error before it (a failed disk that now takes
        writes again) no longer stands in the status: that round's files say what it lost."""
        before = self.error
        files.open(preroll)
        if files.folder is not None:
            with self._lock:
                if self.error is before:
                    self.error = None

    def _write_key(self, files: _RoundFiles, frame_no: int, image: np.ndarray) -> None:
        files.write_key_frame(frame_no, image)

    def _finish(self, files: _RoundFiles, interrupted: bool) -> None:
        if files.folder is None:    # never started (said when it failed): nothing to seal
            return
        files.finish(interrupted)
        lost = dropped_words(files.meta)
        if lost and files.failure is None:     # a failure was told already: one record a round
            self._tell_failed(files, lost, stopped=False, **{
                key: count for key, count in (("dropped_key_frames", len(files.meta.get("dropped_key_frames", []))),
                                              ("dropped_detections", files.dropped_line_count)) if count})
        self.finished.append(files.folder)
        if self.on_finished is not None:
            try:
                self.on_finished(files.folder, dict(files.meta))
            except Exception:  # sealing must never stop the table
                log.exception("telling that %s is finished failed", files.folder.name)

    def _fail(self, files: _RoundFiles, message: str) -> None:
        log.error("recording: %s", message)
        self.error = message
        if files.failure is None:
            files.failure = message
            self._tell_failed(files, message, stopped=True)

    def _tell_failed(self, files: _RoundFiles, message: str, *, stopped: bool, **counts: int) -> None:
        if self.on_failed is None:
            return
        what: dict[str, Any] = {"error": message, "stopped": stopped}
        if files.folder is not None:     # what part of the round there is on disk (sealed at its end)
            what["folder"] = files.folder.name
        try:
            self.on_failed(files.meta["round_no"], {**what, **counts})
        except Exception:  # telling must never stop the writer
            log.exception("telling that round %s's recording failed failed", files.meta.get("round_no"))

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:      # logged once a round, not once a frame while the disk is behind
            self._warned.add(kind)
            log.warning("recording: %s", message)
        self.warning = message


def dropped_words(meta: dict) -> str | None:
    """What a finished recording's ``meta.json`` says it lost to a disk too far behind, in words, or None."""
    keys = len(meta.get("dropped_key_frames") or [])
    lines = (meta.get("dropped_detections") or {}).get("count", 0)
    lost = [f"{keys} key frame(s)" if keys else "", f"{lines} detection line(s)" if lines else ""]
    if not keys and not lines:
        return None
    return (f"{' and '.join(w for w in lost if w)} of round {meta.get('round_no')} dropped: the data disk fell too far "
            "behind (check it: a failing SD card?); the rest was recorded, and its meta.json names what was dropped")


# ------------------------------------------------------------ sealing


def recording_digests(folder: str | Path) -> dict[str, str]:
    """The SHA-256 of every file of a finished recording, by its path inside the folder."""
    folder = Path(folder)
    digests = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.relative_to(folder).as_posix() != HOLD:
            digests[path.relative_to(folder).as_posix()] = sha256_file(path)
    return digests


def seal_changes(files: dict[str, bytes | str], sealed: dict[str, str]) -> list[str]:
    """What differs between a recording's files (path -> contents or SHA-256) and its seal."""
    changes = []
    for name, digest in sorted(sealed.items()):
        if name not in files:
            changes.append(f"{name} was sealed but is missing")
        elif _digest(files[name]) != digest:
            changes.append(f"{name} differs from the file sealed")
    changes += [f"{name} was added after the seal" for name in sorted(set(files) - set(sealed) - {HOLD})]
    return changes


def _digest(contents: bytes | str) -> str:
    return contents if isinstance(contents, str) else hashlib.sha256(contents).hexdigest()


def sha256_file(path: Path) -> str:
    """A file's SHA-256, read a megabyte at a time (a key frame, a recording, a database copy)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


RULES_CODE = _rules_code()    # read once, as the modules were loaded (see _rules_code)


# ------------------------------------------------------------ reading


class RecordingError(NiuniuError):
    """A recording file that cannot be read; the message names the file and the line."""


def is_recording(path: Path) -> bool:
    return (path / META).is_file()


def find_recordings(path: str | Path) -> list[Path]:
    """Every round folder at or below ``path``, oldest first (by start time, then name)."""
    path = Path(path)
    if is_recording(path):
        return [path]
    found = [p.parent for p in path.rglob(META)] if path.is_dir() else []

    def started(folder: Path) -> tuple[float, str]:
        try:
            return float(json.loads((folder / META).read_text(encoding="utf-8")).get("started") or 0.0), str(folder)
        except (OSError, ValueError):
            return 0.0, str(folder)

    return sorted(found, key=started)


def round_folder(root: str | Path, round_no: int) -> Path | None:
    """The recording of round ``round_no`` under one table's recordings folder, or None.

    Found by name, then confirmed by its meta.json: names carry 4 digits (``-round-0007``,
    more past 9999) and a ``-2`` suffix when a number repeats; the newest such folder wins."""
    root = Path(root)
    if not root.is_dir():
        return None
    for folder in sorted(root.glob(f"*{round_suffix(round_no)}*"), reverse=True):
        try:
            meta = json.loads((folder / META).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and meta.get("round_no") == round_no:
            return folder
    return None


def read_jsonl(path: Path) -> list[dict]:
    """Lines of a JSON-lines file; a torn last line (a crash mid-write) is skipped, others are errors."""
    out = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordingError(f"{path} cannot be read: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):
                log.warning("%s: last line is incomplete (the recorder stopped mid-write); skipped", path)
                continue
            raise RecordingError(f"{path} line {number} is not JSON: {exc.msg}") from None
    return out
