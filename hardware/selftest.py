#!/usr/bin/env python3
"""Camera self-test on the Raspberry Pi: real frame rate, dropped frames, exposure lock, jitter.

    python hardware/selftest.py [--seconds 20] [--fps 60] [--camera 0] [--lock-into PROFILE.json]

Opens the camera exactly as `vision-ref live --source pi` does (vision_ref.sources.
picamera: YUV420, the model's sensor mode, FrameDurationLimits, AE/AWB locked after
settling), reads frames for ``--seconds`` while copying them out as the live loop
does, and reports:

- the frame rate measured from SensorTimestamp against the one asked for;
- dropped frames (timestamp gaps) and where they were;
- timestamp jitter (standard deviation of the frame intervals) and the longest interval;
- whether the exposure lock holds: ExposureTime, AnalogueGain and ColourGains must
  not change from frame to frame once AE/AWB are off;
- the per-frame copy cost (what the capture thread spends per frame).

``--lock-into PROFILE`` writes the locked exposure and colour gains into the
calibration profile (``extra.camera_controls``), so `vision-ref live` uses exactly
these settings instead of settling again. Run it with the table lit as in play,
right after calibrating. Exit status 0 when the camera passes (no drops beyond
``--max-drops``, rate within 1 %, lock held), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--fps", type=float, default=None, help="frame rate to ask for (default: per camera model)")
    ap.add_argument("--camera", type=int, default=0)
    ap.add_argument("--max-exposure-us", type=int, default=2000)
    ap.add_argument("--max-drops", type=int, default=0)
    ap.add_argument("--lock-into", metavar="PROFILE", default=None)
    args = ap.parse_args()

    from vision_ref.errors import VisionRefError
    from vision_ref.sources.picamera import PiCameraSource

    src = PiCameraSource(args.camera, fps=args.fps, max_exposure_us=args.max_exposure_us)
    try:
        src.open()
    except VisionRefError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    controls = set()
    n = 0
    copy_s = 0.0
    t_end = time.monotonic() + args.seconds
    try:
        with src:
            it = src.frames()
            while time.monotonic() < t_end:
                t0 = time.perf_counter()
                frame = next(it)
                copy_s += time.perf_counter() - t0
                n += 1
                md = src.last_metadata
                controls.add((md.get("ExposureTime"), round(float(md.get("AnalogueGain", 0.0)), 3),
                              tuple(round(float(g), 3) for g in md.get("ColourGains", ()))))
    except VisionRefError as exc:
        print(f"error after {n} frames: {exc}", file=sys.stderr)
        return 1
    st = src.stats
    d = src.describe()
    lock_held = len(controls) == 1
    rate_ok = abs(st.measured_fps - src.fps) <= 0.01 * src.fps
    drops_ok = st.dropped <= args.max_drops
    print(f"camera: {d['model']}  sensor mode {d['sensor_mode']}  stream {src.size[0]}x{src.size[1]} YUV420")
    print(f"frames: {n} in {args.seconds:g} s; asked {src.fps:g} fps, measured {st.measured_fps:.3f} fps "
          f"({'ok' if rate_ok else 'OFF BY MORE THAN 1 %'})")
    print(f"dropped: {st.dropped} in {len(st.gaps)} gap(s)" + (f" at frames {[g.first_index for g in st.gaps[:10]]}"
                                                               if st.gaps else ""))
    print(f"timestamp jitter: {st.jitter_ns / 1e3:.1f} us (std), longest interval {st.max_interval_ns / 1e6:.2f} ms")
    print(f"exposure lock: {d['exposure_lock']}  -> {'held' if lock_held else f'CHANGED ({len(controls)} settings seen)'}")
    print(f"capture + copy per frame: {copy_s / max(n, 1) * 1e3:.2f} ms (budget {1e3 / src.fps:.2f} ms)")
    if args.lock_into:
        from vision_ref.calibrate.profile import CalibrationProfile

        prof = CalibrationProfile.load(args.lock_into)
        prof.extra["camera_controls"] = d["exposure_lock"]
        prof.save(args.lock_into)
        print(f"wrote camera_controls into {args.lock_into}")
    ok = lock_held and rate_ok and drops_ok
    print("selftest: " + json.dumps({"ok": ok, "fps": round(st.measured_fps, 3), "dropped": st.dropped,
                                     "jitter_us": round(st.jitter_ns / 1e3, 1), "lock_held": lock_held}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
