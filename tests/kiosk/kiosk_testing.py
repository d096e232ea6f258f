"""Shared by the kiosk tests, the browser tests and bench/bench_sse.py.

Tables, accounts and scripted hands so a test drives the real round machine without a
camera or a model; a scripted detector and a tiny frame folder so the demo and the
crash tests run the real camera pipeline end to end.
"""

from __future__ import annotations

import json
import re
import socketserver
import sqlite3
import ssl
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import yaml

from kiosk.audit import AuditLog, AuditType
from scoring.cards import parse_cards
from vision.corners import Detection
from vision.table import AuditForwardSettings, table_config_from_dict
from vision.tracker import SeatHand

FAST_HASH = "pbkdf2:sha256:1000"  # account hashing cost is not what these tests measure

ACCOUNTS = {
    "admin1": ("admin", "admin-pass-123", None),
    "dealer1": ("dealer", "dealer-pass-123", None),
    "super1": ("supervisor", "super-pass-123", "4321"),
    "watch1": ("surveillance", "watch-pass-123", None),
}

SEATS = ("banker", "1", "2", "3", "4", "5", "6", "7")
# grab-banker, but the banker pays winners only as far as their stack goes (strongest first)
HOUSE_STACK = Path(__file__).resolve().parents[1] / "data" / "presets" / "house-stack.toml"


