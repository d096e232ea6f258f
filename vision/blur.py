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
(motion blur, defocus, JPEG) 0.75-2.29, 9 of 500 over ``BLURRED_SIGMA``.  A photo larger
than ``JUDGED_SIDE`` is judged shrunk to it: what blurs a 4K frame by a few of its pixels is
no blur at the detector's input, where the index crops are read at a tenth of those pixels;
a blur found there is undone at the photo's own scale.

**Blurred along one direction.**  A moving hand or camera smears a photo one way: the edges
along the smear stay sharp, and the median over every edge misses it (real photos smeared 9 px
at 30°: 4 of 91 over ``BLURRED_SIGMA``).  ``motion_blur`` measures each of eight edge
directions on its own and finds a smear where the most blurred one is over ``MOTION_SIGMA`` and
``MOTION_ANISOTROPY`` times the least blurred (every such photo; 9 of the 451 sharp real ones,
which still read right); ``unsmear`` is the unsharp mask of a line blur along it.  Smeared
real photos: 402 -> 410 of 451 read unsmeared first; the held-out hands it picks (rendered
motion blur) table 15 -> 16 of 28, fans 24 -> 23 of 32.

**Close-ups.**  A blur is measured in the photo's own pixels, but the classifier reads each
index cut out and resized to its input: a close-up enlarged from a small photo (or any photo
whose indices are hundreds of pixels tall) shows a "blur" of several pixels that is gone at
the crop's scale, and sharpening it there only draws halos (v15 read real poker4 close-ups
sharpened first 9C as QC, 2S as 5S).  So a photo reader takes a blur off only when it is over
``INDEX_BLUR_SHARE`` of the photo's median index (``blurs_an_index``).  Measured as that share:
poker4 close-ups 0.009-0.028 (nearly all of them judged blurred), the real photos blurred
2.5 px 0.038-0.098, smeared 9 px 0.041-0.105.  Real poker4 cards cut out to fill the frame
(`niuniu evaluate --close-up`, `valid` and `test`): 376 -> 384 of 390 read; held-out fans cut
out alike 84 -> 85 of 100 fully right, hands 82 and 82.  None of the 451 real photos as they
are, blurred or smeared, nor of the 250 held-out table hands, is judged otherwise; one held-out
fan of 250 is, and reads the same (models/README.md, "Thirty-sixth session").
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
# Motion blur (see "Blurred along one direction" above): the edges are sorted into
# MOTION_DIRECTIONS by their gradient's direction, each direction's steepest DIRECTION_SHARE
# measured as blur_sigma measures all of them (a direction with under DIRECTION_EDGES edge
# pixels is skipped).  Smeared: the most blurred direction over MOTION_SIGMA and
# MOTION_ANISOTROPY times the least blurred one.  ``unsmear`` adds back UNSMEAR_AMOUNT times the
# detail a line blur UNSMEAR_LENGTH sigmas long along that direction takes away.
MOTION_DIRECTIONS = 8
DIRECTION_SHARE = 0.02
DIRECTION_EDGES = 50
MOTION_SIGMA = 2.2
MOTION_ANISOTROPY = 1.4
UNSMEAR_AMOUNT = 1.0
UNSMEAR_LENGTH = 2.5
# A blur is taken off only where it blurs what the classifier reads: every index crop is cut
# around its index and resized to the classifier's input, so a blur under INDEX_BLUR_SHARE of
# the index's height is under ~2 of the crop's pixels, as a sharp photo's are (see "Close-ups"
# above).
INDEX_BLUR_SHARE = 0.03


def _edges(image: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], np.ndarray, float]:
    """(gradient, its x and y parts, contrast around each pixel, photo pixels per judged pixel)
    of ``image`` judged at most ``JUDGED_SIDE`` pixels across."""
    h, w = image.shape[:2]
    shrink = min(1.0, JUDGED_SIDE / max(h, w))
    if shrink < 1:
        image = cv2.resize(image, (max(1, round(w * shrink)), max(1, round(h * shrink))), interpolation=cv2.INTER_AREA)
    grey = (cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image).astype(np.float32)
    # Sobel's 3 x 3 kernel weighs a one-pixel step 8 times over.
    gx, gy = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3) / 8, cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3) / 8
    square = np.ones((CONTRAST_WINDOW, CONTRAST_WINDOW), np.uint8)
    contrast = cv2.dilate(grey, square) - cv2.erode(grey, square)
    return np.hypot(gx, gy), (gx, gy), contrast, 1 / shrink


def _steepest(values: np.ndarray, share: float) -> float:
    """The value above which ``share`` of ``values`` lie (np.partition: a fifth of np.quantile's time)."""
    k = int((values.size - 1) * (1 - share))
    return float(np.partition(values, k)[k])


def _sigma_at(gradient: np.ndarray, contrast: np.ndarray, where: np.ndarray) -> float:
    return float(np.median(contrast[where] / gradient[where])) / math.sqrt(2 * math.pi)


def _blur_sigma(gradient: np.ndarray, contrast: np.ndarray) -> float:
    steepest = gradient >= max(_steepest(gradient.ravel(), EDGE_SHARE), 1.0)
    return _sigma_at(gradient, contrast, steepest) if steepest.any() else 0.0


