"""The calibration preview: what was found, drawn on the frame, to check at a glance.

Cyan: the playing area (cushion noses) from the fitted camera, drawn through the
lens model so it follows the curved cushions; yellow dots: the sub-pixel edge
points; green crosses: spot marks and pin places; magenta: rail diamonds
(filled when found and used); labelled circles: the balls and pins of the set-up.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision_ref.camera import CameraModel
from vision_ref.rules.table import DEFAULT_TABLE, PIN_IDS, TableSpec


def _poly(cam: CameraModel, pts3: np.ndarray) -> np.ndarray:
    return np.round(cam.project(pts3) * 16).astype(np.int32)


def draw_preview(frame: np.ndarray, cam: CameraModel, table: TableSpec = DEFAULT_TABLE, *, edge_points=None,
                 marks=None, positions=None, nose_height: float | None = None, lines: list[str] | None = None,
                 scale: float | None = None) -> np.ndarray:
    img = frame.copy()
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    H, W = img.shape[:2]
    thick = max(1, int(round(W / 1000)))
    z = table.cushion_nose_height if nose_height is None else nose_height
    hx, hy = table.half_length, table.half_width
    t = np.linspace(-1, 1, 80)
    outline = np.vstack([
        np.column_stack([hx * t, np.full_like(t, -hy)]), np.column_stack([np.full_like(t, hx), hy * t]),
        np.column_stack([-hx * t, np.full_like(t, hy)]), np.column_stack([np.full_like(t, -hx), -hy * t]),
    ])
    cv2.polylines(img, [_poly(cam, np.column_stack([outline, np.full(len(outline), z)]))], True, (255, 255, 0), thick,
                  cv2.LINE_AA, 4)
    if edge_points is not None:
        for pts in edge_points:
            for p in np.asarray(pts)[::3]:
                cv2.circle(img, (int(round(p[0] * 16)), int(round(p[1] * 16))), 16, (0, 220, 255), -1, cv2.LINE_AA, 4)
    # spots and pin places on the cloth
    marks_xy = [table.ball_spot(n) for n in (1, 2, 3)] + [table.pin_spot(p) for p in PIN_IDS if p != "king"]
    arm = max(4, int(round(W / 200)))
    for xy in marks_xy:
        u = cam.project(np.array([[xy[0], xy[1], 0.0]]))[0]
        c = (int(round(u[0])), int(round(u[1])))
        cv2.line(img, (c[0] - arm, c[1]), (c[0] + arm, c[1]), (0, 255, 0), thick, cv2.LINE_AA)
        cv2.line(img, (c[0], c[1] - arm), (c[0], c[1] + arm), (0, 255, 0), thick, cv2.LINE_AA)
    found = set(marks.names) if marks is not None else set()
    for i, (x, y) in enumerate(table.diamonds()):
        u = cam.project(np.array([[x, y, table.rail_height]]))[0]
        c = (int(round(u[0])), int(round(u[1])))
        cv2.circle(img, c, arm, (255, 0, 255), -1 if f"diamond{i}" in found else thick, cv2.LINE_AA)
    if positions is not None:
        colours = {"cue": (0, 0, 255), "white1": (255, 255, 255), "white2": (200, 200, 200)}
        for b, xy in positions.balls.items():
            u = cam.project(np.array([[xy[0], xy[1], table.ball_radius]]))[0]
            r = table.ball_radius / cam.mm_per_pixel(table.ball_radius)
            c = (int(round(u[0])), int(round(u[1])))
            cv2.circle(img, c, int(round(r + 3)), colours.get(b, (0, 255, 255)), thick + 1, cv2.LINE_AA)
            _label(img, b, (c[0] + int(r) + 4, c[1] - int(r) - 2), W)
        for p, xy in positions.pins.items():
            u = cam.project(np.array([[xy[0], xy[1], table.pin_height_of(p)]]))[0]
            c = (int(round(u[0])), int(round(u[1])))
            cv2.circle(img, c, arm + 2, (0, 165, 255) if p == "king" else (0, 255, 255), thick, cv2.LINE_AA)
            if p == "king":
                _label(img, "king", (c[0] + arm + 4, c[1] + 3 * arm + 8), W)
    if lines:
        y = int(22 * W / 1456) + 4
        for ln in lines:
            _label(img, ln, (8, y), W)
            y += int(24 * W / 1456) + 4
    if scale is not None and scale != 1.0:
        img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return img


def _label(img, text, org, W):
    fs = 0.5 * W / 1000 + 0.2
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, fs, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, fs, (255, 255, 255), 1, cv2.LINE_AA)
