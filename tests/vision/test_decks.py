"""The deck art the scene generator pastes: right card under each label, index boxes on ink."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from scoring.cards import CARD_CODES
from vision.synth import decks
from vision.synth.decks import DeckError, deck_names, find_index_boxes, load_deck, load_manifest

HEIGHT = 160  # small renders keep the suite quick; boxes are fractions, so scale-free


def _art_installed(name: str) -> bool:
    return load_manifest().deck[name].missing_art() is None


needs_tools = pytest.mark.skipif(
    shutil.which("rsvg-convert") is None or shutil.which("inkscape") is None,
    reason="rsvg-convert/inkscape not installed: run `sudo datasets/install-card-art.sh`",
)


def _require_art(name: str) -> None:
    if not _art_installed(name):
        pytest.skip(f"deck art for {name} not installed: run `sudo datasets/install-card-art.sh`")


@pytest.fixture(scope="session")
def cache(request) -> Path:
    """pytest's own cache folder: the first run renders every deck (about a minute), later
    runs read PNGs; a changed manifest entry or renderer changes the fingerprint and re-renders."""
    cache = getattr(request.config, "cache", None)
    if cache is None:  # run with -p no:cacheprovider: render into a temporary folder instead
        return request.getfixturevalue("tmp_path_factory").mktemp("niuniu-decks")
    return cache.mkdir("niuniu-decks")


def test_manifest_splits_are_disjoint_by_design_family():
    entries = load_manifest().deck
    train = set(deck_names("train"))
    holdout = set(deck_names("holdout"))
    assert train and len(holdout) >= 5
    assert not train & holdout
    assert set(deck_names()) == train | holdout
    train_families = {entries[n].family for n in train}
    holdout_families = {entries[n].family for n in holdout}
    assert not train_families & holdout_families, "a redrawn deck in both splits leaks the holdout"


def test_excluded_decks_are_never_listed_and_refuse_to_load():
    excluded = [n for n, e in load_manifest().deck.items() if e.split == "excluded"]
    assert excluded
    assert not set(excluded) & set(deck_names())
    with pytest.raises(DeckError, match="excluded"):
        load_deck(excluded[0])


def test_unknown_deck_names_the_choices():
    with pytest.raises(DeckError, match="unknown deck 'no-such-deck'.*anglo"):
        load_deck("no-such-deck")


def test_bad_split_is_refused():
    with pytest.raises(DeckError):
        deck_names("test")


def test_missing_art_says_how_to_install(monkeypatch, tmp_path):
    entry = load_manifest().deck["anglo"].model_copy(update={"file": str(tmp_path / "gone.svgz")})
    manifest = decks.Manifest(deck={"anglo": entry})
    monkeypatch.setattr(decks, "load_manifest", lambda path=None: manifest)
    with pytest.raises(DeckError, match="install-card-art.sh"):
        load_deck("anglo", cache_dir=tmp_path)


def test_a_deck_of_one_file_a_card_finds_each_card_under_its_own_spelling():
    """Kennard's decks spell ten "T" and name files rank-then-suit; a mix-up would label a
    card with another card's picture, which no later check can see."""
    entry = load_manifest().deck["kennard_jumbo"]
    assert entry.ids == "files" and entry.split == "train"
    assert entry.card_file("10D").name == "TD.svg" and entry.card_file("AS").name == "AS.svg"
    assert entry.card_file("QC").parent == entry.card_file("2H").parent
    assert len(set(entry.art_files())) == 53   # 52 faces and the back


@pytest.mark.parametrize("entry, error", [
    ('file = "/somewhere/cards.svg"\n', r"needs \{rank\} and \{suit\}.*fix the file"),
    ('file = "/s/{rank}{suit}.svg"\npaper = "white"\n', r"decks\.toml is invalid.*paper.*fix the file"),
])
def test_a_files_deck_entry_that_cannot_be_drawn_is_refused(tmp_path, entry, error):
    bad = tmp_path / "decks.toml"
    bad.write_text(f'[deck.x]\n{entry}package = "npm:@heruka_urgyen/react-playing-cards"\n'
                   'ids = "files"\nfamily = "x"\nsplit = "train"\n')
    with pytest.raises(DeckError, match=error):
        load_manifest(bad)


