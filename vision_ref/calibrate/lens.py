"""Lens calibration from views of the printed ChArUco board (once per camera + lens + mode).

The board (``calibration/charuco_board.json`` + PNG/PDF made by
``calibration/make_board.py``) is detected with OpenCV's ChArUco detector; the
chessboard corners it identifies (ids make partial views usable) go to
``cv2.calibrateCamera`` with the 5-parameter distortion model the rest of the
project uses. The result is a lens JSON (``vision-ref.lens/1``) that
``vision-ref calibrate --lens`` re-uses: then only the pose is fitted from the
table, which is what fixes the camera height exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision_ref.camera import CameraModel
from vision_ref.calibrate.profile import read_json, write_json_atomic
from vision_ref.errors import CalibrationError

LENS_FORMAT = "vision-ref.lens/1"
REPO_CALIBRATION = Path(__file__).resolve().parents[2] / "calibration"
DEFAULT_BOARD_JSON = REPO_CALIBRATION / "charuco_board.json"
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff"}


@dataclass(frozen=True)
class BoardSpec:
    """A ChArUco board: squares, their printed size, the ArUco dictionary."""

    squares_x: int = 10
    squares_y: int = 7
    square_mm: float = 38.0  # A3 landscape at 100 % scale
    marker_mm: float = 28.0
    dictionary: str = "DICT_5X5_100"

    def board(self):
        d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        return cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), self.square_mm, self.marker_mm, d)

    def to_dict(self) -> dict[str, Any]:
        return {"squares_x": self.squares_x, "squares_y": self.squares_y, "square_mm": self.square_mm,
                "marker_mm": self.marker_mm, "dictionary": self.dictionary}

    @classmethod
    def load(cls, path: str | Path | None = None) -> "BoardSpec":
        path = Path(path) if path else DEFAULT_BOARD_JSON
        if not path.exists():
            if path == DEFAULT_BOARD_JSON:
                return cls()
            raise CalibrationError(f"board description {path} does not exist")
        try:
            d = json.loads(path.read_text())
            spec = cls(int(d["squares_x"]), int(d["squares_y"]), float(d["square_mm"]), float(d["marker_mm"]),
                       str(d.get("dictionary", "DICT_5X5_100")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CalibrationError(f"board description {path} is not readable: {exc}") from None
        if not hasattr(cv2.aruco, spec.dictionary):
            raise CalibrationError(f"board description {path}: unknown ArUco dictionary {spec.dictionary!r}")
        return spec


def board_image(spec: BoardSpec, px_per_mm: float, margin_mm: float = 10.0) -> np.ndarray:
    """The board as a grey image at ``px_per_mm`` with a white margin (for printing and for tests)."""
    w = int(round((spec.squares_x * spec.square_mm + 2 * margin_mm) * px_per_mm))
    h = int(round((spec.squares_y * spec.square_mm + 2 * margin_mm) * px_per_mm))
    return spec.board().generateImage((w, h), marginSize=int(round(margin_mm * px_per_mm)), borderBits=1)


def detect_board(image: np.ndarray, spec: BoardSpec):
    """(object points (N,3) mm, image points (N,2) px) of the ChArUco corners seen, or None."""
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    board = spec.board()
    det = cv2.aruco.CharucoDetector(board)
    corners, ids, _, _ = det.detectBoard(grey)
    if corners is None or ids is None or len(ids) < 6:
        return None
    obj, img = board.matchImagePoints(corners, ids)
    if obj is None or len(obj) < 6:
        return None
    return obj.reshape(-1, 3).astype(np.float32), img.reshape(-1, 2).astype(np.float32)


@dataclass
class LensCalibration:
    camera: CameraModel  # K and dist; pose is identity
    rms_px: float
    views: int
    corners: int
    board: BoardSpec

    def to_dict(self) -> dict[str, Any]:
        c = self.camera
        return {"format": LENS_FORMAT, "width": c.width, "height": c.height, "K": c.K.tolist(),
                "dist": c.dist.tolist(), "rms_px": self.rms_px, "views": self.views, "corners": self.corners,
                "board": self.board.to_dict()}

    def save(self, path: str | Path) -> None:
        write_json_atomic(path, self.to_dict())


def load_lens(path: str | Path) -> CameraModel:
    """A lens JSON (or a profile / camera JSON carrying K and dist) -> CameraModel with zero pose."""
    path = Path(path)
    d = read_json(path, "lens file")
    if isinstance(d, dict) and "camera" in d and isinstance(d["camera"], dict):
        d = d["camera"]  # a calibration profile or a NAME.camera.json: reuse its intrinsics
    if not isinstance(d, dict):
        raise CalibrationError(f"lens file {path}: expected a JSON object")
    try:
        return CameraModel(int(d["width"]), int(d["height"]), d["K"], d["dist"], np.zeros(3), np.array([0, 0, 1.0]))
    except (KeyError, TypeError, ValueError) as exc:
        raise CalibrationError(f"lens file {path}: {exc}") from None


def calibrate_lens(images: list[np.ndarray], spec: BoardSpec | None = None, min_views: int = 4,
                   fix_principal_point: bool = False) -> LensCalibration:
    """Intrinsics and distortion from several views of the board (raises CalibrationError saying what is wrong)."""
    spec = spec or BoardSpec.load()
    if not images:
        raise CalibrationError("no images of the calibration board given")
    sizes = {im.shape[:2] for im in images}
    if len(sizes) != 1:
        raise CalibrationError(f"the board views differ in size: {sorted(sizes)}; use one camera mode")
    h, w = images[0].shape[:2]
    objs, imgs = [], []
    for im in images:
        r = detect_board(im, spec)
        if r is not None:
            objs.append(r[0])
            imgs.append(r[1])
    if len(objs) < min_views:
        raise CalibrationError(
            f"the ChArUco board was found in {len(objs)} of {len(images)} views (need {min_views}): "
            "check the focus, light the board evenly without glare, and fill a good part of the view with it"
        )
    flags = cv2.CALIB_FIX_ASPECT_RATIO
    if fix_principal_point:
        flags |= cv2.CALIB_FIX_PRINCIPAL_POINT
    K0 = np.array([[0.8 * w, 0, (w - 1) / 2], [0, 0.8 * w, (h - 1) / 2], [0, 0, 1.0]])
    rms, K, dist, _, _ = cv2.calibrateCamera(objs, imgs, (w, h), K0, np.zeros(5), flags=flags | cv2.CALIB_USE_INTRINSIC_GUESS)
    if not np.isfinite(rms) or rms > 2.0:
        raise CalibrationError(
            f"lens calibration did not converge (reprojection error {rms:.2f} px): take sharper views from more angles"
        )
    cam = CameraModel(w, h, K, np.ravel(dist)[:5], np.zeros(3), np.array([0, 0, 1.0]))
    return LensCalibration(cam, float(rms), len(objs), int(sum(len(o) for o in objs)), spec)


def _frames_of(path: Path, every: int):
    if path.suffix.lower() in IMAGE_SUFFIXES:
        im = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if im is None:
            raise CalibrationError(f"cannot read image {path}")
        yield im
        return
    from vision_ref.video import VideoReader

    reader = VideoReader(path, strict=False)
    for fr in reader:
        if fr.index % every == 0:
            yield fr.bgr


def calibrate_lens_files(sources: list[str], out: str, board_path: str | None = None, every: int = 15) -> str:
    spec = BoardSpec.load(board_path)
    images = []
    for s in sources:
        p = Path(s)
        if not p.exists():
            raise CalibrationError(f"{p} does not exist")
        images.extend(_frames_of(p, every))
    cal = calibrate_lens(images, spec)
    cal.save(out)
    c = cal.camera
    return (f"lens: {out} ({c.width}x{c.height}, f={c.K[0, 0]:.1f} px, k1={c.dist[0]:+.4f}, "
            f"{cal.views} views, {cal.corners} corners, reprojection {cal.rms_px:.3f} px)")


# ---- synthetic views (tests and benchmarks) -------------------------------------------------------
def render_board_view(camera: CameraModel, spec: BoardSpec, px_per_mm: float = 8.0, noise: float = 1.5,
                      seed: int = 0, blur: float = 0.6) -> np.ndarray:
    """What ``camera`` sees of the board lying in its own z=0 plane (board origin at its top-left corner)."""
    margin = 10.0
    tex = board_image(spec, px_per_mm, margin).astype(np.float32)
    H, W = camera.height, camera.width
    ys, xs = np.mgrid[0:H, 0:W]
    pix = np.column_stack([xs.ravel(), ys.ravel()]).astype(np.float64)
    xy = camera.pixels_to_plane(pix, 0.0)
    # board mm -> texture px (object points of the board start at the first square's corner)
    u = ((xy[:, 0] + margin) * px_per_mm - 0.5).reshape(H, W).astype(np.float32)
    v = ((xy[:, 1] + margin) * px_per_mm - 0.5).reshape(H, W).astype(np.float32)
    # area-average the fine texture first so the view is not aliased
    scale = px_per_mm * camera.mm_per_pixel()
    if scale > 1.5:
        tex = cv2.GaussianBlur(tex, (0, 0), 0.5 * scale)
    img = cv2.remap(tex, u, v, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=90.0)
    img = img * 0.75 + 30.0
    if blur > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur)
    rng = np.random.default_rng(seed)
    img = img + rng.normal(0, noise, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def board_view_cameras(base: CameraModel, spec: BoardSpec, n: int = 8, seed: int = 0) -> list[CameraModel]:
    """Cameras with ``base``'s lens looking at the board from varied angles and distances."""
    rng = np.random.default_rng(seed)
    bw, bh = spec.squares_x * spec.square_mm, spec.squares_y * spec.square_mm
    centre = np.array([bw / 2, bh / 2, 0.0])
    cams = []
    f = base.K[0, 0]
    fill = 0.55
    dist0 = f * bw / (fill * base.width)
    for i in range(n):
        tilt_x, tilt_y = rng.uniform(-35, 35), rng.uniform(-35, 35)
        rz = rng.uniform(-20, 20)
        d = dist0 * rng.uniform(0.8, 1.2)
        R = cv2.Rodrigues(np.radians([tilt_x, tilt_y, rz]))[0]
        # look at a point off the board centre so the corners reach the image edges too
        target = centre + np.array([rng.uniform(-0.15, 0.15) * bw, rng.uniform(-0.15, 0.15) * bh, 0.0])
        t = np.array([0.0, 0.0, d]) - R @ target
        t[:2] += rng.uniform(-0.25, 0.25, 2) * d * np.array([base.width, base.height]) / (2 * f)
        cams.append(CameraModel(base.width, base.height, base.K, base.dist, cv2.Rodrigues(R)[0].ravel(), t))
    return cams
