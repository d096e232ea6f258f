"""The table's pipeline: frame -> detections -> seat hands -> round events (-> recording).

One :class:`TablePipeline` owns one camera.  ``start()`` runs it on a background thread:
a live camera is read through :class:`~vision.sources.LatestFrameReader` so the
detector always gets the newest frame; a video or a frame folder is read in order with
no drops — unless played ``realtime`` (the demo, a file standing in for a camera) on a
machine slower than the file, which drops frames as a camera's reader would.
``step(frame)`` is the same work for one frame, for tests, benchmarks and replays.

Each seat zone's pixel box (padded) is passed to the detector as a crop region, so the
small corner indices of a far seat are read at the model's full input size instead of
being shrunk with the whole frame.  The detector answers in full-frame pixels.

With ``thresholds.motion_gate`` (the default) only the crops whose picture changed since
their last read go to the detector; the others reuse that read (``vision.motion``).  The
dealer changes one seat at a time, so this is most of the detector's time saved, and the
tracker still gets every seat's detections every frame.

Detections are rounded exactly as the recording stores them *before* they are tracked,
so replaying a recording feeds the tracker the very numbers the live run used.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from scoring.errors import NiuniuError
from vision.aim import CAMERA_MOVE_CLEARED, CameraAimWatch
from vision.corners import Detection
from vision.mirror import CAMERA_MIRROR_CLEARED, CAMERA_MIRRORED, CameraMirrorWatch
from vision.motion import MotionGate
from vision.overlay_labels import draw_labelled_boxes, drawing_scale
from vision.record import RoundRecorder, recordings_dir
from vision.round import RoundEvent, RoundMachine
from vision.sources import Frame, FrameSource, LatestFrameReader
from vision.table import TableConfig, ZoneMap
from vision.tracker import SeatTracker

log = logging.getLogger(__name__)
MAX_LAG_S = 0.5     # how far a file played in real time may fall behind before frames are skipped


class Detector(Protocol):
    """What the pipeline needs of a detector (``vision.detector.CardDetector`` is one)."""

    name: str

    def detect(self, image: np.ndarray, regions: list[tuple[int, int, int, int]] | None = None) -> list[Detection]: ...


def normalise_detections(detections: list[Detection]) -> list[Detection]:
    """The detections as a recording stores them (conf to 4 places, boxes to 0.1 px)."""
    return [Detection.from_json(d.to_json()) for d in detections]


class TablePipeline:
    def __init__(self, config: TableConfig, source: FrameSource | None, detector: Detector,
                 data_dir: str | Path | None = None, on_event: Callable[[RoundEvent], None] | None = None, *,
                 realtime: bool = False, round_no: int = 0, view: np.ndarray | None = None) -> None:
        self.config = config
        self.source = source
        self.detector = detector
        self.on_event = on_event
        self.realtime = realtime
        self.tracker = SeatTracker(config)
        th = config.thresholds
        self.gate = MotionGate(th.motion_pixel_threshold, th.motion_min_area, th.refresh_frames,
                               settle_reads=th.k, min_conf=th.conf) if th.motion_gate else None
        self.machine = RoundMachine(config, round_no=round_no)
        # Only a reader with a mirror judge can tell (CardDetector(unmirror=True)); a seat
        # crop is judged as the detector finds it, before the tracker rounds anything.
        judge = getattr(detector, "mirrored_odds", None) if getattr(detector, "mirror_judge", None) else None
        self.mirror_watch = CameraMirrorWatch(judge, on_change=self._mirroring_changed) if judge is not None else None
        # ``view``: the picture the zones were marked on (vision.aim.view_path beside the table file).
        limit = config.camera.move_limit
        self.aim_watch = CameraAimWatch([z.polygon for z in config.seats], limit, view,
                                        on_change=self._aim_changed) if limit > 0 else None
        self.recorder: RoundRecorder | None = None
        if data_dir is not None:
            self.recorder = RoundRecorder(
                recordings_dir(data_dir, config.table_id), config,
                model_name=str(getattr(detector, "name", type(detector).__name__)),
                model_sha256=_model_sha256(detector),
                stale_cards=lambda: self.machine.stale_cards,
                hold_unsettled=lambda: self.machine.hold_unsettled,
                waiting_cards=lambda: self.machine.waiting_cards,
                stale_tracks=lambda: self.machine.stale_tracks,
                shown_cards=lambda: self.machine.shown_cards,
            )
        self.machine.add_listener(self._dispatch)
        self._lock = threading.Lock()        # guards the latest frame and the counters
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reader: LatestFrameReader | None = None
        self._latest: tuple[Frame, list[Detection]] | None = None
        self._jpeg_cache: tuple[tuple[int, bool], bytes] | None = None
        self._step_times: deque[float] = deque(maxlen=30)
        self._detect_ms: deque[float] = deque(maxlen=30)
        self._regions_read: deque[tuple[int, int]] = deque(maxlen=30)  # per frame: (crops read, crops)
        self._camera = "stopped"
        self._last_error: str | None = None
        self.frames_processed = 0
        self._last_frame_no: int | None = None
        self._last_ts: float | None = None
        self.recent_events: deque[RoundEvent] = deque(maxlen=200)

    # ------------------------------------------------------------ one frame

    def regions_for(self, width: int, height: int) -> list[tuple[int, int, int, int]]:
        """Each seat zone's padded pixel box: the crops the detector reads."""
        return list(self.tracker.zones_for(width, height).regions)

    def step(self, frame: Frame) -> list[RoundEvent]:
        """Detect, track and advance the round for one frame; return the round events it caused."""
        width, height = frame.size
        regions = self.regions_for(width, height)
        started = time.perf_counter()
        if self.gate is None:
            detections, read = self.detector.detect(frame.image, regions=regions), len(regions)
        else:
            detections, read = self.gate.read(frame.image, regions, self.detector.detect), self.gate.last_read
        self._detect_ms.append((time.perf_counter() - started) * 1000.0)
        self._regions_read.append((read, len(regions)))
        if self.mirror_watch is not None:
            self.mirror_watch.check(frame.image, frame.ts, regions, detections)
        if self.aim_watch is not None:
            self.aim_watch.check(frame.image, frame.ts, cards_on_table=bool(detections))
        return self.process(frame.frame_no, frame.ts, (width, height), detections, frame.image, mono=frame.mono)

    def process(self, frame_no: int, ts: float, size: tuple[int, int], detections: list[Detection],
                image: np.ndarray | None = None, *, mono: float | None = None) -> list[RoundEvent]:
        """Everything after the detector: what a replay of recorded detections runs.

        ``ts`` (wall clock) stamps the round's events and the recording; the tracker measures
        time between frames on ``mono`` (:attr:`Frame.mono`), or on ``ts`` where there is none
        (a recording made before frames carried it replays as it ran).  Both are recorded."""
        detections = normalise_detections(detections)
        clock = ts if mono is None else mono
        hands = self.tracker.update(detections, frame_no, clock, size)
        events = self.machine.observe(hands, frame_no, ts, clock)
        if self.recorder is not None:
            try:
                self.recorder.on_frame(frame_no, ts, size, detections, image, mono=mono)
            except Exception:  # recording must never stop the table
                log.exception("recording frame %s failed", frame_no)
        with self._lock:
            if image is not None:
                self._latest = (Frame(image, ts, frame_no, mono), detections)
            self._step_times.append(time.monotonic())
            self.frames_processed += 1
            self._last_frame_no, self._last_ts = frame_no, ts
        return events

    def _dispatch(self, event: RoundEvent) -> None:
        """Every event, from the camera thread or the kiosk's: record it, then tell the listener."""
        if self.recorder is not None:
            try:
                self.recorder.on_event(event)
            except Exception:  # recording must never stop the table
                log.exception("recording event %s failed", event.kind)
        self.recent_events.append(event)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:
                log.exception("event listener failed on %s", event.kind)

    # ------------------------------------------------------------ background thread

    def start(self) -> "TablePipeline":
        if self.source is None:
            raise RuntimeError("this pipeline has no source; use step() or process()")
        if self._thread is not None:
            return self
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"pipeline:{self.config.table_id}", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._reader is not None:
            self._reader.stop(timeout)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        if self.recorder is not None:
            self.recorder.close()
        if self._camera != "finished":
            self._camera = "stopped"

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a file source to be played to its end; True if it was."""
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _run(self) -> None:
        try:
            if self.source.live:
                self._run_live()
            else:
                self._run_file()
        except Exception as exc:  # the thread must report, not vanish
            log.exception("pipeline stopped")
            self._last_error = f"{type(exc).__name__}: {exc}"

    def _run_live(self) -> None:
        cam = self.config.camera
        self._reader = LatestFrameReader(
            self.source, self._camera_status, initial_backoff_s=cam.reconnect_initial_s,
            max_backoff_s=cam.reconnect_max_s, offline_after_s=cam.offline_after_s, rotate=cam.rotate,
            mirror=cam.mirror, frozen_after_s=cam.frozen_after_s,
        ).start()
        while not self._stop.is_set():
            frame = self._reader.get(timeout=0.5)
            if frame is None:
                if self._reader.finished:
                    self._camera = "finished"
                    return
                continue
            if self._camera != "online" and self._reader.online:
                self._camera = "online"      # not while the reader calls it offline: a frozen picture
            self._safe_step(frame)

    def _run_file(self) -> None:
        from vision.sources import oriented

        try:
            self.source.open()
        except Exception as exc:
            self._camera_status(False, str(exc))
            self._last_error = str(exc)
            return
        self._camera = "online"
        frame_no, wall0, ts0 = 0, time.monotonic(), None
        try:
            while not self._stop.is_set():
                try:
                    image = self.source.read()
                except Exception as exc:  # one unreadable image must not end a replay
                    log.warning("%s: %s", self.source.description, exc)
                    self._last_error = str(exc)
                    continue
                if image is None:
                    self._camera = "finished"
                    return
                cam = self.config.camera
                frame = Frame(oriented(image, cam.rotate, cam.mirror), self.source.timestamp(), frame_no,
                              self.source.monotonic())
                frame_no += 1
                if self.realtime:
                    ts0 = frame.ts if ts0 is None else ts0
                    delay = (frame.ts - ts0) - (time.monotonic() - wall0)
                    if delay > 0 and self._stop.wait(delay):
                        return
                    if delay < -MAX_LAG_S:
                        # Slower than the file plays: skip frames, as a live camera's reader
                        # does, so the file's clock (which stamps the audit records) stays
                        # with the wall clock that stamps the staff's actions beside them.
                        continue
                self._safe_step(frame)
        finally:
            self.source.close()

    def _safe_step(self, frame: Frame) -> None:
        try:
            self.step(frame)
        except Exception as exc:  # a detector failure on one frame is logged, the next frame tried
            message = f"{type(exc).__name__}: {exc}"
            if message != self._last_error:
                if isinstance(exc, NiuniuError):
                    # Said for people already, with its fix (the audit log refused the frame's records
                    # on a full disk: the screen's alarm says the same); its traceback was 20 lines of
                    # journal around one line (QA51 L6).
                    log.error("frame %s failed: %s", frame.frame_no, exc)
                else:
                    log.exception("frame %s failed", frame.frame_no)
            self._last_error = message

    def _camera_status(self, online: bool, reason: str) -> None:
        self._camera = "online" if online else "offline"
        data: dict[str, Any] = {"source": getattr(self.source, "description", "")}
        if self._reader is not None:
            data["reconnects"] = self._reader.reconnects
        self.machine.note_camera(online, reason, **data)

    def _mirroring_changed(self, mirrored: bool, ts: float, odds: float) -> None:
        self.machine.note_camera_mirrored(mirrored, CAMERA_MIRRORED if mirrored else CAMERA_MIRROR_CLEARED, ts,
                                          log_odds=round(odds, 2), checks=self.mirror_watch.checks,
                                          source=getattr(self.source, "description", ""))

    def _aim_changed(self, aim: str, ts: float, check) -> None:
        watch = self.aim_watch
        self.machine.note_camera_aim(aim, watch.warning or CAMERA_MOVE_CLEARED, ts,
                                     shift=None if check.shift is None else round(check.shift, 4),
                                     inliers=check.inliers, since=watch.since,
                                     source=getattr(self.source, "description", ""))

    def camera_warning(self) -> str | None:
        """What the dealer's screen says is wrong with the camera's picture, if anything."""
        warnings = [w.warning for w in (self.mirror_watch, self.aim_watch) if w is not None and w.warning]
        return "; and ".join(warnings) or None

    # ------------------------------------------------------------ views

    def camera_stuck(self) -> str | None:
        """Why the camera's reader is stuck in a call that will not return (None: it is not,
        or this pipeline reads a file, which has no reader); the kiosk restarts on it."""
        return self._reader.stuck() if self._reader is not None else None

    def status(self) -> dict:
        with self._lock:
            times = list(self._step_times)
            fps = (len(times) - 1) / (times[-1] - times[0]) if len(times) >= 2 and times[-1] > times[0] else 0.0
            detect_ms = sum(self._detect_ms) / len(self._detect_ms) if self._detect_ms else None
            reads = list(self._regions_read)
            read = sum(r for r, _ in reads) / len(reads) if reads else None
            reused = sum(n - r for r, n in reads) / len(reads) if reads else None
            return {
                "table_id": self.config.table_id,
                "camera": self._camera,
                "source": getattr(self.source, "description", None),
                "fps": round(fps, 2),
                "detect_ms": None if detect_ms is None else round(detect_ms, 1),
                "motion_gate": self.gate is not None,
                "regions_read": None if read is None else round(read, 2),      # per frame, last 30 frames
                "regions_reused": None if reused is None else round(reused, 2),
                "model": str(getattr(self.detector, "name", type(self.detector).__name__)),
                "frame_no": self._last_frame_no,
                "last_frame_ts": self._last_ts,
                "frames_processed": self.frames_processed,
                "dropped_frames": self._reader.dropped if self._reader is not None else 0,
                "state": str(self.machine.state),
                "round_no": self.machine.round_no,
                "recording": str(self.recorder.current_dir) if self.recorder and self.recorder.current_dir else None,
                "recording_error": self.recorder.error if self.recorder else None,
                # what the round being recorded lost while recording went on (vision.record)
                "recording_warning": self.recorder.warning if self.recorder else None,
                "last_error": self._last_error,
                "camera_warning": self.camera_warning(),
                "camera_aim": {"state": "off"} if self.aim_watch is None else {
                    "state": self.aim_watch.state, "since": self.aim_watch.since, "checks": self.aim_watch.checks,
                    "unchecked": self.aim_watch.unchecked,
                    "shift": None if self.aim_watch.shift is None else round(self.aim_watch.shift, 4)},
            }

    def latest_jpeg(self, draw_boxes: bool = True) -> bytes | None:
        """The newest processed frame as JPEG, with seat zones and card boxes drawn if asked."""
        with self._lock:
            latest = self._latest
            if latest is None:
                return None
            frame, detections = latest
            key = (frame.frame_no, draw_boxes)
            if self._jpeg_cache is not None and self._jpeg_cache[0] == key:
                return self._jpeg_cache[1]
        image = draw_overlay(frame.image, self.config, detections, self.tracker) if draw_boxes else frame.image
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.config.camera.jpeg_quality])
        if not ok:
            return None
        data = buf.tobytes()
        with self._lock:
            self._jpeg_cache = (key, data)
        return data


def _model_sha256(detector) -> str | None:
    """The model files' hash for the recording, or None if the detector cannot say."""
    try:
        value = getattr(detector, "file_sha256", None)
    except Exception:  # an unreadable model file must not stop the table: the name is still recorded
        log.warning("model hash unavailable", exc_info=True)
        return None
    return value if isinstance(value, str) else None


