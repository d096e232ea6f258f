"""vision.blur: how blurred a photo's edges are, and the unsharp mask a blurred photo is read through."""

import math
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


@pytest.mark.parametrize("path", HELD_OUT[1:6], ids=lambda p: p.stem)
def test_a_photo_smeared_along_one_direction_is_found_smeared_that_way_and_read_unsmeared(path):
    """A 9-pixel smear at 30 degrees leaves the edges along it sharp, so the Gaussian estimate
    (a median over every edge) misses it; the most blurred of the eight edge directions finds
    it, within one direction's width of 30 degrees, and ``sharpened`` takes the smear off that
    way.  The photo sharp, or blurred alike every way, is no smear."""
    from vision.blur import MOTION_DIRECTIONS, MOTION_SIGMA, line_blur_kernel, motion_blur, sharpened, unsmear

    photo = cv2.imread(str(path))
    smeared = cv2.filter2D(photo, -1, line_blur_kernel(9, math.radians(30)))
    assert blur_sigma(smeared) <= BLURRED_SIGMA
    sigma, direction = motion_blur(smeared)
    assert sigma > MOTION_SIGMA
    assert abs(math.degrees(direction) - 30) <= 180 / MOTION_DIRECTIONS
    assert np.array_equal(sharpened(smeared), unsmear(smeared, sigma, direction))
    assert motion_blur(unsmear(smeared, sigma, direction))[0] < sigma
    assert motion_blur(photo) is None and sharpened(photo) is None
    blurred = cv2.GaussianBlur(photo, (0, 0), 2.5)
    assert motion_blur(blurred) is None
    assert np.array_equal(sharpened(blurred), unsharp(blurred, blur_sigma(blurred)))


def test_a_4k_photo_is_sharpened_at_its_own_scale():
    """Judged at JUDGED_SIDE, a blur is undone in the photo's own pixels: a 2560-pixel photo
    blurred 5 px (2.5 where judged) is sharpened at about 5."""
    from vision.blur import sharpened

    photo = cv2.resize(cv2.imread(str(HELD_OUT[2])), (2560, 1920), interpolation=cv2.INTER_CUBIC)
    blurred = cv2.GaussianBlur(photo, (0, 0), 5.0)
    judged = blur_sigma(blurred)
    assert judged > BLURRED_SIGMA
    assert np.array_equal(sharpened(blurred), unsharp(blurred, judged * 2560 / JUDGED_SIDE))
