"""Capture of dataset pipelines into the pipeline IR: the printed text, the
round trip through the parser, the verifier, and column errors located at
the user's line."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import irc
import irc.dataset as ds
import irc.dataset.transforms as transforms
import irc.dataset.vision as vision
from irc.dataset.vision import Inter
from irc.diagnostics import UserError, display_path
from irc.frontend.pipeline import lower_pipeline
from irc.ir.graph import Module
from irc.ir.text import parse_module, print_module
from irc.ir.verifier import verify

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "samples", "data")
HERE = display_path(__file__)


def here(offset: int = 1) -> str:
    """FILE:LINE of the caller's line + offset."""
    return f"{HERE}:{sys._getframe(1).f_lineno + offset}"


def lower(dataset, name="host") -> tuple[Module, str]:
    module = Module("m")
    lower_pipeline(module, dataset, name)
    verify(module)
    text = print_module(module)
    again = parse_module(text, "m.ir")
    verify(again)
    assert print_module(again) == text        # the text round-trips exactly
    return module, text


def test_lenet_pipeline_text():
    lines = {}
    d = ds.MnistDataset(os.path.join(DATA, "mnist", "train")); lines["src"] = here(0)  # noqa: E702
    d = d.map(input_columns="label", operations=transforms.TypeCast(irc.int32), num_parallel_workers=1)
    lines["cast"] = here(-1)
    d = d.map(input_columns="image", operations=vision.Resize((32, 32), interpolation=Inter.LINEAR))
    d = d.map(input_columns="image", operations=[vision.Rescale(1.0 / 255.0, 0.0),
                                                 transforms.Compose([vision.HWC2CHW()])], offload=True)
    lines["rescale"] = here(-2)
    d = d.shuffle(buffer_size=10000); lines["shuffle"] = here(0)  # noqa: E702
    d = d.batch(32, drop_remainder=True); lines["batch"] = here(0)  # noqa: E702
    _, text = lower(d)
    data_dir = os.path.join(DATA, "mnist", "train")
    expected = [
        f'%image, %label = dataset.MnistDataset() {{dataset_dir = "{data_dir}"}} : () -> '
        f'(u8[28,28,1], u32[])  # {lines["src"]}',
        f'%label.1 = transforms.TypeCast(%label) {{dtype = "i32", map = 0, workers = 1}} : (u32[]) -> i32[] '
        f'col "label"  # {lines["cast"]}',
        '%image.1 = vision.Resize(%image) {map = 1, size = [32, 32]} : (u8[28,28,1]) -> u8[32,32,1] col "image"',
        '%image.2 = vision.Rescale(%image.1) {map = 2, offload = true, rescale = 0.00392156862745098} : '
        f'(u8[32,32,1]) -> f32[32,32,1] col "image"  # {lines["rescale"]}',
        '%image.3 = vision.HWC2CHW(%image.2) {map = 2, offload = true} : (f32[32,32,1]) -> f32[1,32,32] '
        f'col "image"  # {lines["rescale"]}',
        '%image.4, %label.2 = dataset.shuffle(%image.3, %label.1) {buffer_size = 10000} : '
        f'(f32[1,32,32], i32[]) -> (f32[1,32,32], i32[])  # {lines["shuffle"]}',
        '%image.5, %label.3 = dataset.batch(%image.4, %label.2) {batch_size = 32, drop_remainder = true} : '
        f'(f32[1,32,32], i32[]) -> (f32[N,1,32,32], i32[N])  # {lines["batch"]}',
        'return(%image.5, %label.3) {names = ["image", "label"]} : (f32[N,1,32,32], i32[N]) -> ()',
    ]
    for snippet in expected:
        assert snippet in text, f"missing:\n{snippet}\nin:\n{text}"
    assert text.index("TypeCast") < text.index("Resize") < text.index("shuffle")


def test_every_pipeline_op_and_source_prints_and_parses():
    a = ds.NumpySlicesDataset({"x": np.zeros((6, 2), np.float32), "y": np.arange(6)})
    b = ds.GeneratorDataset(lambda: iter([(np.zeros(2, np.float32), np.int64(1))] * 3), ["x", "y"])
    c = (a + b).repeat(2).take(10).skip(1).project(["y", "x"]).rename("y", "label")
    z = ds.zip((c, ds.Cifar10Dataset(os.path.join(DATA, "cifar10"), num_shards=2, shard_id=1)
                .rename(["image", "label"], ["img", "lbl"])))
    f = ds.ImageFolder(os.path.join(DATA, "imagefolder"), class_indexing={"bars": 0, "disc": 1},
                       extensions=[".jpg"])
    f = f.map([vision.Decode(), vision.RandomResizedCrop(16)], "image").map(lambda im: (im, im), "image",
                                                                              ["i1", "i2"])
    module, text = lower(z)
    assert "dataset.NumpySlicesDataset() {column_types = [\"f32[2]\", \"i64[]\"], columns = [\"x\", \"y\"], " \
           "data = \"host.numpyslices0\"" in text
    assert 'dataset.GeneratorDataset() {column_types = ["f32[2]", "i64[]"], columns = ["x", "y"], ' \
           'source = "host.generator1"' in text
    assert 'dataset.concat(%x, %y, %x.1, %y.1) {columns = ["x", "y"]}' in text
    for op in ("dataset.repeat(", "dataset.take(", "dataset.skip(", "dataset.project(", "dataset.rename(",
               "dataset.zip(", "num_shards = 2, shard_id = 1"):
        assert op in text, op
    assert isinstance(module.objects["host.numpyslices0"], tuple) and callable(module.objects["host.generator1"])
    _, text = lower(f)
    assert 'class_indexing = [["bars", 0], ["disc", 1]], dataset_dir' in text
    assert 'vision.RandomResizedCrop(%image.1) {map = 0, size = [16, 16]} : (u8[?,?,3]) -> u8[16,16,3]' in text
    assert '%i1, %i2 = dataset.PyFunc(%image.2) {fn = "host.map1.0", input_columns = ["image"], map = 1, ' \
           'name = "test_every_pipeline_op_and_source_prints_and_parses.<locals>.<lambda>", ' \
           'out_types = ["u8[16,16,3]", "u8[16,16,3]"], output_columns = ["i1", "i2"]}' in text