ZONE_COLOUR = (255, 200, 0)      # BGR: the seat zones' outlines and names


def draw_overlay(image: np.ndarray, config: TableConfig, detections: list[Detection],
                 tracker: SeatTracker | None = None) -> np.ndarray:
    """Seat zones (named) and every detection (card and confidence) drawn on a copy: a detection
    in a zone solid green, one outside every zone, which no seat counts, dashed violet and
    labelled "(no seat)" (:func:`vision.overlay_labels.draw_labelled_boxes`), each label clear of
    the others on a fanned hand.  Which zone holds a box is :meth:`vision.table.ZoneMap.seat_of`,
    the tracker's own rule: the live view asks its ``tracker``, and the round page's boxed key
    frames (``kiosk.frame_boxes``), drawn with no tracker, the zones of ``config``."""
    out = image.copy()
    height, width = out.shape[:2]
    zones = tracker.zones_for(width, height) if tracker is not None else \
        ZoneMap(config, width, height) if config.seats else None
    scale = drawing_scale(width, height)
    for seat in config.seats:
        points = np.array([[int(x * width), int(y * height)] for x, y in seat.polygon], dtype=np.int32)
        cv2.polylines(out, [points], True, ZONE_COLOUR, max(1, int(2 * scale)))
        x, y = points[:, 0].min(), points[:, 1].min()
        cv2.putText(out, seat.name, (int(x) + 4, int(y) + int(22 * scale)), cv2.FONT_HERSHEY_SIMPLEX,
                    0.7 * scale, ZONE_COLOUR, max(1, int(2 * scale)), cv2.LINE_AA)
    seated = [zones is None or zones.seat_of(det.box) is not None for det in detections]
    return draw_labelled_boxes(out, detections, seated)
