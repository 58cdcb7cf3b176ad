"""Run every benchmark in turn and collect their one-line summaries.

    python benchmarks/run_all.py [--quick]

Each benchmark measures its own baseline in the same run and prints ratios; this
script only runs them one after another (never in parallel, so they do not disturb
each other's timings) and repeats the last line of each at the end.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ["simulate.py", "render.py", "calibration.py", "tracking.py", "events.py", "review.py", "live.py"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    args = ap.parse_args()
    summaries: list[str] = []
    failed = 0
    for name in ORDER:
        script = HERE / name
        if not script.exists():
            summaries.append(f"{name}: missing")
            failed += 1
            continue
        cmd = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        print(f"==> {' '.join(cmd)}", flush=True)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, text=True)
        sys.stdout.write(proc.stdout)
        lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
        last = lines[-1] if lines else "(no output)"
        status = "" if proc.returncode == 0 else f" [exit {proc.returncode}]"
        summaries.append(f"{last}{status}  ({time.perf_counter() - t0:.0f} s)")
        failed += proc.returncode != 0
    print("\n== summary ==")
    for s in summaries:
        print(s)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
