#!/bin/sh
# Install the Debian card artwork the synthetic scene generator renders
# (vision/synth/decks.py, deck list in datasets/decks.toml), plus the two
# SVG tools it uses: rsvg-convert draws each sheet, inkscape reports where
# each card lies on it; and the typefaces the procedural "casino" faces print
# their indices and pips in (vision/synth/faces.py lists them: a classifier that
# saw four fonts reads a fifth poorly); and GIMP's pattern library (gimp-data:
# photographed wood, fabric, leather, stone, paper) for table tops that are not
# felt (vision/synth/scene.py). Then install-npm-decks.sh (beside this script)
# fetches the decks that come from npm rather than Debian (datasets/decks.toml).
# Safe to run again: apt-get skips what is installed, and so does npm's step.
set -eu

here=$(cd "$(dirname "$0")" && pwd)

if [ "$(id -u)" -ne 0 ]; then
    echo "install-card-art.sh: run as root, e.g. sudo $0" >&2
    exit 1
fi

packages="gnome-cards-data kdegames-card-data-kf5 librsvg2-bin inkscape
fonts-dejavu-core fonts-liberation fonts-urw-base35 fonts-freefont-ttf fonts-texgyre
fonts-crosextra-carlito fonts-crosextra-caladea fonts-linuxlibertine fonts-open-sans
fonts-roboto-unhinted fonts-lato fonts-ebgaramond fonts-noto-core fonts-noto-mono
gimp-data"
# npm fetches the npm decks; Debian's package brings it where the machine has none.
if ! command -v npm >/dev/null 2>&1; then
    packages="$packages npm"
fi
missing=""
for pkg in $packages; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done

if [ -z "$missing" ]; then
    echo "Debian card art already installed: $packages"
else
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    # shellcheck disable=SC2086  # $missing is a space-separated package list on purpose
    apt-get install -y --no-install-recommends $missing
    echo "installed:$missing"
fi
sh "$here/install-npm-decks.sh"
