#!/bin/sh
# Install the card decks that come from npm packages rather than from Debian
# (datasets/decks.toml names them "npm:..."), one SVG file a card:
# - Adrian Kennard's public-domain (CC0) designs, two- and four-colour, normal and
#   jumbo indices;
# - Chris Aguilar's "standard" design as redrawn in Responsive Playing Cards (LGPL-3.0):
#   the narrow serif indices and English court pattern of the common casino and club
#   decks that real photos show most.
# Their court art and index lettering look like none of the Debian decks', and a
# model that has read more designs reads an unseen one better. The package is
# fetched with npm at a pinned version and checked against its SHA-256 before
# anything is unpacked. Nothing is fetched at run time: the scene generator
# reads the files installed here. Safe to run again.
#
# Usage: sudo datasets/install-npm-decks.sh [FOLDER]   (default /usr/share/niuniu/card-art)
set -eu

dest=${1:-/usr/share/niuniu/card-art}

for tool in npm tar sha256sum; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "install-npm-decks.sh: $tool is not installed (Debian: apt-get install npm)" >&2
        exit 1
    fi
done
if ! mkdir -p "$dest" 2>/dev/null || [ ! -w "$dest" ]; then
    echo "install-npm-decks.sh: cannot write $dest; run as root, e.g. sudo $0" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fetch PACKAGE VERSION SHA256 FOLDER: unpack the package's tarball into $dest/FOLDER.
fetch() {
    if [ "$(cat "$dest/$4/.installed" 2>/dev/null || true)" = "$1@$2 $3" ]; then
        echo "already installed: $1@$2 in $dest/$4"
        return 0
    fi
    tarball=$(cd "$tmp" && npm pack --silent "$1@$2" | tail -n 1)
    got=$(sha256sum "$tmp/$tarball" | cut -d' ' -f1)
    if [ "$got" != "$3" ]; then
        echo "install-npm-decks.sh: $1@$2 has SHA-256 $got, not the pinned $3; refusing it" >&2
        exit 1
    fi
    rm -rf "${dest:?}/$4.new"
    mkdir -p "$dest/$4.new"
    tar -xzf "$tmp/$tarball" -C "$dest/$4.new" --strip-components=1 --no-same-owner
    echo "$1@$2 $3" >"$dest/$4.new/.installed"
    rm -rf "${dest:?}/$4"
    mv "$dest/$4.new" "$dest/$4"
    echo "installed $1@$2 in $dest/$4"
}

fetch @heruka_urgyen/react-playing-cards 0.5.0 \
    0a9e5c386c40af2ae591103589d3a4c340d66a325a64c3f5b1d3f6c0a907b468 heruka-react-playing-cards
fetch @younestouati/playing-cards-standard-deck 3.0.0 \
    35722591ff4efae9c66f62df6a6159d38bcf8742b38961d373c897aa4af13286 younestouati-playing-cards-standard-deck
# Its 4 of spades still draws the small-size layout (a big "4" and a big spade across the
# middle) over the full one; no real card looks like that. Drop that group (idempotent).
sed -i 's#<g><use xlink:href="\#numeral" transform="matrix(3.5 0 0 3.5 78.4 33.95)"/><use xlink:href="\#suit" transform="matrix(2 0 0 2 55.5 170)"/></g>##' \
    "$dest/younestouati-playing-cards-standard-deck/cards/4s.svg"
