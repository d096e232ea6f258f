"""Live feeds: the screen state by server-sent events, the camera by MJPEG.

Server-sent events, not websockets: one-way is all the screen needs, the browser
reconnects by itself (sending ``Last-Event-ID``), and it runs on the plain threaded
WSGI server with no extra dependency.  Every state has a version; a browser gets every
version in order (or, if it fell far behind, the newest), so nothing a dealer must see
is skipped.  A status event (camera, model, FPS) follows every second, which doubles as
the heartbeat that lets the page show "connection lost" when it stops.
"""

from __future__ import annotations

import json
import time

from flask import Blueprint, Response, current_app, g, jsonify, request, session

from kiosk import db
from kiosk.auth import Role, idle_left, passive, require
from kiosk.runtime import service

bp = Blueprint("live", __name__, url_prefix="/live")

VIEW_ROLES = (Role.DEALER, Role.SUPERVISOR, Role.SURVEILLANCE)


ACCOUNT_CHECK_S = 1.0
"""How often an open stream checks that its account may still watch."""


def _account_check():
    """A check, for a stream's own thread, that the account which opened it may still watch:
    not disabled, its sessions not ended (an admin's password reset or Disable), its role
    still one that views.  A stream outlives the request that checked the session, so
    without this a camera left open would go on showing the table to an account shut out
    hours ago."""
    data_dir = current_app.config["DATA_DIR"]
    uid, gen, sid = g.user["id"], session.get("gen", 0), session.get("sid")
    state = {"conn": None, "at": time.monotonic(), "ok": True}

    def allowed() -> bool:
        now = time.monotonic()
        if not state["ok"] or now - state["at"] < ACCOUNT_CHECK_S:
            return state["ok"]
        state["at"] = now
        try:
            if state["conn"] is None:
                state["conn"] = db.connect(data_dir)
            row = state["conn"].execute("SELECT role, active, session_gen FROM users WHERE id = ?",
                                        (uid,)).fetchone()
            # a session logged out (or timed out) since, this one or a copy of its cookie
            ended = sid is not None and state["conn"].execute(
                "SELECT 1 FROM sessions WHERE id = ? AND user_id = ?", (sid, uid)).fetchone() is None
        except Exception:   # the accounts cannot be read: stop rather than show the table unchecked
            row, ended = None, True
        state["ok"] = bool(row and row["active"] and row["session_gen"] == gen and row["role"] in VIEW_ROLES
                           and not ended)
        return state["ok"]

    def close() -> None:
        if state["conn"] is not None:
            state["conn"].close()
            state["conn"] = None

    return allowed, close


def _since(run: str, last_event_id: str | None, since: str | None, since_run: str | None) -> int:
    """The version a reconnecting screen has drawn, in this kiosk process's count: 0 (send the
    latest state now) where it was counted by another process (a restart), named by the
    event id ``run:version`` or by ``?since=&run=``; a bare number is taken as this run's
    (a page from before runs were named)."""
    text = last_event_id or since or "0"
    named, _, number = text.rpartition(":")
    named = named or (since_run if not last_event_id else None)
    try:
        version = int(number)
    except ValueError:
        return 0
    return version if named in (None, "", run) else 0


def _sse(event: str, data: str, event_id: int | str | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {data}\n\n"


@bp.route("/events")
@require(*VIEW_ROLES)
@passive
def events() -> Response:
    svc = service()
    keepalive = float(current_app.config["SSE_KEEPALIVE_S"])
    max_s = current_app.config["SSE_MAX_S"]
    # The stream ends when the session would time out; the browser reconnects, and a
    # session that really expired is then refused, so an idle screen does not stay live.
    # (measured as the timeout itself is, step-proof: kiosk.auth.AuthClock)
    left = idle_left()
    max_s = max(1.0, left) if max_s is None else min(max_s, max(1.0, left))
    version = _since(svc.run, request.headers.get("Last-Event-ID"), request.args.get("since"),
                     request.args.get("run"))

    allowed, close = _account_check()

    def stream():
        nonlocal version
        started = time.monotonic()
        try:
            yield "retry: 1000\n\n"
            last_status = 0.0
            while allowed():
                for v, text in svc.updates_since(version, timeout=keepalive):
                    version = v
                    yield _sse("state", text, f"{svc.run}:{v}")
                now = time.monotonic()
                if now - last_status >= keepalive:
                    last_status = now
                    yield _sse("status", json.dumps(svc.status()))
                if now - started > max_s or svc.stopped:
                    return
        finally:
            close()

    return Response(stream(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@bp.route("/status")
@require(*VIEW_ROLES)
@passive
def status():
    return jsonify(service().status())


@bp.route("/camera.mjpg")
@require(*VIEW_ROLES)
@passive
def camera() -> Response:
    """The camera with the detector's boxes drawn; ``?boxes=0`` shows the plain image."""
    svc = service()
    pipeline = svc.pipeline
    if pipeline is None:
        return jsonify(error="no camera is attached to this kiosk"), 404
    boxes = request.args.get("boxes", "1") != "0"
    period = 1.0 / max(0.5, float(current_app.config["MJPEG_FPS"]))
    allowed, close = _account_check()

    def stream():
        # Ends when the account may no longer watch, or the kiosk stops.
        try:
            while allowed() and not svc.stopped:
                jpeg = pipeline.latest_jpeg(draw_boxes=boxes)
                if jpeg:
                    yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                           + str(len(jpeg)).encode() + b"\r\n\r\n" + jpeg + b"\r\n")
                time.sleep(period)
        finally:
            close()

    return Response(stream(), mimetype="multipart/x-mixed-replace; boundary=frame",
                    headers={"Cache-Control": "no-store"})


@bp.route("/frame.jpg")
@require(*VIEW_ROLES)
@passive
def frame() -> Response:
    pipeline = service().pipeline
    jpeg = pipeline.latest_jpeg(draw_boxes=request.args.get("boxes", "1") != "0") if pipeline else None
    if not jpeg:
        return jsonify(error="no camera frame yet"), 404
    return Response(jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})
