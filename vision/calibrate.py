"""Marking each seat's zone on the camera image, once per table.

The functions are plain geometry on purpose (layouts, pixel <-> normalised points, a
zones file, drawing), so the kiosk's calibration page can reuse them with clicks from a
browser; only :func:`click_zones` needs an OpenCV window, and it is used only when a
display exists.  Without one, ``niuniu calibrate`` takes ``--players``/``--seats`` (an
even layout: the banker's zone across the top middle, the players side by side along
the bottom, or any ``--grid RxC``) or ``--from-json`` (zones measured elsewhere); over an
existing table file it keeps that file's zones unless one of those (or ``--even``) is given.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from pydantic import ValidationError

from scoring.errors import NiuniuError
from vision.table import (SEAT_NAMES, Point, SeatZone, TableConfig, overlap_problem, table_config_from_dict,
                          to_normalised)


class CalibrationError(NiuniuError):
    """Zones that cannot be made from what was given; the message says what to change."""


def seat_names(players: int | None = None, seats: str | Sequence[str] | None = None) -> list[str]:
    """``banker`` plus the player seats, from a count (``5`` -> banker, 1..5) or a list.

    Every problem names ``--seats``: it is the flag that is wrong, not the table file."""
    if seats is not None:
        given = seats if isinstance(seats, str) else ",".join(str(s) for s in seats)
        names = [str(s).strip() for s in (seats.split(",") if isinstance(seats, str) else seats)]
        if not any(names):
            raise CalibrationError(f"--seats {given!r} names no seat; write them comma separated, like banker,1,2,3")
        if "" in names:
            # "banker,,2" is a slip (a seat left out?), not a way to say "banker,2"
            raise CalibrationError(f"--seats {given!r} has an empty seat name; list the seats comma separated, "
                                   "like banker,1,2, with a name between every two commas")
        for name in names:
            if name not in SEAT_NAMES:
                raise CalibrationError(f"--seats {given!r}: seat {name!r} is not one of {', '.join(SEAT_NAMES)}")
        if len(set(names)) != len(names):
            raise CalibrationError(f"--seats {given!r}: a seat is named twice")
        if not [n for n in names if n != "banker"]:
            raise CalibrationError(f"--seats {given!r}: a table needs at least one player seat besides the banker")
    elif players is not None:
        if not 1 <= players <= 7:
            raise CalibrationError(f"--players {players}: a table has 1 to 7 player seats")
        names = ["banker"] + [str(i) for i in range(1, players + 1)]
    else:
        raise CalibrationError("say which seats to mark: --players N or --seats banker,1,2,...")
    if "banker" not in names:
        names.insert(0, "banker")
    for name in names:
        if name not in SEAT_NAMES:
            raise CalibrationError(f"seat {name!r} is not one of {', '.join(SEAT_NAMES)}")
    if len(set(names)) != len(names):
        raise CalibrationError(f"a seat is named twice in {','.join(names)}")
    return names


def rect(x1: float, y1: float, x2: float, y2: float) -> list[Point]:
    return [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]


def even_layout(names: Sequence[str], margin: float = 0.02) -> dict[str, list[Point]]:
    """Banker across the top middle third; players in equal columns along the bottom half.

    This is the usual camera view of a half-moon table from the dealer's side; the
    zones are a starting point to adjust, not a guess at any particular table.
    """
    players = [n for n in names if n != "banker"]
    zones = {"banker": rect(1 / 3 + margin, margin, 2 / 3 - margin, 0.45 - margin)}
    if players:
        width = 1.0 / len(players)
        for i, name in enumerate(players):
            zones[name] = rect(i * width + margin / 2, 0.5 + margin, (i + 1) * width - margin / 2, 1.0 - margin)
    return {n: _rounded(zones[n]) for n in names}


def grid_layout(names: Sequence[str], rows: int, cols: int, margin: float = 0.02) -> dict[str, list[Point]]:
    """Seats fill an even ``rows`` x ``cols`` grid row by row, in the order given."""
    if rows < 1 or cols < 1:
        raise CalibrationError(f"--grid {rows}x{cols}: rows and columns must be at least 1")
    if rows * cols < len(names):
        raise CalibrationError(f"--grid {rows}x{cols} has {rows * cols} cells for {len(names)} seats; make it larger")
    zones = {}
    for i, name in enumerate(names):
        r, c = divmod(i, cols)
        zones[name] = _rounded(rect(c / cols + margin / 2, r / rows + margin / 2,
                                    (c + 1) / cols - margin / 2, (r + 1) / rows - margin / 2))
    return zones


def parse_grid(text: str) -> tuple[int, int]:
    try:
        rows, cols = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise CalibrationError(f"--grid {text!r}: write rows x columns, like 2x4") from None
    return rows, cols


def zones_from_json(path: str | Path, size: tuple[int, int] | None = None) -> dict[str, list[Point]]:
    """Read ``{"banker": [[x, y], ...], "1": [...]}``, normalised (all values <= 1) or pixels.

    Pixel zones need the image ``size`` (from the source's frame or ``--size``).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CalibrationError(f"zones file {path} does not exist") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise CalibrationError(f"zones file {path} is not readable JSON: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("seats"), list):  # a table file's seats list
        data = {s.get("name"): s.get("polygon") for s in data["seats"] if isinstance(s, dict)}
    if not isinstance(data, dict) or not data:
        raise CalibrationError(f"zones file {path} must map seat names to point lists, like "
                               '{"banker": [[0.3, 0.1], [0.6, 0.1], [0.6, 0.4], [0.3, 0.4]]}')
    zones: dict[str, list[Point]] = {}
    for name, points in data.items():
        try:
            if isinstance(points, (str, bytes)) or any(isinstance(v, (bool, str)) for p in points for v in p):
                raise TypeError
            pts = [(float(p[0]), float(p[1])) for p in points]
            if any(len(p) != 2 for p in points) or not all(math.isfinite(v) for p in pts for v in p):
                raise ValueError
        except (TypeError, ValueError, IndexError, KeyError):
            raise CalibrationError(f"zones file {path}: seat {name!r} must be a list of [x, y] points") from None
        zones[str(name)] = pts
    in_pixels = sorted((name for name, pts in zones.items() if any(v > 1.0 for p in pts for v in p)),
                       key=_seat_order)
    if in_pixels and len(in_pixels) < len(zones):
        # Converting the fractions as pixels would squash those zones into the top-left corner
        # and report "no area", which hides the real slip.
        fractions = sorted((n for n in zones if n not in in_pixels), key=_seat_order)
        raise CalibrationError(f"zones file {path} mixes units: seat {', '.join(in_pixels)} in pixels, seat "
                               f"{', '.join(fractions)} in fractions (0..1) of the image; give every zone in the "
                               "same unit")
    if in_pixels:
        if size is None:
            raise CalibrationError(f"zones file {path} is in pixels; give the image size (--size WxH or --source)")
        zones = {name: _rounded(to_normalised(pts, *size)) for name, pts in zones.items()}
    return zones


def _seat_order(name: str) -> tuple[int, str]:
    return (SEAT_NAMES.index(name) if name in SEAT_NAMES else len(SEAT_NAMES), name)


def check_zones(zones: dict[str, list[Point]], where: str) -> None:
    """The zones alone make a table's seats: known seats, the banker and a player, each a
    polygon inside the picture, none lying over another.  Errors name ``where`` (the zones
    file, the clicks), since that is what to fix, not the table file being written."""
    names = sorted(zones, key=_seat_order)
    for name in names:
        if name not in SEAT_NAMES:
            raise CalibrationError(f"{where}: seat {name!r} is not one of {', '.join(SEAT_NAMES)}")
        try:
            SeatZone.model_validate({"name": name, "polygon": [list(p) for p in zones[name]]})
        except ValidationError as exc:
            problem = exc.errors()[0]
            detail = problem["msg"].removeprefix("Value error, ")
            raise CalibrationError(f"{where}: seat {name}'s zone: {detail}") from None
    if "banker" not in zones:
        raise CalibrationError(f"{where}: there is no zone for the banker; every table needs one")
    if len(zones) < 2:
        raise CalibrationError(f"{where}: there is a zone for the banker only; a table needs at least one "
                               "player seat")
    problem = overlap_problem([SeatZone(name=n, polygon=zones[n]) for n in names])
    if problem:
        raise CalibrationError(f"{where}: {problem}")


def build_config(zones: dict[str, list[Point]], *, table_id: str, rules: str, camera: dict | None = None,
                 source: str = "calibration", **settings: Any) -> TableConfig:
    """A validated table config from zones, with the same errors a table file would give.

    ``settings``: the rest of the table file as it would be written (``currency``,
    ``timezone``, ``thresholds``, ...), which a recalibration keeps from the file it replaces."""
    order = [n for n in SEAT_NAMES if n in zones] + [n for n in zones if n not in SEAT_NAMES]
    data: dict = {"table_id": table_id, "rules": rules, **settings,
                  "seats": [{"name": n, "polygon": [list(p) for p in zones[n]]} for n in order]}
    if camera:
        data["camera"] = camera
    return table_config_from_dict(data, source)


def draw_zones(image: np.ndarray, zones: dict[str, list[Point]] | Sequence[SeatZone],
               active: list[Point] | None = None) -> np.ndarray:
    """The image with every zone outlined and named (and the zone being clicked, in pixels)."""
    out = image.copy()
    height, width = out.shape[:2]
    items = zones.items() if isinstance(zones, dict) else [(z.name, z.polygon) for z in zones]
    for name, polygon in items:
        pts = np.array([[int(x * width), int(y * height)] for x, y in polygon], dtype=np.int32)
        cv2.polylines(out, [pts], True, (0, 220, 255), 2)
        cv2.putText(out, str(name), (int(pts[:, 0].min()) + 5, int(pts[:, 1].min()) + 25),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 220, 255), 2, cv2.LINE_AA)
    if active:
        pts = np.array([[int(x), int(y)] for x, y in active], dtype=np.int32)
        cv2.polylines(out, [pts], False, (0, 0, 255), 2)
        for x, y in active:
            cv2.circle(out, (int(x), int(y)), 4, (0, 0, 255), -1)
    return out


