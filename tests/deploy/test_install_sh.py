"""deploy/install.sh, run for real into a temporary root with the system commands faked.

What a technician relies on: one run sets up the whole device; running it again (after a
power cut mid-install, or just to be sure) changes nothing; an upgrade touches only what
changed; the table's calibration is never overwritten.  The Pi-only parts (apt's
python3-picamera2, the real niuniu user, systemd) are recorded by the fakes in
fake_system.py instead of executed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).with_name("fake_system.py")
MUTATING = {"apt-get", "useradd", "usermod", "chown", "python3", "venv-python"}


class Machine:
    """A temporary root, a source checkout to install from, and the fakes' state."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "root"
        self.src = tmp / "checkout"
        self.state = tmp / "state"
        self.bin = tmp / "fakebin"
        for d in (self.root / "etc", self.state, self.bin):
            d.mkdir(parents=True)
        (self.root / "etc/os-release").write_text(
            'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n')
        (self.root / "etc/rpi-issue").write_text("Raspberry Pi reference 2024-11-19\n")
        (self.root / "etc/lightdm").mkdir()
        (self.root / "etc/lightdm/lightdm.conf").write_text("[Seat:*]\nautologin-user=pi\n")
        (self.root / "home/pi").mkdir(parents=True)
        (self.state / "users.json").write_text(json.dumps(
            {"pi": {"uid": 1000, "home": "/home/pi", "shell": "/bin/bash", "groups": ["pi", "video"]}}))
        fake = self.bin / "_fake"
        fake.write_text(f"#!{sys.executable}\n" + FAKE.read_text())
        fake.chmod(0o755)
        for name in ("apt-get", "dpkg-query", "dpkg", "useradd", "usermod", "getent", "id", "chown",
                     "systemctl", "python3", "uname", "runuser"):
            (self.bin / name).symlink_to(fake)
        self._make_checkout()

    def _make_checkout(self) -> None:
        """The parts of the project install.sh reads, plus one package file to upgrade, and the
        packages that load a table file (an upgrade has the new code load the device's)."""
        for package in ("deploy", "scoring", "vision"):
            shutil.copytree(REPO / package, self.src / package, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(REPO / "pyproject.toml", self.src / "pyproject.toml")
        (self.src / "kiosk").mkdir()
        (self.src / "kiosk/__init__.py").write_text('"""kiosk"""\n')

    def run(self, **env: str) -> subprocess.CompletedProcess:
        full_env = {k: v for k, v in os.environ.items() if k not in ("SUDO_USER", "NIUNIU_KIOSK_USER")}
        full_env.update({"PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
                         "NIUNIU_ROOT": str(self.root), "FAKE_STATE": str(self.state), **env})
        (self.state / "log.jsonl").write_text("")  # calls of this run only
        return subprocess.run(["bash", str(self.src / "deploy/install.sh")], env=full_env,
                              capture_output=True, text=True, timeout=120, check=False)

    def calls(self) -> list[dict]:
        return [json.loads(line) for line in (self.state / "log.jsonl").read_text().splitlines()]

    def calls_of(self, cmd: str) -> list[list[str]]:
        return [c["args"] for c in self.calls() if c["cmd"] == cmd]

    def snapshot(self) -> dict[str, tuple]:
        """Every path under the root with its type, mode, content hash and mtime."""
        out = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            for name in dirnames + filenames:
                path = Path(dirpath, name)
                st = path.lstat()
                rel = str(path.relative_to(self.root))
                if path.is_symlink():
                    out[rel] = ("link", os.readlink(path))
                elif path.is_dir():
                    out[rel] = ("dir", st.st_mode)
                else:
                    out[rel] = ("file", st.st_mode, st.st_mtime_ns,
                                hashlib.sha256(path.read_bytes()).hexdigest())
        return out


@pytest.fixture()
def machine(tmp_path) -> Machine:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    return Machine(tmp_path)


def _pip_calls(machine: Machine) -> list[list[str]]:
    return [a for a in machine.calls_of("venv-python") if a[:2] == ["-m", "pip"]]


def _ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, f"install.sh failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_first_run_sets_up_the_whole_device(machine):
    out = _ok(machine.run())
    root = machine.root

    installs = [a for a in machine.calls_of("apt-get") if "install" in a]
    assert len(installs) == 1
    assert {"python3-picamera2", "python3-venv", "chromium-browser", "curl"} <= set(installs[0])
    assert ["update"] in machine.calls_of("apt-get")

    (useradd,) = machine.calls_of("useradd")
    assert useradd[-1] == "niuniu" and "--system" in useradd
    assert useradd[useradd.index("--groups") + 1] == "video"
    assert useradd[useradd.index("--shell") + 1] == "/usr/sbin/nologin"

    assert machine.calls_of("python3") == [["-m", "venv", "--system-site-packages", f"{root}/opt/niuniu/venv"]]
    pip_calls = machine.calls_of("venv-python")
    assert pip_calls[0][-2:] == ["torch==2.9.1", "torchvision==0.24.1"]  # aarch64 pins, first
    assert pip_calls[1][-2:] == ["--editable", f"{root}/opt/niuniu/src[pi]"]

    assert (root / "opt/niuniu/src/kiosk/__init__.py").is_file()
    assert (root / "etc/niuniu/table.yaml").read_text() == (machine.src / "deploy/table.example.yaml").read_text()
    assert (root / "etc/niuniu/niuniu.env").is_file()
    assert (root / "etc/systemd/system/niuniu.service").read_text() == \
        (REPO / "deploy/systemd/niuniu.service").read_text()
    launcher = root / "usr/local/bin/niuniu-kiosk-browser"
    assert launcher.stat().st_mode & 0o777 == 0o755
    data = root / "var/lib/niuniu"
    assert data.is_dir() and data.stat().st_mode & 0o777 == 0o750
    assert ["niuniu:niuniu", str(data)] in machine.calls_of("chown")

    systemctl = machine.calls_of("systemctl")
    assert ["daemon-reload"] in systemctl
    assert ["enable", "niuniu.service"] in systemctl
    for unit in ("niuniu-backup.service", "niuniu-backup.timer"):
        assert (root / "etc/systemd/system" / unit).read_text() == (REPO / "deploy/systemd" / unit).read_text()
    assert ["enable", "--now", "niuniu-backup.timer"] in systemctl
    assert systemctl[-1] == ["restart", "niuniu.service"]

    autostart = (root / "home/pi/.config/labwc/autostart").read_text()
    assert "systemd-cat -t niuniu-kiosk /usr/local/bin/niuniu-kiosk-browser &" in autostart
    assert "kanshi" in autostart  # display rotation survives replacing the desktop autostart
    assert "swayidle" not in autostart
    assert not (root / "etc/systemd/timesyncd.conf.d").exists()  # the clock is left alone without NIUNIU_NTP
    assert not (root / "opt/niuniu/.restart-pending").exists()
    assert machine.calls_of("runuser") == []  # no table file to check before the example
    assert "done:" in out


def test_second_run_changes_nothing(machine):
    _ok(machine.run())
    before = machine.snapshot()
    out = _ok(machine.run())
    assert machine.snapshot() == before
    mutating = [c for c in machine.calls() if c["cmd"] in MUTATING]
    assert mutating == []
    assert [a for a in machine.calls_of("systemctl") if a[0] != "is-enabled"] == []
    assert "nothing changed" in out


def test_calibrated_table_file_is_never_overwritten(machine):
    _ok(machine.run())
    calibrated = (machine.src / "deploy/table.example.yaml").read_text().replace("table-1", "pit-3") + \
        "# calibrated on site\n"
    (machine.root / "etc/niuniu/table.yaml").write_text(calibrated)
    (machine.src / "deploy/table.example.yaml").write_text("table_id: changed-example\n")
    _ok(machine.run())
    assert (machine.root / "etc/niuniu/table.yaml").read_text() == calibrated


def test_code_upgrade_restarts_the_service_without_reinstalling_packages(machine):
    _ok(machine.run())
    (machine.src / "kiosk/__init__.py").write_text('"""kiosk, version 2"""\n')
    (machine.src / "kiosk/new_module.py").write_text("VALUE = 2\n")
    _ok(machine.run())
    assert (machine.root / "opt/niuniu/src/kiosk/new_module.py").read_text() == "VALUE = 2\n"
    assert _pip_calls(machine) == []  # dependencies unchanged: no pip
    assert machine.calls_of("systemctl")[-1] == ["restart", "niuniu.service"]

    (machine.src / "kiosk/new_module.py").unlink()
    _ok(machine.run())
    assert not (machine.root / "opt/niuniu/src/kiosk/new_module.py").exists()  # removed files go too


def test_dependency_change_reinstalls_the_project(machine):
    _ok(machine.run())
    pyproject = machine.src / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n# new dependency\n")
    _ok(machine.run())
    assert [a[-1] for a in _pip_calls(machine)][-1] == f"{machine.root}/opt/niuniu/src[pi]"


def test_existing_autostart_keeps_its_lines_and_loses_the_screen_blanker(machine):
    autostart = machine.root / "home/pi/.config/labwc/autostart"
    autostart.parent.mkdir(parents=True)
    autostart.write_text("/usr/bin/wayvnc &\nswayidle -w timeout 600 'wlopm --off \\*' &\n")
    _ok(machine.run())
    _ok(machine.run())
    lines = autostart.read_text().splitlines()
    assert lines[0] == "/usr/bin/wayvnc &"
    assert lines[1].startswith("# niuniu: screen blanking off: swayidle")
    assert sum("niuniu-kiosk-browser" in line for line in lines) == 1


BROWSER_POLICY = "etc/chromium/policies/managed/niuniu-kiosk.json"


def test_first_run_writes_the_chromium_policy_that_disables_devtools(machine):
    out = _ok(machine.run())
    policy_file = machine.root / BROWSER_POLICY  # read by Debian's chromium and Pi OS's chromium-browser
    assert policy_file.stat().st_mode & 0o777 == 0o644
    policy = json.loads(policy_file.read_text())  # Chromium ignores a file that is not valid JSON
    assert policy["DeveloperToolsAvailability"] == 2  # 2 = disallowed everywhere (F12, Ctrl+Shift+I)
    assert policy == {"DeveloperToolsAvailability": 2, "IncognitoModeAvailability": 1,
                      "BrowserSignin": 0, "PasswordManagerEnabled": False}
    assert policy_file.read_bytes() == (REPO / "deploy/chromium-policy.json").read_bytes()
    assert "/etc/chromium/policies/managed/niuniu-kiosk.json" in out


def test_rerun_leaves_the_chromium_policy_as_is_and_puts_back_a_changed_one(machine):
    _ok(machine.run())
    policy_file = machine.root / BROWSER_POLICY
    installed = policy_file.read_bytes()
    stat = policy_file.stat()
    out = _ok(machine.run())
    assert policy_file.read_bytes() == installed
    assert (policy_file.stat().st_mtime_ns, policy_file.stat().st_ino) == (stat.st_mtime_ns, stat.st_ino)
    assert "browser policy" not in out

    policy_file.write_text('{"DeveloperToolsAvailability": 1}\n')  # DevTools back on, by hand
    policy_file.chmod(0o666)
    out = _ok(machine.run())
    assert policy_file.read_bytes() == installed
    assert policy_file.stat().st_mode & 0o777 == 0o644
    assert "installed the browser policy" in out


def test_existing_user_gets_the_video_group(machine):
    users = json.loads((machine.state / "users.json").read_text())
    users["niuniu"] = {"uid": 990, "home": "/var/lib/niuniu", "shell": "/usr/sbin/nologin", "groups": ["niuniu"]}
    (machine.state / "users.json").write_text(json.dumps(users))
    _ok(machine.run())
    assert machine.calls_of("useradd") == []
    assert machine.calls_of("usermod") == [["-a", "-G", "video", "niuniu"]]


def test_refuses_an_os_that_is_not_bookworm(machine):
    (machine.root / "etc/os-release").write_text("VERSION_CODENAME=bullseye\nID=debian\n")
    result = machine.run()
    assert result.returncode == 2
    assert "not Bookworm" in result.stderr and "bullseye" in result.stderr
    assert machine.calls_of("apt-get") == []


def test_refuses_the_32_bit_os(machine):
    result = machine.run(FAKE_ARCH="armv7l")
    assert result.returncode == 2
    assert "32-bit" in result.stderr and "64-bit" in result.stderr
    assert machine.calls_of("apt-get") == []


def test_refuses_the_32_bit_os_on_a_64_bit_kernel_before_changing_anything(machine):
    # The Pi 5 (and by default the Pi 4) boots a 64-bit kernel under the 32-bit Raspberry Pi
    # OS: `uname -m` says aarch64, but the packages, python3 and so the venv are armhf, for
    # which PyPI has no torch, numpy or OpenCV. Refused before apt, useradd or the venv.
    before = machine.snapshot()
    result = machine.run(FAKE_ARCH="aarch64", FAKE_DPKG_ARCH="armhf")
    assert result.returncode == 2
    assert "32-bit Raspberry Pi OS" in result.stderr and "'armhf'" in result.stderr
    assert "flash" in result.stderr and "64-bit" in result.stderr
    assert [c for c in machine.calls() if c["cmd"] in MUTATING] == []
    assert machine.snapshot() == before
    assert not (machine.root / "opt").exists()


TRIXIE = ('PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nVERSION_ID="13"\nVERSION_CODENAME=trixie\n'
          'ID=debian\n')


def test_installs_on_raspberry_pi_os_trixie(machine):
    # Today's Raspberry Pi OS (64-bit): Debian 13, Python 3.13 (pyproject's [pi] extra picks
    # numpy 2 there, as apt's picamera2 stack has), labwc, the browser named chromium.
    (machine.root / "etc/os-release").write_text(TRIXIE)
    (machine.root / "etc/lightdm/lightdm.conf").write_text(
        "[Seat:*]\nuser-session=rpd-labwc\nautologin-user=pi\nautologin-session=rpd-labwc\n")
    out = _ok(machine.run())
    (install,) = [a for a in machine.calls_of("apt-get") if "install" in a]
    assert {"python3-picamera2", "python3-venv", "chromium"} <= set(install)
    assert "chromium-browser" not in install
    pip_calls = _pip_calls(machine)
    assert pip_calls[0][-2:] == ["torch==2.9.1", "torchvision==0.24.1"]  # cp313 aarch64 wheels exist
    assert pip_calls[1][-2:] == ["--editable", f"{machine.root}/opt/niuniu/src[pi]"]
    assert "niuniu-kiosk-browser" in (machine.root / "home/pi/.config/labwc/autostart").read_text()
    assert "warning" not in out
    assert "nothing changed" in _ok(machine.run())


def test_pip_keeps_no_cache_on_the_sd_card(machine):
    _ok(machine.run())
    pip_calls = _pip_calls(machine)
    assert len(pip_calls) == 2
    assert all("--no-cache-dir" in call for call in pip_calls)
    _new_version(machine)
    _ok(machine.run())  # an upgrade: the dry run too
    assert any("--dry-run" in call for call in _pip_calls(machine))
    assert all("--no-cache-dir" in call for call in _pip_calls(machine))


def test_the_libraries_opencv_loads_are_installed(machine):
    # The Pi venv holds opencv-python (what ultralytics requires), whose bundled Qt loads these.
    _ok(machine.run())
    (install,) = [a for a in machine.calls_of("apt-get") if "install" in a]
    assert {"libgl1", "libsm6", "libice6"} <= set(install)


def test_empty_torch_pins_on_aarch64_are_warned_about(machine):
    out = _ok(machine.run(NIUNIU_TORCH_PINS=""))
    assert "warning: NIUNIU_TORCH_PINS is empty" in out and "CUDA" in out and "Illegal instruction" in out
    assert all(not a[-1].startswith("torch") for a in _pip_calls(machine))
    assert "NIUNIU_TORCH_PINS" not in _ok(machine.run())  # the tested pins: no warning


def test_pc_install_uses_the_x86_torch_pins_and_skips_pi_packages(machine):
    (machine.root / "etc/rpi-issue").unlink()
    _ok(machine.run(FAKE_ARCH="x86_64", NIUNIU_ALLOW_OTHER_ARCH="1"))
    (install,) = [a for a in machine.calls_of("apt-get") if "install" in a]
    assert "python3-picamera2" not in install and "chromium" in install
    assert machine.calls_of("venv-python")[0][-2:] == ["torch==2.14.1", "torchvision==0.29.1"]
    assert json.loads((machine.root / BROWSER_POLICY).read_text())["DeveloperToolsAvailability"] == 2


def _git_init(src: Path) -> list[str]:
    git = ["git", "-C", str(src), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "x"], check=True)
    return git


