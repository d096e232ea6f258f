#!/bin/sh
# Install the Debian card artwork the synthetic scene generator renders
# (vision/synth/decks.py, deck list in datasets/decks.toml), plus the two
# SVG tools it uses: rsvg-convert draws each sheet, inkscape reports where
# each card lies on it. Safe to run again: apt-get skips what is installed.
set -eu

if [ "$(id -u)" -ne 0 ]; then
    echo "install-card-art.sh: run as root, e.g. sudo $0" >&2
    exit 1
fi

packages="gnome-cards-data kdegames-card-data-kf5 librsvg2-bin inkscape"
missing=""
for pkg in $packages; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done

if [ -z "$missing" ]; then
    echo "card art already installed: $packages"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
# shellcheck disable=SC2086  # $missing is a space-separated package list on purpose
apt-get install -y --no-install-recommends $missing
echo "installed:$missing"