def zone(name: str) -> list[list[float]]:
    """Seats on a 4 x 2 grid of the image: the banker first, then 1..7."""
    index = SEATS.index(name)
    x, y = 0.01 + (index % 4) * 0.25, 0.05 + (index // 4) * 0.5
    return [[x, y], [x + 0.23, y], [x + 0.23, y + 0.4], [x, y + 0.4]]


def table_dict(seats=("banker", "1", "2", "3"), rules: str = "cambodia", **thresholds) -> dict:
    data = {"table_id": "t1", "rules": rules, "currency": "USD",
            "seats": [{"name": s, "polygon": zone(s)} for s in seats],
            "camera": {"fps": 20.0}}
    if thresholds:
        data["thresholds"] = thresholds
    return data


def make_table(seats=("banker", "1", "2", "3"), rules: str = "cambodia", **thresholds):
    return table_config_from_dict(table_dict(seats, rules, **thresholds))


def hand(seat: str, text: str, conf: float = 0.95, confirm: tuple[int, ...] = ()) -> SeatHand:
    cards = parse_cards(text, count=None)
    return SeatHand(seat, cards, tuple(conf for _ in cards), tuple(i in confirm for i in range(len(cards))))


def create_accounts(app) -> None:
    from kiosk import db
    from kiosk.auth import create_user

    conn = db.connect(app.config["DATA_DIR"])
    try:
        for name, (role, password, pin) in ACCOUNTS.items():
            create_user(conn, name, role, password, pin, created_by="test", method=FAST_HASH)
    finally:
        conn.close()


def csrf_from(html: str) -> str:
    match = re.search(r'name="csrf-token" content="([^"]+)"', html)
    assert match, "page carries no CSRF token"
    return match.group(1)


def login(client, username: str, password: str | None = None) -> str:
    """Log in through the real form; return the session's CSRF token."""
    page = client.get("/auth/login")
    token = csrf_from(page.get_data(as_text=True))
    password = password or ACCOUNTS[username][1]
    response = client.post("/auth/login", data={"username": username, "password": password, "csrf_token": token})
    assert response.status_code == 302, response.get_data(as_text=True)
    home = client.get(response.location)  # the token is renewed at login
    return csrf_from(home.get_data(as_text=True))


# ------------------------------------------------------------------ rounds played through the screen

PLAYED_BANKER = "4S 6H QD 9C 9H"


def play(client, service, rounds):
    """Play rounds as a dealer: each is (seat-1 cards, action) with action settle / void / correct."""
    token = login(client, "dealer1")
    headers = {"X-CSRF-Token": token}
    frame = 0
    for cards, action in rounds:
        client.post("/dealer/api/bet", json={"seat": "1", "amount": "10", "kind": "equal"}, headers=headers)
        frame += 1
        service.observe([hand("banker", PLAYED_BANKER), hand("1", cards)], frame)
        if action == "void":
            assert client.post("/dealer/api/void", json={"reason": "misdeal", "pin": "4321"},
                               headers=headers).status_code == 200
        else:
            if action == "correct":
                first = cards.split()[0]
                correction = {"seat": "1", "old": first, "new": "AD", "reason": "misread"}
                assert client.post("/dealer/api/correct", json=correction, headers=headers).status_code == 200
            assert client.post("/dealer/api/settle", headers=headers).status_code == 200
        frame += 1
        service.observe([], frame)
    client.post("/auth/logout", data={"csrf_token": token})


# ------------------------------------------------------------------ the demo, scripted


class ScriptedDetector:
    """Answers from a script keyed by the frame index painted into each test frame.

    The frames are PNG (lossless), with the index in the first pixel's blue and green
    bytes, so the detector knows which frame it was given without any side channel.
    """

    name = "scripted-detector"
    file_sha256 = "0" * 64

    def __init__(self, script: dict[int, list[dict]]):
        self.script = script
        self.calls = 0

    def detect(self, image, regions=None):
        """The frame's scripted cards; like the real detector, only those inside ``regions``
        (the crops the motion gate asked for), if given."""
        self.calls += 1
        index = int(image[0, 0, 0]) + 256 * int(image[0, 0, 1])
        found = [Detection.from_json(d) for d in self.script.get(index, [])]
        if regions is None:
            return found
        return [d for d in found
                if any(r[0] <= (d.box[0] + d.box[2]) / 2 <= r[2] and r[1] <= (d.box[1] + d.box[3]) / 2 <= r[3]
                       for r in regions)]


def card_boxes(seat: str, codes: list[str], width: int = 320, height: int = 240) -> list[dict]:
    """One detection per card, laid out side by side inside the seat's zone."""
    polygon = zone(seat)
    x0, y0 = polygon[0][0] * width, polygon[0][1] * height
    out = []
    for i, code in enumerate(codes):
        x = x0 + 3 + i * 12
        out.append({"card": code, "conf": 0.97, "box": [x, y0 + 10, x + 10, y0 + 40]})
    return out


def write_demo(folder: Path, rounds: list[dict[str, str]], *, empty: int = 6, dealt: int = 40,
               fps: float = 20.0, extra_thresholds: dict | None = None) -> dict[int, list[dict]]:
    """A demo directory: table.yaml, frames/ and script.json (what each frame shows).

    Each round is ``{seat: "AS 2H ..."}``: ``empty`` frames of bare table, then ``dealt``
    frames with every card on the table.
    """
    (folder / "frames").mkdir(parents=True, exist_ok=True)
    thresholds = {"k": 2, "n": 3, "remove_after_s": 0.15, **(extra_thresholds or {})}
    data = table_dict(**thresholds)
    data["camera"]["fps"] = fps
    (folder / "table.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    script: dict[int, list[dict]] = {}
    index = 0
    for hands in rounds:
        for _ in range(empty):
            script[index] = []
            index += 1
        detections = [d for seat, text in hands.items() for d in card_boxes(seat, text.split())]
        for _ in range(dealt):
            script[index] = detections
            index += 1
    for i in range(index):
        image = np.full((240, 320, 3), 40, np.uint8)
        image[0, 0, 0], image[0, 0, 1] = i % 256, i // 256
        for det in script[i]:
            x1, y1, x2, y2 = (int(v) for v in det["box"])
            cv2.rectangle(image, (x1, y1), (x2, y2), (250, 250, 250), -1)
        cv2.imwrite(str(folder / "frames" / f"{i:05d}.png"), image)
    (folder / "script.json").write_text(json.dumps(script), encoding="utf-8")
    return script


def load_script(folder: Path) -> dict[int, list[dict]]:
    return {int(k): v for k, v in json.loads((folder / "script.json").read_text(encoding="utf-8")).items()}


# ------------------------------------------------------------------ a kiosk in its own process


def production_kiosk(demo_dir: Path, data_dir: Path):
    """``niuniu kiosk`` in its own process on a written demo's table file and frames, its scripted
    detector in place of the card model (``kiosk_proc.py kiosk``); stdout and stderr piped, as text."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parent / "kiosk_proc.py"
    return subprocess.Popen([sys.executable, str(script), "kiosk", "--config", str(demo_dir / "table.yaml"),
                             "--source", str(demo_dir / "frames"), "--data-dir", str(data_dir), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


class KioskProcess:
    """``kiosk_proc.py`` as a subprocess: its URL, its demo accounts, and ways to stop it."""

    def __init__(self, demo_dir: Path, data_dir: Path, pause: float = 0.3, timeout: float = 60.0):
        import subprocess
        import sys
        import threading
        import time

        script = Path(__file__).resolve().parent / "kiosk_proc.py"
        root = Path(__file__).resolve().parents[2]
        self.proc = subprocess.Popen([sys.executable, str(script), str(demo_dir), str(data_dir), str(pause)],
                                     cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.data_dir = data_dir
        self.lines: list[str] = []
        self.url = ""
        self.accounts: dict[str, dict] = {}
        ready = threading.Event()

        def pump():
            for line in self.proc.stdout:
                self.lines.append(line.rstrip("\n"))
                if line.startswith("Open http"):
                    self.url = line.split()[1]
                parts = line.split()
                if len(parts) >= 4 and parts[2] == "password":
                    self.accounts[parts[1]] = {"role": parts[0], "password": parts[3],
                                               "pin": parts[5] if len(parts) > 5 else None}
                if line.startswith("Ctrl-C stops"):
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + timeout
        while not ready.wait(0.1):
            if time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError("kiosk did not start:\n" + "\n".join(self.lines))
        if not self.url:
            self.proc.kill()
            raise AssertionError("kiosk failed:\n" + "\n".join(self.lines))

    def records(self, kind: str | None = None) -> list[dict]:
        """Read the audit log directly (another process is writing it)."""
        import sqlite3

        conn = sqlite3.connect(self.data_dir / "audit.sqlite3", timeout=10)
        try:
            sql = "SELECT seq, type, actor, round_no, payload FROM audit"
            rows = conn.execute(sql + (" WHERE type = ?" if kind else "") + " ORDER BY seq",
                                (kind,) if kind else ()).fetchall()
        finally:
            conn.close()
        return [{"seq": s, "type": t, "actor": a, "round": r, "payload": json.loads(p)} for s, t, a, r, p in rows]

    def wait_for(self, predicate, timeout: float = 30.0, what: str = "condition"):
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"kiosk exited while waiting for {what}:\n" + "\n".join(self.lines))
            result = predicate()
            if result:
                return result
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}:\n" + "\n".join(self.lines[-20:]))

    def kill9(self) -> None:
        import signal

        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        return self.proc.wait(20)


# ------------------------------------------------------------------ plain HTTP (standard library only)


class HttpSession:
    """A cookie-keeping HTTP client on urllib, so tests and benches need no extra package.

    Redirects are not followed: a login's 302 is something to check, not to hide.
    """

    def __init__(self, base: str):
        import http.cookiejar
        import urllib.request

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        self.base = base.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect())
        self.token = ""

    def request(self, method: str, path: str, *, form: dict | None = None, body: dict | None = None,
                timeout: float = 10.0, raw: bool = False) -> tuple[int, dict, str | bytes]:
        import urllib.error
        import urllib.parse
        import urllib.request

        headers = {"Accept": "application/json, text/html"}
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None or method == "POST":
            data = json.dumps(body or {}).encode()
            headers["Content-Type"] = "application/json"
            headers["X-CSRF-Token"] = self.token
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with self.opener.open(req, timeout=timeout) as response:
                status, head, content = response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as exc:
            status, head, content = exc.code, dict(exc.headers), exc.read()
        return status, head, content if raw else content.decode("utf-8")

    def get(self, path: str, raw: bool = False) -> tuple[int, dict, str | bytes]:
        return self.request("GET", path, raw=raw)

    def post(self, path: str, body: dict | None = None) -> tuple[int, dict, str]:
        return self.request("POST", path, body=body)

    def login(self, username: str, password: str) -> None:
        _, _, page = self.get("/auth/login")
        status, headers, _ = self.request("POST", "/auth/login", form={
            "username": username, "password": password, "csrf_token": csrf_from(page)})
        assert status == 302, f"login of {username} answered {status}"
        _, _, home = self.get(headers["Location"])
        self.token = csrf_from(home)

    @property
    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)


def rewrite_history(path: Path, seq: int, actor: str) -> None:
    """What someone with the disk could do: drop the guards, change one record, re-hash every
    later one so the chain is whole again, and put the guards back."""
    from kiosk.audit import AuditRecord

    conn = sqlite3.connect(path)
    guards = [sql for (sql,) in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        conn.execute(f"DROP TRIGGER {name}")
    rows = conn.execute("SELECT seq, ts, table_id, type, actor, round_no, payload, prev_hash, hash FROM audit "
                        "WHERE seq >= ? ORDER BY seq", (seq - 1,)).fetchall()
    prev = rows[0][8] if seq > 1 else rows[0][7]
    for row in rows[1:] if seq > 1 else rows:
        record = AuditRecord(*row[:4], actor if row[0] == seq else row[4], row[5], row[6], prev, "")
        prev = record.expected_hash()
        conn.execute("UPDATE audit SET actor = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                     (record.actor, record.prev_hash, prev, row[0]))
    for sql in guards:
        conn.execute(sql)
    conn.commit()
    conn.close()


# ------------------------------------------------- the audit log's collector (kiosk.forward)


class SyslogServer:
    """A syslog collector: every line received appended to ``path`` (TCP, TLS or UDP)."""

    def __init__(self, path: Path, protocol: str = "tcp", port: int = 0, tls: ssl.SSLContext | None = None):
        self.path = path
        self.lock = threading.Lock()
        collector = self

        class Lines(socketserver.StreamRequestHandler):
            def handle(self):
                for line in self.rfile:
                    collector.write(line)

        class Datagrams(socketserver.BaseRequestHandler):
            def handle(self):
                collector.write(self.request[0] + b"\n")

        if protocol == "udp":
            self.server = socketserver.ThreadingUDPServer(("127.0.0.1", port), Datagrams)
        else:
            class Server(socketserver.ThreadingTCPServer):
                allow_reuse_address = True
                daemon_threads = True

                def get_request(self):
                    sock, address = super().get_request()
                    return (tls.wrap_socket(sock, server_side=True) if tls else sock), address
            self.server = Server(("127.0.0.1", port), Lines)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def write(self, line: bytes) -> None:
        with self.lock, open(self.path, "ab") as fh:
            fh.write(b"Dec  6 19:15:03 collector got: " + line)

    def lines(self) -> list[str]:
        return self.path.read_text().splitlines() if self.path.exists() else []

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def wait_for(predicate, what: str, timeout: float = 20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def fill(log: AuditLog, rounds: int, start: int = 1) -> None:
    for n in range(start, start + rounds):
        log.append(AuditType.ROUND_START, "vision", {"bets": {}}, round_no=n)
        log.append(AuditType.CARD_ACCEPTED, "vision", {"seat": "1", "card": "QH", "note": "Niu Niu 牛牛"}, round_no=n)


def settings(port: int, protocol: str = "tcp", **extra) -> AuditForwardSettings:
    return AuditForwardSettings(to=f"{protocol}://127.0.0.1:{port}", **extra)
