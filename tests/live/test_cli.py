import csv
import io
import json
import os

from vision_ref.cli import main


def _run_truth(tmp_path, *extra):
    return main(["live", "--source", "synthetic:carom_P2,score_4_two_pins", "--stages", "truth", "--board", "lines",
                 "--db", str(tmp_path / "m.sqlite"), "--no-record", "--commands", os.devnull, *extra])


def test_live_then_matches_list_json_csv(tmp_path, capsys):
    assert _run_truth(tmp_path, "--players", "Ann", "Bob", "--modes", "series", "shtoss", "--target", "50") == 0
    out = capsys.readouterr().out
    assert out.count("DECISION ") == 2
    assert main(["matches", "--db", str(tmp_path / "m.sqlite")]) == 0
    listing = capsys.readouterr().out
    assert "Ann v Bob" in listing and "playing" in listing
    assert main(["matches", "1", "--json", "--db", str(tmp_path / "m.sqlite")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["match"]["players"] == ["Ann", "Bob"] and doc["match"]["modes"] == {"Ann": "series", "Bob": "shtoss"}
    assert len(doc["shots"]) == 2 and doc["match_file"]["target"] == 50
    out_csv = tmp_path / "m.csv"
    assert main(["matches", "1", "--csv", "--db", str(tmp_path / "m.sqlite"), "--out", str(out_csv)]) == 0
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert [r["shooter"] for r in rows] == ["Ann", "Bob"]
    assert main(["matches", "1", "--match-file", "--db", str(tmp_path / "m.sqlite")]) == 0
    mf_path = tmp_path / "match.json"
    mf_path.write_text(capsys.readouterr().out)
    assert main(["adjudicate", str(mf_path)]) == 0  # the exported match file replays to the logged score
    replay = json.loads(capsys.readouterr().out)
    assert replay["final"]["score"] == doc["match"]["score"]
    assert replay["decisions"] == [s["decision"] for s in doc["shots"]]


def test_operator_commands_from_a_file(tmp_path, capsys):
    cmds = tmp_path / "cmds.txt"
    cmds.write_text("who Olga\ntouch\nnote break shot\n")
    rc = main(["live", "--source", "synthetic:carom_P2", "--stages", "truth", "--board", "lines",
               "--db", str(tmp_path / "m.sqlite"), "--no-record", "--commands", str(cmds)])
    assert rc == 0
    capsys.readouterr()
    main(["matches", "1", "--json", "--db", str(tmp_path / "m.sqlite")])
    doc = json.loads(capsys.readouterr().out)
    calls = doc["operator_calls"]
    assert ("who", "Olga") in [(c["action"], c["payload"]) for c in calls]
    touch = next(c for c in calls if c["action"] == "call")
    assert touch["who"] == "Olga" and touch["state"] == "applied"
    assert doc["shots"][0]["record"]["calls"] == [{"type": "touch", "by": "Olga"}]
    assert "F3" in doc["shots"][0]["decision"]["rules"]


def test_clear_errors(tmp_path, capsys):
    db = str(tmp_path / "m.sqlite")
    assert main(["matches", "--db", db]) == 2
    assert "no match log here" in capsys.readouterr().err
    assert main(["live", "--source", "/dev/video99", "--stages", "truth", "--db", db, "--no-record"]) == 2
    assert "needs a synthetic source" in capsys.readouterr().err
    assert main(["live", "--source", "synthetic:carom_P2", "--db", db, "--no-record"]) == 2
    assert "--calibration PROFILE is needed" in capsys.readouterr().err
    assert main(["live", "--source", "synthetic:nope", "--stages", "truth", "--db", db, "--no-record"]) == 5
    assert "unknown scenario 'nope'" in capsys.readouterr().err
    assert main(["live", "--source", "synthetic:carom_P2", "--stages", "truth", "--modes", "series", "fast",
                 "--db", db, "--no-record"]) == 2
    assert "'fast' is not series or shtoss" in capsys.readouterr().err
    _run_truth(tmp_path)
    capsys.readouterr()
    assert main(["matches", "7", "--db", db]) == 6
    assert "no match 7" in capsys.readouterr().err


def test_continue_resumes_an_unfinished_match_or_starts_one(tmp_path, capsys):
    db = str(tmp_path / "m.sqlite")
    base = ["live", "--stages", "truth", "--board", "lines", "--db", db, "--no-record", "--commands", os.devnull,
            "--continue"]
    assert main(base + ["--source", "synthetic:carom_P2"]) == 0
    assert "MATCH 1 started" in capsys.readouterr().out
    assert main(base) == 0  # the match is not over: the service's restart resumes it
    assert "RESUMED match 1" in capsys.readouterr().out


def test_commands_from_a_fifo_are_read_after_each_writer(tmp_path, capsys):
    import threading
    import time

    fifo = tmp_path / "cmds"
    os.mkfifo(fifo)

    def writer():
        for line in ("who Olga\n", "touch\n"):
            time.sleep(0.05)
            with open(fifo, "w") as fh:  # two separate writers, like two `echo ... > FIFO`
                fh.write(line)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    rc = main(["live", "--source", "synthetic:carom_P2", "--stages", "truth", "--pace", "--board", "lines",
               "--db", str(tmp_path / "m.sqlite"), "--no-record", "--commands", str(fifo)])
    assert rc == 0
    t.join(5)
    capsys.readouterr()
    main(["matches", "1", "--json", "--db", str(tmp_path / "m.sqlite")])
    doc = json.loads(capsys.readouterr().out)
    assert doc["shots"][0]["record"]["calls"] == [{"type": "touch", "by": "Olga"}]


def test_truth_rehearsal_of_a_random_sequence_matches_the_sequence(tmp_path, capsys):
    from vision_ref.sources.factory import synthetic_clip

    assert main(["live", "--source", "synthetic:random:3", "--seed", "4", "--stages", "truth", "--board", "lines",
                 "--db", str(tmp_path / "m.sqlite"), "--no-record", "--commands", os.devnull]) == 0
    capsys.readouterr()
    main(["matches", "1", "--json", "--db", str(tmp_path / "m.sqlite")])
    doc = json.loads(capsys.readouterr().out)
    seq = synthetic_clip("synthetic:random:3", 4, 60.0)
    assert [s["decision"] for s in doc["shots"]] == [p.decision for p in seq.played]
