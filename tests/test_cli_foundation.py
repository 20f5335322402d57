"""The `irc` command's contract: exit codes, located messages, no tracebacks,
nothing half-written, nothing of the user's overwritten."""
import os
import subprocess
import sys
import textwrap

import pytest

from irc.cli import main

IR = """\
module @m {
  graph @device on device {
    %x = input() {index = 0} : () -> f32[N,3]
    %unused = const() {dtype = "f32", value = [1.0]} : () -> f32[1]
    return(%x) : (f32[N,3]) -> ()
  }
}
"""


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_version_and_help(capsys):
    # One real process for `python -m irc`; the rest in-process (argparse exits).
    out = subprocess.run([sys.executable, "-m", "irc", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("irc ")
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    out = capsys.readouterr().out
    assert exited.value.code == 0 and "compile" in out and "opt" in out


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["compile"])
    assert exited.value.code == 2


def test_opt_reprints_byte_for_byte(tmp_path, capsys):
    f = tmp_path / "x.ir"
    f.write_text(IR)
    code, out, err = run(["opt", str(f)], capsys)
    assert code == 0 and out == IR


def test_opt_runs_passes_and_writes_output(tmp_path, capsys):
    f = tmp_path / "x.ir"
    f.write_text(IR)
    dest = tmp_path / "y.ir"
    code, out, err = run(["opt", str(f), "-p", "dce", "-o", str(dest), "--timing"], capsys)
    assert code == 0 and "%unused" not in dest.read_text()
    assert "dce" in err and "total" in err   # the timing table


def test_opt_print_ir_after(tmp_path, capsys):
    f = tmp_path / "x.ir"
    f.write_text(IR)
    code, out, err = run(["opt", str(f), "-p", "dce", "--print-ir-after", "dce", "-o", str(tmp_path / "o.ir")], capsys)
    assert code == 0 and "IR after dce" in out


def test_malformed_ir_is_located(tmp_path, capsys):
    f = tmp_path / "bad.ir"
    f.write_text("module @m {\n  graph @g on host {\n    %x = input() {index = 0 : () -> f32[]\n")
    code, out, err = run(["opt", str(f)], capsys)
    assert code == 1
    assert f"{f}:3:29: error: expected ',' or '}}'" in err
    assert "Traceback" not in err


def test_unknown_pass(tmp_path, capsys):
    f = tmp_path / "x.ir"
    f.write_text(IR)
    code, out, err = run(["opt", str(f), "-p", "nosuch-pass"], capsys)
    assert code == 1 and "unknown pass 'nosuch-pass'" in err and "hint: known passes:" in err


def test_missing_script(tmp_path, capsys):
    code, out, err = run(["compile", str(tmp_path / "nope.py"), "-o", str(tmp_path / "out")], capsys)
    assert code == 1 and "no such script" in err
    assert not (tmp_path / "out").exists()


def test_script_with_syntax_error(tmp_path, capsys):
    s = tmp_path / "bad.py"
    s.write_text("import irc\n\nx = (1,\n")
    code, out, err = run(["compile", str(s), "-o", str(tmp_path / "out")], capsys)
    assert code == 1 and "bad.py:3: error: syntax error" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_script_that_raises_points_at_its_line(tmp_path, capsys):
    s = tmp_path / "boom.py"
    s.write_text(textwrap.dedent("""\
        def f():
            raise ValueError("no data here")

        f()
    """))
    code, out, err = run(["compile", str(s), "-o", str(tmp_path / "out")], capsys)
    assert code == 1
    assert "boom.py:2: error: the script raised ValueError: no data here" in err
    assert "Traceback" not in err and "--traceback" in err
    code, out, err = run(["compile", str(s), "-o", str(tmp_path / "out"), "--traceback"], capsys)
    assert "Traceback" in err


def test_unsupported_mindspore_module(tmp_path, capsys):
    s = tmp_path / "ms.py"
    s.write_text("import mindspore.nonexistent_thing\n")
    code, out, err = run(["compile", str(s), "-o", str(tmp_path / "out")], capsys)
    assert code == 1 and "not supported by irc yet: mindspore.nonexistent_thing" in err
    assert "ms.py:1" in err


def test_unwritable_output_folder(tmp_path, capsys):
    f = tmp_path / "x.ir"
    f.write_text(IR)
    blocker = tmp_path / "file"
    blocker.write_text("mine")
    code, out, err = run(["opt", str(f), "-o", str(blocker / "sub" / "y.ir")], capsys)
    assert code == 1 and "cannot write" in err
    assert blocker.read_text() == "mine"


def test_output_dir_keeps_users_files_and_replaces_only_its_own(tmp_path):
    from irc.diagnostics import UserError
    from irc.output import OutputDir
    dest = tmp_path / "out"
    o = OutputDir(dest)
    o.write_text("00_capture.ir", "one")
    o.write_text("old_stage.ir", "old")
    o.commit()
    (dest / "notes.txt").write_text("user file")
    o = OutputDir(dest)
    o.write_text("00_capture.ir", "two")
    o.commit()
    assert (dest / "00_capture.ir").read_text() == "two"
    assert not (dest / "old_stage.ir").exists()        # irc's own stale dump is gone
    assert (dest / "notes.txt").read_text() == "user file"
    o = OutputDir(dest)
    o.write_text("notes.txt", "clobber")
    with pytest.raises(UserError, match="files irc did not write: notes.txt"):
        o.commit()
    assert (dest / "notes.txt").read_text() == "user file"
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]   # no temp folder left


def test_run_refuses_a_bad_output_folder_before_running(tmp_path, capsys):
    """irc run -o FILE fails at once: the script (and its training) never runs."""
    from irc.cli import main
    marker = tmp_path / "ran"
    script = tmp_path / "s.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('yes')\n")
    a_file = tmp_path / "out.txt"
    a_file.write_text("mine")
    assert main(["run", str(script), "-o", str(a_file)]) == 1
    err = capsys.readouterr().err
    assert "this is a file, not a folder" in err and "Traceback" not in err
    assert not marker.exists() and a_file.read_text() == "mine"


def test_opt_lists_passes_without_an_input(capsys):
    from irc.cli import main
    assert main(["opt", "--list-passes"]) == 0
    listed = capsys.readouterr().out
    assert "whole-image" in listed and "drop-unused-inputs" in listed
    assert main(["opt"]) == 2
    assert "required: input" in capsys.readouterr().err
