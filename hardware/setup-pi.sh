#!/usr/bin/env bash
# Set up vision-ref on a Raspberry Pi 5 running Raspberry Pi OS (Bookworm, 64-bit).
#
#   sudo hardware/setup-pi.sh            # from a checkout of the project
#
# What it does, and why:
#  1. apt: picamera2 and libcamera come from Raspberry Pi OS itself (they are built
#     against the Pi's libcamera; the PyPI picamera2 cannot bring libcamera along);
#  2. a virtual environment created with --system-site-packages, so it sees the
#     system picamera2/libcamera while the project's own dependencies (numba, OpenCV,
#     imageio-ffmpeg) come from PyPI wheels for aarch64;
#  3. numpy kept below 2 in that venv: the system picamera2 stack (simplejpeg, pidng)
#     is compiled against Bookworm's numpy 1.x and breaks under numpy 2;
#  4. a service user in the 'video' group, data under /var/lib/vision-ref, the systemd
#     unit and its settings file /etc/default/vision-ref (edit that, not the unit);
#  5. a check that the venv imports picamera2 and finds the camera.
set -euo pipefail

REPO_DIR=${REPO_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
PREFIX=${PREFIX:-/opt/vision-ref}
VENV=$PREFIX/venv
DATA=${DATA:-/var/lib/vision-ref}
SERVICE_USER=${SERVICE_USER:-vision-ref}

if [[ $EUID -ne 0 ]]; then
    echo "error: run as root (sudo $0)" >&2
    exit 1
fi
if ! grep -q "Raspberry Pi" /proc/device-tree/model 2>/dev/null; then
    echo "warning: this does not look like a Raspberry Pi; continuing anyway" >&2
fi

echo "==> system packages"
apt-get update
apt-get install -y --no-install-recommends python3-picamera2 python3-libcamera python3-venv python3-pip \
    libcamera-apps-lite sqlite3 tmux

echo "==> service user and data directory"
id -u "$SERVICE_USER" >/dev/null 2>&1 || useradd --system --create-home --home-dir "$DATA" --shell /usr/sbin/nologin "$SERVICE_USER"
usermod -aG video "$SERVICE_USER"
install -d -o "$SERVICE_USER" -g "$SERVICE_USER" "$DATA" "$DATA/recordings" "$DATA/calibration"

echo "==> virtual environment that can see the system picamera2: $VENV"
install -d "$PREFIX"
python3 -m venv --system-site-packages "$VENV"
"$VENV/bin/pip" install --upgrade pip
"$VENV/bin/pip" install "numpy>=1.26,<2"
"$VENV/bin/pip" install "$REPO_DIR"

echo "==> check: picamera2 importable from the venv, camera present"
"$VENV/bin/python" - <<'PY'
import sys
try:
    import picamera2, libcamera  # noqa: F401
except ImportError as exc:
    sys.exit(f"error: the venv cannot import picamera2 ({exc}); was it created with --system-site-packages?")
from picamera2 import Picamera2
cams = Picamera2.global_camera_info()
print("cameras:", cams if cams else "NONE FOUND (check the ribbon cable and dtoverlay in /boot/firmware/config.txt)")
PY

echo "==> systemd unit"
install -m 0644 "$REPO_DIR/hardware/vision-ref-live.service" /etc/systemd/system/vision-ref-live.service
if [[ ! -f /etc/default/vision-ref ]]; then
    install -m 0644 "$REPO_DIR/hardware/vision-ref.default" /etc/default/vision-ref
fi
install -m 0755 "$REPO_DIR/hardware/vr-say" /usr/local/bin/vr-say
systemctl daemon-reload

cat <<MSG

Done. Next:
  1. mount the camera (hardware/MOUNTING.md; \`$VENV/bin/vision-ref mount\` gives the height per lens)
  2. self-test the camera:   sudo -u $SERVICE_USER $VENV/bin/python $REPO_DIR/hardware/selftest.py
  3. calibrate (empty table): sudo -u $SERVICE_USER $VENV/bin/vision-ref calibrate pi --out $DATA/calibration/table.json
  4. set players and options in /etc/default/vision-ref, then:
       systemctl enable --now vision-ref-live
     follow it with  journalctl -fu vision-ref-live ; operator calls:  vr-say touch
MSG
