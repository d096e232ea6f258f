"""Where frames come from: the Pi camera, a USB/IP camera, a video file or a folder of images.

Two kinds of source behave differently on purpose:

* **live** sources (picamera2, a device index, a URL) run faster or slower than the
  pipeline; the pipeline must always read the *newest* frame, never work through a
  backlog, so :class:`LatestFrameReader` reads them on its own thread into a one-slot
  buffer and drops what the pipeline did not take.  A live camera that raises, returns
  nothing or goes silent is reported offline and reopened with exponential backoff; one
  that keeps sending the same picture (:class:`FrozenPictureWatch`) is reported offline
  too.  One whose read never returns at all (a driver call stuck in the kernel) cannot be
  reopened from the process stuck in it: the reader says so
  (:meth:`LatestFrameReader.stuck`) and the kiosk restarts (kiosk/server.py).
* **file** sources (a video, a folder or glob of images) are recordings: every frame is
  read in order and none is dropped, so a replay sees exactly what was filmed.  Their
  timestamps come from the file's own timeline, not the wall clock, so a replay gives
  the same times however fast the machine is.

Every frame carries two times: ``ts``, the wall clock, which stamps what is recorded (the
audit log, a recording's times), and ``mono``, a clock that only goes forward, on which
the time *between* frames is measured (how long a card has been unseen).  NTP may step
the wall clock back or forward by hours; measured on it, swept cards would stay "on the
table" for the length of a backward step and covered cards vanish at a forward one.

``picamera2`` is imported only when chosen: it exists only on a Raspberry Pi (from apt's
``python3-picamera2``), and importing it elsewhere would fail.  On a Pi it can also fail to
load beside the venv's numpy (apt built it for another one); that is named as such, with the
fix, by :class:`CameraLibraryError`, not left to look like a camera outage.
"""

from __future__ import annotations

import glob as globlib
import importlib.metadata
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from scoring.errors import NiuniuError
from vision.images import ImageError, read_image
from vision.mirror import mirror_image

log = logging.getLogger(__name__)

VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".mov", ".m4v", ".webm", ".mpg", ".mpeg", ".ts")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".gif")
"""What a folder of images is read for.  Every one that OpenCV reads as a still (a GIF as its
first frame): a folder must not skip, without a word, a file the same command reads when named."""
_URL_SCHEMES = ("rtsp://", "rtsps://", "rtmp://", "http://", "https://", "udp://", "tcp://")


class SourceError(NiuniuError):
    """A frame source that cannot be opened or read; the message names the source."""


class CameraLibraryError(SourceError):
    """The camera's library cannot be loaded at all (not installed, or built for another numpy).

    Not an outage that reconnecting or a restart cures: the message names the cause and the
    fix, and ``niuniu check`` shows it as it is (no "is the kiosk running?" hint)."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One image as the pipeline sees it.

    ``ts`` is UTC epoch seconds for live sources and the file's timeline (plus the
    source's ``start_ts``) for recordings; ``frame_no`` counts up across reconnects so a
    frame reference in an event is unique for the life of the source.

    ``mono`` is when it was taken on a clock that never steps (``time.monotonic()`` for live
    sources, the file's timeline for recordings): durations between frames are measured on
    it, ``ts`` only stamps.  None (a frame made by hand, a recording that predates it):
    ``ts`` serves for both, as it did before.
    """

    image: np.ndarray = field(repr=False)
    ts: float
    frame_no: int
    mono: float | None = None

    @property
    def clock(self) -> float:
        """The time durations between frames are measured on: ``mono``, else ``ts``."""
        return self.ts if self.mono is None else self.mono

    @property
    def size(self) -> tuple[int, int]:
        height, width = self.image.shape[:2]
        return width, height


