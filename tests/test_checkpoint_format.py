"""MindSpore's checkpoint format (issue 13): irc reads the .ckpt files real
MindSpore 2.10 wrote (tests/fixtures/ckpt, made by make_fixtures.py there)
with MindSpore's values, writes the same bytes MindSpore writes, loads into
networks as MindSpore's load_param_into_net does (its reports and errors
baked from MindSpore), keeps irc's resume metadata, and refuses damage."""
import io
import json
import os

import numpy as np
import pytest

import irc
from irc import nn
from irc.diagnostics import UnsupportedError, UserError
from irc.train import ckpt_format
from irc.train.serialization import METADATA_TAG, _read, checkpoint_metadata

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "ckpt")
EXPECTED = json.load(open(os.path.join(FIXTURES, "expected.json")))
VALUES = np.load(os.path.join(FIXTURES, "expected.npz"))
APPEND = {"epoch_num": 2, "lr": 0.01, "flag": True, "note": "tiny LeNet fixture"}   # as made

# mindspore/train/checkpoint_pb2.py's serialised FileDescriptorProto (MindSpore 2.10)
MINDSPORE_DESCRIPTOR = (
    b'\n\x10checkpoint.proto"\x93\x01\n\nCheckpoint\x12 \n\x05value\x18\x01 \x03(\x0b2\x11'
    b'.Checkpoint.Value\x1ac\n\x05Value\x12\x0b\n\x03tag\x18\x01 \x02(\t\x12\x1e\n\x06tensor'
    b'\x18\x02 \x01(\x0b2\x0c.TensorProtoH\x00\x12$\n\tmaptensor\x18\x03 \x01(\x0b2\x0f'
    b'.MapTensorProtoH\x00B\x07\n\x05value"H\n\x0bTensorProto\x12\x0c\n\x04dims\x18\x01 \x03'
    b'(\x03\x12\x13\n\x0btensor_type\x18\x02 \x02(\t\x12\x16\n\x0etensor_content\x18\x03 \x02'
    b'(\x0c".\n\x0eMapTensorProto\x12\x1c\n\x06tensor\x18\x01 \x03(\x0b2\x0c.TensorProto')


class TinyLeNet(nn.Cell):
    """make_fixtures.py's network."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 2, 3, pad_mode="valid", has_bias=True)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(18, 3)

    def construct(self, x):
        return self.fc1(self.flatten(self.pool(self.relu(self.conv1(x)))))


class Fc(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(2, 3)


def fixture(name):
    return os.path.join(FIXTURES, name + ".ckpt")


def raw(path):
    with open(path, "rb") as f:
        return f.read()


def entries(path):
    """(tag, tensor_type, dims) of each Value, parsed with the schema alone."""
    content = raw(path)
    message = ckpt_format._checkpoint_class()()
    message.ParseFromString(content[:-17] if ckpt_format.has_footer(content) else content)
    return [(v.tag, v.tensor.tensor_type, list(v.tensor.dims)) for v in message.value]


def mindspore_values(name):
    """What MindSpore's load_checkpoint returned for the fixture."""
    out = {}
    for tag, tensor_type, *rest in EXPECTED[name]["entries"]:
        out[tag] = rest[1] if tensor_type == "str" else VALUES[f"{name.replace('_crc', '')}/{tag}"]
    return out


def param(array, name):
    return irc.Parameter(np.asarray(array), name=name)


# -- the schema and MindSpore's files --------------------------------------------------------------

def test_the_schema_is_mindspores_checkpoint_proto():
    assert ckpt_format.file_descriptor().SerializeToString() == MINDSPORE_DESCRIPTOR


@pytest.mark.parametrize("name", ["tiny_train", "mixed", "mixed_crc"])
def test_reads_mindspores_files_with_its_values(name):
    loaded = irc.load_checkpoint(fixture(name), crc_check=name.endswith("crc"))
    expected = mindspore_values(name)
    assert list(loaded) == list(expected)                      # MindSpore's order too
    for tag, want in expected.items():
        got = loaded[tag]
        if isinstance(want, str):
            assert got == want
        else:
            assert isinstance(got, irc.Parameter) and got.name == tag
            assert got.asnumpy().dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got.asnumpy(), want)
    if name == "tiny_train":      # ModelCheckpoint's append_info, after step 2 of epoch 1
        assert (int(loaded["epoch_num"].asnumpy()), int(loaded["step_num"].asnumpy())) == (1, 2)


