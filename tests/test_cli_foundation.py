"""The `irc` command's contract: exit codes, located messages, no tracebacks,
nothing half-written, nothing of the user's overwritten."""
import json
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


def test_a_usage_error_exits_1_with_a_hint_to_the_help(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["compile"])
    assert exited.value.code == 1
    assert "irc compile --help lists its options" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["run", "--world-size", "x", "train.py"])
    assert exited.value.code == 1
    assert "'x' is not a whole number" in capsys.readouterr().err


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
    assert code == 1 and "is a file, so no folder can be made under it" in err
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


def test_opt_lists_passes_without_an_input(capsys):
    from irc.cli import main
    assert main(["opt", "--list-passes"]) == 0
    listed = capsys.readouterr().out
    assert "whole-image" in listed and "drop-unused-inputs" in listed
    assert main(["opt"]) == 1
    assert "required: input" in capsys.readouterr().err


# -----------------------------------------------------------------------------
# the script's own arguments: `irc compile|run SCRIPT [irc options] [--] ARGS`

ZOO_STYLE = textwrap.dedent("""\
    import argparse, json, sys
    import numpy as np
    import mindspore as ms
    import mindspore.dataset as ds

    parser = argparse.ArgumentParser(description="LeNet (model zoo style)")
    parser.add_argument("--data_path", type=str, default="./Data")
    parser.add_argument("--device_target", type=str, default="CPU",
                        choices=["Ascend", "GPU", "CPU"])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("-o", "--output_path", default="./ckpt")
    args = parser.parse_args()
    ms.set_context(mode=ms.GRAPH_MODE, device_target=args.device_target)
    data = ds.NumpySlicesDataset({"x": np.zeros((4, 2), np.float32)}, shuffle=False).batch(2)
    print("ARGS", json.dumps({"argv": sys.argv[1:], **vars(args),
                              "device": ms.get_context("device_target")}))
""")


def script_saw(out: str) -> dict:
    import json
    return json.loads(next(line for line in out.splitlines() if line.startswith("ARGS "))[5:])


@pytest.fixture
def zoo_script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(ZOO_STYLE)
    return path


def test_script_arguments_after_double_dash(zoo_script, tmp_path, capsys):
    code, out, err = run(["compile", str(zoo_script), "-o", str(tmp_path / "c"), "--no-render",
                          "--", "--epochs", "3", "--data_path", "/data/mnist"], capsys)
    assert code == 0, err
    seen = script_saw(out)
    assert seen["argv"] == ["--epochs", "3", "--data_path", "/data/mnist"]
    assert (seen["epochs"], seen["data_path"]) == (3, "/data/mnist")
    assert (tmp_path / "c" / "00_capture.ir").is_file()     # irc kept -o and --no-render
    code, out, err = run(["run", str(zoo_script), "-o", str(tmp_path / "r"), "--",
                          "--epochs", "2", "-o", "theirs"], capsys)
    assert code == 0, err
    seen = script_saw(out)
    assert seen["argv"] == ["--epochs", "2", "-o", "theirs"]      # after --: the script's
    assert seen["output_path"] == "theirs"
    assert (tmp_path / "r" / "run.json").is_file()


def test_script_arguments_without_double_dash(zoo_script, tmp_path, capsys):
    """As `python train.py ARGS`: from the first argument after the script
    that is not irc's, everything is the script's; irc's options may also
    come before or right after the script."""
    code, out, err = run(["run", "-o", str(tmp_path / "r"), str(zoo_script),
                          "--data_path", "d", "--device_target", "CPU", "--epochs", "4"], capsys)
    assert code == 0, err
    seen = script_saw(out)
    assert seen["argv"] == ["--data_path", "d", "--device_target", "CPU", "--epochs", "4"]
    assert (seen["data_path"], seen["device"], seen["epochs"]) == ("d", "CPU", 4)
    code, out, err = run(["compile", str(zoo_script), "--no-render", "-o", str(tmp_path / "c"),
                          "--epochs", "5", "-o", "x"], capsys)
    assert code == 0, err
    assert script_saw(out)["argv"] == ["--epochs", "5", "-o", "x"]
    assert (tmp_path / "c" / "00_capture.ir").is_file() and not (tmp_path / "x").exists()


def test_a_script_refusing_its_arguments_is_located(zoo_script, tmp_path, capsys):
    code, out, err = run(["run", str(zoo_script), "--epochs", "many"], capsys)
    assert code == 1
    assert "invalid int value: 'many'" in err                   # argparse's own words
    assert "train.py: error: the script exited with status 2" in err


@pytest.mark.parametrize("argv, ours, theirs", [
    (["s.py"], ["s.py"], []),
    (["s.py", "a", "-o", "x"], ["s.py"], ["a", "-o", "x"]),
    (["-o", "d", "s.py", "--world-size", "2", "--lr", "1"],
     ["-o", "d", "s.py", "--world-size", "2"], ["--lr", "1"]),
    (["s.py", "--output=d", "-od", "--", "--output", "y"], ["s.py", "--output=d", "-od"],
     ["--output", "y"]),
    (["s.py", "--unroll", "4", "--", "--", "x"], ["s.py", "--unroll", "4"], ["--", "x"]),
    (["--", "-weird.py", "a"], ["--", "-weird.py"], ["a"]),
    (["s.py", "--out", "d"], ["s.py"], ["--out", "d"]),   # after the script: exact names only
])
def test_splitting_irc_options_from_the_scripts(argv, ours, theirs):
    from irc.cli import build_parser
    from irc.cli.script_args import split_script_args
    assert split_script_args(build_parser().commands["run"], argv) == (ours, theirs)


