"""The seat-zone editor: mark each seat's zone on the live camera picture in a browser.

A table's Pi has no display, and ``niuniu calibrate`` without one can only keep the zones
it had or place an even layout, and draw them into a preview file, so zones were fitted by
editing numbers in the table file.  Here the admin drags each zone's corners over the camera's own picture and downloads
the result as a zones file for ``niuniu calibrate --from-json``.

The page changes nothing itself, on purpose: the table file lives in /etc, written by root,
and which cards count to which seat is settled money.  A kiosk account that could move the
zones would let a stolen admin password send cards to another seat; so the page hands over
a file and the command, and the change is made on the console and logged as a changed
table file (``config_changed``) when the kiosk starts again.
"""

from __future__ import annotations

import json
import math

from flask import Blueprint, Response, current_app, jsonify, render_template, request

from kiosk.auth import Role, require
from kiosk.runtime import service
from scoring.errors import NiuniuError
from vision.aim import view_path
from vision.calibrate import build_config, check_zones
from vision.table import SEAT_NAMES

bp = Blueprint("zones", __name__, url_prefix="/admin/zones")

DEFAULT_TABLE_FILE = "/etc/niuniu/table.yaml"


class ZonesError(ValueError):
    """Edited zones that would not make a table file; the message says which seat and why."""


def _table_zones() -> dict[str, list[list[float]]]:
    return {seat.name: [list(p) for p in seat.polygon] for seat in service().config.seats}


def _page(zones: dict[str, list[list[float]]], error: str | None = None, status: int = 200):
    """The editor on ``zones`` (the admin's own after a refused download); "Undo my changes"
    always goes back to the table's zones, never to the refused ones."""
    config = service().config
    cam = config.camera
    size = (cam.width, cam.height) if cam.width and cam.height else (1280, 720)
    live = service().status()
    has_camera = service().pipeline is not None
    camera = live.get("camera") if has_camera else None
    return render_template("admin/zones.html", zones=zones, table_zones=_table_zones(), size=size, error=error,
                           has_camera=has_camera, camera=camera, camera_reason=live.get("camera_reason") or "",
                           table_file=_table_file(), has_view=view_path(_table_file()).is_file(),
                           aim=live.get("camera_aim"), source=cam.source or "picamera2"), status


def _table_file() -> str:
    return current_app.config.get("TABLE_FILE") or DEFAULT_TABLE_FILE


@bp.route("/")
@require(Role.ADMIN)
def editor():
    return _page(_table_zones())


