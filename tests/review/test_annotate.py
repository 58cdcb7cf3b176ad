import numpy as np
import pytest

from vision_ref.camera import CameraModel
from vision_ref.review.annotate import AnnotatedShot, Annotator, write_annotated
from vision_ref.review.diagram import ShotPaths, contact_marks
from vision_ref.rules.table import DEFAULT_TABLE
from vision_ref.video import VideoReader, VideoWriter

GREY = 110


@pytest.fixture(scope="module")
def setup(foul_shot, tmp_path_factory):
    from vision_ref.events.synthetic import tracks_from_truth

    shot, record, decision = foul_shot
    tracks = tracks_from_truth(shot, 30.0, noise_mm=0.0)
    cam = CameraModel.overhead(368, 276)
    video = tmp_path_factory.mktemp("ann") / "plain.mp4"
    with VideoWriter(video, cam.width, cam.height, 30.0, crf=10, timestamps=False) as vw:
        for _ in range(len(tracks.t)):
            vw.write(np.full((cam.height, cam.width, 3), GREY, np.uint8))
    strike_row = int(np.searchsorted(tracks.t, shot.strike_time))
    end_row = len(tracks.t) - 5
    paths = ShotPaths.from_tracks(tracks, strike_row, end_row, shot.strike_time)
    s = AnnotatedShot(0, strike_row, end_row, shot.strike_time, contact_marks(record, paths), decision)
    ann = Annotator(tracks, cam, DEFAULT_TABLE, [s], ["A", "B"], {"A": 0, "B": 0})
    return shot, tracks, cam, video, ann, s


def test_every_frame_is_written_and_the_tracks_are_drawn_where_the_balls_are(setup, tmp_path):
    shot, tracks, cam, video, ann, s = setup
    out = tmp_path / "annotated.mp4"
    n = write_annotated(video, out, ann, lambda i: i if i < len(tracks.t) else None)
    assert n == len(tracks.t)
    frames = {f.index: f.bgr for f in VideoReader(out)}
    assert len(frames) == n
    R = DEFAULT_TABLE.ball_radius
    row = (s.strike_row + s.end_row) // 2
    img = frames[row].astype(int)
    for b, tr in tracks.balls.items():
        xy = tr.xy[row]
        u, v = cam.project(np.array([[xy[0], xy[1], R]]))[0]
        ring = ann.ball_r_px + 3
        # pixels on the ring around the ball differ from the plain grey frame
        on_ring = [img[int(round(v + ring * np.sin(a))), int(round(u + ring * np.cos(a)))] for a in np.linspace(0, 6.2, 16)
                   if 0 <= v + ring * np.sin(a) < cam.height and 0 <= u + ring * np.cos(a) < cam.width]
        changed = sum(np.abs(p - GREY).sum() > 40 for p in on_ring)
        assert changed >= len(on_ring) // 2, f"no ring drawn around {b} at row {row}"
    # the banner is darkened over the frame; the plain middle of the bottom stays grey
    assert img[2, cam.width // 2].mean() < GREY * 0.6
    assert abs(img[cam.height - 40, cam.width // 2 + 100].mean() - GREY) < 6


def test_banner_shows_the_call_only_after_the_shot(setup):
    _, tracks, cam, _, ann, s = setup
    calls = []

    import vision_ref.review.annotate as A

    orig = A.Annotator._text

    def spy(self, img, text, *args, **kw):
        calls.append(text)
        return orig(self, img, text, *args, **kw)

    A.Annotator._text = spy
    try:
        blank = np.full((cam.height, cam.width, 3), GREY, np.uint8)
        ann.draw(blank.copy(), s.strike_row + 2)
        during = list(calls)
        calls.clear()
        ann.draw(blank.copy(), s.end_row + 2)
        after = list(calls)
    finally:
        A.Annotator._text = orig
    assert "Shot 1, A to play" in during
    assert any(t.startswith("Shot 1, A: foul F5") for t in after)
    assert "A 0  B 0" in during and f"A 0  B {s.decision['points']}" in after


def test_labels_of_nearby_contacts_do_not_overlap(setup):
    _, _, cam, _, ann, _ = setup
    taken = []
    spots = [ann._free_spot("3 white1 - pin head", 100, 100, taken, (cam.height, cam.width)) for _ in range(4)]
    assert len(set(spots)) == 4  # four labels asked for the same place get four lines
    for i in range(len(taken)):
        for j in range(i):
            a, b = taken[i], taken[j]
            assert a[2] < b[0] or a[0] > b[2] or a[3] < b[1] or a[1] > b[3]