def test_two_pipelines_in_one_module_keep_their_objects_apart():
    module = Module("m")
    lower_pipeline(module, ds.NumpySlicesDataset({"a": [1, 2]}), "host")
    lower_pipeline(module, ds.NumpySlicesDataset({"a": [3, 4, 5]}), "eval.host")
    assert sorted(module.objects) == ["eval.host.numpyslices0", "host.numpyslices0"]
    from irc.backends.host_engine import HostEngine
    assert HostEngine(module, "eval.host").size() == 3


def test_frontend_build_module_uses_lower_pipeline():
    from irc import capture
    from irc.frontend import build_module
    cap = capture.Capture(script="x.py")
    saved, capture._current = capture._current, cap
    try:
        ds.NumpySlicesDataset({"a": [1, 2]}).batch(2)
    finally:
        capture._current = saved
    module = build_module(cap.jobs, cap.terminal_datasets(), script=cap.script)
    assert list(module.graphs) == ["host"] and module.graph("host").find("dataset.batch")


# --- column errors at the user's line ----------------------------------------------

def test_unknown_input_column_in_map():
    d = ds.NumpySlicesDataset({"image": np.zeros((2, 3)), "label": [1, 2]})
    with pytest.raises(UserError) as e:
        d.map(vision.HWC2CHW(), input_columns="imgae")
    assert e.value.where == here(-1)
    assert "no column 'imgae'" in e.value.message and "['image', 'label']" in e.value.message


def test_project_rename_concat_zip_column_errors():
    d = ds.NumpySlicesDataset({"image": np.zeros((2, 3)), "label": [1, 2]})
    with pytest.raises(UserError) as e:
        d.project(["label", "lbl"])
    assert e.value.where == here(-1) and "no column 'lbl'" in e.value.message
    with pytest.raises(UserError) as e:
        d.rename(["image", "label"], ["x", "x"])
    assert e.value.where == here(-1) and "'x'" in e.value.message
    with pytest.raises(UserError) as e:
        d.concat(d.project("label"))
    assert e.value.where == here(-1) and "different columns" in e.value.message
    with pytest.raises(UserError) as e:
        ds.zip((d, d.project("label")))
    assert e.value.where == here(-1) and "'label' is in more than one" in e.value.message
    with pytest.raises(UserError) as e:
        d.map(lambda x: x, "image", column_order=["image", "nope"])
    assert e.value.where == here(-1) and "no column 'nope'" in e.value.message
    with pytest.raises(UserError) as e:
        d.map(lambda x: x, "image", output_columns="label")
    assert e.value.where == here(-1) and "two columns named 'label'" in e.value.message


def test_type_errors_and_wrong_output_counts_at_lowering():
    d = ds.ImageFolder(os.path.join(DATA, "imagefolder"))
    bad = d.map(vision.HWC2CHW(), input_columns="image"); where = here(0)  # noqa: E702
    with pytest.raises(UserError) as e:
        lower(bad)
    assert e.value.where == where and "HWC2CHW" in e.value.message and "bytes[]" in e.value.message
    two = d.map(transforms.Duplicate(), input_columns="label"); where = here(0)  # noqa: E702
    with pytest.raises(UserError) as e:
        lower(two)
    assert e.value.where == where and "produce 2 column(s)" in e.value.message
    many = d.map(vision.Rescale(1.0, 0.0), input_columns=["image", "label"]); where = here(0)  # noqa: E702
    with pytest.raises(UserError) as e:
        lower(many)
    assert e.value.where == where and "takes 1 column(s)" in e.value.message


def test_pyfunc_types_come_from_the_first_row():
    d = ds.MnistDataset(os.path.join(DATA, "mnist", "train"), num_samples=3)
    d = d.map(lambda im: im.astype(np.float32)[:20], "image")
    d = d.map(vision.HWC2CHW(), "image")
    _, text = lower(d)
    assert 'out_types = ["f32[20,28,1]"]' in text
    assert "vision.HWC2CHW(%image.1) {map = 1} : (f32[20,28,1]) -> f32[1,20,28]" in text
    boom = ds.MnistDataset(os.path.join(DATA, "mnist", "train")).map(lambda im: im + None, "image")
    where = here(-1)
    with pytest.raises(UserError) as e:
        lower(boom)
    assert e.value.where == where and "raised TypeError" in e.value.message
