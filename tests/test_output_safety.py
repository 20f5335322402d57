"""Output safety (issue 14): every output is checked before any work, a
failed command never removes or damages a previous good output, the
leftovers of killed runs are cleaned, nothing the user wrote is overwritten
without --force, and what irc writes follows the umask."""
from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from irc.cli import main

ROOT = Path(__file__).resolve().parent.parent
LENET = ROOT / "samples" / "lenet_sink.py"

TINY = """\
import irc.dataset as ds
import numpy as np
data = ds.NumpySlicesDataset({"x": np.arange(8, dtype=np.float32)}, shuffle=False).batch(4)
"""


def irc(args, capsys):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def tiny(tmp_path):
    script = tmp_path / "tiny.py"
    script.write_text(TINY)
    return script


@pytest.fixture
def failing_pass(monkeypatch):
    """dce raises, as a pass with a bug would: the stages before it are written."""
    from irc import passes

    def broken(module, ctx):
        raise RuntimeError("a bug in dce")
    monkeypatch.setattr(passes.get("dce"), "fn", broken)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_failed_compile_keeps_the_previous_good_output(tmp_path, tiny, capsys, request):
    out = tmp_path / "out"
    assert irc(["compile", tiny, "-o", out, "--no-render"], capsys)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    request.getfixturevalue("failing_pass")
    code, _, err = irc(["compile", tiny, "-o", out, "--no-render"], capsys)
    assert code == 1 and "a bug in dce" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    partial = tmp_path / "out.partial"
    assert (partial / "00_capture.ir").is_file() and "out.partial" in err
    assert "still holds the previous output" in err
    # a typo in a flag touches nothing either (refused before the script runs)
    code, _, err = irc(["compile", tiny, "-o", out, "--stop-after", "frob"], capsys)
    assert code == 1 and "no such pass" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_a_failed_first_compile_keeps_its_stages_in_place(tmp_path, tiny, capsys, failing_pass):
    out = tmp_path / "out"
    assert irc(["compile", tiny, "-o", out, "--no-render"], capsys)[0] == 1
    assert (out / "00_capture.ir").is_file()
    assert json.loads((out / ".irc-manifest.json").read_text())["complete"] is False
    assert not (tmp_path / "out.partial").exists()


def test_killed_runs_leftovers_are_cleaned_but_live_ones_kept(tmp_path, tiny, capsys):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    stale = [tmp_path / f".out.tmp-{dead}-abc", tmp_path / f".model.onnx.tmp-{dead}-xyz"]
    stale[0].mkdir()
    (stale[0] / "00_capture.ir").write_text("half")
    stale[1].write_bytes(b"half a model")
    live = tmp_path / f".out.tmp-{os.getppid()}-def"   # a compile still running
    live.mkdir()
    legacy = tmp_path / ".out.tmp-k2j3h4"               # irc 0.1's names had no pid
    legacy.mkdir()
    os.utime(legacy, (1, 1))
    assert irc(["compile", tiny, "-o", tmp_path / "out", "--no-render"], capsys)[0] == 0
    from irc.output import write_file_atomically
    write_file_atomically(tmp_path / "model.onnx", b"new")
    assert not stale[0].exists() and not stale[1].exists() and not legacy.exists()
    assert live.exists()


@pytest.mark.parametrize("mask,folder,file", [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600)])
def test_outputs_follow_the_umask(tmp_path, tiny, capsys, mask, folder, file):
    old = os.umask(mask)
    try:
        out = tmp_path / "out"
        assert irc(["compile", tiny, "-o", out, "--no-render"], capsys)[0] == 0
        from irc.output import write_file_atomically
        write_file_atomically(tmp_path / "m.onnx", b"x")
    finally:
        os.umask(old)
    assert mode(out) == folder and mode(out / "bundle") == folder
    assert mode(out / "00_capture.ir") == file and mode(tmp_path / "m.onnx") == file


def test_compile_replaces_users_files_only_with_force(tmp_path, tiny, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "00_capture.ir").write_text("my notes")
    code, _, err = irc(["compile", tiny, "-o", out, "--no-render"], capsys)
    assert code == 1 and "irc did not write: 00_capture.ir" in err and "--force" in err
    assert (out / "00_capture.ir").read_text() == "my notes"
    assert irc(["compile", tiny, "-o", out, "--no-render", "--force"], capsys)[0] == 0
    assert (out / "00_capture.ir").read_text().startswith("# irc: ")