def blur_sigma(image: np.ndarray) -> float:
    """The sigma, in ``image``'s pixels (at most ``JUDGED_SIDE`` of them across), of the Gaussian
    blur its steepest edges show; 0.0 for an image with no edge at all."""
    gradient, _, contrast, _ = _edges(image)
    return _blur_sigma(gradient, contrast)


def _smear(gradient: np.ndarray, parts: tuple[np.ndarray, np.ndarray], contrast: np.ndarray
           ) -> tuple[float, float] | None:
    edges = gradient >= 1.0
    gradient, contrast = gradient[edges], contrast[edges]   # each direction is sorted from these alone
    # cv2.phase: the gradient's direction in [0, 2 pi), seventy times faster than np.arctan2.
    direction = cv2.phase(parts[0][edges], parts[1][edges]).ravel() % np.pi
    sector = np.floor(direction / np.pi * MOTION_DIRECTIONS + 0.5).astype(int) % MOTION_DIRECTIONS
    sigmas = {}
    for d in range(MOTION_DIRECTIONS):
        these = sector == d
        if these.sum() < DIRECTION_EDGES:
            continue
        steepest = these & (gradient >= _steepest(gradient[these], DIRECTION_SHARE))
        sigmas[d] = _sigma_at(gradient, contrast, steepest)
    if not sigmas:
        return None
    worst = max(sigmas, key=sigmas.get)
    if sigmas[worst] > MOTION_SIGMA and sigmas[worst] > MOTION_ANISOTROPY * min(sigmas.values()):
        return sigmas[worst], worst * math.pi / MOTION_DIRECTIONS
    return None


def motion_blur(image: np.ndarray) -> tuple[float, float] | None:
    """(sigma, direction in radians from the image's x axis towards its y axis) of a blur
    along one direction, as a moving hand or camera smears a photo; ``None`` when its edges
    are not smeared one way more than the others (sharp, or blurred alike every way)."""
    gradient, parts, contrast, _ = _edges(image)
    return _smear(gradient, parts, contrast)


def blur_of(image: np.ndarray) -> tuple[float, float | None] | None:
    """``(sigma, direction)`` of the blur ``image`` shows, sigma in its own pixels: blurred every
    way (``blur_sigma`` over ``BLURRED_SIGMA``; direction ``None``), else smeared along one
    direction (``motion_blur``, direction in radians); ``None`` for a sharp photo."""
    gradient, parts, contrast, scale = _edges(image)
    sigma = _blur_sigma(gradient, contrast)
    if sigma > BLURRED_SIGMA:
        return sigma * scale, None
    smear = _smear(gradient, parts, contrast)
    if smear is not None:
        return smear[0] * scale, smear[1]
    return None


def deblurred(image: np.ndarray, blur: tuple[float, float | None]) -> np.ndarray:
    """``image`` with ``blur`` (``blur_of``'s) taken off: the unsharp mask at its sigma, or
    ``unsmear`` along a smear's direction."""
    sigma, direction = blur
    return unsharp(image, sigma) if direction is None else unsmear(image, sigma, direction)


def sharpened(image: np.ndarray) -> np.ndarray | None:
    """``image`` made sharper to read, when it is blurred (``blur_of``); ``None`` for a sharp photo."""
    blur = blur_of(image)
    return None if blur is None else deblurred(image, blur)


def blurs_an_index(sigma: float, index_px: float) -> bool:
    """Whether a blur of ``sigma`` pixels blurs what the classifier reads of an index
    ``index_px`` pixels tall (both in the photo's pixels): more than ``INDEX_BLUR_SHARE`` of it."""
    return sigma > INDEX_BLUR_SHARE * index_px


def unsharp(image: np.ndarray, sigma: float = SHARPEN_SIGMA) -> np.ndarray:
    """``image`` with ``SHARPEN_AMOUNT`` times the detail a Gaussian of ``sigma`` takes away
    added back: a blurred index's strokes steepen again."""
    soft = cv2.GaussianBlur(image, (0, 0), sigma)
    return cv2.addWeighted(image, 1 + SHARPEN_AMOUNT, soft, -SHARPEN_AMOUNT, 0)


def line_blur_kernel(length: float, direction: float) -> np.ndarray:
    """A straight smear ``length`` pixels long (made odd) along ``direction`` (radians), summing to 1."""
    n = max(3, round(length)) | 1
    kernel = np.zeros((n, n), np.float32)
    c = (n - 1) / 2
    for t in np.linspace(-c, c, 4 * n):
        kernel[round(c + t * math.sin(direction)), round(c + t * math.cos(direction))] = 1
    return kernel / kernel.sum()


def unsmear(image: np.ndarray, sigma: float, direction: float) -> np.ndarray:
    """``image`` with ``UNSMEAR_AMOUNT`` times the detail a line blur along ``direction``
    (``UNSMEAR_LENGTH`` times ``sigma`` long) takes away added back: the unsharp mask of a
    smear, which steepens the smeared edges and leaves those along the smear alone."""
    soft = cv2.filter2D(image, -1, line_blur_kernel(UNSMEAR_LENGTH * sigma, direction))
    return cv2.addWeighted(image, 1 + UNSMEAR_AMOUNT, soft, -UNSMEAR_AMOUNT, 0)