def test_exec_leaves_every_argument_after_the_script_to_it_and_opt_takes_none():
    from irc.cli import build_parser
    from irc.cli.script_args import split_command_line
    commands = build_parser().commands
    assert split_command_line(commands, ["exec", "s.py", "--traceback", "-m", "x"]) == \
        (["exec", "s.py"], ["--traceback", "-m", "x"])
    assert split_command_line(commands, ["exec", "--traceback", "-m", "pytest", "-x", "t/"]) == \
        (["exec", "--traceback", "-m", "pytest"], ["-x", "t/"])
    assert split_command_line(commands, ["export", "s.py", "-o", "m.onnx", "--size", "32"]) == \
        (["export", "s.py", "-o", "m.onnx"], ["--size", "32"])
    assert split_command_line(commands, ["opt", "in.ir", "-p", "dce"]) == \
        (["opt", "in.ir", "-p", "dce"], None)


def test_a_bundle_takes_no_script_arguments(tmp_path, capsys):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    code, out, err = run(["run", str(bundle), "--epochs", "3"], capsys)
    assert code == 1 and "takes no script arguments (got --epochs 3)" in err


# -----------------------------------------------------------------------------
# the default device: the machine's, silently; a fallback line only when asked

def test_unset_device_target_is_the_machines_without_a_word(monkeypatch, capsys):
    import irc
    from irc.backends import runtime
    monkeypatch.setattr(runtime, "_warned", set())
    monkeypatch.setattr(runtime, "cuda_status", lambda: (False, "no GPU here"))
    assert runtime.providers_for() == [runtime.CPU]
    assert irc.get_context("device_target") == "CPU"
    monkeypatch.setattr(runtime, "cuda_status", lambda: (True, "CUDA works"))
    assert runtime.providers_for() == [runtime.CUDA, runtime.CPU]
    assert irc.get_context("device_target") == "GPU"
    assert capsys.readouterr().err == ""


def test_an_explicit_accelerator_that_cannot_be_had_says_so_once(monkeypatch, capsys):
    import irc
    from irc.backends import runtime
    monkeypatch.setattr(runtime, "_warned", set())
    monkeypatch.setattr(runtime, "cuda_status", lambda: (False, "no GPU here"))
    irc.set_context(device_target="Ascend")
    assert irc.get_context("device_target") == "CPU"          # what sessions will run on
    assert runtime.providers_for() == runtime.providers_for() == [runtime.CPU]
    assert capsys.readouterr().err.splitlines() == [
        "irc: device_target=Ascend: CUDA is not usable, running on the CPU (no GPU here)"]
    monkeypatch.setattr(runtime, "cuda_status", lambda: (True, "CUDA works"))
    assert irc.get_context("device_target") == "Ascend"       # Ascend runs on CUDA
    irc.set_context(device_target="CPU")
    assert irc.get_context("device_target") == "CPU" and runtime.providers_for() == [runtime.CPU]


def test_a_script_that_sets_no_device_prints_no_fallback_line(tmp_path, monkeypatch, capsys):
    """On this machine, whatever it has: a run that never names a device
    says nothing about CUDA; `--device_target GPU` passed to a model-zoo
    script that sets it is told, where CUDA does not work."""
    from irc.backends import runtime
    monkeypatch.setattr(runtime, "_warned", set())
    script = tmp_path / "infer.py"
    script.write_text(textwrap.dedent("""\
        import argparse
        import numpy as np
        import mindspore as ms
        import mindspore.nn as nn
        parser = argparse.ArgumentParser()
        parser.add_argument("--device_target", default=None)
        args = parser.parse_args()
        if args.device_target:
            ms.set_context(device_target=args.device_target)
        net = nn.Dense(2, 1)
        model = ms.Model(net)
        print("OUT", model.predict(ms.Tensor(np.ones((3, 2), np.float32))).shape)
    """))
    code, out, err = run(["run", str(script)], capsys)
    assert code == 0 and "OUT (3, 1)" in out, err
    assert "CUDA" not in err
    code, out, err = run(["run", str(script), "--device_target", "GPU"], capsys)
    assert code == 0, err
    assert ("CUDA is not usable" in err) == (not runtime.cuda_status()[0])


def test_compile_prints_each_stage_once(tmp_path, monkeypatch, capsys):
    """The report and the bundle's module.ir reuse the text of the stage dumps."""
    import irc.backends.bundle as bundle
    import irc.ir.text as text   # compile_cmd imports print_module when it compiles
    import irc.viewer.report as report
    from irc.ir.text import print_module
    printed = []

    def counted(module):
        printed.append(module.meta.get("stage"))
        return print_module(module)
    for where in (bundle, text, report):
        monkeypatch.setattr(where, "print_module", counted)
    script = tmp_path / "dense.py"
    script.write_text(textwrap.dedent("""\
        import numpy as np
        import mindspore as ms
        import mindspore.dataset as ds
        import mindspore.nn as nn
        data = ds.NumpySlicesDataset({"x": np.ones((8, 4), np.float32),
                                      "y": np.zeros(8, np.int32)}).batch(4)
        net = nn.Dense(4, 2)
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9)).train(1, data)
        """))
    out = tmp_path / "out"
    assert run(["compile", str(script), "-o", str(out), "--no-render"], capsys)[0] == 0
    stages = json.loads((out / "passes.json").read_text())["stages"]
    assert len(printed) == len(stages) >= 2
    assert (out / "bundle" / "module.ir").read_text() == (out / stages[-1]["file"]).read_text()
