"""Small bright marks of known 3-D position: rail diamonds, spot marks, pin places.

Given a first camera (from the cushion lines), each mark is looked for in a window
round its predicted pixel: a compact blob brighter than its surroundings, of about
the expected size (a ball or a pin standing on a spot is far too big and is
rejected). Its sub-pixel centre is the intensity-weighted centroid above the local
background. The found marks join the camera fit: the diamonds sit on the rails,
higher than the nose edges, and the spots on the cloth, lower, so they fix the
camera height (and focal length) that four lines at one height leave free.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision_ref.camera import CameraModel
from vision_ref.rules.table import DEFAULT_TABLE, PIN_IDS, TableSpec


@dataclass
class MarkSet:
    names: list[str]
    world: np.ndarray  # (N,3) table mm
    image: np.ndarray  # (N,2) px found
    predicted: np.ndarray  # (N,2) px from the camera used to look


def table_marks(table: TableSpec = DEFAULT_TABLE) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Names, 3-D positions and sizes (area mm^2) of the diamonds and the printed cloth marks."""
    names, pts, areas = [], [], []
    for i, (x, y) in enumerate(table.diamonds()):
        names.append(f"diamond{i}")
        pts.append((x, y, table.rail_height))
        areas.append(2 * 7.0 * 11.0)
    r = table.spot_mark_diameter / 2
    for n in (1, 2, 3):
        names.append(f"spot{n}")
        pts.append((*table.ball_spot(n), 0.0))
        areas.append(np.pi * r * r)
    for p in PIN_IDS:
        if p == "king":
            continue  # the king stands on spot 2
        names.append(f"pin_place_{p}")
        pts.append((*table.pin_spot(p), 0.0))
        areas.append(np.pi * r * r)
    return names, np.array(pts, dtype=np.float64), np.array(areas)


def find_marks(frame_bgr: np.ndarray, camera: CameraModel, table: TableSpec = DEFAULT_TABLE,
               search_px: float = 6.0, min_contrast: float = 20.0) -> MarkSet:
    """The marks visible in the frame near where ``camera`` predicts them."""
    grey = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY).astype(np.float32)
    H, W = grey.shape
    names, world, areas = table_marks(table)
    pred = camera.project(world)
    px_per_mm = 1.0 / camera.mm_per_pixel(0.0)
    found_n, found_w, found_i, found_p = [], [], [], []
    for name, P, A, u in zip(names, world, areas, pred):
        exp_area = A * px_per_mm**2
        half = int(np.ceil(search_px + 2.5 * np.sqrt(exp_area)))
        x0, y0 = int(round(u[0])) - half, int(round(u[1])) - half
        x1, y1 = x0 + 2 * half + 1, y0 + 2 * half + 1
        if x0 < 1 or y0 < 1 or x1 > W - 1 or y1 > H - 1:
            continue
        win = grey[y0:y1, x0:x1]
        bg = float(np.median(win))
        peak = float(win.max())
        if peak - bg < min_contrast:
            continue
        mask = (win > bg + 0.5 * (peak - bg)).astype(np.uint8)
        n, lab, stats, cents = cv2.connectedComponentsWithStats(mask, connectivity=8)
        if n <= 1:
            continue
        # the component nearest the prediction
        cx, cy = u[0] - x0, u[1] - y0
        dists = [np.hypot(cents[k][0] - cx, cents[k][1] - cy) for k in range(1, n)]
        k = 1 + int(np.argmin(dists))
        if dists[k - 1] > search_px + 1.0:
            continue
        area = stats[k, cv2.CC_STAT_AREA]
        if not (0.2 * exp_area <= area <= 3.0 * exp_area + 4):
            continue  # a ball, a pin, a reflection: not this mark
        bw, bh = stats[k, cv2.CC_STAT_WIDTH], stats[k, cv2.CC_STAT_HEIGHT]
        if bw >= win.shape[1] - 2 or bh >= win.shape[0] - 2:
            continue
        # weighted centroid over the component grown by one pixel (keeps the soft rim)
        grown = cv2.dilate((lab == k).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
        wts = np.clip(win - bg, 0, None) * grown
        s = wts.sum()
        if s <= 0:
            continue
        ys, xs = np.mgrid[0:win.shape[0], 0:win.shape[1]]
        found_n.append(name)
        found_w.append(P)
        found_i.append((x0 + float((wts * xs).sum() / s), y0 + float((wts * ys).sum() / s)))
        found_p.append(u)
    return MarkSet(found_n, np.array(found_w).reshape(-1, 3), np.array(found_i).reshape(-1, 2), np.array(found_p).reshape(-1, 2))
