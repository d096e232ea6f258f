"""The seat-zone editor: mark each seat's zone on the live camera picture in a browser.

A table's Pi has no display, and ``niuniu calibrate`` without one can only place an even
layout and draw it into a preview file, so zones were fitted by editing numbers in the table
file.  Here the admin drags each zone's corners over the camera's own picture and downloads
the result as a zones file for ``niuniu calibrate --from-json``.

The page changes nothing itself, on purpose: the table file lives in /etc, written by root,
and which cards count to which seat is settled money.  A kiosk account that could move the
zones would let a stolen admin password send cards to another seat; so the page hands over
a file and the command, and the change is made on the console and logged as a changed
table file (``config_changed``) when the kiosk starts again.
"""

from __future__ import annotations

import json

from flask import Blueprint, Response, current_app, jsonify, render_template, request

from kiosk.auth import Role, require
from kiosk.runtime import service
from scoring.errors import NiuniuError
from vision.aim import view_path
from vision.calibrate import build_config
from vision.table import SEAT_NAMES

bp = Blueprint("zones", __name__, url_prefix="/admin/zones")

DEFAULT_TABLE_FILE = "/etc/niuniu/table.yaml"


class ZonesError(ValueError):
    """Edited zones that would not make a table file; the message says which seat and why."""


def _page(zones: dict[str, list[list[float]]], error: str | None = None, status: int = 200):
    config = service().config
    cam = config.camera
    size = (cam.width, cam.height) if cam.width and cam.height else (1280, 720)
    live = service().status()
    return render_template("admin/zones.html", zones=zones, size=size, error=error,
                           has_camera=service().pipeline is not None, table_file=_table_file(),
                           has_view=view_path(_table_file()).is_file(), aim=live.get("camera_aim"),
                           source=cam.source or "picamera2"), status


def _table_file() -> str:
    return current_app.config.get("TABLE_FILE") or DEFAULT_TABLE_FILE


@bp.route("/")
@require(Role.ADMIN)
def editor():
    return _page({seat.name: [list(p) for p in seat.polygon] for seat in service().config.seats})


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
        try:
            kept = json.loads(text)
        except ValueError:
            kept = None
        if not isinstance(kept, dict):
            kept = {seat.name: [list(p) for p in seat.polygon] for seat in service().config.seats}
        return _page(kept, error=str(exc), status=400)
    body = json.dumps(zones, indent=2) + "\n"
    return Response(body, mimetype="application/json",
                    headers={"Content-Disposition": 'attachment; filename="zones.json"', "Cache-Control": "no-store"})


def parse_zones(text: str) -> dict[str, list[list[float]]]:
    """Zones as the editor posts them, checked against this table: its seats, each zone a
    polygon inside the picture; validated the way a table file would be."""
    try:
        data = json.loads(text)
    except ValueError:
        raise ZonesError("the zones did not arrive as JSON; reload the page and mark them again") from None
    config = service().config
    if not isinstance(data, dict) or set(data) != set(config.seat_names):
        raise ZonesError(f"give a zone for each seat of this table ({', '.join(config.seat_names)}), and no other")
    zones: dict[str, list[list[float]]] = {}
    for name in [n for n in SEAT_NAMES if n in data] + [n for n in data if n not in SEAT_NAMES]:
        points = data[name]
        try:
            zones[name] = [[round(float(x), 4), round(float(y), 4)] for x, y in points]
        except (TypeError, ValueError):
            raise ZonesError(f"seat {name}: each corner must be a pair of numbers") from None
    try:
        build_config({n: [tuple(p) for p in pts] for n, pts in zones.items()}, table_id=config.table_id,
                     rules=config.rules, source="the edited zones")
    except NiuniuError as exc:   # the table file's own message: which seat, which corner
        raise ZonesError(str(exc)) from None
    return zones