def test_tensor_types_are_mindspores_names():
    types = {tag: t for tag, t, *_ in EXPECTED["mixed"]["entries"]}
    for tag, tensor_type in types.items():
        if tensor_type != "str":
            assert ckpt_format.tensor_type_of(VALUES[f"mixed/{tag}"].dtype) == tensor_type
    assert sorted(ckpt_format.TENSOR_TYPES) == sorted(set(types.values()) - {"str"})


@pytest.mark.parametrize("name", ["tiny_train", "mixed", "mixed_crc"])
def test_rewriting_a_mindspore_file_gives_its_bytes(tmp_path, name):
    """MindSpore's load_checkpoint -> save_checkpoint reproduces its file
    byte for byte (checked with MindSpore); irc's must too."""
    loaded = irc.load_checkpoint(fixture(name))
    path = irc.save_checkpoint(loaded, str(tmp_path / "again.ckpt"), crc_check=name.endswith("crc"))
    assert raw(path) == raw(fixture(name))


def test_append_dict_values_are_stored_as_mindspore_stores_them(tmp_path):
    """ints as Int64, floats as Float32, bools as Bool, str as str."""
    params = {tag: param(VALUES[f"mixed/{tag}"], tag)
              for tag, t, *_ in EXPECTED["mixed"]["entries"] if tag not in APPEND}
    path = irc.save_checkpoint(params, str(tmp_path / "mixed.ckpt"), append_dict=dict(APPEND))
    assert raw(path) == raw(fixture("mixed"))


def test_a_network_is_saved_as_mindspore_saves_it(tmp_path):
    """The network's entries open MindSpore's training checkpoint, byte for byte."""
    net = TinyLeNet()
    ms = irc.load_checkpoint(fixture("tiny_train"))
    assert irc.load_param_into_net(net, ms) == tuple(EXPECTED["tiny_train"]["load_param_into_net"])
    path = irc.save_checkpoint(net, str(tmp_path / "net"))      # MindSpore appends .ckpt
    assert path.endswith("net.ckpt")
    assert raw(fixture("tiny_train")).startswith(raw(path))
    assert [e[0] for e in entries(path)] == ["conv1.weight", "conv1.bias", "fc1.weight", "fc1.bias"]


def test_choice_func_and_prefixes_select_as_mindspore():
    path = fixture("mixed")
    assert list(irc.load_checkpoint(path, choice_func=lambda n: n.startswith("n."))) == \
        ["n.int32", "n.int64", "n.int8", "n.int16", "n.uint8", "n.uint16", "n.uint32", "n.uint64"]
    # the prefixes, when given, replace choice_func
    assert list(irc.load_checkpoint(path, filter_prefix="n.", specify_prefix=["n.", "w"],
                                    choice_func=lambda n: False)) == \
        ["w.float32", "w.float16", "w.float64"]
    with pytest.raises(ValueError, match="empty after filter or specify"):
        irc.load_checkpoint(path, choice_func=lambda n: False)
    with pytest.raises(ValueError, match="cannot include ''"):
        irc.load_checkpoint(path, filter_prefix=["n.", ""])


# -- load_param_into_net: MindSpore's reports and errors ------------------------------------------

def test_load_param_into_net_reports_what_mindspore_reports():
    for name in ("tiny_train", "mixed"):
        net = TinyLeNet()
        report = irc.load_param_into_net(net, irc.load_checkpoint(fixture(name)))
        assert [list(r) for r in report] == EXPECTED[name]["load_param_into_net"]
    net = TinyLeNet()
    irc.load_checkpoint(fixture("tiny_train"), net=net)
    assert np.array_equal(net.fc1.weight.asnumpy(), VALUES["tiny_train/fc1.weight"])


