#!/usr/bin/env bash
# Install or upgrade the Niu Niu table assistant on a Raspberry Pi 5/4 running
# Raspberry Pi OS 64-bit (with desktop), Trixie or Bookworm, from this checkout.
#
#   sudo deploy/install.sh                 # first install, and every upgrade
#   sudo NIUNIU_KIOSK_USER=dealer deploy/install.sh   # desktop user other than uid 1000
#   sudo NIUNIU_NTP=ntp1.casino.lan,10.0.0.5 deploy/install.sh   # the LAN's time servers
#
# What it sets up (each step is skipped when already in place, so a second run changes
# nothing and an upgrade changes only what differs):
#   apt packages        python3-venv, python3-picamera2, curl, Chromium, ...
#   pip                 runs with --no-cache-dir: no copy of the ~300 MB of wheels is left
#                       in /root/.cache on the SD card
#   user niuniu         system user in group video (camera), no login shell
#   /opt/niuniu/src     a root-owned copy of the files git tracks in this checkout (the
#                       service user cannot read /home/<user>, and a later `git pull` must
#                       not change a running box)
#   /opt/niuniu/venv    venv with --system-site-packages (picamera2 comes from apt),
#                       the project installed editable with its [pi] extra
#   /etc/niuniu/        table.yaml (from deploy/table.example.yaml) and niuniu.env,
#                       created once, never overwritten: they hold the table's calibration
#   /var/lib/niuniu     data: audit database, recordings (owner niuniu, 0750)
#   niuniu.service      systemd unit, enabled; restarted only when something changed
#   niuniu-backup.timer nightly `niuniu backup` to NIUNIU_BACKUP_DIR (set in niuniu.env)
#   kiosk browser       /usr/local/bin/niuniu-kiosk-browser started from the desktop
#                       user's labwc autostart, beside the desktop's XDG autostart (an
#                       on-screen keyboard); no screen blanking
#   browser policy      /etc/chromium/policies/managed/niuniu-kiosk.json (from
#                       deploy/chromium-policy.json): no DevTools on the dealer screen
#   time servers        with NIUNIU_NTP=host[,host]: /etc/systemd/timesyncd.conf.d/niuniu.conf
#
# An upgrade is all or nothing: new code whose dependencies pip cannot install (no internet
# on the casino LAN), or that refuses the table file the service starts with (a newer
# version may check it more strictly), never replaces the running version's code, and the
# service is not restarted. A run cut off part-way (power cut, Ctrl-C) is finished or undone
# by the next run, restart included.
#
# Test hooks (tests/deploy): NIUNIU_ROOT installs under a prefix instead of /, with
# apt-get, useradd, systemctl, ... replaced by recording fakes on PATH.
set -euo pipefail

readonly APP_DIR=/opt/niuniu
readonly VENV=$APP_DIR/venv
readonly CODE=$APP_DIR/src
readonly CONF_DIR=/etc/niuniu
readonly TABLE_FILE=$CONF_DIR/table.yaml # the unit's --config
readonly DATA_DIR=/var/lib/niuniu
readonly UNIT_NAME=niuniu.service
readonly UNIT_PATH=/etc/systemd/system/$UNIT_NAME
readonly BACKUP_SERVICE=niuniu-backup.service
readonly BACKUP_TIMER=niuniu-backup.timer
readonly LAUNCHER=/usr/local/bin/niuniu-kiosk-browser
# Chromium's managed policies, for Debian's `chromium` and Raspberry Pi OS's `chromium-browser`
# alike (both are built from Debian's chromium and ship /etc/chromium/policies/managed).
readonly BROWSER_POLICY=/etc/chromium/policies/managed/niuniu-kiosk.json
readonly SERVICE_USER=niuniu
readonly STAMP=$VENV/.niuniu-install
# Written before anything the running service depends on changes, removed once it has been
# restarted: a run cut off in between (power cut, Ctrl-C, a failed later step) leaves it,
# and the next run restarts even though it finds nothing else to do.
readonly RESTART_PENDING=$APP_DIR/.restart-pending
readonly STAGING=$APP_DIR/.src.new
readonly PREVIOUS=$CODE.old
readonly TIMESYNCD_DROPIN=/etc/systemd/timesyncd.conf.d/niuniu.conf
readonly BLOCK_BEGIN='# >>> niuniu kiosk >>> (managed by niuniu deploy/install.sh; replaced on every run)'
readonly BLOCK_END='# <<< niuniu kiosk <<<'

