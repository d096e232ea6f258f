"""Every recording sealed before the kiosk stops: seal threads start on the camera thread and on
HTTP threads at once, and one start must not drop another's thread from the list that
``wait_sealed()`` (called at stop) waits on (QA48 concurrency L3)."""

from __future__ import annotations

import threading
import time

from kiosk.audit import AuditType


def recording(root, name):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text('{"ended": 1, "interrupted": false}', encoding="utf-8")
    (folder / "events.jsonl").write_text("", encoding="utf-8")
    return folder


class Finished:
    """A seal thread of an earlier recording, done.  While the next seal prunes the finished ones
    from the list, another thread seals a recording: the interleaving two real threads hit only
    now and then (the camera's seal and a manual clear's), made to happen every time."""

    def __init__(self, interleave):
        self.interleave = interleave

    def is_alive(self):
        if self.interleave is not None:
            other, self.interleave = threading.Thread(target=self.interleave), None
            other.start()
            other.join(0.5)      # under a lock the other waits its turn: this one goes on meanwhile
            self.other = other
        return False

    def join(self, timeout=None):
        pass


def test_seals_started_at_the_same_moment_are_all_waited_for(service, audit, tmp_path, monkeypatch):
    real = service._seal

    def slow_seal(folder, meta):
        # hashing ten megabytes of key frames on an SD card; the second recording's takes longer
        time.sleep(1.0 if meta["round_no"] == 2 else 0.1)
        real(folder, meta)
    monkeypatch.setattr(service, "_seal", slow_seal)
    first, second = recording(tmp_path, "t1-round-0001"), recording(tmp_path, "t1-round-0002")
    finished = Finished(lambda: service.seal_recording(second, {"round_no": 2, "interrupted": False}))
    service._sealing.append(finished)

    service.seal_recording(first, {"round_no": 1, "interrupted": False})    # the camera thread's
    finished.other.join(5)                                                    # the HTTP thread's
    service.wait_sealed()
    sealed = sorted(r.data["folder"] for r in audit.records(types=(AuditType.RECORDING_SEALED,)))
    assert sealed == ["t1-round-0001", "t1-round-0002"]
