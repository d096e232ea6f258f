"""Salt-and-pepper photos: found by their specks, read through a median filter, clean ones left alone."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.speckle import SPECKLED_SHARE, add_specks, despeckled, speck_density, speck_share

HELD_OUT = Path(__file__).resolve().parents[1] / "data" / "heldout"


@pytest.fixture(scope="module")
def shots():
    return [cv2.imread(str(p)) for p in sorted(HELD_OUT.glob("*.jpg"))]


def test_a_clean_photo_is_read_as_it_is(shots):
    """Hard-edged rendered art and JPEG blocks are no specks: a photo that needs no filter
    gets none (the very same array back, so nothing is rounded off its indices)."""
    for shot in shots:
        assert speck_share(shot) < SPECKLED_SHARE / 2
        assert despeckled(shot) is shot


def test_one_percent_of_specks_is_found_and_filtered_out(shots):
    for i, shot in enumerate(shots):
        noisy = add_specks(shot, 0.01, np.random.default_rng(i))
        assert speck_share(noisy) > SPECKLED_SHARE
        mended = despeckled(noisy)
        # The specks go, and the photo's own pixels stay: few are far off the clean photo.
        far_before = (np.abs(noisy.astype(int) - shot).max(axis=2) > 60).mean()
        far_after = (np.abs(mended.astype(int) - shot).max(axis=2) > 60).mean()
        assert mended.shape == shot.shape and far_after < far_before / 4, (far_before, far_after)
        assert speck_share(mended) < SPECKLED_SHARE / 2


def test_a_one_pixel_stroke_stays_where_a_plain_median_would_take_it():
    """A small index is drawn in strokes a pixel or two wide; the filter replaces the specks
    only, so a one-pixel line through a speckled photo stays (a 3 x 3 median erases it) but
    for its ends and the pixels beside a speck that broke it, which look like specks too."""
    image = np.full((120, 160, 3), 128, np.uint8)
    image[60, 10:150] = 20                                   # a dark line one pixel wide
    noisy = add_specks(image, 0.05, np.random.default_rng(2))
    untouched = (noisy[60, 10:150] == 20).all(axis=1)        # the line's pixels no speck fell on
    mended = despeckled(noisy)
    assert (mended[60, 10:150][untouched] == 20).mean() > 0.85
    assert (cv2.medianBlur(noisy, 3)[60, 10:150][untouched] == 20).mean() < 0.1
    assert ((mended != 128).any(axis=2).sum() - 140) < 0.1 * (noisy != 128).any(axis=2).sum()


def test_dense_specks_are_told_from_light_ones_and_take_a_median_over_every_pixel(shots):
    """Where a fifth of the pixels are specks they clump, and only a whole-photo median reaches
    them; at 5% the specks alone are replaced.  The density is read where both kinds show."""
    for i, shot in enumerate(shots):
        light, dense = (add_specks(shot, share, np.random.default_rng(i)) for share in (0.05, 0.2))
        assert 0.04 < speck_density(light, cv2.medianBlur(light, 3)) < 0.09
        assert 0.18 < speck_density(dense, cv2.medianBlur(dense, 3)) < 0.25
        assert np.array_equal(despeckled(dense), cv2.medianBlur(dense, 3))
        assert not np.array_equal(despeckled(light), cv2.medianBlur(light, 3))


def test_specks_survive_a_jpeg_save(shots):
    """A set is exported as JPEG after its noise is added; the specks, blurred by it, still show."""
    noisy = add_specks(shots[0], 0.05, np.random.default_rng(3))
    saved = cv2.imdecode(cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, 85])[1], cv2.IMREAD_COLOR)
    assert speck_share(saved) > SPECKLED_SHARE


def test_specks_are_the_same_for_a_seed_and_half_salt_half_pepper(shots):
    grey = np.full((200, 300, 3), 128, np.uint8)
    a = add_specks(grey, 0.2, np.random.default_rng(7))
    assert np.array_equal(a, add_specks(grey, 0.2, np.random.default_rng(7)))
    salt, pepper = (a == 255).all(axis=2).mean(), (a == 0).all(axis=2).mean()
    assert 0.09 < salt < 0.11 and 0.09 < pepper < 0.11
    assert ((a == 128).all(axis=2) | (a == 255).all(axis=2) | (a == 0).all(axis=2)).all()   # all channels alike


def test_a_photo_other_than_8_bit_is_left_alone():
    wide = (np.random.default_rng(1).random((50, 60, 3)) * 65535).astype(np.uint16)
    assert despeckled(wide) is wide