def test_opt_output_and_flags(tmp_path, tiny, capsys):
    out = tmp_path / "out"
    assert irc(["compile", tiny, "-o", out, "--no-render"], capsys)[0] == 0
    ir = out / "00_capture.ir"
    mine = tmp_path / "mine.ir"
    mine.write_text("my notes")
    code, _, err = irc(["opt", ir, "-o", mine], capsys)
    assert code == 1 and "irc did not write it" in err and mine.read_text() == "my notes"
    code, _, err = irc(["opt", ir, "-o", tmp_path], capsys)
    assert code == 1 and "this is a folder" in err
    assert irc(["opt", ir, "-o", mine, "--force"], capsys)[0] == 0
    assert mine.read_text() == ir.read_text()
    assert irc(["opt", ir, "-o", mine, "-p", "dce"], capsys)[0] == 0   # irc's own: replaced
    code, _, err = irc(["opt", ir, "--stop-after", "dce"], capsys)
    assert code == 1 and "--stop-after needs -p" in err


def test_run_checks_its_output_before_running(tmp_path, capsys):
    marker = tmp_path / "ran"
    script = tmp_path / "s.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('yes')\n")
    blocker = tmp_path / "afile"
    blocker.write_text("mine")
    for bad in (blocker, blocker / "sub"):
        code, _, err = irc(["run", script, "-o", bad], capsys)
        assert code == 1 and "is a file" in err and "Traceback" not in err
        assert not marker.exists() and blocker.read_text() == "mine"
    theirs = tmp_path / "R"
    theirs.mkdir()
    (theirs / "run.json").write_text('{"mine": 1}')
    code, _, err = irc(["run", script, "-o", theirs], capsys)
    assert code == 1 and "run.json" in err and "--force" in err and not marker.exists()
    assert (theirs / "run.json").read_text() == '{"mine": 1}'
    assert irc(["run", script, "-o", theirs, "--force"], capsys)[0] == 0 and marker.exists()
    marker.unlink()
    assert irc(["run", script, "-o", theirs], capsys)[0] == 0 and marker.exists()  # irc's own now


def test_compile_mode_prints_no_fake_metrics(tmp_path, capsys):
    code, out, _ = irc(["compile", LENET, "-o", tmp_path / "out", "--no-render"], capsys)
    assert code == 0
    assert "{'accuracy': not run (compile)}" in out and "nan" not in out
    from irc.train.capture_io import NotRun
    metric = NotRun()
    assert f"{metric:.2%}" == str(metric) == "not run (compile)"
    assert math.isnan(metric * 100)


PERMISSION_CASES = """
import sys
from irc.cli import main
for argv in sys.argv[1:]:
    print("CASE", argv, flush=True)
    print("EXIT", main(argv.split()), flush=True)
"""


def test_permission_errors_are_located_user_errors(tmp_path, tiny):
    """Unreadable inputs and unwritable outputs: exit 1 and a message, before
    any work.  As root, the cases run as 'nobody' (root may write anywhere)."""
    drop = []
    if os.geteuid() == 0:
        drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        if subprocess.run([*drop, sys.executable, "-c", "import irc"], capture_output=True,
                          check=False).returncode != 0:
            pytest.skip("'nobody' cannot run this Python")
    tmp_path.chmod(0o755)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    secret = tmp_path / "secret.ir"
    secret.write_text("# irc: 0.1.0\n")
    secret.chmod(0o000)
    tiny.chmod(0o644)
    cases = [f"compile {tiny} -o {locked}/out", f"run {tiny} -o {locked}/out",
             f"opt {secret}", f"opt {tiny} -o {locked}/x.ir"]
    done = subprocess.run([*drop, sys.executable, "-c", PERMISSION_CASES, *cases],
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.stdout.count("EXIT 1") == len(cases), done.stdout + done.stderr
    assert done.stderr.count("permission denied") == len(cases), done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert list(locked.iterdir()) == []


def test_view_draws_over_its_own_pictures_only(tmp_path, tiny, capsys):
    out = tmp_path / "out"
    assert irc(["compile", tiny, "-o", out, "--no-render"], capsys)[0] == 0
    ir = out / "00_capture.ir"
    page = tmp_path / "page.html"
    assert irc(["view", ir, "-o", page, "--no-open"], capsys)[0] == 0
    assert irc(["view", ir, "-o", page, "--no-open"], capsys)[0] == 0     # irc's own: replaced
    mine = tmp_path / "mine.svg"
    mine.write_text("<svg/>")
    code, _, err = irc(["view", ir, "-o", mine, "--no-open"], capsys)
    assert code == 1 and "irc did not write it" in err and mine.read_text() == "<svg/>"
    assert not (tmp_path / "mine.html").exists()
    assert irc(["view", ir, "-o", mine, "--no-open", "--force"], capsys)[0] == 0