class FrameSource:
    """A camera or a recording.  ``open`` may be called again after ``close`` (reconnect).

    ``read`` returns the next image, ``None`` at the end of a finite recording, and raises
    :class:`SourceError` (or anything else) when the device fails.
    """

    live: bool = True
    description: str = "source"

    def open(self) -> None:
        raise NotImplementedError

    def read(self) -> np.ndarray | None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def timestamp(self) -> float:
        """When the image just read was taken, on the wall clock (stamps records)."""
        return time.time()

    def monotonic(self) -> float:
        """When the image just read was taken, on a clock NTP cannot step (durations):
        :attr:`Frame.mono`."""
        return time.monotonic()

    def frames(self) -> Iterator[Frame]:
        """All frames of a finite source, in order, numbered from 0.  Opens and closes it."""
        self.open()
        try:
            frame_no = 0
            while True:
                image = self.read()
                if image is None:
                    return
                yield Frame(image, self.timestamp(), frame_no, self.monotonic())
                frame_no += 1
        finally:
            self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.description}>"


def oriented(image: np.ndarray, rotate: int = 0, mirror: bool = False) -> np.ndarray:
    """A camera's frame as the table is seen from above: turned ``rotate`` degrees clockwise,
    then mirrored left-right if the camera saves mirror images (``camera.mirror``)."""
    image = rotate_image(image, rotate)
    return mirror_image(image) if mirror else image


def rotate_image(image: np.ndarray, degrees: int) -> np.ndarray:
    if degrees == 90:
        return cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
    if degrees == 180:
        return cv2.rotate(image, cv2.ROTATE_180)
    if degrees == 270:
        return cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE)
    return image


class OpenCVSource(FrameSource):
    """A USB camera by index, or a network stream by URL, through OpenCV's capture."""

    live = True

    def __init__(self, target: int | str, width: int | None = None, height: int | None = None,
                 fps: float | None = None) -> None:
        self.target = target
        self.width, self.height, self.fps = width, height, fps
        self.description = f"camera {target}" if isinstance(target, int) else f"stream {_redact(str(target))}"
        self._cap: cv2.VideoCapture | None = None

    def open(self) -> None:
        self.close()
        cap = cv2.VideoCapture(self.target)
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"{self.description} cannot be opened; check it is connected and not used by "
                              "another program")
        if isinstance(self.target, int):
            cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # a driver-side backlog would defeat "newest frame"
            if self.width and self.height:
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
            if self.fps:
                cap.set(cv2.CAP_PROP_FPS, self.fps)
        self._cap = cap

    def read(self) -> np.ndarray | None:
        if self._cap is None:
            raise SourceError(f"{self.description} is not open")
        ok, image = self._cap.read()
        if not ok or image is None:
            raise SourceError(f"{self.description} delivered no frame")
        return image

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class Picamera2Source(FrameSource):
    """The Raspberry Pi camera module, through picamera2 (imported only here)."""

    live = True
    description = "picamera2"

    def __init__(self, width: int | None = None, height: int | None = None, fps: float | None = None) -> None:
        self.width, self.height, self.fps = width or 1920, height or 1080, fps
        self._camera = None
        # A failed import is kept: importing again after a half-done import fails differently
        # (a partly initialised module), and the reconnect loop would log a new cause each time.
        self._load_error: str | None = None

    def _load(self):
        """The Picamera2 class, or CameraLibraryError naming why it cannot be loaded and the fix."""
        if self._load_error is None:
            try:
                from picamera2 import Picamera2  # only on a Pi: apt install python3-picamera2
                return Picamera2
            except ModuleNotFoundError as exc:
                if (exc.name or "").split(".")[0] == "numpy":
                    self._load_error = picamera2_load_error(exc)
                else:
                    self._load_error = (
                        f"picamera2 is not installed (no module {exc.name or 'picamera2'}); on a Raspberry Pi run "
                        "`sudo apt install python3-picamera2` and create the venv with --system-site-packages")
            except Exception as exc:  # ValueError, AttributeError, ImportError: a binary mismatch
                self._load_error = picamera2_load_error(exc)
        raise CameraLibraryError(self._load_error)

    def open(self) -> None:
        self.close()
        Picamera2 = self._load()
        try:
            camera = Picamera2()
            controls = {"FrameRate": float(self.fps)} if self.fps else {}
            config = camera.create_video_configuration(
                main={"size": (self.width, self.height), "format": "RGB888"}, controls=controls, buffer_count=2
            )
            camera.configure(config)
            camera.start()
        except Exception as exc:  # the library raises many types; all mean "no camera"
            raise SourceError(f"the Pi camera cannot be started: {exc}") from None
        self._camera = camera

    def read(self) -> np.ndarray | None:
        if self._camera is None:
            raise SourceError("the Pi camera is not open")
        # picamera2's "RGB888" is laid out B, G, R in memory: already OpenCV's order.
        return self._camera.capture_array("main")

    def close(self) -> None:
        if self._camera is not None:
            try:
                self._camera.stop()
                self._camera.close()
            except Exception:  # closing a failed camera must not hide the original failure
                log.debug("picamera2 close failed", exc_info=True)
            self._camera = None


