"""Is a photo blurred?  Then a photo reader reads it sharpened first.

Photo sets blur photos as augmentation (Roboflow's "Blur", a Gaussian of a few pixels) and a
phone focused on the table behind the cards blurs them too.  Real photos blurred by a
Gaussian of sigma 2.5 px read 365 of 451 fully right against 443 sharp; reading each photo
also through an unsharp mask and keeping that reading only when surer by ``ASPECT_MARGIN``
(the thirtieth session's fifth reading) took them to 385, and sharpening every blurred one
before reading it to 402 (models/README.md, "Thirty-first session").  Sharpening a sharp
photo gains nothing and costs cards on noisy ones, so only a photo this module finds blurred
is read sharpened first; the photo as given is then the reading kept only when surer.

**How blurred?**  A Gaussian of sigma s spreads a step edge of contrast C so that its steepest
gradient is C / (s * sqrt(2 pi)).  ``blur_sigma`` takes the image's steepest edges (the top
``EDGE_SHARE`` of its pixels by gradient) and, at each, the contrast around it (the range of
a ``CONTRAST_WINDOW``-pixel square) over that gradient: the median is the blur's sigma, in
the photo's pixels.  On the 451 real photos: 0.81-1.62 as they are, 2.31-3.01 blurred by a
Gaussian of 2.5 px (a third of them blurred by 1.5 px: 1.59-2.17); held-out rendered hands
(motion blur, defocus, JPEG) 0.75-2.29, 9 of 500 over ``BLURRED_SIGMA``.  A photo larger than ``JUDGED_SIDE`` is judged
shrunk to it: what blurs a 4K frame by a few of its pixels is no blur at the detector's
input, where the index crops are read at a tenth of those pixels.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

BLURRED_SIGMA = 2.0
EDGE_SHARE = 0.005
CONTRAST_WINDOW = 11
JUDGED_SIDE = 1280
# The unsharp mask: SHARPEN_AMOUNT times the detail a Gaussian of SHARPEN_SIGMA px takes away
# is added back (the margin-kept reading of a photo not found blurred; a blurred one is
# sharpened at its own estimated sigma).
SHARPEN_AMOUNT = 1.5
SHARPEN_SIGMA = 2.5


def blur_sigma(image: np.ndarray) -> float:
    """The sigma, in ``image``'s pixels (at most ``JUDGED_SIDE`` of them across), of the Gaussian
    blur its steepest edges show; 0.0 for an image with no edge at all."""
    h, w = image.shape[:2]
    shrink = JUDGED_SIDE / max(h, w)
    if shrink < 1:
        image = cv2.resize(image, (max(1, round(w * shrink)), max(1, round(h * shrink))), interpolation=cv2.INTER_AREA)
    grey = (cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image).astype(np.float32)
    # Sobel's 3 x 3 kernel weighs a one-pixel step 8 times over.
    gradient = np.hypot(cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)) / 8
    square = np.ones((CONTRAST_WINDOW, CONTRAST_WINDOW), np.uint8)
    contrast = cv2.dilate(grey, square) - cv2.erode(grey, square)
    flat = gradient.ravel()
    k = int((flat.size - 1) * (1 - EDGE_SHARE))   # np.partition: a fifth of np.quantile's time
    steepest = gradient >= max(float(np.partition(flat, k)[k]), 1.0)
    if not steepest.any():
        return 0.0
    return float(np.median(contrast[steepest] / gradient[steepest])) / math.sqrt(2 * math.pi)


def unsharp(image: np.ndarray, sigma: float = SHARPEN_SIGMA) -> np.ndarray:
    """``image`` with ``SHARPEN_AMOUNT`` times the detail a Gaussian of ``sigma`` takes away
    added back: a blurred index's strokes steepen again."""
    soft = cv2.GaussianBlur(image, (0, 0), sigma)
    return cv2.addWeighted(image, 1 + SHARPEN_AMOUNT, soft, -SHARPEN_AMOUNT, 0)