def has_display() -> bool:
    """True where an OpenCV window can open (a desktop session and a GUI-enabled OpenCV)."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) and os.name != "nt":
        return False
    build = cv2.getBuildInformation()
    gui_line = next((ln for ln in build.splitlines() if ln.strip().startswith("GUI:")), "")
    return "NONE" not in gui_line.upper()


def click_zones(image: np.ndarray,  # pragma: no cover - needs a display
                names: Sequence[str]) -> dict[str, list[Point]]:
    """Let the user click each seat's polygon on ``image``; return normalised zones.

    Left click adds a corner; Enter (or n) closes the seat's zone (3 corners or more);
    Backspace (or u) removes the last corner; Esc cancels.
    """
    if not has_display():
        raise CalibrationError("no display for the calibration window; use --players/--seats or --from-json")
    height, width = image.shape[:2]
    window = "niuniu calibrate"
    zones: dict[str, list[Point]] = {}
    current: list[Point] = []

    def on_mouse(event, x, y, _flags, _param):
        if event == cv2.EVENT_LBUTTONDOWN:
            current.append((float(x), float(y)))

    cv2.namedWindow(window, cv2.WINDOW_NORMAL)
    cv2.setMouseCallback(window, on_mouse)
    try:
        for name in names:
            current.clear()
            while True:
                view = draw_zones(image, zones, current)
                cv2.putText(view, f"seat {name}: click corners, Enter to finish, Backspace to undo, Esc to cancel",
                            (10, height - 15), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (255, 255, 255), 2, cv2.LINE_AA)
                cv2.imshow(window, view)
                key = cv2.waitKey(30) & 0xFF
                if key == 27:
                    raise CalibrationError("calibration cancelled; nothing was written")
                if key in (8, 127, ord("u")) and current:
                    current.pop()
                if key in (13, 10, ord("n")):
                    if len(current) < 3:
                        continue
                    zones[name] = _rounded(to_normalised(current, width, height))
                    break
    finally:
        cv2.destroyWindow(window)
    return zones


def _rounded(points: Sequence[Point]) -> list[Point]:
    return [(round(x, 4), round(y, 4)) for x, y in points]
