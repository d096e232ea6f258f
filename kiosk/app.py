"""The Flask application: one factory, one blueprint per area, as in flaskr.

``create_app`` wires the long-lived objects (audit log, table service) into the app;
the command line builds them with a camera pipeline, tests build them with a bare
round machine and feed it scripted hands.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Mapping

from flask import Flask, g, jsonify, redirect, render_template, request, url_for

from kiosk import db
from kiosk.audit import AuditLog, local_text
from kiosk.chain import ChainCheck
from kiosk.runtime import EXTENSION, Runtime
from scoring.errors import NiuniuError

DEFAULTS: dict[str, Any] = {
    "SESSION_IDLE_S": 30 * 60,
    "SESSION_MAX_S": 12 * 3600,     # a session ends this long after login (kiosk.auth.load_user)
    # The cookie's own validity, on the wall clock: only a backstop, well past SESSION_MAX_S,
    # so that an NTP step after a long power cut does not end every session unrecorded.
    "PERMANENT_SESSION_LIFETIME": timedelta(days=31),
    "SESSION_COOKIE_HTTPONLY": True,
    "SESSION_COOKIE_SAMESITE": "Strict",
    "SESSION_COOKIE_NAME": "niuniu_session",
    "THROTTLE_MAX_FAILURES": 5,
    "THROTTLE_BASE_S": 30.0,
    "THROTTLE_WINDOW_S": 15 * 60.0,
    "PASSWORD_HASH_METHOD": "scrypt",
    "SSE_KEEPALIVE_S": 1.0,
    "SSE_MAX_S": None,          # close a stream after this long (None: never); EventSource reconnects
    "MJPEG_FPS": 8.0,
    "DEMO": False,
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "BEHIND_PROXY": False,      # served through one TLS reverse proxy on this host (--behind-proxy)
}


def _trust_the_proxy(app: Flask) -> None:
    """Served through a TLS reverse proxy (the way to reach the kiosk from another machine),
    the session cookie must travel only over TLS, and the client's address is the one the
    proxy forwards: without it every login, PIN throttle and audit record would name the
    proxy's address, one key for the whole pit.  One proxy is trusted, and only where asked:
    a kiosk reached directly must never believe an X-Forwarded-For anyone can send."""
    from werkzeug.middleware.proxy_fix import ProxyFix

    app.config["SESSION_COOKIE_SECURE"] = True
    app.wsgi_app = ProxyFix(app.wsgi_app, x_for=1, x_proto=1)    # the host is the kiosk's own


def create_app(test_config: Mapping[str, Any] | None = None, *, service=None) -> Flask:
    """Build the kiosk.

    ``test_config`` must give ``DATA_DIR`` and, unless ``service`` is given, ``TABLE``
    (a :class:`~vision.table.TableConfig` or a path to a table file).
    """
    app = Flask(__name__)
    app.config.from_mapping(DEFAULTS)
    if test_config:
        app.config.update(test_config)
    if "DATA_DIR" not in app.config:
        raise NiuniuError("the kiosk needs a data directory (--data-dir) for its audit log and accounts")
    data_dir = Path(app.config["DATA_DIR"])
    data_dir.mkdir(parents=True, exist_ok=True)
    app.config["DATA_DIR"] = str(data_dir)
    app.secret_key = db.secret_key(data_dir)
    if app.config["BEHIND_PROXY"]:
        _trust_the_proxy(app)
    db.init_app(app)
    db.connect(data_dir).close()    # the accounts schema made before the first request; its connection not kept open

    if service is None:
        service = _default_service(app.config, data_dir)
    service.start()
    app.extensions[EXTENSION] = Runtime(data_dir, service.audit, service,
                                        list(app.config.get("DEMO_ACCOUNTS", [])), ChainCheck(service.audit))

    from kiosk import admin, auth, dealer, live, review, zones

    app.session_interface = auth.StepProofSessions()
    app.before_request(auth.load_user)
    app.before_request(auth.check_csrf)
    for blueprint in (auth.bp, dealer.bp, review.bp, live.bp, admin.bp, zones.bp):
        app.register_blueprint(blueprint)

    @app.context_processor
    def _template_globals() -> dict:
        return {"csrf_token": auth.csrf_token, "current_user": g.get("user"), "table": service.config,
                "preset": service.preset, "demo": app.config["DEMO"], "Role": auth.Role,
                "zone_name": service.config.timezone}

    zone = service.config.time_zone

    @app.template_filter("to_second")
    def _to_second(ts: str | None) -> str:
        """A log time (UTC, to the microsecond) as the staff read it: in the table's time
        zone, to the second (2026-12-06 08:21:43).  The exact text stays in the log and in
        each timeline cell's tooltip."""
        return local_text(ts, zone) if ts else ""

    @app.template_filter("grouped")
    def _grouped(amount: str | None) -> str:
        """Money text with its thousands grouped (as the dealer's screen shows it)."""
        if not amount:
            return ""
        sign, text = ("-", amount[1:]) if amount.startswith("-") else ("", amount)
        whole, _, cents = text.partition(".")
        return sign + f"{int(whole):,}" + (f".{cents}" if cents else "")

    @app.template_filter("epoch_to_second")
    def _epoch_to_second(epoch: float | None) -> str:
        return datetime.fromtimestamp(epoch, zone).strftime("%Y-%m-%d %H:%M:%S") if epoch else ""

    @app.route("/")
    def index():
        if g.get("user") is None:
            return redirect(url_for("auth.login"))
        return redirect(auth.home_for(g.user["role"]))

    @app.route("/healthz")
    def healthz():
        status = service.status()
        return jsonify(ok=True, camera=status.get("camera"), round=service.machine.round_no)

    @app.errorhandler(NiuniuError)
    def _user_error(exc: NiuniuError):
        if auth.wants_json():
            return jsonify(error=str(exc)), 400
        return render_template("error.html", code=400, message=str(exc)), 400

    for code, message in ((403, "Your role may not open this page."), (404, "There is no such page."),
                          (405, "That action is not allowed here."), (413, "That request is too large.")):
        app.register_error_handler(code, _http_error(code, message))

    @app.after_request
    def _headers(response):
        # Everything is served from the package: no CDN, no inline script, no framing.
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
            "frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        if request.endpoint != "static":
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    return app


def _http_error(code: int, message: str):
    def handler(_exc):
        from kiosk.auth import wants_json
        if wants_json():
            return jsonify(error=message), code
        return render_template("error.html", code=code, message=message), code
    return handler


def _default_service(config: Mapping[str, Any], data_dir: Path):
    from kiosk.table_service import TableService
    from vision.table import TableConfig, load_table_config

    table = config.get("TABLE")
    if table is None:
        raise NiuniuError("the kiosk needs a table file (--config table.yaml)")
    if not isinstance(table, TableConfig):
        table = load_table_config(table)
    audit = AuditLog.in_dir(data_dir, table.table_id)
    return TableService(table, audit, auto_bets=config.get("AUTO_BETS"))