def test_float_types_convert_unless_strict():
    half = {"fc.weight": param(np.ones((3, 2), np.float16), "fc.weight"),
            "fc.bias": param(np.ones(3, np.float32), "fc.bias")}
    net = Fc()
    assert irc.load_param_into_net(net, half) == ([], [])
    assert net.fc.weight.asnumpy().dtype == np.float32 and (net.fc.weight.asnumpy() == 1).all()
    with pytest.raises(RuntimeError, match="fc.weight is Float32 in the network but Float16"):
        irc.load_param_into_net(Fc(), half, strict_load=True)
    with pytest.raises(RuntimeError, match="Float32 in the network but Int32"):
        irc.load_param_into_net(Fc(), {"fc.weight": param(np.ones((3, 2), np.int32), "w")})


def test_a_prefixed_checkpoint_loads_unless_strict():
    prefixed = {"net.fc.weight": param(np.full((3, 2), 2, np.float32), "a"),
                "net.fc.bias": param(np.full(3, 2, np.float32), "b"),
                "other": param(np.ones(3, np.float32), "c")}
    net = Fc()
    # MindSpore's report: nothing missing, and every name "not loaded" from the checkpoint
    assert irc.load_param_into_net(net, prefixed) == ([], ["net.fc.weight", "net.fc.bias", "other"])
    assert (net.fc.bias.asnumpy() == 2).all()
    assert irc.load_param_into_net(Fc(), prefixed, strict_load=True) == \
        (["fc.weight", "fc.bias"], ["net.fc.weight", "net.fc.bias", "other"])


def test_a_sub_cell_loads_by_its_parameters_names(tmp_path):
    """A sub-cell's parameters keep their network's names (``fc.weight``):
    its checkpoint loads into it with nothing reported, as in MindSpore
    (found with the transfer-learning tutorial's head re-initialisation)."""
    path = str(tmp_path / "fc.ckpt")
    irc.save_checkpoint(Fc().fc, path)
    values = irc.load_checkpoint(path)
    assert sorted(values) == ["fc.bias", "fc.weight"]
    net = Fc()
    assert irc.load_param_into_net(net.fc, values) == ([], [])
    assert np.array_equal(net.fc.weight.asnumpy(), values["fc.weight"].asnumpy())


def test_shapes_must_agree_but_trailing_ones_are_dropped():
    with pytest.raises(RuntimeError, match=r"fc.weight has shape \(3, 2\) in the network but "
                                           r"\(2, 2\)") as e:
        irc.load_param_into_net(Fc(), {"fc.weight": param(np.ones((2, 2), np.float32), "w")})
    assert isinstance(e.value, UserError) and "test_checkpoint_format.py" in e.value.where
    net = Fc()
    column = {"fc.weight": param(np.ones((3, 2, 1, 1), np.float32), "w")}
    assert irc.load_param_into_net(net, column) == (["fc.bias"], [])


def test_parameter_dict_values_must_be_parameters_or_strings():
    with pytest.raises(TypeError, match="must map names to Parameters"):
        irc.load_param_into_net(Fc(), {"fc.weight": np.ones((3, 2), np.float32)})
    # a string entry under a parameter's name is passed over, as MindSpore does
    assert irc.load_param_into_net(Fc(), {"fc.weight": "abc"}) == (["fc.bias"], ["fc.weight"])


# -- irc's own files: formats, metadata, layout ---------------------------------------------------

def test_format_follows_mindspores_names_and_is_read_from_content(tmp_path):
    net = Fc()
    st = irc.save_checkpoint(net, str(tmp_path / "w.ckpt"), format="safetensors")
    assert st.endswith("w.ckpt.safetensors")                  # MindSpore's naming
    disguised = tmp_path / "disguised.ckpt"
    os.rename(st, disguised)
    loaded = irc.load_checkpoint(str(disguised))
    assert np.array_equal(loaded["fc.weight"].asnumpy(), net.fc.weight.asnumpy())
    from safetensors import safe_open
    with safe_open(str(disguised), framework="numpy") as f:
        assert f.metadata() == {"format": "ms"}
    with pytest.raises(ValueError, match="format must be 'ckpt' or 'safetensors'"):
        irc.save_checkpoint(net, str(tmp_path / "x"), format="npz")
    with pytest.raises(ValueError, match="holds tensors only"):
        irc.save_checkpoint(net, str(tmp_path / "s"), format="safetensors", append_dict={"a": "b"})
    with pytest.raises(UnsupportedError, match="encrypted"):
        irc.save_checkpoint(net, str(tmp_path / "e"), enc_key=b"0123456789abcdef")


