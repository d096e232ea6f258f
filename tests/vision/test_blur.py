"""vision.blur: how blurred a photo's edges are, and the unsharp mask a blurred photo is read through."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.blur import BLURRED_SIGMA, JUDGED_SIDE, blur_sigma, unsharp

HELD_OUT = sorted((Path(__file__).resolve().parent.parent / "data" / "heldout").glob("*.jpg"))


@pytest.mark.parametrize("path", HELD_OUT[1:5], ids=lambda p: p.stem)
def test_a_rendered_table_photo_is_not_blurred_until_a_gaussian_of_2_5_px_blurs_it(path):
    photo = cv2.imread(str(path))
    assert blur_sigma(photo) < 1.2 < BLURRED_SIGMA
    assert blur_sigma(cv2.GaussianBlur(photo, (0, 0), 2.5)) > BLURRED_SIGMA


def test_the_estimate_follows_the_blur_that_made_it():
    """A hard-edged square blurred by sigma 1.5 and 2.5 reads about that much (the Sobel kernel
    adds its own ~0.8 in quadrature), and a stronger blur always reads more."""
    square = np.zeros((300, 300, 3), np.uint8)
    square[100:200, 100:200] = (40, 90, 200)
    estimates = [blur_sigma(cv2.GaussianBlur(square, (0, 0), s)) for s in (1.5, 2.5)]
    assert estimates[0] == pytest.approx(1.65, abs=0.2) and estimates[1] == pytest.approx(2.55, abs=0.2)
    assert blur_sigma(square) < estimates[0] < estimates[1]


def test_an_image_with_no_edge_is_not_blurred_and_does_not_fail():
    assert blur_sigma(np.full((120, 160, 3), 128, np.uint8)) == 0.0
    assert blur_sigma(np.zeros((1, 1, 3), np.uint8)) == 0.0


def test_a_4k_frame_is_judged_at_the_judged_side_so_a_few_of_its_own_pixels_of_blur_are_no_blur():
    """Three pixels of blur in a 3840-pixel frame are a third of a pixel where the detector reads it."""
    photo = cv2.resize(cv2.imread(str(HELD_OUT[2])), (3840, 2880), interpolation=cv2.INTER_NEAREST)
    blurred = cv2.GaussianBlur(photo, (0, 0), 3.0)
    assert 3840 > JUDGED_SIDE
    assert blur_sigma(blurred) < BLURRED_SIGMA


def test_the_unsharp_mask_steepens_a_blurred_edge_and_keeps_flat_ground():
    square = np.zeros((300, 300, 3), np.uint8)
    square[100:200, 100:200] = 120
    soft = cv2.GaussianBlur(square, (0, 0), 2.5)
    sharp = unsharp(soft, 2.5)
    assert blur_sigma(sharp) < blur_sigma(soft)
    assert sharp.dtype == np.uint8 and sharp.shape == soft.shape
    assert int(sharp[150, 150, 0]) == 120 and int(sharp[20, 20, 0]) == 0
