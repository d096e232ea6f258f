"""`niuniu audit public-key -o FILE` onto a disk that fills as it writes (QA51 operator L2):
the key file is whole or absent, so the retry on a freed disk is not refused by a 0-byte file."""

from __future__ import annotations

import builtins
import errno

from test_preflight import data


class FullDisk:
    """An open file whose writes fail as a full disk fails them, once the file exists."""

    def __init__(self, fh):
        self.fh = fh

    def write(self, _):
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fh.close()

    def __getattr__(self, name):
        return getattr(self.fh, name)


def test_a_public_key_written_onto_a_full_disk_leaves_no_file_and_the_retry_works(tmp_path, runner, monkeypatch):
    data_dir, target = data(tmp_path), tmp_path / "table.pem"
    real_open = builtins.open

    def filling(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        return FullDisk(fh) if str(file).startswith(str(target)) and set(mode) & set("wxa") else fh

    monkeypatch.setattr(builtins, "open", filling)
    code, _, err = runner(["audit", "public-key", "--data-dir", str(data_dir), "-o", str(target)])
    assert code == 2 and "No space left on device" in err, err
    assert list(tmp_path.glob("table.pem*")) == []          # nothing half-written to block the retry

    monkeypatch.setattr(builtins, "open", real_open)
    code, out, err = runner(["audit", "public-key", "--data-dir", str(data_dir), "-o", str(target)])
    assert code == 0, err
    assert target.read_text().startswith("-----BEGIN PUBLIC KEY-----")
