#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# What a rendered `umsi ... --svg` heat map shows, for tests/sim/svg.t and
# tests/inspect/svg.t:
#
#   svg-cells.py FILE.svg FILE.png [ROW:COL ...]
#
# parses FILE.svg as XML (exit 1 with the parser's message when it is not
# well-formed), decodes FILE.png (8-bit RGB or RGBA, non-interlaced, as
# rsvg-convert writes it) with nothing but zlib, and prints
#
#   svg W H            the SVG's width and height
#   png W H            the PNG's
#   title TEXT         the SVG's <title>
#   cell ROW COL #rrggbb   the pixel at the centre of each cell asked for
#
# A cell's place comes from the SVG itself: each group of rows is drawn
# in <g transform="translate(X,Y) scale(SX,SY)" data-first-row="F"
# data-rows="N">, row F + i at Y + i * SY, column c at X + c * SX.
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

NS = '{http://www.w3.org/2000/svg}'


def png_pixels(path, upto):
    """The PNG's size, bytes a pixel, and its rows up to row @upto."""
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('%s: not a PNG' % path)
    pos, idat, hdr = 8, b'', None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit('%s: depth %d colour type %d interlace %d not handled' %
                 (path, depth, ctype, interlace))
    bpp = 4 if ctype == 6 else 3
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    if upto < 0:
        return w, h, bpp, rows
    raw = zlib.decompress(idat)
    for y in range(min(h, upto + 1)):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def groups(root):
    out = []
    for g in root.iter(NS + 'g'):
        if g.get('data-first-row') is None:
            continue
        m = re.match(r'translate\(([\d.]+),([\d.]+)\) scale\(([\d.e+-]+),([\d.]+)\)',
                     g.get('transform'))
        out.append((int(g.get('data-first-row')), int(g.get('data-rows')),
                    *map(float, m.groups())))
    return out


def main():
    svg, png = sys.argv[1], sys.argv[2]
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        print('not well-formed XML: %s' % e)
        sys.exit(1)
    print('svg %s %s' % (root.get('width'), root.get('height')))
    title = root.find(NS + 'title')
    gs = groups(root)
    want = []
    for spec in sys.argv[3:]:
        row, col = map(int, spec.split(':'))
        at = None
        for first, n, x, y, sx, sy in gs:
            if first <= row < first + n:
                at = (int(x + (col + 0.5) * sx), int(y + (row - first + 0.5) * sy))
        want.append((row, col, at))
    # Only the rows up to the lowest cell asked for are decoded.
    w, h, bpp, rows = png_pixels(png, max([a[1] for _, _, a in want if a] or [-1]))
    print('png %d %d' % (w, h))
    print('title %s' % (title.text if title is not None else ''))
    for row, col, at in want:
        if at is None or at[1] >= len(rows) or at[0] >= w:
            print('cell %d %d none' % (row, col))
            continue
        p = rows[at[1]][at[0] * bpp:at[0] * bpp + 3]
        print('cell %d %d #%02x%02x%02x' % (row, col, p[0], p[1], p[2]))


main()