def test_git_checkout_copies_only_what_git_tracks(machine):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    src = machine.src
    (src / ".gitignore").write_text(".venv/\n/runs/\n__pycache__/\n")
    (src / ".venv/bin").mkdir(parents=True)
    (src / ".venv/bin/python").write_text("not for the device\n")
    (src / "runs").mkdir()
    (src / "runs/last.pt").write_text("training checkpoint\n")
    git = _git_init(src)
    # Untracked, not ignored: README's whole-device archive made in the clone (every key of
    # the table), a zones.json downloaded there, a module nobody added.
    (src / "niuniu-2026-12-06.tar.gz").write_bytes(b"secret keys and password hashes")
    (src / "zones.json").write_text("{}\n")
    (src / "kiosk/untracked_new.py").write_text("NEW = 1\n")
    (src / "kiosk/added_new.py").write_text("ADDED = 1\n")
    subprocess.run([*git, "add", "kiosk/added_new.py"], check=True)  # added, not committed
    out = _ok(machine.run())
    code = machine.root / "opt/niuniu/src"
    assert (code / "kiosk/__init__.py").is_file() and (code / "kiosk/added_new.py").is_file()
    assert not (code / "niuniu-2026-12-06.tar.gz").exists()
    assert not (code / "zones.json").exists() and not (code / "kiosk/untracked_new.py").exists()
    assert not (code / ".venv").exists() and not (code / "runs").exists() and not (code / ".git").exists()
    assert "3 file(s)" in out and "git does not track are not copied" in out


