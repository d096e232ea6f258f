"""S1: a sealed recording deleted by hand, with no recordings_pruned record, is noticed by the
kiosk's own seal sweep (logged once, listed on the chain page) and named on the round page."""

from __future__ import annotations

import json
import shutil

from kiosk.audit import AuditType
from kiosk.seals import SealWatch
from vision.record import recordings_dir


def recording(app, service, round_no: int):
    folder = recordings_dir(app.extensions["niuniu"].data_dir, service.config.table_id) / \
        f"20260101T00000{round_no}Z-round-{round_no:04d}"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({"round_no": round_no, "format": "niuniu-round/1"}))
    (folder / "frames" / "00000005.jpg").write_bytes(b"\xff\xd8frame five")
    return folder


def test_the_kiosks_sweep_logs_a_sealed_recording_deleted_by_hand_once(played, app, service, audit):
    folders = {n: recording(app, service, n) for n in (1, 2, 4)}
    for n, folder in folders.items():
        service.seal_recording(folder, {"round_no": n, "interrupted": False})
    service.wait_sealed()
    seal = {r.round_no: r for r in audit.records(types=[AuditType.RECORDING_SEALED])}
    shutil.rmtree(folders[2])                                     # by hand: nothing logged
    shutil.rmtree(folders[4])                                     # by retention: logged
    audit.append(AuditType.RECORDINGS_PRUNED, "system", {"count": 1, "folders": [folders[4].name]})
    root = recordings_dir(app.extensions["niuniu"].data_dir, service.config.table_id)
    watch = SealWatch(audit, root, service.config.table_id, budget_bytes=1)
    for _ in range(5):
        watch.step()
    found = audit.records(types=[AuditType.RECORDING_CHANGED])
    assert [(r.round_no, r.data["folder"], r.data["seal_seq"], r.data["missing"]) for r in found] == [
        (2, folders[2].name, seal[2].seq, True)]
    assert "is missing" in found[0].data["changes"][0] and "no recordings_pruned record" in found[0].data["changes"][0]
    again = SealWatch(audit, root, service.config.table_id, budget_bytes=1)      # the kiosk restarted
    for _ in range(3):
        again.step()
    assert len(audit.records(types=[AuditType.RECORDING_CHANGED])) == 1

    chain = played.get("/review/chain").get_data(as_text=True).split('id="seals"')[1].split("</section>")[0]
    assert folders[2].name in chain and "MISSING" in chain and "No recording has been found changed" not in chain
    page = played.get("/review/round/2").get_data(as_text=True)
    assert "No key frames recorded" not in page
    missing = page.split('id="recording-missing">')[1].split("</p>")[0]
    assert f"sealed in the audit log at seq {seal[2].seq}" in missing and "missing from the disk" in missing
    assert 'id="recording-pruned"' in played.get("/review/round/4").get_data(as_text=True)
