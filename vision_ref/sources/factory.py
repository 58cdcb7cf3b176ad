"""``--source`` specs to FrameSource objects: ``pi[:N]``, ``/dev/videoN``, a video file,
``synthetic:NAME[,NAME...]`` (named scenarios, one after another) or ``synthetic:random:N`` (N seeded shots)."""

from __future__ import annotations

from pathlib import Path

from vision_ref.errors import SourceError
from vision_ref.sources.base import FrameSource


def synthetic_shots(spec: str, seed: int = 0) -> list:
    """The simulated shots a ``synthetic:...`` spec names (one scenario or N random shots)."""
    name = spec.split(":", 1)[1] if spec.startswith("synthetic:") else spec
    if not name:
        raise SourceError("synthetic source needs a name: synthetic:SCENARIO or synthetic:random:N")
    if name.startswith("random"):
        from vision_ref.live.stages import demo_shots

        return demo_shots(_count(name), seed)
    try:
        from vision_ref.sim import scenarios
    except ImportError:
        raise SourceError("the scenario library (vision_ref.sim.scenarios) is not available; "
                          "use synthetic:random:N") from None
    known = {s.name for s in scenarios.list_scenarios()}
    names = [n for n in name.split(",") if n]
    for n in names:
        if n not in known:
            raise SourceError(f"unknown scenario {n!r}; `vision-ref scenarios` lists {len(known)} names")
    return [scenarios.get_scenario(n).simulate(seed) for n in names]


def synthetic_clip(spec: str, seed: int = 0, fps: float = 60.0):
    """One renderable simulation for a ``synthetic:...`` spec: a scenario, or for
    ``random:N`` a :class:`ShotSequence` of N shots played on from one another."""
    name = spec.split(":", 1)[1] if spec.startswith("synthetic:") else spec
    if name.startswith("random"):
        n = _count(name)
        from vision_ref.sim.physics import Layout
        from vision_ref.sim.sequence import ShotSequence

        return ShotSequence(Layout.standard(), ["any"] * n, seed=seed, fps=fps)
    shots = synthetic_shots(spec, seed)
    if len(shots) != 1:
        raise SourceError(f"{spec}: scenarios each start from their own layout and cannot be rendered as one "
                          "clip; use one scenario, synthetic:random:N, or --stages truth")
    return shots[0]


def _count(name: str) -> int:
    parts = name.split(":")
    try:
        n = int(parts[1]) if len(parts) > 1 else 4
    except ValueError:
        raise SourceError(f"synthetic:random:N needs a whole number of shots, got {parts[1]!r}") from None
    if n < 1:
        raise SourceError(f"synthetic:random:N needs at least one shot, got {n}")
    return n


def open_source(spec: str, *, fps: float | None = None, size: tuple[int, int] | None = None, mode: str = "bgr",
                paced: bool = False, camera=None, seed: int = 0, drop=(), exposure=None,
                render_settings=None) -> FrameSource:
    """The (not yet opened) source for ``spec``. ``camera``: the CameraModel synthetic
    frames are rendered for (from the calibration); ``exposure``: a Pi ExposureLock."""
    from vision_ref.sources.opencv import FileSource, OpenCVCameraSource, is_device

    spec = str(spec)
    if spec == "pi" or spec.startswith("pi:"):
        from vision_ref.sources.picamera import PiCameraSource

        num = 0
        if ":" in spec:
            try:
                num = int(spec.split(":", 1)[1])
            except ValueError:
                raise SourceError(f"pi:N needs a camera number, got {spec!r}") from None
        return PiCameraSource(num, fps=fps, exposure=exposure, mode="bgr" if mode == "bgr" else "yuv")
    if is_device(spec):
        return OpenCVCameraSource(spec, size=size, fps=fps or 60.0, mode=mode)
    if spec.startswith("synthetic:"):
        from vision_ref.sim.render import RenderSettings
        from vision_ref.sources.synthetic import SyntheticSource

        sim = synthetic_clip(spec, seed, fps or 60.0)
        if camera is None:
            from vision_ref.camera import CameraModel

            w, h = size or (1456, 1088)
            camera = CameraModel.overhead(w, h)
        settings = render_settings or RenderSettings(fps=fps or 60.0, seed=seed)
        return SyntheticSource(sim, camera, settings, paced=paced, mode=mode, drop=drop, name=spec)
    p = Path(spec)
    if not p.exists():
        raise SourceError(f"--source {spec!r}: not pi, /dev/videoN, synthetic:NAME, nor an existing video file")
    return FileSource(p, mode=mode, paced=paced)
