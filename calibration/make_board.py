"""Make the printable ChArUco board: charuco_board.png (300 dpi), charuco_board.pdf (exact size), charuco_board.json.

Run from the repository root:  python calibration/make_board.py  [--squares 10x7] [--square-mm 38] [--marker-mm 28]

The PDF page is the board's exact physical size plus a 10 mm white margin, so a
print at 100 % ("actual size", no "fit to page") has squares of exactly
``square_mm``. Measure one square after printing; if the printer scaled it, write
the measured size into charuco_board.json (``square_mm``, and ``marker_mm`` scaled
alike) before calibrating.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path

import cv2

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from vision_ref.calibrate.lens import BoardSpec, board_image  # noqa: E402

DPI = 300
MARGIN_MM = 10.0


def write_pdf(path: Path, grey, width_mm: float, height_mm: float) -> None:
    """A one-page PDF showing the grey image at exactly width_mm x height_mm (no external libraries)."""
    h, w = grey.shape
    pw, ph = width_mm * 72 / 25.4, height_mm * 72 / 25.4
    data = zlib.compress(grey.tobytes(), 9)
    content = f"q {pw:.4f} 0 0 {ph:.4f} 0 0 cm /Im0 Do Q".encode()
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.4f} {ph:.4f}] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>".encode(),
        f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length {len(data)} >>\nstream\n".encode() + data + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--squares", default="10x7", help="squares across x down (default 10x7)")
    ap.add_argument("--square-mm", type=float, default=38.0)
    ap.add_argument("--marker-mm", type=float, default=28.0)
    ap.add_argument("--dictionary", default="DICT_5X5_100")
    ap.add_argument("--out", default=str(HERE), help="output folder (default: calibration/)")
    a = ap.parse_args(argv)
    sx, sy = (int(v) for v in a.squares.lower().split("x"))
    spec = BoardSpec(sx, sy, a.square_mm, a.marker_mm, a.dictionary)
    out = Path(a.out)
    px_per_mm = DPI / 25.4
    img = board_image(spec, px_per_mm, MARGIN_MM)
    w_mm = sx * a.square_mm + 2 * MARGIN_MM
    h_mm = sy * a.square_mm + 2 * MARGIN_MM
    cv2.imwrite(str(out / "charuco_board.png"), img)
    write_pdf(out / "charuco_board.pdf", img, w_mm, h_mm)
    doc = {**spec.to_dict(), "margin_mm": MARGIN_MM, "page_mm": [w_mm, h_mm], "png_dpi": DPI,
           "print": "at 100 % (actual size) on A3 landscape; measure a square and correct square_mm if scaled"}
    (out / "charuco_board.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"board {sx}x{sy} squares of {a.square_mm} mm (markers {a.marker_mm} mm, {a.dictionary}); "
          f"page {w_mm:.0f}x{h_mm:.0f} mm -> {out}/charuco_board.(png|pdf|json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