@needs_tools
def test_one_missing_card_file_is_named_with_the_install_command(monkeypatch, tmp_path):
    """A half-installed package (one SVG gone) must not give a 51-card deck or a crash mid-scene."""
    _require_art("kennard_slab")
    entry = load_manifest().deck["kennard_slab"]
    for path in entry.art_files():
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "QH.svg").unlink()
    moved = entry.model_copy(update={"file": str(tmp_path / "{rank}{suit}.svg"), "back": str(tmp_path / "back.svg")})
    monkeypatch.setattr(decks, "load_manifest", lambda path=None: decks.Manifest(deck={"kennard_slab": moved}))
    with pytest.raises(DeckError, match=r"QH\.svg is not installed.*install-card-art\.sh"):
        load_deck("kennard_slab", cache_dir=tmp_path / "cache")


def test_the_standard_deck_finds_each_card_under_its_own_spelling():
    """Aguilar's files are named by number (1 = ace, 11-13 = courts) and lower-case suit."""
    entry = load_manifest().deck["aguilar_standard"]
    assert entry.ids == "files" and entry.paper is not None
    assert entry.card_file("AS").name == "1s.svg" and entry.card_file("KD").name == "13d.svg"
    assert entry.card_file("10C").name == "10c.svg"
    assert len(set(entry.art_files())) == 52   # no back: the package's back is a tile, not a card


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="rsvg-convert not installed")
def test_an_ink_only_deck_is_laid_on_a_whole_card_of_paper(monkeypatch, tmp_path):
    """SVGs that draw only the print must become a card the size of the document; trimmed
    to the ink, a face would be a few glyphs on nothing, and its index box would be wrong."""
    for code in CARD_CODES:
        (tmp_path / f"{code}.svg").write_text(
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 225 314" width="225" height="314">'
            '<rect x="8" y="10" width="20" height="34" fill="#d40000"/>'
            '<rect x="10" y="48" width="16" height="16" fill="#d40000"/>'
            '<rect x="90" y="130" width="40" height="50" fill="#000000"/>'
            '<rect x="197" y="270" width="20" height="34" fill="#d40000"/>'
            '<rect x="199" y="250" width="16" height="16" fill="#d40000"/></svg>')
    entry = decks.DeckEntry(file=str(tmp_path / "{rank}{suit}.svg"),
                            package="npm:@younestouati/playing-cards-standard-deck", ids="files",
                            paper="#fdfdfb", family="x", split="train")
    monkeypatch.setattr(decks, "load_manifest", lambda path=None: decks.Manifest(deck={"inkonly": entry}))
    face = load_deck("inkonly", height=HEIGHT, cache_dir=tmp_path / "cache").faces["7H"]
    h, w = face.image.shape[:2]
    assert h == HEIGHT and abs(w / h - 225 / 314) < 0.02            # the document, not the ink's extent
    assert face.image[h // 2, w // 4, 3] == 255 and tuple(face.image[h // 2, w // 4, :3]) == (253, 253, 251)
    assert face.image[0, 0, 3] == 0                                  # rounded corners, as a card is cut
    top_left = min(face.index_boxes, key=lambda b: b[0] + b[1])
    assert top_left == pytest.approx((8 / 225, 10 / 314, 28 / 225, 64 / 314), abs=0.02)


@needs_tools
@pytest.mark.parametrize("name", deck_names())
def test_every_usable_deck_loads_52_distinct_upright_faces(name, cache):
    _require_art(name)
    deck = load_deck(name, HEIGHT, cache_dir=cache)
    corners = load_manifest().deck[name].corners
    assert set(deck.faces) == set(CARD_CODES)
    for code, face in deck.faces.items():
        assert face.code == code
        assert face.image.dtype == np.uint8 and face.image.shape[0] == HEIGHT and face.image.shape[2] == 4
        h, w = face.image.shape[:2]
        assert 0.55 < w / h < 0.8, f"{name} {code} is not an upright card ({w}x{h})"
        assert face.image[0, 0, 3] < 128 or face.image[h // 2, w // 2, 3] == 255
        assert len(face.index_boxes) == corners, f"{name} {code}: a corner index was not found"
    pixels = {face.image.tobytes() for face in deck.faces.values()}
    assert len(pixels) == 52, f"{name}: two labels share one picture"


@needs_tools
@pytest.mark.parametrize("name", deck_names())
def test_index_boxes_sit_in_opposite_corners_on_ink(name, cache):
    _require_art(name)
    deck = load_deck(name, HEIGHT, cache_dir=cache)
    wx, wy = load_manifest().deck[name].corner_window
    for code in ("AS", "10H", "QD", "KC", "7C"):
        face = deck.faces[code]
        h, w = face.image.shape[:2]
        top_left = min(face.index_boxes, key=lambda b: b[0] + b[1])
        bottom_right = max(face.index_boxes, key=lambda b: b[0] + b[1])
        x0, y0, x1, y1 = top_left
        assert 0 <= x0 < x1 <= wx and 0 <= y0 < y1 <= wy, f"{name} {code}: {top_left}"
        assert bottom_right[0] >= 1 - wx and bottom_right[1] >= 1 - wy, f"{name} {code}: {bottom_right}"
        # Rank over pip: taller than wide, and the rotated copy the same size.
        assert (y1 - y0) * h > (x1 - x0) * w
        assert abs((bottom_right[3] - bottom_right[1]) - (y1 - y0)) < 0.03
        crop = face.image[int(y0 * h):int(np.ceil(y1 * h)), int(x0 * w):int(np.ceil(x1 * w)), :3]
        paper = np.median(face.image[int(0.45 * h):int(0.55 * h), 1:int(0.06 * w), :3].reshape(-1, 3), axis=0)
        ink = (np.abs(crop.astype(int) - paper).max(axis=2) > 80).mean()
        assert ink > 0.12, f"{name} {code}: index box is mostly blank paper ({ink:.2f})"


@needs_tools
def test_cache_round_trip_gives_identical_arrays(tmp_path):
    _require_art("anglo")
    first = load_deck("anglo", 120, cache_dir=tmp_path)
    assert (tmp_path / "anglo" / "120" / "index.json").is_file()
    again = load_deck("anglo", 120, cache_dir=tmp_path)
    for code in CARD_CODES:
        assert np.array_equal(first.faces[code].image, again.faces[code].image)
        assert first.faces[code].index_boxes == again.faces[code].index_boxes
    assert np.array_equal(first.back, again.back)


@needs_tools
def test_damaged_cache_is_rebuilt_not_trusted(tmp_path):
    _require_art("anglo")
    first = load_deck("anglo", 100, cache_dir=tmp_path)
    (tmp_path / "anglo" / "100" / "QH.png").write_bytes(b"not a png")
    again = load_deck("anglo", 100, cache_dir=tmp_path)
    assert np.array_equal(first.faces["QH"].image, again.faces["QH"].image)


def test_index_finder_boxes_rank_and_pip_not_the_picture():
    """A drawn face: rank bar over a pip at top-left, its 180° copy, and a picture frame."""
    face = np.zeros((400, 280, 4), np.uint8)
    face[..., :3] = 255
    face[..., 3] = 255
    face[30:80, 20:34, :3] = 0      # rank glyph
    face[86:110, 18:38, :3] = 0     # suit pip under it
    face[60:340, 60:220, :3] = (0, 0, 200)  # court picture, bigger than the corner
    face[::-1, ::-1][30:80, 20:34, :3] = 0
    face[::-1, ::-1][86:110, 18:38, :3] = 0
    boxes = find_index_boxes(face)
    assert len(boxes) == 2
    x0, y0, x1, y1 = boxes[0]
    assert (round(x0 * 280), round(y0 * 400), round(x1 * 280), round(y1 * 400)) == (18, 30, 38, 110)
    bx0, by0, bx1, by1 = boxes[1]
    assert (round(bx0 * 280), round(by0 * 400), round(bx1 * 280), round(by1 * 400)) == (242, 290, 262, 370)
