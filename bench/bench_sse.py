"""Load on the kiosk's live feed: N browsers on server-sent events while a dealer plays rounds.

Serves the real kiosk app on 127.0.0.1 (never another address) with the threaded WSGI
server production uses, opens ``--clients`` SSE streams with one logged-in session, and
for ``--seconds`` plays rounds: bets and settlements through HTTP with the CSRF token,
cards through the round machine as the camera would.  Every client must receive every
state version in order; the script reports:

* errors: failed dealer requests, broken streams;
* missed states: versions a client never received (gaps), or a final version short of
  the server's;
* latency: time from the state being published (``changed_at``) to a client parsing
  it, over every (client, state) pair: p50, p95, p99, max.

    python bench/bench_sse.py --clients 20 --seconds 60
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from werkzeug.serving import make_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "kiosk"))

from kiosk.app import create_app  # noqa: E402
from kiosk_testing import ACCOUNTS, FAST_HASH, HttpSession, create_accounts, hand, make_table  # noqa: E402

ROUNDS = [
    {"banker": "4S 6H QD 9C 9H", "1": "KS QS JS 10S 10H", "2": "AS 2S 3D 4D 5C", "3": "7C 8C 2D 6D 5S"},
    {"banker": "AH 2H 3H 4H 5S", "1": "KC KD QC QH JC", "2": "9S 8S 7S 6S 3C", "3": "JH JD 10D 7D 3S"},
]


class Client(threading.Thread):
    """One browser: reads the event stream and notes when each state version arrived."""

    def __init__(self, port: int, cookie: str, stop: threading.Event):
        super().__init__(daemon=True)
        self.port, self.cookie, self.stop = port, cookie, stop
        self.versions: list[int] = []
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.connected = threading.Event()

    def run(self) -> None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            conn.request("GET", "/live/events", headers={"Cookie": self.cookie, "Accept": "text/event-stream"})
            response = conn.getresponse()
            if response.status != 200:
                self.errors.append(f"stream answered {response.status}")
                return
            self.connected.set()
            event, data, ident = None, None, None
            while not self.stop.is_set():
                line = response.fp.readline()
                if not line:
                    self.errors.append("stream closed by the server")
                    return
                line = line.decode("utf-8").rstrip("\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data = line[6:]
                elif line.startswith("id: "):
                    ident = int(line[4:].rpartition(":")[2])     # run:version (kiosk.live)
                elif line == "":
                    if event == "state" and data:
                        now = time.time()
                        state = json.loads(data)
                        self.versions.append(ident if ident is not None else state["version"])
                        self.latencies.append(now - state["changed_at"])
                    event, data, ident = None, None, None
            conn.close()
        except Exception as exc:  # a broken stream is a result, not a crash
            self.errors.append(f"{type(exc).__name__}: {exc}")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=0.1, help="pause between dealer actions (s)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access log line per request
    data_dir = Path(tempfile.mkdtemp(prefix="niuniu-bench-sse-"))
    app = create_app({"DATA_DIR": str(data_dir), "TABLE": make_table(), "PASSWORD_HASH_METHOD": FAST_HASH,
                      "SESSION_IDLE_S": 3600})
    create_accounts(app)
    service = app.extensions["niuniu"].service
    server = make_server("127.0.0.1", 0, app, threaded=True)
    port = server.server_port
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
    base = f"http://127.0.0.1:{port}"

    dealer = HttpSession(base)
    dealer.login("dealer1", ACCOUNTS["dealer1"][1])
    cookie = dealer.cookie_header

    stop = threading.Event()
    clients = [Client(port, cookie, stop) for _ in range(args.clients)]
    for c in clients:
        c.start()
    for c in clients:
        c.connected.wait(10)

    actions, action_errors, action_ms, rounds, frame = 0, [], [], 0, 0
    started = time.monotonic()

    def act(fn):
        nonlocal actions
        t0 = time.perf_counter()
        try:
            error = fn()
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        action_ms.append((time.perf_counter() - t0) * 1000)
        actions += 1
        if error:
            action_errors.append(error)
        time.sleep(args.interval)

    def post(path, body=None):
        status, _, text = dealer.post(path, body)
        return None if status == 200 else f"{path}: {status} {text[:120]}"

    while time.monotonic() - started < args.seconds:
        cards = ROUNDS[rounds % len(ROUNDS)]
        for seat, kind in (("1", "double"), ("2", "equal"), ("3", "double")):
            act(lambda seat=seat, kind=kind: post("/dealer/api/bet", {"seat": seat, "amount": "100", "kind": kind}))
        seen = []
        for seat in ("banker", "1", "2", "3"):
            seen.append(hand(seat, cards[seat]))
            frame += 1
            act(lambda hands=list(seen), f=frame: service.observe(hands, f) and None)
        act(lambda: post("/dealer/api/settle"))
        frame += 1
        act(lambda f=frame: service.observe([], f) and None)
        rounds += 1

    time.sleep(1.5)  # let the last states reach every client
    stop.set()
    for c in clients:
        c.join(5)
    final = service.version
    server.shutdown()
    service.stop()

    missed = 0
    for c in clients:
        if not c.versions:
            missed += 1
            continue
        v = c.versions
        missed += sum(b - a - 1 for a, b in zip(v, v[1:]) if b > a + 1) + max(0, final - v[-1])
    latencies = [x for c in clients for x in c.latencies]
    stream_errors = [e for c in clients for e in c.errors]
    figures = {
        "clients": args.clients, "seconds": round(time.monotonic() - started, 1), "rounds": rounds,
        "dealer_actions": actions, "dealer_errors": len(action_errors),
        "dealer_action_ms_p95": round(percentile(action_ms, 95), 1) if action_ms else None,
        "states_published": final, "states_delivered": len(latencies), "stream_errors": len(stream_errors),
        "missed_states": missed,
        "latency_ms_p50": round(statistics.median(latencies) * 1000, 1) if latencies else None,
        "latency_ms_p95": round(percentile(latencies, 95) * 1000, 1) if latencies else None,
        "latency_ms_p99": round(percentile(latencies, 99) * 1000, 1) if latencies else None,
        "latency_ms_max": round(max(latencies) * 1000, 1) if latencies else None,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:22} {value}")
        for error in (action_errors + stream_errors)[:5]:
            print("error:", error)
    return 0 if not action_errors and not stream_errors and not missed else 1


if __name__ == "__main__":
    sys.exit(main())
