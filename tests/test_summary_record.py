"""SummaryRecord and SummaryCollector (irc/train/summary_record.py): the
MindInsight files irc writes for tests/mindspore_style/summary_files.py,
read with MindSpore 2.10's own message descriptors and compared event by
event, field by field, with the files MindSpore 2.10 wrote for the same
script (summary_files.mindspore.json, made by make_summary_reference.py);
every record's CRCs; sink mode, Model.fit, the exports and argument errors."""
import base64
import contextlib
import io
import json
import math
import os

import google_crc32c
import numpy as np
import pytest
from summary_events import decode_events, decode_tree, message_classes, records

import irc
import irc.dataset as ds
from irc import nn

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")
with open(os.path.join(HERE, "summary_files.mindspore.json")) as f:
    REFERENCE = json.load(f)
# what irc leaves out: MindSpore's dataset graph (lineage's dataset_graph event)
LEFT_OUT = ("dataset_graph",)
# values of a training: irc's arithmetic is not MindSpore's to the last bit
TRAINED = {"rel": 1e-5, "abs": 2e-6}


def irc_load_ckpt(path):
    from irc.train.serialization import load_checkpoint
    return {name: p.asnumpy() for name, p in load_checkpoint(path).items()}


def run_summary_files(out) -> list:
    from irc.capture import RUN, run_script
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        run_script(os.path.join(HERE, "summary_files.py"), mode=RUN, argv=[str(out)])
    return printed.getvalue().splitlines()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """summary_files.py run under irc once: what it printed and its files,
    decoded (each record's CRCs checked on the way)."""
    out = tmp_path_factory.mktemp("summary_files")
    printed = run_summary_files(out)
    return printed, decode_tree(str(out), REFERENCE["descriptors"], irc_load_ckpt, google_crc32c.value)


def assert_same(ms, got, where: str, tolerance=None) -> None:
    """Field by field: the same keys, lengths, strings and integers, the
    floats equal (within ``tolerance`` for a training's values)."""
    if isinstance(ms, dict):
        assert isinstance(got, dict) and sorted(ms) == sorted(got), \
            f"{where}: MindSpore has {sorted(ms)}, irc {sorted(got) if isinstance(got, dict) else got!r}"
        for key in ms:
            assert_same(ms[key], got[key], f"{where}.{key}", tolerance)
    elif isinstance(ms, list):
        assert isinstance(got, list) and len(ms) == len(got), \
            f"{where}: MindSpore has {len(ms)} items, irc {len(got) if isinstance(got, list) else got!r}"
        for i, (a, b) in enumerate(zip(ms, got)):
            assert_same(a, b, f"{where}[{i}]", tolerance)
    elif isinstance(ms, float) and tolerance:
        assert isinstance(got, (int, float)) and math.isclose(ms, got, rel_tol=tolerance["rel"],
                                                              abs_tol=tolerance["abs"]), \
            f"{where}: MindSpore {ms!r}, irc {got!r}"
    else:
        assert type(ms) is type(got) and ms == got, f"{where}: MindSpore {ms!r}, irc {got!r}"


def reference_files() -> dict:
    files = dict(REFERENCE["files"])
    for key, events in files.items():
        if key.endswith("_lineage"):
            files[key] = [e for e in events if not any(name in e for name in LEFT_OUT)]
    return files


def test_irc_writes_the_files_mindspore_writes(written):
    printed, files = written
    assert printed == REFERENCE["printed"]
    assert sorted(files) == sorted(REFERENCE["files"])


@pytest.mark.parametrize("key", sorted(REFERENCE["files"]))
def test_each_file_holds_mindspores_events_field_by_field(written, key):
    """Tags, steps, scalar values, tensors, histogram buckets (edges and
    counts), image pixels, lineage, the landscape's checkpoints and
    metadata, exported tensors.  The SummaryRecord's values are computed
    from the same numbers, so they match exactly; a training's (losses,
    weights) within TRAINED."""
    _, files = written
    trained = key.split("/")[0] in ("train", "every4")
    assert_same(reference_files()[key], files[key], key, TRAINED if trained else None)


