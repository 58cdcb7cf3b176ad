"""`vision-ref demo`: the review pipeline on the bundled sample video.

The sample lives in the repository's ``sample_videos/`` (rendered from the
simulator by the command in sample_videos/README, with its ground truth beside it)
and its calibration profile in ``calibration/``. The demo reviews it into an output
directory and says where the report is; it opens nothing (it must work headless,
over ssh, on the Pi).
"""

from __future__ import annotations

import os
from pathlib import Path

from vision_ref.errors import VideoError

DEFAULT_SAMPLE = "demo_match"
SAMPLE_PROFILE = "sample_profile.json"  # calibration/make_sample_profile.py writes it


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def _search_dirs(kind: str) -> list[Path]:
    dirs = []
    env = os.environ.get("VISION_REF_HOME")
    if env:
        dirs.append(Path(env) / kind)
    dirs += [repo_root() / kind, Path.cwd() / kind]
    seen, out = set(), []
    for d in dirs:
        if d.resolve() not in seen:
            seen.add(d.resolve())
            out.append(d)
    return out


def find_sample_video() -> Path:
    """``sample_videos/demo_match.mp4``, else the first sample video found."""
    looked = []
    for d in _search_dirs("sample_videos"):
        looked.append(str(d))
        p = d / f"{DEFAULT_SAMPLE}.mp4"
        if p.is_file():
            return p
    for d in _search_dirs("sample_videos"):
        vids = sorted(d.glob("*.mp4")) if d.is_dir() else []
        if vids:
            return vids[0]
    raise VideoError(f"no sample video found (looked for {DEFAULT_SAMPLE}.mp4 in {', '.join(looked)}); "
                     "pass --video, or regenerate the samples (see sample_videos/README.md)")


def find_profile(video: Path) -> Path | None:
    """The calibration profile made for the sample: ``calibration/<stem>.json`` (or
    ``<stem>.profile.json``), for a bundled sample ``calibration/sample_profile.json``,
    else ``<stem>.profile.json`` beside the video; None when there is none (the demo
    then calibrates from the video itself)."""
    names = [f"{video.stem}.json", f"{video.stem}.profile.json"]
    if video.parent.name == "sample_videos":
        names.append(SAMPLE_PROFILE)  # one profile for every bundled sample (the same camera)
    for n in names:
        for d in _search_dirs("calibration"):
            if (d / n).is_file():
                return d / n
    beside = video.with_name(f"{video.stem}.profile.json")
    return beside if beside.is_file() else None


def run_demo(out_dir, *, video=None, players=("A", "B"), target: int = 100, modes=None, annotated: bool = True,
             progress: bool = True, settings=None, exposure_s: float | None = None):
    from vision_ref.review.pipeline import review_video

    path = Path(video) if video else find_sample_video()
    profile = find_profile(path)
    result = review_video(path, out_dir, calibration=profile, players=players, target=target, modes=modes,
                          annotated=annotated, progress=progress, settings=settings, exposure_s=exposure_s)
    if profile is None:
        result.notes.append("no calibration profile found for the video; calibrated from its first still frames")
    else:
        result.notes.append(f"calibration profile: {profile}")
    return result