def picamera2_load_error(exc: BaseException) -> str:
    """One line for a picamera2 that is installed but will not import: the cause, the numpy
    versions involved and the fix.

    apt's picamera2 stack (simplejpeg, the libcamera bindings) is compiled against Debian's
    numpy; a venv made with --system-site-packages that installs its own numpy 2 shadows it,
    and the compiled parts then fail with "numpy.dtype size changed" (ValueError),
    "_ARRAY_API not found" (AttributeError) or "numpy.core.multiarray failed to import"
    (ImportError).  Any of them would otherwise read as a camera outage that never ends."""
    cause = " ".join(f"{type(exc).__name__}: {exc}".split())
    if len(cause) > 200:
        cause = cause[:197] + "..."
    loaded, others = _numpy_installs()
    if others:
        built_for = ", ".join(f"numpy {version} ({where})" for version, where in others)
        numpy_line = f"this Python loads numpy {loaded}, apt's picamera2 stack was built for {built_for}"
    else:
        numpy_line = f"this Python loads numpy {loaded}, likely not the numpy apt's picamera2 stack was built for"
    return (f"picamera2 cannot be loaded ({cause}): {numpy_line}. Fix: reinstall the project with its pi extra, "
            "which pins a numpy apt's picamera2 can load (numpy<2): `sudo deploy/install.sh` on the table device, "
            f"or `{sys.executable} -m pip install -e '.[pi]'` in the checkout")


def _numpy_installs() -> tuple[str, list[tuple[str, str]]]:
    """The numpy version loaded here, and (version, folder) of every other numpy on sys.path
    (apt's, in /usr/lib/python3/dist-packages, beside the venv's); never raises."""
    others: dict[str, str] = {}
    try:
        here = Path(np.__file__).resolve().parent.parent
        for dist in importlib.metadata.distributions(name="numpy"):
            where = Path(str(dist.locate_file(""))).resolve()
            if where != here and dist.version:
                others.setdefault(dist.version, str(where))
    except Exception:  # a message about a broken install must not break in turn
        log.debug("looking for numpy installations failed", exc_info=True)
    return np.__version__, sorted(others.items())


