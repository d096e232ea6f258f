#!/usr/bin/env bash
# Install or upgrade the Niu Niu table assistant on a Raspberry Pi 5/4 running
# Raspberry Pi OS Bookworm 64-bit (with desktop), from this checkout.
#
#   sudo deploy/install.sh                 # first install, and every upgrade
#   sudo NIUNIU_KIOSK_USER=dealer deploy/install.sh   # desktop user other than uid 1000
#
# What it sets up (each step is skipped when already in place, so a second run changes
# nothing and an upgrade changes only what differs):
#   apt packages        python3-venv, python3-picamera2, curl, Chromium, ...
#   user niuniu         system user in group video (camera), no login shell
#   /opt/niuniu/src     a root-owned copy of this checkout (the service user cannot read
#                       /home/<user>, and a later `git pull` must not change a running box)
#   /opt/niuniu/venv    venv with --system-site-packages (picamera2 comes from apt),
#                       the project installed editable with its [pi] extra
#   /etc/niuniu/        table.yaml (from deploy/table.example.yaml) and niuniu.env,
#                       created once, never overwritten: they hold the table's calibration
#   /var/lib/niuniu     data: audit database, recordings (owner niuniu, 0750)
#   niuniu.service      systemd unit, enabled; restarted only when something changed
#   niuniu-backup.timer nightly `niuniu backup` to NIUNIU_BACKUP_DIR (set in niuniu.env)
#   kiosk browser       /usr/local/bin/niuniu-kiosk-browser started from the desktop
#                       user's labwc autostart; no screen blanking
#
# Test hooks (tests/deploy): NIUNIU_ROOT installs under a prefix instead of /, with
# apt-get, useradd, systemctl, ... replaced by recording fakes on PATH.
set -euo pipefail

readonly APP_DIR=/opt/niuniu
readonly VENV=$APP_DIR/venv
readonly CODE=$APP_DIR/src
readonly CONF_DIR=/etc/niuniu
readonly DATA_DIR=/var/lib/niuniu
readonly UNIT_NAME=niuniu.service
readonly UNIT_PATH=/etc/systemd/system/$UNIT_NAME
readonly BACKUP_SERVICE=niuniu-backup.service
readonly BACKUP_TIMER=niuniu-backup.timer
readonly LAUNCHER=/usr/local/bin/niuniu-kiosk-browser
readonly SERVICE_USER=niuniu
readonly STAMP=$VENV/.niuniu-install
readonly BLOCK_BEGIN='# >>> niuniu kiosk >>> (managed by niuniu deploy/install.sh; replaced on every run)'
readonly BLOCK_END='# <<< niuniu kiosk <<<'

SRC_DIR=${NIUNIU_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
ROOT=${NIUNIU_ROOT:-}
ROOT=${ROOT%/}
EXTRAS=${NIUNIU_EXTRAS:-pi}
changes=0
restart_needed=0

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
    local os_release=$ROOT/etc/os-release codename arch
    [[ -r $os_release ]] || die "$os_release is missing; this installer is for Raspberry Pi OS Bookworm 64-bit"
    codename=$(sed -n 's/^VERSION_CODENAME=//p' "$os_release" | tr -d '"')
    if [[ $codename != bookworm ]]; then
        die "this is '${codename:-unknown}', not Bookworm (Debian 12): flash Raspberry Pi OS (64-bit, Bookworm) and run again"
    fi
    arch=$(uname -m)
    if [[ $arch != aarch64 && ${NIUNIU_ALLOW_OTHER_ARCH:-0} != 1 ]]; then
        die "this machine is '$arch'; the table device needs the 64-bit OS (aarch64). On a Debian 12 PC set NIUNIU_ALLOW_OTHER_ARCH=1"
    fi
    [[ -f $SRC_DIR/pyproject.toml && -f $SRC_DIR/deploy/systemd/$UNIT_NAME ]] ||
        die "$SRC_DIR is not a Niu Niu checkout (no pyproject.toml or deploy/systemd/$UNIT_NAME)"
    ARCH=$arch
}

