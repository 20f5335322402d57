"""One script, every entry point, the same decisions.

irc compile, irc run (Model.train executing), a dataset's iterator with
offload, irc export and per-rank compiles all compile through irc.compiler:
the same offload decisions (remarks), the same stages for the passes they
share, the same refusals with the same message.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from irc import compiler
from irc.cli import main
from irc.cli.export_cmd import build_inference_module

DATA = Path(__file__).resolve().parent.parent / "samples" / "data" / "mnist" / "train"

SCRIPT = textwrap.dedent(f"""
    import os
    import mindspore as ms
    import mindspore.dataset as ds
    import mindspore.dataset.vision as vision
    import mindspore.dataset.transforms as transforms
    import mindspore.nn as nn

    ds.config.set_seed(7)
    data = ds.MnistDataset({str(DATA)!r}, num_samples=64, shuffle=True)
    data = data.map(transforms.TypeCast(ms.int32), input_columns="label")
    data = data.map([vision.Resize((12, 12)), vision.RandomHorizontalFlip(),
                     vision.Rescale(1 / 255, 0), vision.HWC2CHW()], input_columns="image",
                    offload=True)
    data = data.batch(16, drop_remainder=True)
    if os.getenv("STRATEGY"):
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.SEMI_AUTO_PARALLEL,
                                     dataset_strategy=((1, 1, 1, 3), (1,)))
    for row in data.create_dict_iterator(output_numpy=True):
        break

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(144, 10)

        def construct(self, x):
            return self.fc(self.flatten(x))

    net = Net()
    model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     nn.Momentum(net.trainable_params(), 0.01, 0.9))
    model.train(1, data, dataset_sink_mode=True, sink_size=2)
