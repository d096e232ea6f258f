"""The text on each page of a PDF Chromium printed (``Page.printToPDF``), for tests that check
what a reader of the paper sees.  Chromium's PDFs (Skia) are simple: plain numbered objects, one
content stream per page, Type0 fonts with a ToUnicode map; this reads exactly that, no more."""

from __future__ import annotations

import re
import zlib

_OBJECT = re.compile(rb"(\d+) 0 obj\s*(.*?)\s*endobj", re.S)
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)
# In a content stream: a font chosen, a text object placed (its Tm's x and y), or a string
# shown (<hex> Tj, or [<hex> kern <hex> ...] TJ).
_NUMBER = rb"(-?[\d.]+)"
_TEXT = re.compile(rb"/(\w+)\s+[\d.]+\s+Tf|" + rb"\s+".join([_NUMBER] * 6) + rb"\s+Tm|"
                   rb"<([0-9A-Fa-f]*)>\s*Tj|\[([^\]]*)\]\s*TJ")


def page_texts(pdf: bytes) -> list[str]:
    """Each page's text, in page order, as lines: the pieces Chromium places on one baseline
    (it places "page", the number and "of" apart) joined left to right.  Lines are ordered by
    their baseline in each piece's own coordinates, which need not be the order on paper."""
    objects = {int(n): body for n, body in _OBJECT.findall(pdf)}
    pages = re.search(rb"/Type\s*/Pages\b.*?/Kids\s*\[([^\]]*)\]", pdf, re.S)
    if pages is None:
        raise ValueError("no page tree: not a PDF Chromium printed")
    out = []
    for ref in re.findall(rb"(\d+) 0 R", pages.group(1)):
        page = objects[int(ref)]
        fonts = {name.decode(): _to_unicode(objects, int(font))
                 for name, font in re.findall(rb"/(\w+) (\d+) 0 R", _dict_after(page, b"/Font"))}
        content = _inflate(objects[int(re.search(rb"/Contents (\d+) 0 R", page).group(1))])
        pieces: dict[float, list[tuple[float, str]]] = {}     # baseline -> (x, text)
        cmap: dict[int, str] = {}
        x = y = 0.0
        for found in _TEXT.finditer(content):
            font, *matrix, shown, shown_many = found.groups()
            if font:
                cmap = fonts.get(font.decode(), {})
            elif matrix[0] is not None:
                x, y = float(matrix[4]), round(float(matrix[5]))
            else:
                glyphs = "".join(h.decode() for h in (re.findall(rb"<([0-9A-Fa-f]*)>", shown_many)
                                                      if shown_many is not None else [shown]))
                text = "".join(cmap.get(int(glyphs[i:i + 4], 16), "\ufffd") for i in range(0, len(glyphs), 4))
                pieces.setdefault(y, []).append((x, text))
        out.append("\n".join("".join(text for _, text in sorted(pieces[line], key=lambda p: p[0]))
                             for line in sorted(pieces)))
    return out


def _dict_after(body: bytes, key: bytes) -> bytes:
    start = body.find(key)
    return body[start:body.find(b">>", start)] if start >= 0 else b""


def _inflate(body: bytes) -> bytes:
    return zlib.decompress(_STREAM.search(body).group(1))


def _to_unicode(objects: dict[int, bytes], font: int) -> dict[int, str]:
    """A font's glyph id -> text, from its ToUnicode CMap (bfchar and bfrange entries)."""
    found = re.search(rb"/ToUnicode (\d+) 0 R", objects[font])
    if found is None:
        return {}
    cmap = _inflate(objects[int(found.group(1))])
    out: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", cmap, re.S):
        for glyph, text in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            out[int(glyph, 16)] = bytes.fromhex(text.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", cmap, re.S):
        for first, last, text in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            start = int(text, 16)
            for i, glyph in enumerate(range(int(first, 16), int(last, 16) + 1)):
                out[glyph] = chr(start + i)
    return out