def test_a_safetensors_name_chooses_safetensors(tmp_path):
    """irc's bundle format by its extension (MindSpore would write a protobuf
    .ckpt named w.safetensors.ckpt)."""
    net = Fc()
    path = irc.save_checkpoint(net, str(tmp_path / "w.safetensors"))
    assert path.endswith("w.safetensors") and ckpt_format.is_safetensors(open(path, "rb").read())
    assert np.array_equal(irc.load_checkpoint(path)["fc.weight"].asnumpy(),
                          net.fc.weight.asnumpy())


def test_safetensors_crc_is_mindspores(tmp_path):
    values = {"a": np.arange(3, dtype=np.float32), "b": np.array([1, 2], np.int64)}
    path = irc.save_checkpoint({k: param(v, k) for k, v in values.items()},
                               str(tmp_path / "c.safetensors"), format="safetensors", crc_check=True)
    from safetensors import safe_open
    with safe_open(path, framework="numpy") as f:
        crc = int(f.metadata()["crc_num"])
    import binascii
    want = binascii.crc32(values["b"].tobytes(), binascii.crc32(b"b", binascii.crc32(
        values["a"].tobytes(), binascii.crc32(b"a"))))
    assert crc == want
    assert list(irc.load_checkpoint(path, crc_check=True)) == ["a", "b"]


def test_resume_metadata_rides_as_one_last_uint8_entry(tmp_path):
    meta = {"irc.job": {"epochs": 2, "sink": True}, "irc.global_step": 6, "irc.finished": False}
    path = irc.save_checkpoint(Fc(), str(tmp_path / "run.ckpt"), crc_check=True, metadata=meta)
    layout = entries(path)
    assert layout[-1][:2] == (METADATA_TAG, "UInt8") and ckpt_format.has_footer(raw(path))
    assert checkpoint_metadata(path) == meta
    # MindSpore makes of it one more Parameter the network does not have;
    # irc's load_checkpoint gives what MindSpore's own checkpoint would
    entry = dict(ckpt_format.read(raw(path)))[METADATA_TAG]
    assert json.loads(np.asarray(entry, np.uint8).tobytes())["irc.global_step"] == "6"
    loaded = irc.load_checkpoint(path)
    assert METADATA_TAG not in loaded and irc.load_param_into_net(Fc(), loaded) == ([], [])


def test_large_tensors_are_written_in_slices_with_one_tag(tmp_path, monkeypatch):
    monkeypatch.setattr(ckpt_format, "SLICE_BYTES", 16)       # MindSpore's is 512 MiB
    big = np.arange(10, dtype=np.float32).reshape(5, 2)
    path = irc.save_checkpoint({"big": param(big, "big"), "after": param(np.ones(1, np.int8), "a")},
                               str(tmp_path / "s.ckpt"))
    assert entries(path) == [("big", "Float32", [5, 2])] * 3 + [("after", "Int8", [1])]
    assert np.array_equal(irc.load_checkpoint(path)["big"].asnumpy(), big)


def test_scalars_empty_tensors_and_bfloat16(tmp_path):
    path = irc.save_checkpoint({"s": param(np.float32(2.5), "s"), "e": param(np.zeros(0), "e"),
                                "t": "x"}, str(tmp_path / "z.ckpt"))
    assert entries(path) == [("s", "Float32", []), ("t", "str", [0])]   # no Value for no bytes
    message = ckpt_format._checkpoint_class()()
    value = message.value.add(tag="bf")
    value.tensor.dims.extend([2])
    value.tensor.tensor_type = "BFloat16"
    value.tensor.tensor_content = np.array([0x3FC0, 0xC000], np.uint16).tobytes()   # 1.5, -2
    loaded = irc.load_checkpoint(io.BytesIO(message.SerializeToString()))
    assert loaded["bf"].asnumpy().tolist() == [1.5, -2.0]


# -- damage ---------------------------------------------------------------------------------------