""")


@pytest.fixture
def script(tmp_path, monkeypatch):
    path = tmp_path / "entry.py"
    path.write_text(SCRIPT)
    monkeypatch.delenv("STRATEGY", raising=False)
    return path


def offload_decisions(result: compiler.Compilation) -> list[dict]:
    return [r.to_json() for r in result.remarks if r.pass_name == "offload-legality"]


def changed(result: compiler.Compilation) -> list[str]:
    return [r.name for r in result.records if r.changed]


def by_pipeline(seen, name):
    found = [c for c in seen if c.pipeline.name == name]
    assert found, f"no {name} compile among {[c.pipeline.name for c in seen]}"
    return found


def test_every_entry_point_decides_alike(script, tmp_path, capsys):
    with compiler.observe() as compiled:
        assert main(["compile", str(script), "-o", str(tmp_path / "c"), "--no-render"]) == 0
    with compiler.observe() as ran:
        assert main(["run", str(script), "-o", str(tmp_path / "r")]) == 0
    with compiler.observe() as per_rank:
        assert main(["compile", str(script), "--world-size", "2", "-o", str(tmp_path / "w"),
                     "--no-render"]) == 0
    with compiler.observe() as exported:
        build_inference_module(str(script))

    compile_default = by_pipeline(compiled, "default")[0]
    run_default = by_pipeline(ran, "default")[0]
    decisions = offload_decisions(compile_default)
    assert any(d["kind"] == "passed" for d in decisions)          # something was offloaded
    # the same decisions wherever the script came in
    assert offload_decisions(run_default) == decisions
    for rank in by_pipeline(per_rank, "default"):
        assert offload_decisions(rank) == decisions
    # export puts every map ONNX can express into its model: it moves at least
    # what the others move, and also Resize, which MindSpore keeps on the host
    export = offload_decisions(by_pipeline(exported, "export")[0])
    moved = {(d["op"], d["column"]) for d in decisions if d["kind"] == "passed"}
    assert moved <= {(d["op"], d["column"]) for d in export if d["kind"] == "passed"}
    assert [d["op"] for d in export if d["column"] == "image" and d["kind"] == "passed"] == \
        ["Resize", "RandomHorizontalFlip", "Rescale", "HWC2CHW"]
    # the iterator compiled the pipeline alone: its map operators decided alike
    for iterate in by_pipeline(compiled, "iterate") + by_pipeline(ran, "iterate"):
        assert offload_decisions(iterate) == decisions
    # the same stages under compile and run, and per rank
    assert changed(run_default) == changed(compile_default)
    assert all(changed(r) == changed(compile_default) for r in by_pipeline(per_rank, "default"))
    # the passes export shares with the default pipeline change the module alike
    shared = [p for p in changed(compile_default) if p in compiler.EXPORT.passes]
    assert [p for p in changed(by_pipeline(exported, "export")[0]) if p in shared] == shared


def test_an_illegal_strategy_is_refused_alike(script, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("STRATEGY", "1")
    assert main(["compile", str(script), "-o", str(tmp_path / "c"), "--no-render"]) == 1
    compile_err = capsys.readouterr().err
    assert main(["run", str(script), "-o", str(tmp_path / "r")]) == 1
    run_err = capsys.readouterr().err
    expected = "dataset_strategy ((1, 1, 1, 3), (1,)) breaks the rule"
    assert expected in compile_err

    def message(err):
        return [line for line in err.splitlines() if "error:" in line]
    assert message(run_err) == message(compile_err)
    assert not (tmp_path / "r" / "run.json").exists()


# -----------------------------------------------------------------------------
# what a script reads back from its own training

TRAIN_THEN_EVALUATE = textwrap.dedent("""\
    import os, sys
    import numpy as np
    import mindspore as ms
    import mindspore.dataset as ds
    import mindspore.nn as nn
    from mindspore import load_checkpoint, load_param_into_net
    from mindspore.train import CheckpointConfig, ModelCheckpoint

    ckpt_dir, name = sys.argv[1:]
    x = np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32)
    data = ds.NumpySlicesDataset({"x": x, "y": (x.sum(1) > 0).astype(np.int32)},
                                 shuffle=False).batch(8)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    net = nn.Dense(4, 2)
    initial = net.weight.asnumpy().copy()
    model = ms.Model(net, loss, nn.Momentum(net.trainable_params(), 0.1, 0.9))
    config = CheckpointConfig(save_checkpoint_steps=4)
    model.train(1, data, callbacks=[ModelCheckpoint("toy", ckpt_dir, config)],
                dataset_sink_mode=False)

    fresh = nn.Dense(4, 2)                    # the model zoo's eval: a new net, the saved weights
    params = load_checkpoint(os.path.join(ckpt_dir, name))
    missing, _ = load_param_into_net(fresh, params)
    acc = ms.Model(fresh, loss, metrics={"accuracy"}).eval(data)
    untrained = np.array_equal(fresh.weight.asnumpy(), initial)
    print("LOADED", missing, "untrained" if untrained else "trained",
          "accuracy: %.4f" % acc["accuracy"])
""")


def test_a_script_loading_what_its_training_writes_compiles(tmp_path, capsys):
    """Under compile the training is recorded, not run: the checkpoint its
    ModelCheckpoint would write stands in as the network's current
    parameters, with a notice.  Under run the real file is loaded."""
    script = tmp_path / "zoo.py"
    script.write_text(TRAIN_THEN_EVALUATE)
    ckpt = tmp_path / "ckpt"
    assert main(["compile", str(script), "-o", str(tmp_path / "c"), "--no-render",
                 str(ckpt), "toy-1_4.ckpt"]) == 0
    out, err = capsys.readouterr()
    assert "LOADED [] untrained accuracy: nan" in out
    assert (f"{script}:22: note: {ckpt / 'toy-1_4.ckpt'} is what the training at {script}:18 "
            f"would write") in err                           # located at the load, names the train
    assert not ckpt.exists()                                 # nothing was trained or written
    # a name the recorded training does not write is still missing
    assert main(["compile", str(script), "-o", str(tmp_path / "c"), "--no-render",
                 str(ckpt), "toy-2_4.ckpt"]) == 1
    assert "toy-2_4.ckpt" in capsys.readouterr().err
    # run: trained, written, loaded for real
    assert main(["run", str(script), str(ckpt), "toy-1_4.ckpt"]) == 0
    out, err = capsys.readouterr()
    assert (ckpt / "toy-1_4.ckpt").is_file() and "stand in" not in err
    assert "LOADED [] trained accuracy: " in out and "accuracy: nan" not in out
