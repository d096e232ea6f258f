"""Reading an image file whole, or saying in one line why not.

Photos reach ``niuniu detect`` and ``niuniu evaluate`` from phones, scanners and copies
of copies; frame folders reach the replay and the demo from recordings.  OpenCV decodes a
truncated JPEG without an error, the missing part grey, and the cards there would be lost
without a word, so every image file the project reads goes through :func:`read_image`.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from scoring.errors import NiuniuError


class ImageError(NiuniuError):
    """An image file that cannot be read whole: not an image, empty, truncated or corrupt."""


# What a file's first bytes say it is, for an image the decoder refuses: a PNG cut short
# is damaged, a text file named .jpg is no image at all.
_IMAGE_MAGIC = ((b"\xff\xd8", "JPEG"), (b"\x89PNG", "PNG"), (b"GIF8", "GIF"), (b"BM", "BMP"),
                (b"II*\x00", "TIFF"), (b"MM\x00*", "TIFF"), (b"RIFF", "WebP"))
# libjpeg's warnings for a JPEG it decoded only in part (it fills the rest with grey and
# returns the image): the file ends early, or its data is damaged within.  "extraneous bytes
# before marker" is left out: some cameras write them, and the picture is whole.
_JPEG_DAMAGE = ("premature end", "bad huffman code", "corrupt jpeg data: found marker")


def read_image(path: Path, *, quiet: bool = True) -> np.ndarray:
    """``path`` decoded (BGR, EXIF orientation applied, as ``cv2.imread`` does), or :class:`ImageError`
    with one line that names the file and says what is wrong with it.

    OpenCV decodes a truncated JPEG without error: libjpeg fills what is missing with grey and
    only prints "Premature end of JPEG file" to the process's stderr, naming no file.  The
    cards in the missing part would be silently lost (and, in ``evaluate``, counted as
    misses), so a JPEG whose data stops before its end marker, or that libjpeg warns is cut
    short or damaged, is refused.  The decoders' own messages (libjpeg, libpng, libtiff, OpenCV's
    log) are kept off stderr (``quiet``: the one-shot commands; a kiosk reading a frame folder
    leaves stderr alone, see :class:`native_stderr_captured`): this function's one line says
    it, with the file's name."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImageError(f"{path} cannot be read ({exc.strerror or exc})") from exc
    if not data:
        raise ImageError(f"{path} is empty (0 bytes); re-copy the file")
    kind = next((name for magic, name in _IMAGE_MAGIC if data.startswith(magic)), None)
    if kind == "JPEG" and _jpeg_ends_early(data):       # no need to decode what is cut short
        raise ImageError(f"{path} is truncated or corrupt (its JPEG data ends early); re-copy the file")
    # decoded from the bytes already read (EXIF orientation applied, as imread does), not read again
    buffer = np.frombuffer(data, np.uint8)
    if quiet:
        with native_stderr_captured() as said:
            image = cv2.imdecode(buffer, cv2.IMREAD_COLOR)
    else:      # a running kiosk's threads share descriptor 2: the byte check below still holds
        said, image = [], cv2.imdecode(buffer, cv2.IMREAD_COLOR)
    if image is None and kind == "GIF":
        image = _gif_first_frame(data)      # OpenCV reads GIF only from 4.12; the Pi's stays below
    if image is None:
        if kind is None:
            raise ImageError(f"{path} is not a readable image (JPEG, PNG, BMP, ...)")
        raise ImageError(f"{path} is truncated or corrupt (a {kind} file the decoder cannot read); re-copy the file")
    damage = next((line.strip() for line in said if any(s in line.lower() for s in _JPEG_DAMAGE)), None)
    if kind == "JPEG" and damage:
        raise ImageError(f"{path} is truncated or corrupt (libjpeg: {damage}); re-copy the file")
    return image


def _jpeg_ends_early(data: bytes) -> bool:
    """Whether a JPEG stops before its end-of-image marker (FF D9) after the image data.

    The marker segments before the first scan are walked by their lengths (an EXIF thumbnail
    there holds an end marker of its own); the scan data after it never holds FF D9 except as
    the end marker (a data FF is written FF 00).  Bytes after the end marker (some phones
    append data) are no damage.  A file that is no well-formed JPEG is left to the decoder."""
    i, n = 2, len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return False
        marker = data[i + 1]
        if marker == 0xFF:               # fill byte before a marker
            i += 1
            continue
        if 0xD0 <= marker <= 0xD7 or marker in (0x01, 0xD8):   # markers without a length
            i += 2
            continue
        if marker == 0xD9:
            return False
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if marker == 0xDA:               # start of scan: the image data follows
            return data.find(b"\xff\xd9", i + 2 + length) < 0
        i += 2 + length
    return True                          # it ends among the headers


class native_stderr_captured:
    """A context manager: what native code (libjpeg, libpng, libtiff, OpenCV's log) writes
    to the process's stderr (file descriptor 2) meanwhile, kept off it and handed back as
    lines in the list ``with`` gives, filled on leaving.

    Python's ``sys.stderr`` is untouched; where descriptor 2 cannot be redirected (closed),
    nothing is captured and the messages go where they would have gone.  Descriptor 2 is the
    whole process's: what another thread writes meanwhile is captured too, so this is for
    the one-shot commands' image reads, not for a kiosk's running threads."""

    def __enter__(self) -> list[str]:
        import os
        import sys
        import tempfile

        self.lines: list[str] = []
        self._saved = self._tmp = None
        try:
            sys.stderr.flush()
            self._saved = os.dup(2)
            self._tmp = tempfile.TemporaryFile()
            os.dup2(self._tmp.fileno(), 2)
        except (OSError, ValueError, AttributeError):
            self._restore()
        return self.lines

    def __exit__(self, *exc) -> None:
        self._restore()

    def _restore(self) -> None:
        import os

        if self._saved is not None:
            os.dup2(self._saved, 2)
            os.close(self._saved)
            self._saved = None
        if self._tmp is not None:
            self._tmp.seek(0)
            self.lines += self._tmp.read().decode("utf-8", "replace").splitlines()
            self._tmp.close()
            self._tmp = None


def _gif_first_frame(data: bytes) -> np.ndarray | None:
    """A GIF's first frame as BGR, through Pillow, or None when Pillow cannot read it either."""
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as gif:
            return cv2.cvtColor(np.asarray(gif.convert("RGB")), cv2.COLOR_RGB2BGR)
    except (OSError, ValueError, UnidentifiedImageError):
        return None
