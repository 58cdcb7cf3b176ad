import cv2

from vision_ref.cli import main


def test_calibrate_an_image_writes_profile_and_preview(setup_frame, small_camera, tmp_path, capsys):
    img = tmp_path / "setup.png"
    cv2.imwrite(str(img), setup_frame)
    lens = tmp_path / "lens.json"
    from vision_ref.calibrate.lens import LensCalibration, BoardSpec

    LensCalibration(small_camera, 0.1, 5, 100, BoardSpec()).save(lens)
    out, prev = tmp_path / "p.json", tmp_path / "p.png"
    rc = main(["calibrate", str(img), "--out", str(out), "--lens", str(lens), "--preview", str(prev)])
    assert rc == 0, capsys.readouterr().err
    assert out.exists() and cv2.imread(str(prev)).shape == setup_frame.shape
    from vision_ref.calibrate.profile import CalibrationProfile

    prof = CalibrationProfile.load(out)
    assert prof.image_size == (728, 544) and "cue" in prof.colours


def test_calibrate_errors_are_one_line(tmp_path, capsys):
    rc = main(["calibrate", str(tmp_path / "nothing.mp4"), "--out", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert rc == 3 and err.startswith("error: ") and "does not exist" in err and "Traceback" not in err
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), (255 * (cv2.randu(cv2.UMat(240, 320, cv2.CV_8UC3), 0, 255).get() > 0)).astype("uint8"))
    rc = main(["calibrate", str(blank), "--out", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert rc == 3 and err.startswith("error: ")