@bp.route("/frame.jpg")
@require(Role.ADMIN)
def frame() -> Response:
    """The camera's newest picture as the table reads it, without boxes: what zones are marked on."""
    pipeline = service().pipeline
    jpeg = pipeline.latest_jpeg(draw_boxes=False) if pipeline is not None else None
    if not jpeg:
        return jsonify(error="no camera frame yet"), 404
    return Response(jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@bp.route("/view.jpg")
@require(Role.ADMIN)
def view() -> Response:
    """The picture the zones were marked on: laid over the live one, it shows the technician
    which way to turn a camera that moved back to where it was."""
    path = view_path(_table_file())
    try:
        data = path.read_bytes()
    except OSError:
        return jsonify(error=f"no calibration picture at {path}"), 404
    return Response(data, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@bp.route("/zones.json", methods=("POST",))
@require(Role.ADMIN)
def download():
    """The edited zones as a file for ``niuniu calibrate --from-json``, once they make a table."""
    text = request.form.get("zones", "")
    try:
        zones = parse_zones(text)
    except ZonesError as exc:
        return _page(_kept(text), error=str(exc), status=400)
    body = json.dumps(zones, indent=2) + "\n"
    return Response(body, mimetype="application/json",
                    headers={"Content-Disposition": 'attachment; filename="zones.json"', "Cache-Control": "no-store"})


def _corners(points) -> list[list[float]] | None:
    """A zone's corners as posted, or None unless it is a list of [x, y] pairs of finite
    numbers (true/false is no number here, as in a table file)."""
    if not isinstance(points, list):
        return None
    corners = []
    for point in points:
        if not (isinstance(point, list) and len(point) == 2
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                        for v in point)):
            return None
        corners.append([float(point[0]), float(point[1])])
    return corners


def _kept(text: str) -> dict[str, list[list[float]]]:
    """What a refused download puts back in the editor: the admin's zones where they can be
    drawn (even off the picture, to be dragged back), the table's for any seat that cannot
    (a missing seat, a zone that is not a list of corners)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    kept = _table_zones()
    if isinstance(data, dict):
        for name in kept:
            corners = _corners(data.get(name))
            if corners:
                kept[name] = corners
    return kept


def _side(p, q, r) -> int:
    """Which side of the line p->q the point r is on: 1 left, -1 right, 0 on it."""
    value = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return 0 if abs(value) < 1e-12 else (1 if value > 0 else -1)


def crossing(polygon: list[list[float]]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The first two sides of the zone's outline that cross, each as the indexes of its two
    corners, or None.  A zone whose outline crosses itself (a corner dragged past its
    neighbour) leaves the parts between the crossing sides out: a card dealt there counts
    to no seat.  Two corners dragged onto one spot (a triangle made of four corners) is no
    crossing."""
    corners = [p for i, p in enumerate(polygon) if p != polygon[i - 1]] or polygon[:1]
    index = [i for i, p in enumerate(polygon) if p != polygon[i - 1]] or [0]
    count = len(corners)
    for i in range(count):
        a, b = corners[i], corners[(i + 1) % count]
        for j in range(i + 2, count):
            if i == 0 and j == count - 1:
                continue   # the last side and the first share corner 0
            c, d = corners[j], corners[(j + 1) % count]
            if _side(a, b, c) * _side(a, b, d) < 0 and _side(c, d, a) * _side(c, d, b) < 0:
                return ((index[i], index[(i + 1) % count]), (index[j], index[(j + 1) % count]))
    return None


def parse_zones(text: str) -> dict[str, list[list[float]]]:
    """Zones as the editor posts them, checked against this table: its seats, each zone a
    polygon inside the picture whose outline does not cross itself, no two lying over each
    other; validated the way a table file would be."""
    try:
        data = json.loads(text)
    except ValueError:
        raise ZonesError("the zones did not arrive as JSON; reload the page and mark them again") from None
    config = service().config
    if not isinstance(data, dict) or set(data) != set(config.seat_names):
        raise ZonesError(f"give a zone for each seat of this table ({', '.join(config.seat_names)}), and no other")
    zones: dict[str, list[list[float]]] = {}
    for name in [n for n in SEAT_NAMES if n in data] + [n for n in data if n not in SEAT_NAMES]:
        corners = _corners(data[name])
        if corners is None:
            raise ZonesError(f"seat {name}: each corner must be a pair of numbers")
        zones[name] = [[round(x, 4), round(y, 4)] for x, y in corners]
    for name, corners in zones.items():
        sides = crossing(corners)
        if sides:
            (a, b), (c, d) = ((i + 1, j + 1) for i, j in sides)   # corners counted from 1
            label = "the banker's zone" if name == "banker" else f"seat {name}'s zone"
            raise ZonesError(f"the edited zones: {label} crosses itself (the side from corner {a} to {b} "
                             f"meets the side from corner {c} to {d}), so part of it would count to no "
                             "seat; drag the corners so that they go round the zone in order")
    try:   # the calibration's own check: its messages name the seat, not a place in a table file
        check_zones({n: [tuple(p) for p in pts] for n, pts in zones.items()}, "the edited zones")
    except NiuniuError as exc:
        raise ZonesError(str(exc)) from None
    try:
        build_config({n: [tuple(p) for p in pts] for n, pts in zones.items()}, table_id=config.table_id,
                     rules=config.rules, source="the edited zones")
    except NiuniuError as exc:   # anything else a table file refuses
        raise ZonesError(str(exc)) from None
    return zones