class VideoFileSource(FrameSource):
    """A video file, read frame by frame; times follow the file's own frame rate."""

    live = False

    def __init__(self, path: str | Path, start_ts: float = 0.0, fps: float | None = None, loop: bool = False) -> None:
        self.path = Path(path)
        self.description = f"video {self.path}"
        self.start_ts = start_ts
        self.fps_override = fps
        self.loop = loop
        self.fps = fps or 10.0
        self._cap: cv2.VideoCapture | None = None
        self._index = -1
        self._offset = 0  # frames of earlier loops, so time keeps going forward

    def open(self) -> None:
        self.close()
        if not self.path.is_file():
            raise SourceError(f"video {self.path} does not exist")
        cap = cv2.VideoCapture(str(self.path))
        if not cap.isOpened():
            cap.release()
            raise SourceError(f"video {self.path} cannot be decoded; is it a video file OpenCV can read?")
        file_fps = cap.get(cv2.CAP_PROP_FPS)
        self.fps = self.fps_override or (file_fps if 0 < file_fps < 1000 else 10.0)
        self._cap, self._index = cap, -1

    def read(self) -> np.ndarray | None:
        if self._cap is None:
            raise SourceError(f"{self.description} is not open")
        ok, image = self._cap.read()
        if not ok:
            if self.loop and self._index >= 0:
                self._offset += self._index + 1
                self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
                self._index = -1
                ok, image = self._cap.read()
            if not ok:
                return None
        self._index += 1
        return image

    def timestamp(self) -> float:
        return self.start_ts + (self._offset + self._index) / self.fps

    def monotonic(self) -> float:
        """The file's timeline: it only goes forward, and a replay gets the same durations."""
        return self.timestamp()

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class ImageFilesSource(FrameSource):
    """A folder or glob of still images, in name order, at a fixed frame rate.

    ``skip_unreadable``: an image that cannot be read is skipped as a camera's dropped frame
    (its time and frame number pass, so later frames keep their place on the timeline) and
    listed in ``skipped`` as (path, why), instead of ending the source: one corrupt file must
    not throw away every round read before it (a replay).  Otherwise it raises SourceError."""

    live = False

    def __init__(self, paths: list[Path], description: str, start_ts: float = 0.0, fps: float = 10.0,
                 loop: bool = False, skip_unreadable: bool = False) -> None:
        if not paths:
            raise SourceError(f"{description} holds no images ({', '.join(IMAGE_SUFFIXES)})")
        self.paths = paths
        self.description = description
        self.start_ts, self.fps, self.loop = start_ts, fps, loop
        self.skip_unreadable = skip_unreadable
        self.skipped: list[tuple[Path, str]] = []
        self._position = -1
        self._count = -1

    @classmethod
    def from_folder(cls, folder: str | Path, **kwargs) -> "ImageFilesSource":
        folder = Path(folder)
        paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
        return cls(paths, f"frame folder {folder}", **kwargs)

    @classmethod
    def from_glob(cls, pattern: str, **kwargs) -> "ImageFilesSource":
        paths = sorted(Path(p) for p in globlib.glob(pattern) if Path(p).suffix.lower() in IMAGE_SUFFIXES)
        return cls(paths, f"images {pattern}", **kwargs)

    def open(self) -> None:
        self._position, self._count = -1, -1
        self.skipped = []

    def read(self) -> np.ndarray | None:
        unreadable_in_a_row = 0
        while True:
            self._position += 1
            if self._position >= len(self.paths):
                if not self.loop or unreadable_in_a_row >= len(self.paths):
                    return None
                self._position = 0
            path = self.paths[self._position]
            self._count += 1
            try:
                return read_image(path, quiet=False)
            except ImageError as exc:    # truncated too: read half grey, its cards would be lost
                why = f"frame {exc}"
            if not self.skip_unreadable:
                raise SourceError(why)
            self.skipped.append((path, why))
            unreadable_in_a_row += 1

    def timestamp(self) -> float:
        return self.start_ts + self._count / self.fps

    def monotonic(self) -> float:
        """The folder's timeline: it only goes forward, and a replay gets the same durations."""
        return self.timestamp()

    def frames(self) -> Iterator[Frame]:
        """As :meth:`FrameSource.frames`, numbered by place in the folder: a skipped image's
        number is not given to the next one."""
        self.open()
        try:
            while True:
                image = self.read()
                if image is None:
                    return
                yield Frame(image, self.timestamp(), self._count, self.monotonic())
        finally:
            self.close()


def open_source(spec: str, *, width: int | None = None, height: int | None = None, fps: float | None = None,
                start_ts: float | None = None, loop: bool = False) -> FrameSource:
    """Choose the source a ``--source`` value names.

    ``picamera2``; a device index (``0``); a URL; a video file; an image folder; a glob
    (``frames/*.jpg``).  File sources time their frames from ``start_ts`` (default: now).
    Nothing is opened yet: the caller (or :class:`LatestFrameReader`) opens it.
    """
    text = str(spec).strip()
    if not text:
        raise SourceError("no source given; use picamera2, a camera index like 0, a URL, a video file or an "
                          "image folder")
    file_ts = time.time() if start_ts is None else start_ts
    if text.lower() == "picamera2":
        return Picamera2Source(width, height, fps)
    if text.isdigit():
        return OpenCVSource(int(text), width, height, fps)
    if text.lower().startswith(_URL_SCHEMES):
        return OpenCVSource(text, width, height, fps)
    path = Path(text)
    if path.is_dir():
        return ImageFilesSource.from_folder(path, start_ts=file_ts, fps=fps or 10.0, loop=loop)
    if path.is_file():
        if path.suffix.lower() in IMAGE_SUFFIXES:
            return ImageFilesSource([path], f"image {path}", start_ts=file_ts, fps=fps or 10.0, loop=loop)
        return VideoFileSource(path, start_ts=file_ts, fps=fps, loop=loop)
    if any(ch in text for ch in "*?["):
        return ImageFilesSource.from_glob(text, start_ts=file_ts, fps=fps or 10.0, loop=loop)
    raise SourceError(
        f"source {text!r} is not picamera2, a camera index, a URL, an existing video file, folder or image glob"
    )


