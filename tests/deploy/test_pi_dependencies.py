"""What pyproject.toml asks pip for on each Raspberry Pi OS release (the [pi] extra).

The Pi venv sees apt's python3-picamera2 through --system-site-packages, and picamera2's C
extensions (simplejpeg, av) are built against the numpy of the same release: numpy 1.24 on
Bookworm (Python 3.11), numpy 2.2 on Trixie (Python 3.13). The venv's numpy must be of that
major version, and at least as new. These tests read the requirements with the markers of
each Pi, as pip evaluates them there. That the sets resolve to wheels on PyPI needs the
network, so it is checked by hand when these pins change: `uv pip compile --python-platform
aarch64-manylinux_2_28 --python-version 3.11 (and 3.13) --only-binary :all:` with the torch
pins of deploy/install.sh (`pip --platform` alone evaluates markers for the machine it runs
on, and so would pull torch's x86_64-only nvidia-* packages).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]

BOOKWORM = {"python_version": "3.11", "python_full_version": "3.11.2", "platform_machine": "aarch64"}
TRIXIE = {"python_version": "3.13", "python_full_version": "3.13.5", "platform_machine": "aarch64"}
X86_CI = {"python_version": "3.11", "python_full_version": "3.11.2", "platform_machine": "x86_64"}


def _requirements(env: dict, extra: str) -> dict[str, list[Requirement]]:
    """The project's requirements with ``extra``, as pip on that machine sees them."""
    full = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
            "implementation_name": "cpython", "platform_python_implementation": "CPython", **env}
    found: dict[str, list[Requirement]] = {}
    for line in [*PROJECT["dependencies"], *PROJECT["optional-dependencies"][extra]]:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({**full, "extra": extra}):
            found.setdefault(req.name.lower(), []).append(req)
    return found


def _allows(reqs: list[Requirement], version: str) -> bool:
    return all(r.specifier.contains(version, prereleases=True) for r in reqs)


def test_bookworm_keeps_numpy_1_for_apts_picamera2():
    reqs = _requirements(BOOKWORM, "pi")
    assert _allows(reqs["numpy"], "1.26.4")
    assert not _allows(reqs["numpy"], "2.0.0")
    assert _allows(reqs["opencv-python"], "4.11.0.86") and not _allows(reqs["opencv-python"], "4.12.0.88")


def test_trixie_takes_numpy_2_like_its_apt_numpy():
    reqs = _requirements(TRIXIE, "pi")
    # 1.26 has no cp313 wheel, and apt's picamera2 stack is built against numpy 2.2.
    assert not _allows(reqs["numpy"], "1.26.4")
    assert _allows(reqs["numpy"], "2.2.4")  # apt's own python3-numpy satisfies it
    assert _allows(reqs["numpy"], "2.5.5")
    assert _allows(reqs["opencv-python"], "5.1.0.95")  # no cap: the numpy 2 builds


@pytest.mark.parametrize("env", [BOOKWORM, TRIXIE], ids=["bookworm", "trixie"])
def test_pi_venv_gets_one_opencv(env):
    # ultralytics requires opencv-python; opencv-python-headless beside it would install a
    # second copy into the same cv2/ (114 MB, and uninstalling either breaks `import cv2`).
    reqs = _requirements(env, "pi")
    assert "opencv-python" in reqs
    assert "opencv-python-headless" not in reqs
    assert "ultralytics" in reqs and "ncnn" in reqs


def test_x86_install_still_has_opencv():
    assert "opencv-python-headless" in _requirements(X86_CI, "ml")