SRC_DIR=${NIUNIU_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
ROOT=${NIUNIU_ROOT:-}
ROOT=${ROOT%/}
EXTRAS=${NIUNIU_EXTRAS:-pi}
changes=0
restart_needed=0
restart_other=0   # a restart is wanted for more than a code switch that may be undone
pending_at_start=0
staged=0          # $STAGING holds a new version of the code
previous=''       # set while $CODE holds new code whose dependencies are not installed yet
table_error=''    # what the new code said of the table file
KIOSK_USER=''
KIOSK_HOME=''
NTP_SERVERS=()

say() { printf 'niuniu-install: %s\n' "$*"; }
die() {
    printf 'niuniu-install: error: %s\n' "$*" >&2
    exit 2
}
changed() {
    changes=$((changes + 1))
    say "$*"
}

# ------------------------------------------------------------------ checks

check_platform() {
    if [[ -z $ROOT && $EUID -ne 0 ]]; then
        die "run as root: sudo $0"
    fi
    local os_release=$ROOT/etc/os-release codename arch userland
    [[ -r $os_release ]] || die "$os_release is missing; this installer is for Raspberry Pi OS 64-bit (Trixie or Bookworm)"
    codename=$(sed -n 's/^VERSION_CODENAME=//p' "$os_release" | tr -d '"')
    # Trixie (Debian 13, Python 3.13, numpy 2 from apt) and Bookworm (Debian 12, Python 3.11,
    # numpy 1.x): the [pi] extra in pyproject.toml picks the numpy that matches each.
    case $codename in
        trixie | bookworm) ;;
        *) die "this is '${codename:-unknown}', not Bookworm (Debian 12) or Trixie (Debian 13): flash Raspberry Pi OS (64-bit) and run again" ;;
    esac
    arch=$(uname -m)
    # What the packages (and so python3 and the venv) are built for. The Pi 5, and by default
    # the Pi 4, boot a 64-bit kernel under the 32-bit Raspberry Pi OS too: `uname -m` says
    # aarch64 there, but its armhf Python finds no torch, numpy, OpenCV ... on PyPI, and pip
    # would fail only after the packages, the user and the venv were made.
    userland=$(dpkg --print-architecture 2>/dev/null) || userland=''
    [[ -n $userland ]] || die "\`dpkg --print-architecture\` says nothing: this installer is for Raspberry Pi OS 64-bit (Debian's arm64)"
    if [[ $userland == armhf || $userland == armel || ($arch == aarch64 && $userland != arm64) ]]; then
        die "this is a 32-bit Raspberry Pi OS (its packages are '${userland:-unknown}', on a '$arch' kernel); the table device needs Raspberry Pi OS (64-bit), whose packages are arm64: flash that image and run again"
    fi
    if [[ $arch != aarch64 && ${NIUNIU_ALLOW_OTHER_ARCH:-0} != 1 ]]; then
        die "this machine is '$arch'; the table device needs the 64-bit OS (aarch64). On a Debian 12 PC set NIUNIU_ALLOW_OTHER_ARCH=1"
    fi
    [[ -f $SRC_DIR/pyproject.toml && -f $SRC_DIR/deploy/systemd/$UNIT_NAME ]] ||
        die "$SRC_DIR is not a Niu Niu checkout (no pyproject.toml or deploy/systemd/$UNIT_NAME)"
    ARCH=$arch
    CODENAME=$codename
    if [[ $arch == aarch64 && -n ${NIUNIU_TORCH_PINS+set} && -z ${NIUNIU_TORCH_PINS//[[:space:]]/} ]]; then
        say "warning: NIUNIU_TORCH_PINS is empty, so pip picks torch itself: on aarch64 that is a CUDA build of several GB (torch 2.11 on), or 2.10, which crashes a Pi 4 (Illegal instruction); unset it for the tested torch==2.9.1"
    fi
}

# The desktop user, checked before anything changes: a mistyped NIUNIU_KIOSK_USER found only
# at the kiosk step would stop the run half done (code switched, browser and restart not).
check_kiosk_user() {
    KIOSK_USER=$(kiosk_user)
    [[ -n $KIOSK_USER ]] || return 0
    # getent exits 2 for an unknown user: `|| true` so the error below is the one shown.
    KIOSK_HOME=$(getent passwd "$KIOSK_USER" | cut -d: -f6) || true
    [[ -n $KIOSK_HOME ]] ||
        die "desktop user '$KIOSK_USER' does not exist; set NIUNIU_KIOSK_USER to the user that logs in to the screen"
}

# NIUNIU_NTP=host[,host...]: the casino's time servers. Raspberry Pi OS asks the Debian pool
# on the internet, which a casino LAN cannot reach, so without this the clock that stamps
# the audit log is never synchronised. Checked before anything changes.
check_ntp() {
    [[ -n ${NIUNIU_NTP:-} ]] || return 0
    local hosts=() host daemon
    read -r -a hosts <<<"${NIUNIU_NTP//,/ }"
    ((${#hosts[@]} > 0)) || die "NIUNIU_NTP='$NIUNIU_NTP' names no server; give host[,host], e.g. NIUNIU_NTP=ntp1.casino.lan,10.0.0.5"
    for host in "${hosts[@]}"; do
        # A host name, IPv4 or IPv6 address: nothing that could break the line it goes on.
        [[ $host =~ ^[A-Za-z0-9][A-Za-z0-9.:-]*$ ]] ||
            die "NIUNIU_NTP: '$host' is not a host name or address; give host[,host], e.g. NIUNIU_NTP=ntp1.casino.lan,10.0.0.5"
    done
    for daemon in chrony ntpsec ntp openntpd; do
        if package_installed "$daemon"; then
            die "$daemon keeps the time on this device, not systemd-timesyncd: set the casino's servers in its configuration instead of NIUNIU_NTP"
        fi
    done
    NTP_SERVERS=("${hosts[@]}")
}

# torch for the [pi] extra (ultralytics needs it, and imports it, even when the NCNN model is
# used): pinned so every table runs the same build. NIUNIU_TORCH_PINS="..." overrides.
#   aarch64: torch 2.9.1 / torchvision 0.24.1 is the last CPU-only aarch64 wheel on PyPI that
#     runs on a Pi 4 (~100 MB download, ~420 MB installed, cp311 and cp313 wheels). Do not
#     "align" it with the x86_64 pin or leave it out (NIUNIU_TORCH_PINS=""):
#     - torch 2.10.0 dies with "Illegal instruction" at `import torch` on the Pi 4's Cortex-A72
#       (ARMv8.0, no LSE atomics): pytorch/pytorch#174344, fixed in 2.11;
#     - from 2.11 PyPI's aarch64 wheels are CUDA builds that require cuda-toolkit and nvidia-*
#       packages on every Linux (2.9.1 and 2.10 limit those to x86_64): a bare "torch" puts
#       several GB on the SD card.
#     Another version has to be a CPU-only build (PyTorch's own CPU wheel index, not PyPI),
#     tried on a Pi 4 (`python -c 'import torch'`) before it goes to a table.
#   x86_64 (a PC, NIUNIU_ALLOW_OTHER_ARCH=1): the same pins as deploy/quickstart.sh.
torch_pins() {
    if [[ -n ${NIUNIU_TORCH_PINS+set} ]]; then
        printf '%s' "$NIUNIU_TORCH_PINS"
    elif [[ $ARCH == aarch64 ]]; then
        printf '%s' 'torch==2.9.1 torchvision==0.24.1'
    else
        printf '%s' 'torch==2.14.1 torchvision==0.29.1'
    fi
}

# ------------------------------------------------------------------ helpers

package_installed() {
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

# Whether DEST already has SRC's content and MODE.
file_current() {
    local src=$1 dest=$2 mode=$3
    [[ -f $dest ]] && cmp -s "$src" "$dest" && [[ $(stat -c %a "$dest") == "${mode#0}" ]]
}

# Copy SRC to DEST with MODE unless DEST already has that content and mode.
# Returns 0 when DEST changed.
put_file() {
    local src=$1 dest=$2 mode=$3
    if file_current "$src" "$dest" "$mode"; then
        return 1
    fi
    mkdir -p "$(dirname "$dest")"
    install -m "$mode" "$src" "$dest"
    return 0
}

# Like put_file, for generated text.
put_text() {
    local text=$1 dest=$2 mode=$3 tmp status=0
    tmp=$(mktemp)
    printf '%s' "$text" >"$tmp"
    put_file "$tmp" "$dest" "$mode" || status=$?
    rm -f "$tmp"
    return "$status"
}

# git on the checkout. safe.directory: `su -` to root (no SUDO_UID) makes git refuse a clone
# owned by the desktop user, and the fallback below would then copy untracked files too; the
# checkout is trusted already, since this script itself comes from it.
src_git() {
    git -c safe.directory='*' -C "$SRC_DIR" "$@"
}

is_git_checkout() {
    src_git rev-parse --is-inside-work-tree >/dev/null 2>&1
}

# The files of the checkout. In a git checkout, only what git tracks (committed or added):
# an untracked file beside the code may be anything (a whole-device backup archive with the
# table's keys, a downloaded zones.json, a collector log) and must not land in a tree every
# user on the device can read. Without git: the tree minus build output, caches, archives
# and keys.
list_source_files() {
    if is_git_checkout; then
        src_git ls-files -z --cached
    else
        (cd "$SRC_DIR" && find . \( -name .git -o -name .venv -o -name __pycache__ -o -name '*.egg-info' \
            -o -name .pytest_cache -o -name .hypothesis -o -name runs -o -name build -o -name work-data \
            -o -name .cache -o -name '*.tar' -o -name '*.tar.gz' -o -name '*.tgz' -o -name '*.zip' \
            -o -name '*.pem' -o -name '*.key' -o -name zones.json -o -name '*.sqlite3' \) \
            -prune -o \( -type f -o -type l \) -print0)
    fi
}

# Says which files of a git checkout are left out, so a new module that was never `git add`ed
# is not a mystery on the device.
note_untracked_files() {
    is_git_checkout || return 0
    local names=() name
    while IFS= read -r -d '' name; do
        names+=("$name")
    done < <(src_git ls-files -z --others --exclude-standard)
    ((${#names[@]} > 0)) || return 0
    say "note: ${#names[@]} file(s) in $SRC_DIR that git does not track are not copied to the device" \
        "(${names[*]:0:3}${names[3]:+ ...}); \`git add\` any the table needs"
}

# Asks for a restart of the service: the marker goes on disk BEFORE the change it is for, so
# no way of stopping between the change and the restart can lose it.
need_restart() {
    restart_needed=1
    [[ ${1:-} == code ]] || restart_other=1
    mkdir -p "$ROOT$APP_DIR"
    : >"$ROOT$RESTART_PENDING"
}

# What pip was last asked to install for code tree $1: an unchanged stamp skips pip.
stamp_text() {
    [[ -f $1/pyproject.toml ]] || return 0
    printf 'extras=%s\ntorch=%s\npyproject=%s\n' "$EXTRAS" "$(torch_pins)" \
        "$(sha256sum "$1/pyproject.toml" | cut -d' ' -f1)"
}

# Whether the venv holds the dependencies of code tree $1.
dependencies_current() {
    [[ -f $ROOT$STAMP && -f $1/pyproject.toml && $(<"$ROOT$STAMP") == "$(stamp_text "$1")" ]]
}

# How a code tree loads the table file: load_table_config, as `niuniu kiosk` and `niuniu check`
# do at start (the rules preset it names included), and nothing else: no camera, no model, no
# data directory. Exit status 3: the file is refused. Arguments: the tree, the table file.
readonly TABLE_CHECK='import sys
sys.path.insert(0, sys.argv[1])
from scoring.errors import NiuniuError
from vision.table import load_table_config
try:
    load_table_config(sys.argv[2])
except NiuniuError as exc:
    print(exc, file=sys.stderr)
    sys.exit(3)'

# Whether code tree $1, with the venv's packages, loads the table file the service starts
# with, read as the service user; what it said goes to $table_error. A newer version may
# refuse a file the running one accepts, and restarted on it the kiosk would stop at every
# start until systemd gives up: the table dark. No table file yet (a first install): yes.
table_loads() {
    local tree=$1 table=$ROOT$TABLE_FILE status=0
    [[ -e $table ]] || return 0
    table_error=$(cd "$tree" && runuser -u "$SERVICE_USER" -- \
        "$ROOT$VENV/bin/python" -B -c "$TABLE_CHECK" "$tree" "$table" 2>&1) || status=$?
    return "$status"
}

# The new code refuses the table file (status $2 of table_loads): say so, with its own line,
# and keep the previous code, as for a pip failure. $1: pip installed the new dependencies.
table_failure() {
    local venv_touched=$1 status=$2
    rollback_code
    rm -rf "$ROOT$STAGING"
    {
        if ((status == 3)); then
            printf 'niuniu-install: error: the new version refuses the table file %s:\n' "$TABLE_FILE"
        else
            printf 'niuniu-install: error: the new version could not load the table file %s:\n' "$TABLE_FILE"
        fi
        printf '%s\n' "$table_error" | sed 's/^/niuniu-install:   /'
        printf 'niuniu-install: nothing was switched: %s holds the code it held before this run, and %s was not restarted, so the table keeps running the version it was running.\n' \
            "$CODE" "$UNIT_NAME"
        if ((venv_touched)); then
            printf "niuniu-install: pip has already installed the new version's dependencies in %s.\n" "$VENV"
        fi
        if ((status == 3)); then
            printf 'niuniu-install: fix %s as the line above says, then run deploy/install.sh again.\n' "$TABLE_FILE"
        else
            printf 'niuniu-install: the new version does not start here (its output is above): keep the running one and report it.\n'
        fi
    } >&2
    exit 1
}

# ------------------------------------------------------------------ steps

install_packages() {
    local wanted=(python3 python3-venv python3-pip curl ca-certificates libgomp1 git)
    local raspberry_pi_os=0
    [[ -e $ROOT/etc/rpi-issue ]] && raspberry_pi_os=1
    # picamera2 (and the libcamera it wraps) exists only in the Raspberry Pi archive;
    # it reaches the venv through --system-site-packages.
    ((raspberry_pi_os)) && wanted+=(python3-picamera2)
    if ((${#NTP_SERVERS[@]} > 0)); then
        wanted+=(systemd-timesyncd)
    fi
    if ! package_installed chromium-browser && ! package_installed chromium; then
        # Raspberry Pi OS named its browser chromium-browser up to Bookworm; from Trixie it is
        # Debian's name, chromium (deploy/kiosk-browser.sh runs either).
        if ((raspberry_pi_os)) && [[ $CODENAME == bookworm ]]; then wanted+=(chromium-browser); else wanted+=(chromium); fi
    fi
    # The X11/OpenGL libraries opencv-python's cv2 loads (its bundled Qt needs them; the Pi venv
    # has opencv-python, which ultralytics requires, not opencv-python-headless): part of every
    # desktop image, named here so that `import cv2` never fails on a trimmed one.
    wanted+=(libgl1 libsm6 libice6)
    local missing=() package
    for package in "${wanted[@]}"; do
        package_installed "$package" || missing+=("$package")
    done
    if ((${#missing[@]} == 0)); then
        return 0
    fi
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    changed "installed packages: ${missing[*]}"
}

ensure_user() {
    if ! getent passwd "$SERVICE_USER" >/dev/null; then
        useradd --system --user-group --groups video --home-dir "$DATA_DIR" --no-create-home \
            --shell /usr/sbin/nologin --comment "Niu Niu table assistant" "$SERVICE_USER"
        changed "created system user $SERVICE_USER (group video)"
    elif ! id -nG "$SERVICE_USER" | tr ' ' '\n' | grep -qx video; then
        usermod -a -G video "$SERVICE_USER"
        changed "added $SERVICE_USER to group video"
    fi
}

# A run stopped between switching the code and installing its dependencies (power cut,
# SIGKILL: anything the EXIT trap cannot see) leaves the previous tree in $PREVIOUS. Put it
# back unless the new tree's dependencies did get installed, so new code never runs on old
# dependencies; the rest of this run then tries the upgrade again.
recover_cut_off_upgrade() {
    local dest=$ROOT$CODE old=$ROOT$PREVIOUS
    rm -rf "$ROOT$STAGING" # rebuilt below
    [[ -d $old ]] || return 0
    if [[ -d $dest ]] && dependencies_current "$dest"; then
        rm -rf "$old" # the upgrade was through; only the clean-up was cut off
        return 0
    fi
    rm -rf "$dest"
    mv "$old" "$dest"
    changed "put the previous code back in $CODE: an earlier run stopped before the new version's dependencies were installed"
}

# Copy the checkout to $STAGING when it differs from $CODE; switch_code puts it in place.
stage_code() {
    local dest=$ROOT$CODE staging=$ROOT$STAGING
    note_untracked_files
    if [[ -d $dest && $(cd "$SRC_DIR" && pwd -P) == "$(cd "$dest" && pwd -P)" ]]; then
        return 0 # running from the installed copy itself
    fi
    rm -rf "$staging"
    mkdir -p "$staging"
    list_source_files | (cd "$SRC_DIR" && tar --null --files-from=- --ignore-failed-read --create --file=-) |
        tar --extract --file=- --directory="$staging" --no-same-owner --no-same-permissions
    if [[ -d $dest ]] && diff -r -q --no-dereference -x '*.egg-info' -x __pycache__ "$dest" "$staging" >/dev/null 2>&1; then
        rm -rf "$staging"
        return 0
    fi
    chmod 0755 "$staging"
    staged=1
}

# Put the staged code in place. With "keep", the previous tree stays in $PREVIOUS (and
# $previous is set) until commit_code or rollback_code.
switch_code() {
    local dest=$ROOT$CODE keep=${1:-}
    need_restart code
    rm -rf "$ROOT$PREVIOUS"
    if [[ -d $dest ]]; then
        mv "$dest" "$ROOT$PREVIOUS"
    fi
    mv "$ROOT$STAGING" "$dest"
    staged=0
    if [[ $keep == keep && -d $ROOT$PREVIOUS ]]; then
        previous=$ROOT$PREVIOUS
    else
        rm -rf "$ROOT$PREVIOUS"
    fi
    changed "copied $SRC_DIR to $CODE"
}

commit_code() {
    rm -rf "$ROOT$PREVIOUS"
    previous=''
}

# Undo switch_code keep: the previous tree back, the new one gone. The restart marker goes
# too when only this switch asked for it: the service already runs the code now on disk.
rollback_code() {
    [[ -n $previous ]] || return 0
    rm -rf "$ROOT$CODE"
    mv "$previous" "$ROOT$CODE"
    previous=''
    if ((!pending_at_start && !restart_other)); then
        rm -f "$ROOT$RESTART_PENDING"
        restart_needed=0
    fi
}

# A stop from anything else (a failing command under set -e, Ctrl-C, SIGTERM) while new
# code waits for its dependencies: put the previous code back, as for a pip failure.
on_exit() {
    local status=$?
    if [[ -n $previous ]]; then
        rollback_code
        printf 'niuniu-install: stopped before the new version was installed: %s holds the previous code again and %s was not restarted\n' \
            "$CODE" "$UNIT_NAME" >&2
    fi
    exit "$status"
}

# pip could not install what the new code needs: say exactly what state the device is in.
# $1: a version was installed before this run; $2: pip got as far as installing packages.
dependency_failure() {
    local had_code=$1 venv_touched=$2
    rollback_code
    rm -rf "$ROOT$STAGING"
    {
        printf 'niuniu-install: error: pip could not install the dependencies (its output is above).\n'
        if ((had_code)); then
            printf 'niuniu-install: nothing was switched: %s holds the code it held before this run, and %s was not restarted, so the table keeps running the version it was running.\n' \
                "$CODE" "$UNIT_NAME"
            if ((venv_touched)); then
                printf 'niuniu-install: pip may already have installed some of the new dependencies in %s.\n' "$VENV"
            else
                printf 'niuniu-install: %s is unchanged too: pip stopped before installing anything.\n' "$VENV"
            fi
        else
            printf 'niuniu-install: the table assistant is NOT installed yet: %s lacks the project.\n' "$VENV"
        fi
        printf 'niuniu-install: pip needs PyPI (internet access): run deploy/install.sh again where the Pi can reach it.\n'
    } >&2
    exit 1
}

ensure_venv() {
    local cfg=$ROOT$VENV/pyvenv.cfg
    if [[ ! -x $ROOT$VENV/bin/python || ! -f $cfg ]]; then
        need_restart
        python3 -m venv --system-site-packages "$ROOT$VENV"
        changed "created $VENV (with system site packages, for picamera2)"
    elif ! grep -Eq '^include-system-site-packages *= *true' "$cfg"; then
        need_restart
        sed -i -E 's/^include-system-site-packages *=.*/include-system-site-packages = true/' "$cfg"
        changed "$VENV now sees system site packages (picamera2)"
    fi
}

# The code and its dependencies, all or nothing. The install is editable (the venv points at
# $CODE), so pip must install the project from the tree at its final place. When the
# dependencies change on an installed device, a dry run of the new tree with the torch pins
# goes first: without internet (a casino LAN) the upgrade stops there, before the venv or
# the code has changed. Then the pins go in (the big download, old tree still in place),
# then the new tree with the previous one kept, which comes back if pip fails after all.
# An upgrade also has the new code load the table file before it is kept: in $STAGING with
# unchanged dependencies, else in place once pip has installed them (the previous tree back
# if the file is refused).
install_code() {
    local dest=$ROOT$CODE tree=$ROOT$CODE had_code=0 upgrade=0 pins pin_args=()
    if ((staged)); then
        tree=$ROOT$STAGING
        if [[ -d $dest ]]; then
            upgrade=1 # new code replaces a version that runs
        fi
    fi
    if [[ -f $ROOT$STAMP ]]; then
        had_code=1
    fi
    if dependencies_current "$tree"; then
        if ((staged)); then
            if ((upgrade)); then
                table_loads "$tree" || table_failure 0 $?
            fi
            switch_code
        fi
        return 0
    fi
    # --no-cache-dir: the wheels (~300 MB) are not kept in /root/.cache/pip on the SD card.
    local pip=("$ROOT$VENV/bin/python" -m pip install --disable-pip-version-check --no-cache-dir)
    pins=$(torch_pins)
    if [[ -n $pins ]]; then
        read -r -a pin_args <<<"$pins"
    fi
    if ((had_code)); then
        "${pip[@]}" --dry-run --quiet "${pin_args[@]}" --editable "${tree}[${EXTRAS}]" ||
            dependency_failure "$had_code" 0
    fi
    if ((${#pin_args[@]} > 0)); then
        # Before the project, so ultralytics' plain "torch" dependency is already met.
        "${pip[@]}" "${pin_args[@]}" || dependency_failure "$had_code" 1
    fi
    if ((staged)); then
        switch_code keep
    fi
    "${pip[@]}" --editable "${dest}[${EXTRAS}]" || dependency_failure "$had_code" 1
    # Only now can the new code run (its dependencies were missing); the previous tree is kept.
    if ((upgrade)); then
        table_loads "$dest" || table_failure 1 $?
    fi
    need_restart
    stamp_text "$dest" >"$ROOT$STAMP"
    commit_code
    changed "installed the project with its [$EXTRAS] extra into $VENV"
}

ensure_config() {
    mkdir -p "$ROOT$CONF_DIR"
    chmod 0755 "$ROOT$CONF_DIR"
    if [[ ! -e $ROOT$CONF_DIR/table.yaml ]]; then
        install -m 0644 "$ROOT$CODE/deploy/table.example.yaml" "$ROOT$CONF_DIR/table.yaml"
        changed "created $CONF_DIR/table.yaml from the example: calibrate it (README, 'Calibrating a table')"
    fi
    if [[ ! -e $ROOT$CONF_DIR/niuniu.env ]]; then
        install -m 0644 "$ROOT$CODE/deploy/niuniu.env" "$ROOT$CONF_DIR/niuniu.env"
        changed "created $CONF_DIR/niuniu.env"
    fi
}

ensure_data_dir() {
    if [[ ! -d $ROOT$DATA_DIR ]]; then
        mkdir -p "$ROOT$DATA_DIR"
        chmod 0750 "$ROOT$DATA_DIR"
        chown "$SERVICE_USER:$SERVICE_USER" "$ROOT$DATA_DIR"
        changed "created $DATA_DIR"
    fi
}

install_service() {
    if ! file_current "$ROOT$CODE/deploy/systemd/$UNIT_NAME" "$ROOT$UNIT_PATH" 0644; then
        need_restart
        put_file "$ROOT$CODE/deploy/systemd/$UNIT_NAME" "$ROOT$UNIT_PATH" 0644
        systemctl daemon-reload
        changed "installed $UNIT_PATH"
    fi
    if ! systemctl is-enabled --quiet "$UNIT_NAME" 2>/dev/null; then
        systemctl enable "$UNIT_NAME"
        changed "enabled $UNIT_NAME (starts at boot)"
    fi
}

# The nightly backup: its service runs only once NIUNIU_BACKUP_DIR is set in niuniu.env.
install_backup_timer() {
    local unit reload=0
    for unit in $BACKUP_SERVICE $BACKUP_TIMER; do
        if put_file "$ROOT$CODE/deploy/systemd/$unit" "$ROOT/etc/systemd/system/$unit" 0644; then
            reload=1
            changed "installed /etc/systemd/system/$unit"
        fi
    done
    if ((reload)); then
        systemctl daemon-reload
    fi
    if ! systemctl is-enabled --quiet "$BACKUP_TIMER" 2>/dev/null; then
        systemctl enable --now "$BACKUP_TIMER"
        changed "enabled $BACKUP_TIMER (nightly audit log backup; set NIUNIU_BACKUP_DIR in $CONF_DIR/niuniu.env)"
    fi
}

# The session lightdm logs the desktop user in to: autologin-session, else user-session, the
# last one set in lightdm.conf.d/*.conf and lightdm.conf (read in that order, as lightdm does).
# Raspberry Pi OS names them LXDE-pi-labwc / rpd-labwc (labwc), LXDE-pi-wayfire (Bookworm
# images before Oct 2024), LXDE-pi-x / rpd-x (X11). Empty when nothing says.
desktop_session() {
    local file autologin='' user='' value
    for file in "$ROOT"/etc/lightdm/lightdm.conf.d/*.conf "$ROOT/etc/lightdm/lightdm.conf"; do
        [[ -f $file ]] || continue
        value=$(sed -n 's/^[[:space:]]*autologin-session[[:space:]]*=[[:space:]]*//p' "$file" | tail -n 1)
        if [[ -n $value ]]; then autologin=$value; fi
        value=$(sed -n 's/^[[:space:]]*user-session[[:space:]]*=[[:space:]]*//p' "$file" | tail -n 1)
        if [[ -n $value ]]; then user=$value; fi
    done
    printf '%s' "${autologin:-$user}"
}

# The desktop user whose labwc session shows the dealer screen.
kiosk_user() {
    if [[ -n ${NIUNIU_KIOSK_USER:-} ]]; then
        printf '%s' "$NIUNIU_KIOSK_USER"
    elif [[ -n ${SUDO_USER:-} && $SUDO_USER != root ]]; then
        printf '%s' "$SUDO_USER"
    else
        # No uid 1000 is a warning later, not a silent stop here (getent exits 2).
        getent passwd 1000 | cut -d: -f1 || true
    fi
}

# The autostart text: the user's own lines, any screen blanker (swayidle) commented out,
# and the managed block that starts the kiosk browser, replaced on every run.
#
# A user's labwc autostart replaces the system one (/etc/xdg/labwc/autostart), and with it
# the lxsession-xdg-autostart call that starts the desktop's XDG autostart entries, such as
# an on-screen keyboard: the only keyboard a touch screen has. The block calls it unless the
# user's own lines already do.
autostart_text() {
    local existing=$1 user_lines
    if [[ -z $existing ]]; then
        user_lines=$(printf '%s\n' \
            '# labwc autostart of the Niu Niu dealer screen (created by deploy/install.sh).' \
            '# It replaces the desktop autostart (panel, desktop icons): only the kiosk shows,' \
            '# with what the desktop starts from /etc/xdg/autostart (an on-screen keyboard).' \
            '# Keep the display layout and rotation set with the Screen Configuration tool:' \
            '[ -x /usr/bin/kanshi ] && /usr/bin/kanshi &')
    else
        user_lines=$(printf '%s\n' "$existing" | awk -v begin="$BLOCK_BEGIN" -v end="$BLOCK_END" '
            $0 == begin { skip = 1; next }
            $0 == end { skip = 0; next }
            skip { next }
            /^[[:space:]]*[^#]*swayidle/ { print "# niuniu: screen blanking off: " $0; next }
            { print }')
    fi
    printf '%s\n' "$user_lines" "$BLOCK_BEGIN"
    if ! grep -Eq '^[[:space:]]*[^#[:space:]][^#]*lxsession-xdg-autostart' <<<"$user_lines"; then
        printf '%s\n' '[ -x /usr/bin/lxsession-xdg-autostart ] && /usr/bin/lxsession-xdg-autostart &'
    fi
    printf '%s\n' "systemd-cat -t niuniu-kiosk $LAUNCHER &" "$BLOCK_END"
}

# The policies every Chromium on the device obeys, the kiosk's included; a user cannot change
# them (root-owned, 0644), and a later run puts back a file changed by hand:
#   DeveloperToolsAvailability 2  no DevTools (F12, Ctrl+Shift+I) from the pit's keyboard: its
#                                 console could script the logged-in dealer page (Chromium 156
#                                 refuses them in --kiosk already; this holds for every version
#                                 and every window)
#   IncognitoModeAvailability 1   no incognito window (Ctrl+Shift+N) opening beside the kiosk
#   BrowserSignin 0               no signing in to a Google account on a shared table device
#   PasswordManagerEnabled false  no offer to save a dealer's password for the next person there
# Downloads stay allowed: the supervisor's review pages export files.
install_browser_policy() {
    if put_file "$ROOT$CODE/deploy/chromium-policy.json" "$ROOT$BROWSER_POLICY" 0644; then
        changed "installed the browser policy $BROWSER_POLICY (no developer tools); check: chrome://policy"
    fi
}

install_kiosk_browser() {
    if put_file "$ROOT$CODE/deploy/kiosk-browser.sh" "$ROOT$LAUNCHER" 0755; then
        changed "installed $LAUNCHER"
    fi
    install_browser_policy
    local user=$KIOSK_USER home=$KIOSK_HOME file existing=''
    if [[ -z $user ]]; then
        say "warning: no desktop user found (uid 1000); set NIUNIU_KIOSK_USER=<user> to start the kiosk browser at login"
        return 0
    fi
    file=$ROOT$home/.config/labwc/autostart
    if [[ -f $file ]]; then
        existing=$(<"$file")
    fi
    if put_text "$(autostart_text "$existing")" "$file" 0644; then
        chown "$user:" "$ROOT$home/.config" "$ROOT$home/.config/labwc" "$file"
        changed "kiosk browser starts in $user's labwc session ($home/.config/labwc/autostart); reboot to see it"
    fi
    if [[ -f $ROOT/etc/lightdm/lightdm.conf ]] && ! grep -Eq '^[[:space:]]*autologin-user=' "$ROOT/etc/lightdm/lightdm.conf"; then
        say "warning: the desktop does not log in by itself; choose raspi-config > System Options > Boot / Auto Login > Desktop Autologin"
    fi
    # Only labwc reads ~/.config/labwc/autostart: under Wayfire or X11 the service runs but the
    # dealer screen never opens.
    local session
    session=$(desktop_session)
    if [[ -n $session && ${session,,} != *labwc* ]]; then
        say "warning: the desktop session is '$session', not labwc: the dealer screen starts only in a labwc session and will not open;" \
            "choose raspi-config > Advanced Options > Wayland > labwc, then reboot"
    fi
}

# The casino's time servers (NIUNIU_NTP) as a timesyncd drop-in; unset leaves the clock
# settings alone. A run cut off between writing and restarting is made good at the next
# boot, when timesyncd reads the drop-in.
ensure_time_servers() {
    ((${#NTP_SERVERS[@]} > 0)) || return 0
    local text
    text="# The casino's time servers, written by niuniu deploy/install.sh from NIUNIU_NTP (run it
# again with another NIUNIU_NTP to change them). A casino LAN cannot reach the internet pool
# Raspberry Pi OS asks by default, and the audit log's timestamps come from this clock.
[Time]
NTP=${NTP_SERVERS[*]}
"
    if put_text "$text" "$ROOT$TIMESYNCD_DROPIN" 0644; then
        systemctl restart systemd-timesyncd
        changed "the clock follows ${NTP_SERVERS[*]} ($TIMESYNCD_DROPIN); check: timedatectl timesync-status"
    fi
    if ! systemctl is-enabled --quiet systemd-timesyncd 2>/dev/null; then
        systemctl enable --now systemd-timesyncd
        changed "enabled systemd-timesyncd (clock synchronisation)"
    fi
}

restart_service() {
    if ((restart_needed)) || [[ -e $ROOT$RESTART_PENDING ]]; then
        if ((!restart_needed)); then
            # Left by a run that stopped before its restart: the unit file may have changed.
            systemctl daemon-reload
        fi
        systemctl restart "$UNIT_NAME"
        rm -f "$ROOT$RESTART_PENDING"
        if ((restart_needed)); then
            changed "restarted $UNIT_NAME"
        else
            changed "restarted $UNIT_NAME (an earlier run stopped before restarting it)"
        fi
    fi
}

main() {
    umask 022 # everything installed is readable by the service user
    check_platform
    check_kiosk_user
    check_ntp
    trap on_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    if [[ -e $ROOT$RESTART_PENDING ]]; then
        pending_at_start=1
    fi
    recover_cut_off_upgrade # first: until then new code may sit on old dependencies
    install_packages
    ensure_user
    stage_code
    ensure_venv
    install_code
    ensure_config
    ensure_data_dir
    install_service
    install_backup_timer
    install_kiosk_browser
    ensure_time_servers
    restart_service
    if ((changes == 0)); then
        say "already up to date: nothing changed"
    else
        say "done: $changes change(s). Dealer screen: http://127.0.0.1:<NIUNIU_PORT>/; logs: journalctl -u niuniu -f"
        say "check the device: sudo -u $SERVICE_USER $VENV/bin/niuniu check --config $CONF_DIR/table.yaml --data-dir $DATA_DIR --no-camera --model-format ncnn"
    fi
}

main "$@"