# ---------------------------------------------------------------- frozen picture

FROZEN_SAMPLES = (90, 160)
"""Rows and columns of single pixels a frame is compared on (every channel of each).  Single
pixels, not a downscaled picture: averaging would smooth away the sensor noise that tells a
live picture of a still table from a repeated one."""
FROZEN_CHANGED_SHARE = 0.002
"""A frame is "the same picture" when fewer than this share of its samples differ at all from
the first frame of the run.  A repeated buffer differs in none; a camera that burns a clock
into a frozen picture differs in a few (its digits are well under 0.1 % of a picture).  A live
camera over a still, empty table differs in far more: sensor noise reaches the samples through
any JPEG or H.264 quality a table camera streams at (the demo's frames, JPEG quality 64: 20-30 %
of samples from one frame to the next), and a stream's key frames re-encode all of it every
few seconds."""
BLANK_RANGE = 8
"""A picture whose samples all lie within this many grey levels shows nothing (a covered lens,
a black or grey screen from a broken stream): a repeated one is named as such."""
CAMERA_FROZEN = ("the camera has sent the same picture for {seconds:g} s: it is frozen (a stuck stream or camera "
                 "driver), so cards dealt now are not seen; check the camera's cable or stream, or restart the "
                 "camera")
CAMERA_BLANK = ("the camera has sent the same blank picture for {seconds:g} s: it is covered, or frozen (a stuck "
                "stream or camera driver), so cards dealt now are not seen; uncover it, check its cable or stream, "
                "or restart the camera")
CAMERA_UNFROZEN = "the camera's picture changes again"


