"""The annotated video: the footage with the tracks, the contacts and the calls drawn over it.

Table positions from the tracker are projected back into the image with the
calibrated camera (ball centres at ball-radius height, pins on the cloth), so what
is drawn is what the referee believed, laid over what the camera saw: a trail
behind every ball since the strike, a ring on each ball and pin, a numbered flash at
every contact for a moment after it, and a banner with the shot, the score and, once
the shot is over, the call.

This is a second decoding pass over the video (a match does not fit in memory);
it is the slowest output and ``--no-annotated`` skips it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import cv2
import numpy as np

from vision_ref.messages import BallState, PinState, Tracks
from vision_ref.review.diagram import BALL_COLOURS, CONTACT, DOUBT, ContactMark, _ascii, call_title
from vision_ref.rules.table import BALL_IDS, PIN_IDS, TableSpec

TRAIL_S = 1.5  # how long a trail stays behind a moving ball
FLASH_S = 0.8  # how long a contact stays marked after it happens


@dataclass
class AnnotatedShot:
    """One shot as the annotator needs it: rows of the tracks, the strike on the tracks'
    clock, the contacts (from :func:`vision_ref.review.diagram.contact_marks`) and the decision."""

    start_row: int
    strike_row: int
    end_row: int
    strike_t: float
    marks: list[ContactMark] = field(default_factory=list)
    decision: dict | None = None


class Annotator:
    """Draws on frames; ``draw(bgr, row)`` annotates the frame at tracks row ``row`` in place."""

    def __init__(self, tracks: Tracks, camera, table: TableSpec, shots: list[AnnotatedShot], players: list[str],
                 start_score: dict[str, int]):
        self.tracks = tracks
        self.camera = camera
        self.table = table
        self.shots = shots
        self.players = players
        self.start_score = dict(start_score)
        R = table.ball_radius
        self.ball_px = {}
        for b in BALL_IDS:
            xy = tracks.balls[b].xy
            self.ball_px[b] = self._project(xy, R)
        self.pin_px = {p: self._project(tracks.pins[p].xy, 0.0) for p in PIN_IDS}
        self.ball_r_px = max(3, int(round(R / max(camera.mm_per_pixel(R), 1e-6))))
        self.scale = max(0.5, camera.width / 1456.0)

    def _project(self, xy: np.ndarray, z: float) -> np.ndarray:
        out = np.full((len(xy), 2), np.nan)
        ok = np.isfinite(xy).all(axis=1)
        if ok.any():
            pts = np.column_stack([xy[ok], np.full(int(ok.sum()), z)])
            out[ok] = self.camera.project(pts)
        return out

    def _shot_at(self, row: int) -> tuple[int, AnnotatedShot | None, bool]:
        """(index of the latest shot started by ``row``, the shot, whether it is over)."""
        k = -1
        for i, s in enumerate(self.shots):
            if s.start_row <= row:
                k = i
        if k < 0:
            return -1, None, False
        s = self.shots[k]
        return k, s, row > s.end_row

    def _score_before(self, k: int) -> dict[str, int]:
        for i in range(k - 1, -1, -1):
            d = self.shots[i].decision
            if d:
                return dict(d["score"])
        return dict(self.start_score)

    @staticmethod
    def _pt(p) -> tuple[int, int]:
        return int(round(p[0])), int(round(p[1]))

    def _text(self, img, text: str, org, scale: float, colour, thick: int = 1) -> None:
        s = scale * self.scale
        t = max(1, int(round(thick * self.scale)))
        text = _ascii(text)
        # a dark outline from the same glyphs shifted around: a thicker pen would advance
        # differently per glyph (OpenCV) and the outline would drift off the letters
        x, y = org
        for dx, dy in ((-1, -1), (1, -1), (-1, 1), (1, 1), (0, 2), (2, 0), (0, -2), (-2, 0)):
            cv2.putText(img, text, (x + dx, y + dy), cv2.FONT_HERSHEY_SIMPLEX, s, (0, 0, 0), t, cv2.LINE_AA)
        cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, s, colour, t, cv2.LINE_AA)

    def _free_spot(self, text: str, x: int, y: int, taken: list, shape) -> tuple[int, int]:
        """Where to put a label near (x, y) so it covers no label already drawn:
        the first free line below or above, alternating."""
        (tw, th), base = cv2.getTextSize(_ascii(text), cv2.FONT_HERSHEY_SIMPLEX, 0.55 * self.scale, 1)
        step = th + base + 4
        for k in (0, 1, -1, 2, -2, 3, -3, 4, -4):
            yy = y + k * step
            box = (x, yy - th, x + tw, yy + base)
            if all(box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3] for b in taken):
                if 0 <= box[1] and box[3] < shape[0]:
                    taken.append(box)
                    return x, yy
        taken.append((x, y - th, x + tw, y + base))
        return x, y

    def draw(self, img: np.ndarray, row: int) -> np.ndarray:
        tr = self.tracks
        t_now = float(tr.t[row])
        k, shot, over = self._shot_at(row)
        # trails since the strike (or the last TRAIL_S seconds), only while in a shot
        if shot is not None and shot.strike_row <= row and not over:
            first = max(shot.strike_row, int(np.searchsorted(tr.t, t_now - TRAIL_S)))
            for b in BALL_IDS:
                seg = self.ball_px[b][first: row + 1]
                seg = seg[np.isfinite(seg).all(axis=1)]
                if len(seg) >= 2:
                    pts = np.round(seg * 4).astype(np.int32).reshape(-1, 1, 2)
                    cv2.polylines(img, [pts], False, BALL_COLOURS[b], max(1, int(2 * self.scale)), cv2.LINE_AA, 2)
        for b in BALL_IDS:
            st = int(tr.balls[b].state[row])
            p = self.ball_px[b][row]
            if not np.isfinite(p).all() or st in (BallState.OFF_TABLE, BallState.IN_HAND):
                continue
            cv2.circle(img, self._pt(p), self.ball_r_px + 3, BALL_COLOURS[b], max(1, int(2 * self.scale)), cv2.LINE_AA)
        for pid in PIN_IDS:
            p = self.pin_px[pid][row]
            if not np.isfinite(p).all():
                continue
            st = int(tr.pins[pid].state[row])
            c = self._pt(p)
            d = max(4, int(6 * self.scale))
            if st in (PinState.DOWN, PinState.RAIL_DOWN):
                cv2.line(img, (c[0] - d, c[1] - d), (c[0] + d, c[1] + d), (40, 40, 230), 2, cv2.LINE_AA)
                cv2.line(img, (c[0] - d, c[1] + d), (c[0] + d, c[1] - d), (40, 40, 230), 2, cv2.LINE_AA)
            elif st == PinState.MOVING:
                cv2.circle(img, c, d + 2, (0, 165, 255), 2, cv2.LINE_AA)
            elif st in (PinState.STANDING, PinState.LEANING, PinState.RAIL_STANDING):
                cv2.circle(img, c, d, (230, 230, 230), 1, cv2.LINE_AA)
        # contacts: a numbered ring where each happened, for FLASH_S after it
        if shot is not None:
            taken: list[tuple[int, int, int, int]] = []  # label boxes already drawn this frame
            for m in shot.marks:
                age = t_now - (shot.strike_t + m.t)
                if m.xy is None or not (0.0 <= age <= FLASH_S):
                    continue
                p = self.camera.project(np.array([[m.xy[0], m.xy[1], self.table.ball_radius]]))[0]
                colour = DOUBT if m.doubt else CONTACT
                rad = int(self.ball_r_px * (1.3 + 1.2 * age / FLASH_S))
                cv2.circle(img, self._pt(p), rad, colour, max(1, int(3 * self.scale)), cv2.LINE_AA)
                label = f"{m.number} {m.text}"
                x, y = self._free_spot(label, int(p[0]) + rad + 4, int(p[1]) + 5, taken, img.shape)
                self._text(img, label, (x, y), 0.55, colour)
        # banner
        h = int(34 * self.scale)
        band = img[:h]
        band[:] = (band * 0.45).astype(np.uint8)
        if shot is None:
            text = "waiting for the first shot"
            score = self.start_score
        elif over and shot.decision:
            text = call_title(shot.decision)
            score = shot.decision["score"]
        else:
            shooter = shot.decision["shooter"] if shot.decision else "?"
            text = f"Shot {k + 1}, {shooter} to play"
            score = self._score_before(k)
        self._text(img, text, (int(10 * self.scale), int(24 * self.scale)), 0.7, (255, 255, 255))
        s = "  ".join(f"{p} {score.get(p, 0)}" for p in self.players)
        tw = cv2.getTextSize(s, cv2.FONT_HERSHEY_SIMPLEX, 0.7 * self.scale, 2)[0][0]
        self._text(img, s, (img.shape[1] - tw - int(12 * self.scale), int(24 * self.scale)), 0.7, (120, 255, 255), 2)
        self._text(img, f"t {t_now:7.2f} s", (int(10 * self.scale), img.shape[0] - int(10 * self.scale)), 0.5,
                   (230, 230, 230))
        return img


def write_annotated(
    video_path,
    out_path,
    annotator: Annotator,
    row_of_frame: Callable[[int], int | None],
    *,
    progress: Callable[[int], None] | None = None,
    crf: int = 26,
    preset: str = "superfast",  # ~1.5x the encoding speed of veryfast for a larger file: an annotated copy
) -> int:
    """Decode ``video_path`` again, draw on every frame, write H.264 to ``out_path``.

    ``row_of_frame(file_frame_number)`` gives the tracks row of a decoded frame (None
    for frames the tracker never saw, which are copied unannotated). Returns frames written.
    """
    from vision_ref.video import VideoReader, VideoWriter

    reader = VideoReader(video_path, mode="bgr", strict=False)
    w, h = reader.width, reader.height
    # H.264 yuv420p needs an even size; crop the odd row/column rather than fail
    w2, h2 = w - (w % 2), h - (h % 2)
    n = 0
    with VideoWriter(out_path, w2, h2, reader.fps, crf=crf, preset=preset, timestamps=False) as vw:
        for frame in reader:
            img = np.array(frame.bgr[:h2, :w2])
            row = row_of_frame(frame.index)
            if row is not None:
                annotator.draw(img, row)
            vw.write(img)
            n += 1
            if progress:
                progress(n)
    return n