def test_plain_tree_leaves_out_archives_keys_and_zone_files(machine):
    src = machine.src  # not a git checkout: a copied or unpacked source tree
    (src / "niuniu-2026-12-06.tar.gz").write_bytes(b"secret keys and password hashes")
    (src / "backup").mkdir()
    (src / "backup/evidence.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (src / "zones.json").write_text("{}\n")
    _ok(machine.run())
    code = machine.root / "opt/niuniu/src"
    assert (code / "kiosk/__init__.py").is_file() and (code / "deploy/install.sh").is_file()
    assert not (code / "niuniu-2026-12-06.tar.gz").exists()
    assert not (code / "backup/evidence.pem").exists() and not (code / "zones.json").exists()


# ---------------------------------------------------------------- upgrades that fail or stop


def _new_version(machine: Machine) -> None:
    """A new release in the checkout: new dependencies (pyproject) and new code."""
    pyproject = machine.src / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n# version 2: a new dependency\n")
    (machine.src / "kiosk/__init__.py").write_text('"""kiosk, version 2"""\n')


def _assert_old_version_in_place(machine: Machine, old_pyproject: str, old_stamp: str) -> None:
    code = machine.root / "opt/niuniu/src"
    assert (code / "pyproject.toml").read_text() == old_pyproject
    assert (code / "kiosk/__init__.py").read_text() == '"""kiosk"""\n'
    assert (machine.root / "opt/niuniu/venv/.niuniu-install").read_text() == old_stamp
    assert not (machine.root / "opt/niuniu/src.old").exists()
    assert not (machine.root / "opt/niuniu/.src.new").exists()
    assert ["restart", "niuniu.service"] not in machine.calls_of("systemctl")


def _installed(machine: Machine) -> tuple[str, str]:
    _ok(machine.run())
    return ((machine.root / "opt/niuniu/src/pyproject.toml").read_text(),
            (machine.root / "opt/niuniu/venv/.niuniu-install").read_text())


def test_upgrade_without_pypi_switches_nothing(machine):
    old_pyproject, old_stamp = _installed(machine)
    _new_version(machine)
    # A casino LAN: pip cannot reach PyPI, so already its dry run of the new tree fails.
    result = machine.run(FAKE_FAIL_AT="venv-python --editable")
    assert result.returncode == 1
    _assert_old_version_in_place(machine, old_pyproject, old_stamp)
    (dry_run,) = machine.calls_of("venv-python")  # nothing installed, not even the torch pins
    assert "--dry-run" in dry_run and dry_run[-1] == f"{machine.root}/opt/niuniu/.src.new[pi]"
    assert "nothing was switched" in result.stderr and "keeps running the version it was running" in result.stderr
    assert "/opt/niuniu/venv is unchanged too" in result.stderr
    assert not (machine.root / "opt/niuniu/.restart-pending").exists()

    _ok(machine.run())  # back online: the upgrade goes through
    assert (machine.root / "opt/niuniu/src/kiosk/__init__.py").read_text() == '"""kiosk, version 2"""\n'
    assert machine.calls_of("systemctl")[-1] == ["restart", "niuniu.service"]


def test_pip_failure_after_the_switch_puts_the_previous_code_back(machine):
    old_pyproject, old_stamp = _installed(machine)
    _new_version(machine)
    result = machine.run(FAKE_FAIL_AT="venv-python --editable !--dry-run")
    assert result.returncode == 1
    editable = [a for a in machine.calls_of("venv-python") if "--editable" in a and "--dry-run" not in a]
    assert editable == [[*editable[0][:-1], f"{machine.root}/opt/niuniu/src[pi]"]]  # it was tried, in place
    _assert_old_version_in_place(machine, old_pyproject, old_stamp)
    assert "nothing was switched" in result.stderr and "may already have installed" in result.stderr
    assert not (machine.root / "opt/niuniu/.restart-pending").exists()


def test_power_cut_during_pip_is_undone_by_the_next_run(machine):
    old_pyproject, old_stamp = _installed(machine)
    _new_version(machine)
    result = machine.run(FAKE_KILL_AT="venv-python --editable !--dry-run")
    assert result.returncode == -9
    assert (machine.root / "opt/niuniu/src.old").is_dir()  # the switch had happened

    result = machine.run(FAKE_FAIL_AT="venv-python --editable")  # still no PyPI
    assert result.returncode == 1
    assert "put the previous code back" in result.stdout
    _assert_old_version_in_place(machine, old_pyproject, old_stamp)

    out = _ok(machine.run())
    assert (machine.root / "opt/niuniu/src/kiosk/__init__.py").read_text() == '"""kiosk, version 2"""\n'
    assert machine.calls_of("systemctl")[-1] == ["restart", "niuniu.service"]
    assert "done:" in out


# Files the versions before QA46 ran with, which the current code refuses (QA46 upgrade F2).
REFUSED_TABLE_FILES = {
    "thresholds.motion_gate": ("motion_gate: true", "motion_gate: 1"),
    "camera.mirror": ("mirror: false", "mirror: 'yes'"),
}


@pytest.mark.parametrize("new_dependencies", [False, True], ids=["same-dependencies", "new-dependencies"])
@pytest.mark.parametrize("key", REFUSED_TABLE_FILES)
def test_upgrade_whose_code_refuses_the_table_file_switches_nothing(machine, key, new_dependencies):
    old_pyproject, old_stamp = _installed(machine)
    table = machine.root / "etc/niuniu/table.yaml"
    written, refused = REFUSED_TABLE_FILES[key]
    table.write_text(table.read_text().replace(written, refused))
    if new_dependencies:
        _new_version(machine)
    else:
        (machine.src / "kiosk/__init__.py").write_text('"""kiosk, version 2"""\n')

    result = machine.run()
    assert result.returncode == 1
    assert f"the new version refuses the table file /etc/niuniu/table.yaml:\nniuniu-install:   table file {table}: " \
           f"{key}: write true or false" in result.stderr
    assert "nothing was switched" in result.stderr and "keeps running the version it was running" in result.stderr
    assert "fix /etc/niuniu/table.yaml as the line above says, then run deploy/install.sh again" in result.stderr
    _assert_old_version_in_place(machine, old_pyproject, old_stamp)
    assert not (machine.root / "opt/niuniu/.restart-pending").exists()
    (check,) = machine.calls_of("runuser")  # the new code read it, as the service user
    assert check[:4] == ["-u", "niuniu", "--", f"{machine.root}/opt/niuniu/venv/bin/python"] and check[-1] == str(table)
    assert bool(_pip_calls(machine)) == new_dependencies and \
        ("pip has already installed the new version's dependencies" in result.stderr) == new_dependencies

    table.write_text(table.read_text().replace(refused, written))  # fixed as the line says
    _ok(machine.run())
    assert (machine.root / "opt/niuniu/src/kiosk/__init__.py").read_text() == '"""kiosk, version 2"""\n'
    assert machine.calls_of("systemctl")[-1] == ["restart", "niuniu.service"]


def test_upgrade_whose_code_cannot_load_a_table_file_switches_nothing(machine):
    old_pyproject, old_stamp = _installed(machine)
    (machine.src / "kiosk/__init__.py").write_text('"""kiosk, version 2"""\n')
    (machine.src / "vision/table.py").write_text("raise RuntimeError('a broken release')\n")
    result = machine.run()
    assert result.returncode == 1
    assert "the new version could not load the table file /etc/niuniu/table.yaml" in result.stderr
    assert "RuntimeError: a broken release" in result.stderr and "nothing was switched" in result.stderr
    _assert_old_version_in_place(machine, old_pyproject, old_stamp)


def test_first_install_without_pypi_says_nothing_is_installed(machine):
    result = machine.run(FAKE_FAIL_AT="venv-python --editable")
    assert result.returncode == 1
    assert "NOT installed yet" in result.stderr and "internet" in result.stderr
    assert not (machine.root / "opt/niuniu/venv/.niuniu-install").exists()


def test_restart_survives_a_run_stopped_after_the_code_copy(machine):
    _ok(machine.run())
    (machine.src / "kiosk/__init__.py").write_text('"""kiosk, version 2"""\n')
    result = machine.run(FAKE_KILL_AT="systemctl is-enabled")  # power cut after the copy
    assert result.returncode == -9
    assert (machine.root / "opt/niuniu/src/kiosk/__init__.py").read_text() == '"""kiosk, version 2"""\n'

    out = _ok(machine.run())
    assert machine.calls_of("systemctl")[-2:] == [["daemon-reload"], ["restart", "niuniu.service"]]
    assert "an earlier run stopped before restarting it" in out
    assert not (machine.root / "opt/niuniu/.restart-pending").exists()
    assert "nothing changed" in _ok(machine.run())


def test_failed_restart_is_tried_again_by_the_next_run(machine):
    _ok(machine.run())
    (machine.src / "kiosk/__init__.py").write_text('"""kiosk, version 2"""\n')
    assert machine.run(FAKE_FAIL_AT="systemctl restart niuniu.service").returncode != 0
    _ok(machine.run())
    assert machine.calls_of("systemctl")[-1] == ["restart", "niuniu.service"]


# ---------------------------------------------------------------- the desktop user


def test_mistyped_kiosk_user_stops_before_any_change(machine):
    _ok(machine.run())
    (machine.src / "kiosk/__init__.py").write_text('"""kiosk, version 2"""\n')
    before = machine.snapshot()
    result = machine.run(NIUNIU_KIOSK_USER="ghost")
    assert result.returncode == 2
    assert "desktop user 'ghost' does not exist; set NIUNIU_KIOSK_USER" in result.stderr
    assert machine.snapshot() == before  # the code was not copied either
    assert [c for c in machine.calls() if c["cmd"] in MUTATING] == []


def test_no_desktop_user_is_a_warning_not_a_silent_stop(machine):
    (machine.state / "users.json").write_text("{}")  # no uid 1000
    out = _ok(machine.run())
    assert "warning: no desktop user found" in out


# ---------------------------------------------------------------- the desktop's autostart

XDG_AUTOSTART = "[ -x /usr/bin/lxsession-xdg-autostart ] && /usr/bin/lxsession-xdg-autostart &"


def _active_xdg_lines(text: str) -> list[str]:
    return [line for line in text.splitlines()
            if "lxsession-xdg-autostart" in line and not line.lstrip().startswith("#")]


def test_new_autostart_keeps_the_desktops_xdg_autostart(machine):
    _ok(machine.run())
    lines = (machine.root / "home/pi/.config/labwc/autostart").read_text().splitlines()
    assert XDG_AUTOSTART in lines  # an on-screen keyboard the desktop starts still starts
    assert lines.index(XDG_AUTOSTART) < next(i for i, line in enumerate(lines) if "niuniu-kiosk-browser" in line)


@pytest.mark.parametrize("existing", [
    # written by an earlier installer: the managed block, without the XDG autostart
    "[ -x /usr/bin/kanshi ] && /usr/bin/kanshi &\n"
    "# >>> niuniu kiosk >>> (managed by niuniu deploy/install.sh; replaced on every run)\n"
    "systemd-cat -t niuniu-kiosk /usr/local/bin/niuniu-kiosk-browser &\n# <<< niuniu kiosk <<<\n",
    "/usr/bin/wayvnc &\n",
])
def test_existing_autostart_gains_the_xdg_autostart_once(machine, existing):
    autostart = machine.root / "home/pi/.config/labwc/autostart"
    autostart.parent.mkdir(parents=True)
    autostart.write_text(existing)
    _ok(machine.run())
    assert _active_xdg_lines(autostart.read_text()) == [XDG_AUTOSTART]
    before = machine.snapshot()
    _ok(machine.run())
    assert machine.snapshot() == before


@pytest.mark.parametrize("session", ["LXDE-pi-wayfire", "LXDE-pi-x", "rpd-x"])
def test_warns_when_the_desktop_session_is_not_labwc(machine, session):
    # Bookworm images before Oct 2024 log in to Wayfire, and raspi-config can pick X11: neither
    # reads ~/.config/labwc/autostart, so the dealer screen would never open.
    (machine.root / "etc/lightdm/lightdm.conf").write_text(
        f"[Seat:*]\nuser-session={session}\nautologin-user=pi\nautologin-session={session}\n")
    out = _ok(machine.run())
    assert f"warning: the desktop session is '{session}', not labwc" in out
    assert "raspi-config > Advanced Options > Wayland > labwc" in out
    assert f"warning: the desktop session is '{session}'" in _ok(machine.run())  # every run says it


@pytest.mark.parametrize("conf", [
    "[Seat:*]\nuser-session=LXDE-pi-labwc\nautologin-user=pi\nautologin-session=LXDE-pi-labwc\n",
    "[Seat:*]\n#autologin-session=LXDE-pi-wayfire\nautologin-user=pi\nuser-session=rpd-labwc\n",
    "[Seat:*]\nautologin-user=pi\n",  # nothing says which session: no guess
])
def test_no_session_warning_under_labwc(machine, conf):
    (machine.root / "etc/lightdm/lightdm.conf").write_text(conf)
    assert "desktop session" not in _ok(machine.run())


def test_session_set_in_lightdm_conf_d_counts_too(machine):
    (machine.root / "etc/lightdm/lightdm.conf.d").mkdir()
    (machine.root / "etc/lightdm/lightdm.conf.d/50-x11.conf").write_text("[Seat:*]\nautologin-session=LXDE-pi-x\n")
    assert "desktop session is 'LXDE-pi-x', not labwc" in _ok(machine.run())
    (machine.root / "etc/lightdm/lightdm.conf").write_text(
        "[Seat:*]\nautologin-user=pi\nautologin-session=LXDE-pi-labwc\n")  # read last: it wins
    assert "desktop session" not in _ok(machine.run())


def test_autostart_that_runs_the_xdg_autostart_itself_is_not_given_a_second(machine):
    autostart = machine.root / "home/pi/.config/labwc/autostart"
    autostart.parent.mkdir(parents=True)
    autostart.write_text("/usr/bin/lxsession-xdg-autostart\n")
    _ok(machine.run())
    assert _active_xdg_lines(autostart.read_text()) == ["/usr/bin/lxsession-xdg-autostart"]


# ---------------------------------------------------------------- the clock

DROPIN = "etc/systemd/timesyncd.conf.d/niuniu.conf"


def test_ntp_servers_go_into_a_timesyncd_dropin(machine):
    _ok(machine.run(NIUNIU_NTP="ntp1.casino.lan, 10.0.0.5"))
    dropin = machine.root / DROPIN
    assert "[Time]\nNTP=ntp1.casino.lan 10.0.0.5\n" in dropin.read_text()
    assert dropin.stat().st_mode & 0o777 == 0o644
    assert ["restart", "systemd-timesyncd"] in machine.calls_of("systemctl")
    assert "systemd-timesyncd" in [a for a in machine.calls_of("apt-get") if "install" in a][0]

    before = machine.snapshot()
    out = _ok(machine.run(NIUNIU_NTP="ntp1.casino.lan,10.0.0.5"))  # the same servers again
    assert machine.snapshot() == before and "nothing changed" in out
    assert [a for a in machine.calls_of("systemctl") if a[0] != "is-enabled"] == []

    _ok(machine.run(NIUNIU_NTP="ntp2.casino.lan"))
    assert "NTP=ntp2.casino.lan\n" in dropin.read_text()
    assert machine.calls_of("systemctl").count(["restart", "systemd-timesyncd"]) == 1

    _ok(machine.run())  # NIUNIU_NTP unset: the servers set earlier stay
    assert "NTP=ntp2.casino.lan\n" in dropin.read_text()


@pytest.mark.parametrize("value", ["ntp1.casino.lan;reboot", "ntp1 $(id)", " , "])
def test_bad_ntp_value_stops_before_any_change(machine, value):
    result = machine.run(NIUNIU_NTP=value)
    assert result.returncode == 2 and "NIUNIU_NTP" in result.stderr
    assert machine.calls_of("apt-get") == [] and not (machine.root / "opt").exists()


def test_ntp_refused_where_another_daemon_keeps_the_time(machine):
    (machine.state / "packages.json").write_text(json.dumps(["chrony"]))
    result = machine.run(NIUNIU_NTP="ntp1.casino.lan")
    assert result.returncode == 2 and "chrony keeps the time" in result.stderr
    assert machine.calls_of("apt-get") == []
