"""The audit log's copy on the casino's collector, at a busy table's scale.

Builds a log of ``--rounds`` settled rounds (``bench_audit``'s: 37 records a round), sends it
all to a collector on this machine (a TCP server writing each line to a file, as rsyslog
does) with the kiosk's forwarder — what a table does the first time a collector is named,
or after a long outage — then checks the copy with ``niuniu audit check-forwarded`` in a
child process, on its own and against the log.

    python bench/bench_forward.py --rounds 8000

Prints: records a second sent as the kiosk sends them (catching up, it pauses between
batches to leave the frame loop its cores) and with no pause (what the sending itself
costs), against the ~40 a minute a table writes,
the copy's bytes a record, and the check's seconds and peak memory (it keeps two hashes a
record: its peak must grow with the copy far slower than the copy itself).
"""

from __future__ import annotations

import argparse
import os
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_audit import build  # noqa: E402

from kiosk.audit import AuditLog  # noqa: E402
from kiosk.forward import CATCH_UP_PAUSE_S, STATE_FILE, AuditForwarder  # noqa: E402
from vision.table import AuditForwardSettings  # noqa: E402


def collector(path: Path) -> socketserver.ThreadingTCPServer:
    class Lines(socketserver.StreamRequestHandler):
        def handle(self):
            with open(path, "ab") as out:
                for line in self.rfile:
                    out.write(line)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Lines)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def child_check(copy: Path, *flags: str) -> tuple[float, int, int]:
    """Seconds, peak RSS (MB) and exit status of ``niuniu audit check-forwarded`` in its own process."""
    cmd = [sys.executable, "-m", "kiosk.cli", "audit", "check-forwarded", str(copy), *flags]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss // 1024, os.waitstatus_to_exitcode(status)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data_dir, copy = Path(folder) / "data", Path(folder) / "collector.log"
        raw = Path(folder) / "no-pause.log"
        log = AuditLog.in_dir(data_dir, "bench")
        build(log, args.rounds)
        records = log.last().seq
        print(f"log: {args.rounds} rounds, {records} records")
        for pause, what, into in ((CATCH_UP_PAUSE_S, "as the kiosk does", copy), (0.0, "with no pause", raw)):
            server = collector(into)
            (data_dir / STATE_FILE).unlink(missing_ok=True)
            forwarder = AuditForwarder(log, AuditForwardSettings(to=f"tcp://127.0.0.1:{server.server_address[1]}"),
                                       data_dir, period=0.01, catch_up_pause=pause)
            start = time.perf_counter()
            forwarder.start()
            while forwarder.sent_seq < log.last().seq:       # the key's record, made on first use, too
                time.sleep(0.01)
            seconds = time.perf_counter() - start
            forwarder.stop_event.set()
            forwarder.join()
            time.sleep(0.5)                                  # the collector's last writes
            server.shutdown()
            server.server_close()
            print(f"forwarded {records} records {what}: {seconds:.1f} s, {records / seconds:,.0f} records a second")
        size = copy.stat().st_size
        print(f"the copy: {size / 1e6:.0f} MB, {size / records:.0f} bytes a record")
        log.close()
        for flags, what in (((), "on its own"), (("--data-dir", str(data_dir)), "against the log")):
            seconds, peak, status = child_check(copy, *flags)
            print(f"check-forwarded {what}: {seconds:.1f} s ({seconds / records * 1e6:.0f} µs a record), peak "
                  f"memory {peak} MB, exit {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