# torch for the [pi] extra (ultralytics needs it even when the NCNN model is used):
# pinned so every table runs the same build; NIUNIU_TORCH_PINS="" lets pip choose.
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

# Copy SRC to DEST with MODE unless DEST already has that content and mode.
# Returns 0 when DEST changed.
put_file() {
    local src=$1 dest=$2 mode=$3
    if [[ -f $dest ]] && cmp -s "$src" "$dest" && [[ $(stat -c %a "$dest") == "${mode#0}" ]]; then
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

# The files of the checkout: what git tracks plus new files it does not ignore, so local
# training runs, venvs and caches never reach the device. Without git: the tree minus those.
list_source_files() {
    if git -C "$SRC_DIR" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C "$SRC_DIR" ls-files -z --cached --others --exclude-standard
    else
        (cd "$SRC_DIR" && find . \( -name .git -o -name .venv -o -name __pycache__ -o -name '*.egg-info' \
            -o -name .pytest_cache -o -name .hypothesis -o -name runs -o -name build -o -name work-data \
            -o -name .cache \) -prune -o \( -type f -o -type l \) -print0)
    fi
}

# ------------------------------------------------------------------ steps

install_packages() {
    local wanted=(python3 python3-venv python3-pip curl ca-certificates libgomp1 git)
    local raspberry_pi_os=0
    [[ -e $ROOT/etc/rpi-issue ]] && raspberry_pi_os=1
    # picamera2 (and the libcamera it wraps) exists only in the Raspberry Pi archive;
    # it reaches the venv through --system-site-packages.
    ((raspberry_pi_os)) && wanted+=(python3-picamera2)
    if ! package_installed chromium-browser && ! package_installed chromium; then
        if ((raspberry_pi_os)); then wanted+=(chromium-browser); else wanted+=(chromium); fi
    fi
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

sync_code() {
    local dest=$ROOT$CODE staging=$ROOT$APP_DIR/.src.new
    if [[ $(cd "$SRC_DIR" && pwd -P) == $(mkdir -p "$dest" && cd "$dest" && pwd -P) ]]; then
        return 0 # running from the installed copy itself
    fi
    rm -rf "$staging"
    mkdir -p "$staging"
    list_source_files | (cd "$SRC_DIR" && tar --null --files-from=- --ignore-failed-read --create --file=-) |
        tar --extract --file=- --directory="$staging" --no-same-owner --no-same-permissions
    if diff -r -q --no-dereference -x '*.egg-info' -x __pycache__ "$dest" "$staging" >/dev/null 2>&1; then
        rm -rf "$staging"
        return 0
    fi
    rm -rf "$dest.old"
    mv "$dest" "$dest.old"
    mv "$staging" "$dest"
    rm -rf "$dest.old"
    chmod 0755 "$dest"
    restart_needed=1
    changed "copied $SRC_DIR to $CODE"
}

ensure_venv() {
    local cfg=$ROOT$VENV/pyvenv.cfg
    if [[ ! -x $ROOT$VENV/bin/python || ! -f $cfg ]]; then
        python3 -m venv --system-site-packages "$ROOT$VENV"
        restart_needed=1
        changed "created $VENV (with system site packages, for picamera2)"
    elif ! grep -Eq '^include-system-site-packages *= *true' "$cfg"; then
        sed -i -E 's/^include-system-site-packages *=.*/include-system-site-packages = true/' "$cfg"
        restart_needed=1
        changed "$VENV now sees system site packages (picamera2)"
    fi
}

install_project() {
    local pins stamp_text
    pins=$(torch_pins)
    stamp_text="extras=$EXTRAS
torch=$pins
pyproject=$(sha256sum "$ROOT$CODE/pyproject.toml" | cut -d' ' -f1)
"
    if [[ -f $ROOT$STAMP && $(<"$ROOT$STAMP") == "${stamp_text%$'\n'}" ]]; then
        return 0
    fi
    local pip=("$ROOT$VENV/bin/python" -m pip install --disable-pip-version-check)
    if [[ -n $pins ]]; then
        local pin_args
        read -r -a pin_args <<<"$pins"
        # Before the project, so ultralytics' plain "torch" dependency is already met.
        "${pip[@]}" "${pin_args[@]}"
    fi
    "${pip[@]}" --editable "${ROOT}${CODE}[${EXTRAS}]"
    printf '%s' "$stamp_text" >"$ROOT$STAMP"
    restart_needed=1
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
    if put_file "$ROOT$CODE/deploy/systemd/$UNIT_NAME" "$ROOT$UNIT_PATH" 0644; then
        systemctl daemon-reload
        restart_needed=1
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

# The desktop user whose labwc session shows the dealer screen.
kiosk_user() {
    if [[ -n ${NIUNIU_KIOSK_USER:-} ]]; then
        printf '%s' "$NIUNIU_KIOSK_USER"
    elif [[ -n ${SUDO_USER:-} && $SUDO_USER != root ]]; then
        printf '%s' "$SUDO_USER"
    else
        getent passwd 1000 | cut -d: -f1
    fi
}

# The autostart text: the user's own lines, any screen blanker (swayidle) commented out,
# and the managed block that starts the kiosk browser, replaced on every run.
autostart_text() {
    local existing=$1
    if [[ -z $existing ]]; then
        printf '%s\n' \
            '# labwc autostart of the Niu Niu dealer screen (created by deploy/install.sh).' \
            '# It replaces the desktop autostart (panel, desktop icons): only the kiosk shows.' \
            '# Keep the display layout and rotation set with the Screen Configuration tool:' \
            '[ -x /usr/bin/kanshi ] && /usr/bin/kanshi &'
    else
        printf '%s\n' "$existing" | awk -v begin="$BLOCK_BEGIN" -v end="$BLOCK_END" '
            $0 == begin { skip = 1; next }
            $0 == end { skip = 0; next }
            skip { next }
            /^[[:space:]]*[^#]*swayidle/ { print "# niuniu: screen blanking off: " $0; next }
            { print }'
    fi
    printf '%s\n' "$BLOCK_BEGIN" \
        "systemd-cat -t niuniu-kiosk $LAUNCHER &" \
        "$BLOCK_END"
}

install_kiosk_browser() {
    if put_file "$ROOT$CODE/deploy/kiosk-browser.sh" "$ROOT$LAUNCHER" 0755; then
        changed "installed $LAUNCHER"
    fi
    local user home file existing=''
    user=$(kiosk_user)
    if [[ -z $user ]]; then
        say "warning: no desktop user found (uid 1000); set NIUNIU_KIOSK_USER=<user> to start the kiosk browser at login"
        return 0
    fi
    home=$(getent passwd "$user" | cut -d: -f6)
    [[ -n $home ]] || die "desktop user '$user' does not exist; set NIUNIU_KIOSK_USER to the user that logs in to the screen"
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
}

restart_service() {
    if ((restart_needed)); then
        systemctl restart "$UNIT_NAME"
        changed "restarted $UNIT_NAME"
    fi
}

main() {
    umask 022 # everything installed is readable by the service user
    check_platform
    install_packages
    ensure_user
    sync_code
    ensure_venv
    install_project
    ensure_config
    ensure_data_dir
    install_service
    install_backup_timer
    install_kiosk_browser
    restart_service
    if ((changes == 0)); then
        say "already up to date: nothing changed"
    else
        say "done: $changes change(s). Dealer screen: http://127.0.0.1:<NIUNIU_PORT>/; logs: journalctl -u niuniu -f"
        say "check the device: sudo -u $SERVICE_USER $VENV/bin/niuniu check --config $CONF_DIR/table.yaml --data-dir $DATA_DIR --no-camera"
    fi
}

main "$@"
