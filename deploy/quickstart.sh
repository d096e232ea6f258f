#!/usr/bin/env bash
# Quick start, first half: make .venv in this checkout with the project, its card-model
# extra (ml: ultralytics, ONNX) and its test extra (dev). The README's first command runs
# this, then `.venv/bin/niuniu demo`. Safe to run again: pip skips what is installed.
#
# torch is pinned and installed BEFORE the project. ultralytics asks only for "torch", and
# a bare "torch" makes pip fetch a multi-GB CUDA build from PyPI (on x86_64 always, on
# aarch64 from torch 2.11); asking for the exact release first lets pip take it from a local
# wheel store where the machine has one (CI does) and keeps every machine on the same build:
#   x86_64   torch==2.14.1 torchvision==0.29.1
#   aarch64  torch==2.9.1  torchvision==0.24.1   (CPU-only wheels, cp311 and cp313; the last
#            that run on a Pi 4: 2.10.0 dies there with "Illegal instruction", pytorch#174344.
#            Keep it when x86_64 moves on; deploy/install.sh uses the same pin)
# NIUNIU_TORCH_PINS="..." overrides the pins ("" lets pip choose: the CUDA build).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
python=${PYTHON:-python3}

die() {
    printf 'quickstart: error: %s\n' "$*" >&2
    exit 2
}

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

command -v "$python" >/dev/null 2>&1 || die "$python not found: install Python 3.11 (sudo apt install python3)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    die "$("$python" --version 2>&1) is too old: Python 3.11 or newer is needed"

if [[ ! -x .venv/bin/python ]]; then
    if ! "$python" -c 'import ensurepip' >/dev/null 2>&1; then
        # Debian splits venv support out of python3; install it when we may, else say how.
        # `id -u` rather than $EUID: the tests stand in for root with a fake id.
        if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
            # A fresh Debian image has empty package lists, where the install alone fails
            # ("Unable to locate package"); stale lists fail it too. Update first then.
            if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null || ! apt_install python3-venv; then
                apt-get update
                apt_install python3-venv
            fi
        else
            die "Python's venv module is missing: sudo apt install python3-venv, then run this again"
        fi
    fi
    "$python" -m venv .venv
fi

if [[ -n ${NIUNIU_TORCH_PINS+set} ]]; then
    read -r -a pins <<<"$NIUNIU_TORCH_PINS"
else
    case $(uname -m) in
        x86_64 | amd64) pins=(torch==2.14.1 torchvision==0.29.1) ;;
        aarch64 | arm64) pins=(torch==2.9.1 torchvision==0.24.1) ;;
        *) pins=() ;;
    esac
fi

pip=(.venv/bin/python -m pip install --disable-pip-version-check)
if ((${#pins[@]} > 0)); then
    "${pip[@]}" "${pins[@]}"
fi
"${pip[@]}" --editable ".[ml,dev]"

printf 'quickstart: ready. Demo: .venv/bin/niuniu demo   Tests: .venv/bin/python -m pytest\n'