def test_the_collector_writes_what_mindspore_collects_by_default(written):
    """What the field-by-field comparison covers, spelled out: the loss
    every step and again at each epoch's end (MindSpore's collect_freq=1
    collects the epoch's last step twice), the optimizer's first five
    parameters as histograms, the train lineage at the end."""
    _, files = written
    events = files["train/events.out.events.summary.<time>.0.<host>_MS"]
    assert events[0] == {"version": "MindSpore.Event:1"}
    steps = [int(e["step"]) for e in events[1:]]
    assert steps == [1, 2, 3, 4, 5, 6, 6, 7, 8, 9, 10, 11, 12, 12]
    tags = [v["tag"] for v in events[1]["summary"]["value"]]
    assert tags == ["loss/auto", "fc1.weight/auto", "fc1.bias/auto", "fc2.weight/auto", "fc2.bias/auto"]
    lineage = files["train/events.out.events.summary.<time>.0.<host>_lineage"]
    assert [next(iter(e)) for e in lineage] == ["user_defined_info", "train_lineage"]
    assert lineage[1]["train_lineage"]["hyper_parameters"]["optimizer"] == "Momentum"
    every4 = files["every4/events.out.events.summary.<time>.0.<host>_MS"]
    assert [int(e["step"]) for e in every4[1:]] == [1, 4, 8, 12, 12]
    assert [v["tag"] for v in every4[1]["summary"]["value"]] == ["loss/auto", "fc1.weight/auto", "fc1.bias/auto"]


def test_the_checksums_are_mindspores_masked_crc32c():
    """The test's own check of the framing reads a file MindSpore wrote
    (so its CRC-32C and mask are MindSpore's), and a flipped byte fails it."""
    data = base64.b64decode(REFERENCE["sample_file"])
    assert len(records(data, google_crc32c.value)) == 4
    broken = bytearray(data)
    broken[20] ^= 1
    with pytest.raises(AssertionError, match="CRC"):
        records(bytes(broken), google_crc32c.value)
    from irc.dialects.tfrecord import frame  # irc frames MindSpore's records byte for byte
    first, second = records(data)[:2]
    start = 16 + len(first)
    assert frame(first) + frame(second) == data[:start + 16 + len(second)]


def test_the_messages_have_mindspores_field_numbers():
    """irc's declarations (irc/train/summary_proto.py) field by field against
    MindSpore 2.10's descriptors: name, number, label, type, packing, oneof."""
    from google.protobuf import descriptor_pb2

    from irc.train.summary_proto import file_descriptor
    theirs = {}

    def walk(messages, prefix, into):
        for m in messages:
            into[prefix + m.name] = m
            walk(m.nested_type, prefix + m.name + ".", into)
    for proto in descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(REFERENCE["descriptors"])).file:
        walk(proto.message_type, "", theirs)
    mine: dict = {}
    walk(file_descriptor().message_type, "", mine)
    assert len(mine) == 20
    for name, message in mine.items():
        fields = {f.number: f for f in theirs[name].field}
        for field in message.field:
            other = fields[field.number]
            for attr in ("name", "label", "type", "type_name"):
                assert getattr(field, attr) == getattr(other, attr), (name, field.name, attr)
            assert field.options.packed == other.options.packed, (name, field.name)
            assert field.HasField("oneof_index") == other.HasField("oneof_index"), (name, field.name)
        assert message.options.map_entry == theirs[name].options.map_entry


# -- irc only -------------------------------------------------------------------------------------

def _data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((24, 8)).astype(np.float32)
    return ds.NumpySlicesDataset({"x": x, "y": (x.sum(1) > 0).astype(np.int32)}, shuffle=False).batch(4)


def _model():
    net = nn.Dense(8, 2)
    return irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     nn.Momentum(net.trainable_params(), 0.1, 0.9), metrics={"acc"})


def _events(folder) -> dict:
    classes = message_classes(REFERENCE["descriptors"])
    return {name.rsplit("_", 1)[1]: decode_events(os.path.join(folder, name), classes, google_crc32c.value)
            for name in os.listdir(folder) if ".out.events.summary." in name}