class FrozenPictureWatch:
    """Is a live camera sending the same picture over and over?

    A stream that hangs on its last picture (an RTSP camera whose encoder stalled, a driver
    that returns its last buffer) keeps delivering frames at full rate, so "no frame for
    ``offline_after_s``" never fires; its picture still matches the calibration view, so
    the aim watch is content too; and the round simply stops changing while the dealer
    deals on.  :meth:`see` compares each frame's samples (``FROZEN_SAMPLES``) with the first
    frame of the current run of same pictures; once the run has lasted ``after_s`` on the
    frames' monotonic clock (:attr:`Frame.mono`), the camera is ``frozen`` and
    :attr:`reason` says so; the first frame that differs ends it.

    Only live cameras are watched (:class:`LatestFrameReader`): a recording or a frame
    folder may repeat a picture (a paused demo, a file's last frame, a video encoder's
    duplicated frames) and is played as it was filmed."""

    def __init__(self, after_s: float) -> None:
        self.after_s = after_s
        self.frozen = False
        self.reason: str | None = None       # set while frozen
        self._first: np.ndarray | None = None
        self._since: float | None = None

    def see(self, image: np.ndarray, mono: float) -> bool:
        """Take one frame (taken at ``mono``); return whether the camera is frozen now."""
        rows, cols = FROZEN_SAMPLES
        height, width = image.shape[:2]
        sample = np.ascontiguousarray(image[:: max(1, height // rows), :: max(1, width // cols)])
        first = self._first
        same = (first is not None and first.shape == sample.shape
                and np.count_nonzero(first != sample) < FROZEN_CHANGED_SHARE * sample.size)
        if not same or self._since is None or mono < self._since:
            self._first, self._since = sample, mono
            self.frozen, self.reason = False, None
        elif not self.frozen and mono - self._since >= self.after_s:
            blank = int(sample.max()) - int(sample.min()) <= BLANK_RANGE
            self.frozen = True
            self.reason = (CAMERA_BLANK if blank else CAMERA_FROZEN).format(seconds=round(self.after_s, 1))
        return self.frozen


# ---------------------------------------------------------------- newest-frame reader

StatusCallback = Callable[[bool, str], None]
"""Called with (online, reason) whenever the camera goes offline or comes back."""

STUCK_MIN_S = 60.0
"""A camera call (open, read, close) that has not returned in this long is stuck, whatever
``offline_after_s`` says.  Above OpenCV's own 30 s open and read timeouts for network
streams, so a stream those end is reopened in place; and it spaces the kiosk's restarts for a
camera that hangs every time more than a minute apart, so systemd's start limit (10 in 600 s)
is never reached and the kiosk keeps trying."""
STUCK_FACTOR = 10.0
"""... and at least this many times ``offline_after_s``: a camera set to be called offline only
after a long silence (a slow frame rate) is given as much more before it is called stuck."""


class LatestFrameReader:
    """Reads a live source on its own thread and keeps only the newest frame.

    The one-slot buffer is the point: a detector slower than the camera must see the
    table as it is now, not as it was seconds ago.  Failures never escape the thread;
    they become an offline report and a reconnect loop whose delay doubles from
    ``initial_backoff_s`` up to ``max_backoff_s``.  A camera that simply stops sending
    (a hung stream) is caught by :meth:`get`'s ``offline_after_s`` watchdog; one that keeps
    sending the same picture (a stalled encoder, a driver repeating its last buffer) by a
    :class:`FrozenPictureWatch`: reported offline with its reason after ``frozen_after_s``
    (0: not watched), online again at the first picture that differs.  Its frames are still
    passed on, as the camera sends them.

    A call into the source that never returns (picamera2's capture after a CSI frontend
    timeout or a pulled cable, a stream read with no timeout) would leave the table dark
    for good: no exception, so no reconnect.  It cannot be undone here either: the thread
    cannot be interrupted, the camera it holds cannot be opened a second time (libcamera
    lets one Picamera2 own a camera) and closing it under a running call is unsafe.  So
    the reader only says so: :meth:`stuck` names the call once it has run longer than
    ``stuck_after_s`` (default: ``STUCK_FACTOR`` times ``offline_after_s``, at least
    ``STUCK_MIN_S``), and the kiosk restarts the process, which frees the camera.
    """

    def __init__(self, source: FrameSource, on_status: StatusCallback | None = None, *,
                 initial_backoff_s: float = 0.5, max_backoff_s: float = 30.0, offline_after_s: float = 3.0,
                 rotate: int = 0, mirror: bool = False, sleep: Callable[[float], None] | None = None,
                 stuck_after_s: float | None = None, frozen_after_s: float = 10.0) -> None:
        self.source = source
        self.frozen_watch = FrozenPictureWatch(frozen_after_s) if frozen_after_s > 0 else None
        self.on_status = on_status
        self.initial_backoff_s, self.max_backoff_s = initial_backoff_s, max_backoff_s
        self.offline_after_s = offline_after_s
        self.stuck_after_s = (stuck_after_s if stuck_after_s is not None
                              else max(STUCK_MIN_S, STUCK_FACTOR * offline_after_s))
        self._call: tuple[str, float] | None = None  # (open/read/close, monotonic start) while inside the source
        self._stuck_logged = False
        self.rotate, self.mirror = rotate, mirror
        self._stop = threading.Event()
        self._sleep = sleep or self._stop.wait
        self._cond = threading.Condition()
        self._latest: Frame | None = None
        self._taken_no = -1
        self._next_no = 0
        self._online: bool | None = None
        self._thread: threading.Thread | None = None
        self.dropped = 0
        self.reconnects = 0
        self.last_error: str | None = None
        self.last_frame_wall: float | None = None
        self.finished = False

    # -- lifecycle

    def start(self) -> "LatestFrameReader":
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"frames:{self.source.description}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            # A thread stuck in the source will not notice: waiting for it would only delay
            # the restart that frees the camera.  It is a daemon, and leaves when its call does.
            self._thread.join(0 if self.stuck() else timeout)
            self._thread = None

    @property
    def online(self) -> bool:
        return bool(self._online)

    @property
    def frozen(self) -> bool:
        """Is the camera sending the same picture over and over (reported offline)?"""
        return self.frozen_watch is not None and self.frozen_watch.frozen

    def stuck(self) -> str | None:
        """Why the reader cannot recover by itself, or None: the source call it has been in
        for longer than ``stuck_after_s``.  Logged once, as the cause of what follows."""
        call = self._call
        if call is None or self._thread is None:
            return None
        what, since = call
        if time.monotonic() - since <= self.stuck_after_s:
            return None
        reason = (f"{self.source.description}: {what}() has not returned in {self.stuck_after_s:g} s "
                  "(a stuck camera driver or stream)")
        with self._cond:   # asked from the pipeline's and the heartbeat's threads: log it once
            first, self._stuck_logged = not self._stuck_logged, True
        if first:
            log.error("%s; it cannot be reopened while the call is stuck: the kiosk must be restarted", reason)
        return reason

    # -- consumer side

    def get(self, timeout: float = 1.0) -> Frame | None:
        """The newest frame not yet taken, waiting up to ``timeout``; ``None`` if none came."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while (self._latest is None or self._latest.frame_no == self._taken_no) and not self._stop.is_set():
                if self.finished:
                    return None
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._check_silence()
                    return None
                self._cond.wait(min(remaining, 0.25))
            frame = self._latest
            if frame is None or frame.frame_no == self._taken_no:
                return None
            self._taken_no = frame.frame_no
            return frame

    def _check_silence(self) -> None:
        last = self.last_frame_wall
        if self._online and last is not None and time.monotonic() - last > self.offline_after_s:
            self._set_online(False, f"no frame for {self.offline_after_s:g} s")
        self.stuck()  # logs the cause once, with or without systemd to act on it

    # -- producer side

    def _run(self) -> None:
        backoff = self.initial_backoff_s
        while not self._stop.is_set():
            try:
                self._calling("open", self.source.open)
                while not self._stop.is_set():
                    image = self._calling("read", self.source.read)
                    if image is None:  # a finite source ended: nothing to reconnect to
                        self.finished = True
                        with self._cond:
                            self._cond.notify_all()
                        return
                    self._publish(image)
                    backoff = self.initial_backoff_s
            except Exception as exc:  # any failure of a camera is an outage, never a crash
                self.last_error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, NiuniuError) else str(exc)
                log.warning("%s failed: %s", self.source.description, self.last_error)
                self._safe_close()
                self._set_online(False, self.last_error)
                if self._stop.is_set():
                    break
                self._sleep(backoff)
                backoff = min(backoff * 2, self.max_backoff_s)
                self.reconnects += 1
        self._safe_close()

    def _publish(self, image: np.ndarray) -> None:
        ts, mono = self.source.timestamp(), self.source.monotonic()
        # The camera's status is settled before its frame is offered, so whoever takes the
        # frame finds the status that goes with it (a frozen camera's frames are offline).
        watch = self.frozen_watch
        was_frozen = watch is not None and watch.frozen
        if watch is not None and watch.see(image, mono):
            self._set_online(False, watch.reason or "frozen")
        elif not self._online:
            self._set_online(True, CAMERA_UNFROZEN if was_frozen else "frames arriving")
        image = oriented(image, self.rotate, self.mirror)
        frame = Frame(image, ts, self._next_no, mono)
        self._next_no += 1
        self.last_frame_wall = time.monotonic()
        with self._cond:
            if self._latest is not None and self._latest.frame_no != self._taken_no:
                self.dropped += 1
            self._latest = frame
            self._cond.notify_all()

    def _set_online(self, online: bool, reason: str) -> None:
        with self._cond:
            if self._online == online:
                return
            first = self._online is None
            self._online = online
        if first and online:
            return  # the first frame is not a recovery
        if self.on_status is not None:
            try:
                self.on_status(online, reason)
            except Exception:  # a broken listener must not stop the camera
                log.exception("camera status listener failed")

    def _calling(self, what: str, call: Callable[[], object]):
        """Run one source call, noting when it began, so :meth:`stuck` can tell one that never returns."""
        self._call = (what, time.monotonic())
        try:
            return call()
        finally:
            self._call = None

    def _safe_close(self) -> None:
        try:
            self._calling("close", self.source.close)
        except Exception:
            log.debug("closing %s failed", self.source.description, exc_info=True)


def _redact(url: str) -> str:
    """Hide a password in ``rtsp://user:pass@host`` before it reaches a log or a screen."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}"
    return url