def test_damaged_files_are_located_value_errors(tmp_path):
    content = raw(fixture("mixed_crc"))
    cut = tmp_path / "cut.ckpt"
    cut.write_bytes(content[:len(content) // 2])
    with pytest.raises(ValueError, match="cannot be parsed") as e:
        irc.load_checkpoint(str(cut))
    assert isinstance(e.value, UserError) and "test_checkpoint_format.py" in e.value.where
    flipped = bytearray(content)
    flipped[30] ^= 0x10                      # inside w.float32's values: still parses
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(bytes(flipped))
    irc.load_checkpoint(str(bad))            # as MindSpore without crc_check
    with pytest.raises(ValueError, match="CRC-32 does not match"):
        irc.load_checkpoint(str(bad), crc_check=True)
    with pytest.raises(ValueError, match="does not exist") as e:
        irc.load_checkpoint(str(tmp_path / "none.ckpt"))
    assert e.value.hint.endswith("holds bad.ckpt, cut.ckpt")        # what is there
    with pytest.raises(ValueError, match="does not exist") as e:
        irc.load_checkpoint(str(tmp_path / "typo" / "none.ckpt"))
    assert e.value.hint.startswith("there is no folder")


def test_a_training_checkpoint_cut_between_entries_is_damaged(tmp_path):
    net = Fc()
    path = irc.save_checkpoint(net, str(tmp_path / "t.ckpt"), crc_check=True,
                               metadata={"irc.global_step": 1})
    first = irc.save_checkpoint(net, str(tmp_path / "w.ckpt"), choice_func=lambda n: n == "fc.weight")
    assert raw(path).startswith(raw(first))      # a kill after the first entry leaves this
    assert list(irc.load_checkpoint(first)) == ["fc.weight"]     # a valid protobuf:
    with pytest.raises(UserError, match="no CRC footer"):         # only the footer tells
        _read(first, require_crc=True)


# -- ModelCheckpoint ------------------------------------------------------------------------------

def test_model_checkpoint_writes_mindspores_format_with_append_info(tmp_path):
    """make_fixtures.py's training, in irc: the same append_info values
    (epoch 1, step 2), the resume metadata last, MindSpore's CRC footer."""
    import irc.dataset as ds
    from irc.train.callback import CheckpointConfig, ModelCheckpoint
    rng = np.random.default_rng(0)
    data = ds.NumpySlicesDataset({"image": rng.standard_normal((16, 1, 8, 8)).astype(np.float32),
                                  "label": rng.integers(0, 3, 16).astype(np.int32)},
                                 shuffle=False).batch(8)
    net = TinyLeNet()
    model = irc.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.05, 0.9))
    config = CheckpointConfig(save_checkpoint_steps=2, append_info=["epoch_num", "step_num"])
    model.train(1, data, callbacks=[ModelCheckpoint("tiny", str(tmp_path), config)],
                dataset_sink_mode=False)
    path = str(tmp_path / "tiny-1_2.ckpt")
    tags = [tag for tag, *_ in entries(path)]
    assert tags[:4] == ["conv1.weight", "conv1.bias", "fc1.weight", "fc1.bias"]
    assert tags[-3:] == ["epoch_num", "step_num", METADATA_TAG] and ckpt_format.has_footer(raw(path))
    loaded = irc.load_checkpoint(path, crc_check=True)
    assert (int(loaded["epoch_num"].asnumpy()), int(loaded["step_num"].asnumpy())) == (1, 2)
    assert loaded["epoch_num"].asnumpy().dtype == np.int64        # Int64, as MindSpore's
    assert checkpoint_metadata(path)["irc.global_step"] == 2
    assert np.array_equal(loaded["fc1.weight"].asnumpy(), net.fc1.weight.asnumpy())


@pytest.mark.parametrize("append_info, error, match", [
    ("epoch_num", TypeError, "must be a list"),
    (["epoch"], ValueError, r"names must be in \['epoch_num', 'step_num'\]"),
    ([{"a": 1}, {"b": 2}], TypeError, "one dict only"),
    ([{"a": [1]}], TypeError, "must map str to int"),
])
def test_append_info_is_checked_as_mindspore_checks_it(append_info, error, match):
    from irc.train.callback import CheckpointConfig
    with pytest.raises(error, match=match):
        CheckpointConfig(append_info=append_info)
    assert CheckpointConfig(append_info=["step_num", {"epoch_num": 5, "tag": "x"}]).append_dict == \
        {"step_num": 0, "epoch_num": 5, "tag": "x"}