def test_in_sink_mode_the_collector_collects_at_epoch_ends(tmp_path):
    """A sink runs the step hooks once (cur_step_num advances by the sink
    size), so, as MindSpore's sink mode, collect_freq counts epochs."""
    collector = irc.SummaryCollector(str(tmp_path), collect_freq=1)
    _model().train(3, _data(), callbacks=[collector], dataset_sink_mode=True)
    events = _events(tmp_path)["MS"]
    assert [int(e["step"]) for e in events[1:]] == [6, 12, 18]
    assert sorted(os.listdir(tmp_path / "ckpt_dir")) == ["Dense_12_step.ckpt", "Dense_18_step.ckpt",
                                                         "Dense_6_step.ckpt", "train_metadata.json"]


def test_fit_does_not_hand_the_collector_to_its_evaluations(tmp_path):
    """MindSpore's Model.fit evaluates without its own callbacks (this one):
    one train lineage, no evaluation lineage, the training's steps only."""
    collector = irc.train.SummaryCollector(str(tmp_path), collect_freq=3,
                                           collect_specified_data={"collect_landscape": None})
    _model().fit(2, _data(), _data(), callbacks=[collector])
    events = _events(tmp_path)
    assert [int(e["step"]) for e in events["MS"][1:]] == [1, 3, 6, 6, 9, 12, 12]
    assert [next(iter(e)) for e in events["lineage"]] == ["train_lineage"]


def test_mindspore_exports_them_where_irc_does(tmp_path):
    script = tmp_path / "imports.py"
    script.write_text(
        "import mindspore as ms\n"
        "from mindspore.train.callback import SummaryCollector\n"
        "from mindspore.train.summary import SummaryRecord\n"
        "from mindspore.train import SummaryCollector as C, SummaryRecord as R\n"
        "assert ms.SummaryCollector is SummaryCollector is C and ms.SummaryRecord is SummaryRecord is R\n"
        "print(SummaryRecord.__module__)\n")
    from irc.capture import RUN, run_script
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        run_script(str(script), mode=RUN, argv=[])
    assert printed.getvalue().strip() == "irc.train.summary_record"


def test_argument_errors_are_mindspores_and_located(tmp_path):
    here = os.path.basename(__file__)
    with irc.SummaryRecord(str(tmp_path)) as record:
        with pytest.raises(RuntimeError, match="only one instance is supported") as e:
            irc.SummaryRecord(str(tmp_path))
        assert here in e.value.where
        with pytest.raises(ValueError, match='no such "plugin"'):
            record.add_value("audio", "a", irc.Tensor(1.0))
        with pytest.raises(TypeError, match='"value" expect to be Tensor, but got float32'):
            record.add_value("scalar", "a", np.float32(1.0))
        with pytest.raises(ValueError, match="the v rank must be less than or equal to 1"):
            record.add_value("scalar", "a", irc.Tensor(np.ones(3, np.float32)))
        with pytest.raises(TypeError, match="The type of 'step' should be 'int'"):
            record.record("1")
        with pytest.raises(irc.diagnostics.UnsupportedError, match="'graph'"):
            record.add_value("graph", "g", None)
    assert record.record(1) is False          # closed: MindSpore logs and returns False
    with pytest.raises(TypeError, match="file_prefix"):
        irc.SummaryRecord(str(tmp_path), file_prefix=3)
    with pytest.raises(ValueError, match="is illegal"):
        irc.SummaryRecord(str(tmp_path), file_suffix="a b")
    with pytest.raises(ValueError, match="`collect_freq` should be greater than 0") as e:
        irc.SummaryCollector(str(tmp_path), collect_freq=0)
    assert here in e.value.where and isinstance(e.value, irc.diagnostics.UserError)
    with pytest.raises(ValueError, match="are unsupported"):
        irc.SummaryCollector(str(tmp_path), collect_specified_data={"collect_weights": True})
    with pytest.raises(ValueError, match="not a valid regular expression"):
        irc.SummaryCollector(str(tmp_path), collect_specified_data={"histogram_regular": "("})
    assert irc.SummaryRecord.count == 0
