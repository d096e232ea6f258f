#!/usr/bin/env bash
# Show the dealer screen full-screen: start Chromium in kiosk mode once the Niu Niu app
# answers HTTP, and start it again whenever it exits or crashes.
#
# Installed as /usr/local/bin/niuniu-kiosk-browser and started from the desktop user's
# labwc autostart (see deploy/install.sh). It waits for the app rather than racing it,
# because after a power cut the desktop is up long before the model is loaded, and a
# browser opened too early shows "This site can't be reached" until someone touches it.
#
# Settings: NIUNIU_PORT from /etc/niuniu/niuniu.env (default 8000), or NIUNIU_URL.
# NIUNIU_KIOSK_MAX_LAUNCHES bounds the loop (0 = forever; used by the tests).
set -uo pipefail

env_file=${NIUNIU_ENV_FILE:-/etc/niuniu/niuniu.env}
poll_s=${NIUNIU_KIOSK_POLL_S:-2}
restart_delay_s=${NIUNIU_KIOSK_RESTART_DELAY_S:-2}
max_launches=${NIUNIU_KIOSK_MAX_LAUNCHES:-0}
profile=${NIUNIU_BROWSER_PROFILE:-${HOME:-/tmp}/.config/niuniu-kiosk-chromium}

log() { printf '%s niuniu-kiosk: %s\n' "$(date '+%F %T')" "$*" >&2; }

# Read one KEY=VALUE from the systemd environment file without executing it.
env_value() {
    local key=$1 line
    [[ -r $env_file ]] || return 0
    line=$(grep -E "^[[:space:]]*${key}=" "$env_file" | tail -n 1) || return 0
    line=${line#*=}
    line=${line%\"}
    line=${line#\"}
    printf '%s' "$line"
}

port=$(env_value NIUNIU_PORT)
url=${NIUNIU_URL:-http://127.0.0.1:${port:-8000}/}

find_browser() {
    local candidate
    for candidate in ${NIUNIU_BROWSER:-} chromium-browser chromium; do
        if command -v "$candidate" >/dev/null 2>&1; then
            printf '%s' "$candidate"
            return 0
        fi
    done
    return 1
}

# Any HTTP status means the app is serving (a login redirect is fine); 000 means no answer.
app_answers() {
    local code
    code=$(curl --silent --output /dev/null --max-time 3 --write-out '%{http_code}' "$url" 2>/dev/null) || true
    [[ $code =~ ^[1-5][0-9][0-9]$ ]]
}

wait_for_app() {
    local announced=0
    until app_answers; do
        if ((announced == 0)); then
            log "waiting for the app at $url"
            announced=1
        fi
        sleep "$poll_s"
    done
}

# After a power cut Chromium would offer to "restore pages" over the dealer screen.
mark_clean_exit() {
    local prefs=$profile/Default/Preferences
    if [[ -f $prefs ]]; then
        sed -i -e 's/"exit_type":"Crashed"/"exit_type":"Normal"/' -e 's/"exited_cleanly":false/"exited_cleanly":true/' "$prefs"
    fi
}

browser=$(find_browser) || {
    log "no chromium-browser or chromium on PATH; install it with: sudo apt install chromium-browser"
    exit 1
}

flags=(
    --kiosk
    --noerrdialogs
    --disable-infobars
    --no-first-run
    --disable-session-crashed-bubble
    "--disable-features=Translate,TranslateUI"
    --password-store=basic
    --check-for-update-interval=31536000
    --overscroll-history-navigation=0
    --disable-pinch
    --user-data-dir="$profile"
)
if [[ -n ${WAYLAND_DISPLAY:-} ]]; then
    flags+=(--ozone-platform=wayland)
fi

launches=0
while true; do
    wait_for_app
    mark_clean_exit
    launches=$((launches + 1))
    log "starting $browser on $url (launch $launches)"
    "$browser" "${flags[@]}" "$url"
    status=$?
    log "$browser exited with status $status"
    if ((max_launches > 0 && launches >= max_launches)); then
        exit 0
    fi
    sleep "$restart_delay_s"
done
