"""Where frames come from: the Pi camera, a USB/IP camera, a video file or a folder of images.

Two kinds of source behave differently on purpose:

* **live** sources (picamera2, a device index, a URL) run faster or slower than the
  pipeline; the pipeline must always read the *newest* frame, never work through a
  backlog, so :class:`LatestFrameReader` reads them on its own thread into a one-slot
  buffer and drops what the pipeline did not take.  A live camera that raises, returns
  nothing or goes silent is reported offline and reopened with exponential backoff.
* **file** sources (a video, a folder or glob of images) are recordings: every frame is
  read in order and none is dropped, so a replay sees exactly what was filmed.  Their
  timestamps come from the file's own timeline, not the wall clock, so a replay gives
  the same times however fast the machine is.

``picamera2`` is imported only when chosen: it exists only on a Raspberry Pi (from apt's
``python3-picamera2``), and importing it elsewhere would fail.
"""

from __future__ import annotations

import glob as globlib
import logging
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


@dataclass(frozen=True, slots=True)
class Frame:
    """One image as the pipeline sees it.

    ``ts`` is UTC epoch seconds for live sources and the file's timeline (plus the
    source's ``start_ts``) for recordings; ``frame_no`` counts up across reconnects so a
    frame reference in an event is unique for the life of the source.
    """

    image: np.ndarray = field(repr=False)
    ts: float
    frame_no: int

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
        """When the image just read was taken."""
        return time.time()

    def frames(self) -> Iterator[Frame]:
        """All frames of a finite source, in order, numbered from 0.  Opens and closes it."""
        self.open()
        try:
            frame_no = 0
            while True:
                image = self.read()
                if image is None:
                    return
                yield Frame(image, self.timestamp(), frame_no)
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

    def open(self) -> None:
        self.close()
        try:
            from picamera2 import Picamera2  # only on a Pi: apt install python3-picamera2
        except ImportError:
            raise SourceError(
                "picamera2 is not installed; on a Raspberry Pi run `sudo apt install python3-picamera2` "
                "and create the venv with --system-site-packages"
            ) from None
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

    def frames(self) -> Iterator[Frame]:
        """As :meth:`FrameSource.frames`, numbered by place in the folder: a skipped image's
        number is not given to the next one."""
        self.open()
        try:
            while True:
                image = self.read()
                if image is None:
                    return
                yield Frame(image, self.timestamp(), self._count)
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


# ---------------------------------------------------------------- newest-frame reader

StatusCallback = Callable[[bool, str], None]
"""Called with (online, reason) whenever the camera goes offline or comes back."""


class LatestFrameReader:
    """Reads a live source on its own thread and keeps only the newest frame.

    The one-slot buffer is the point: a detector slower than the camera must see the
    table as it is now, not as it was seconds ago.  Failures never escape the thread;
    they become an offline report and a reconnect loop whose delay doubles from
    ``initial_backoff_s`` up to ``max_backoff_s``.  A camera that simply stops sending
    (a hung stream) is caught by :meth:`get`'s ``offline_after_s`` watchdog.
    """

    def __init__(self, source: FrameSource, on_status: StatusCallback | None = None, *,
                 initial_backoff_s: float = 0.5, max_backoff_s: float = 30.0, offline_after_s: float = 3.0,
                 rotate: int = 0, mirror: bool = False, sleep: Callable[[float], None] | None = None) -> None:
        self.source = source
        self.on_status = on_status
        self.initial_backoff_s, self.max_backoff_s = initial_backoff_s, max_backoff_s
        self.offline_after_s = offline_after_s
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
            self._thread.join(timeout)
            self._thread = None

    @property
    def online(self) -> bool:
        return bool(self._online)

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

    # -- producer side

    def _run(self) -> None:
        backoff = self.initial_backoff_s
        while not self._stop.is_set():
            try:
                self.source.open()
                while not self._stop.is_set():
                    image = self.source.read()
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
        image = oriented(image, self.rotate, self.mirror)
        frame = Frame(image, self.source.timestamp(), self._next_no)
        self._next_no += 1
        self.last_frame_wall = time.monotonic()
        with self._cond:
            if self._latest is not None and self._latest.frame_no != self._taken_no:
                self.dropped += 1
            self._latest = frame
            self._cond.notify_all()
        if not self._online:
            self._set_online(True, "frames arriving")

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

    def _safe_close(self) -> None:
        try:
            self.source.close()
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
