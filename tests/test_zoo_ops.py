"""Small MindSpore APIs model-zoo scripts use, beside MindSpore 2.10's
results: ``ops.DepthToSpace``/``SpaceToDepth`` (EDSR's PixelShuffle) and
dtypes spelled as MindSpore prints them (EDSR's ``astype("Int32")``)."""
import numpy as np
import pytest

import irc as ms
from irc import nn, ops
from irc.diagnostics import UserError

# MindSpore 2.10: DepthToSpace(2) of arange(96).reshape(2, 8, 2, 3), image 0 channel 0
DEPTH_TO_SPACE_00 = [[0, 12, 1, 13, 2, 14], [24, 36, 25, 37, 26, 38],
                     [3, 15, 4, 16, 5, 17], [27, 39, 28, 40, 29, 41]]


def test_depth_to_space_as_mindspore_and_back():
    x = ms.Tensor(np.arange(96, dtype=np.float32).reshape(2, 8, 2, 3))
    y = ops.DepthToSpace(2)(x)
    assert y.shape == (2, 2, 4, 6) and y.asnumpy()[0, 0].tolist() == DEPTH_TO_SPACE_00
    np.testing.assert_array_equal(ops.SpaceToDepth(2)(y).asnumpy(), x.asnumpy())
    with pytest.raises(UserError, match="divisible by block_size"):
        ops.DepthToSpace(2)(ms.Tensor(np.ones((1, 6, 2, 2), np.float32)))


def test_depth_to_space_trains_in_a_network():
    class Up(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 8, 3, weight_init="ones")
            self.shuffle = ops.DepthToSpace(2)

        def construct(self, x):
            return self.shuffle(self.conv(x))

    net = Up()
    x = ms.Tensor(np.random.RandomState(0).randn(2, 2, 3, 3).astype(np.float32))
    weighted = ms.Tensor(np.arange(72, dtype=np.float32).reshape(2, 6, 6))   # each output its own weight
    loss = lambda t: (net(t) * weighted).sum()                              # noqa: E731
    compiled = ms.jit(ms.grad(loss, None, net.trainable_params()))(x)
    eager = ms.grad(loss, None, net.trainable_params())(x)
    assert net(x).shape == (2, 2, 6, 6) and compiled[0].shape == (8, 2, 3, 3)
    np.testing.assert_allclose(compiled[0].asnumpy(), eager[0].asnumpy(), rtol=1e-5)
    assert np.unique(compiled[0].asnumpy()[:, 0, 0, 0]).size == 8      # each channel's own place


def test_dtypes_spelled_as_mindspore_prints_them():
    x = ms.Tensor(np.array([1.7, -2.2], np.float32))
    assert x.astype("Int32").dtype == ms.int32 and x.astype("Int32").asnumpy().tolist() == [1, -2]
    assert x.astype("Float16").dtype == ms.float16 and str(ms.int32) == "Int32"


def test_a_generator_of_rates_is_a_per_step_list():
    """The model zoo's DeepLabv3 passes its cosine schedule as a generator."""
    net = nn.Dense(2, 2)
    rates = (0.1 * (i + 1) for i in range(3))
    opt = nn.Momentum(net.trainable_params(), rates, 0.9)
    np.testing.assert_allclose(opt.learning_rates(0, 4), [0.1, 0.2, 0.3, 0.3], rtol=1e-6)


def test_images_sized_by_the_data_train_as_mindspore(capsys):
    """A size only the data gives (a Python decode of a MindRecord bytes
    column) that the network needs while it is built ('same' padding, a
    resize to x.shape[2:], AvgPool2d(y.shape[2])): compiled for the first
    batch's sizes; MindSpore 2.10's losses for 2 epochs."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "sized_by_data.py")


def test_sizing_a_network_by_the_data_leaves_the_decodes_draws_to_training(capsys):
    """The first batch irc reads to size the network keeps numpy's
    generator: a decode drawing its random scale gives training MindSpore's
    draws (DeepLabV3+'s losses differed from step 1)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "sized_by_data_draws.py")


def test_a_batch_of_other_sizes_than_the_first_is_a_located_error():
    """irc compiles one graph per job: a later batch of other sizes is
    refused when fed, at the Model.train line, with a hint."""
    import irc.dataset as ds

    def rows():
        for i in range(6):
            side = 16 if i < 4 else 12
            yield np.full((3, side, side), i, np.uint8).tobytes(), np.int32(i % 2), np.int32(side)

    def decode(raw, label, side):
        return np.frombuffer(raw, np.uint8).reshape(3, int(side), int(side)).astype(np.float32), label

    data = ds.GeneratorDataset(rows, ["raw", "label", "side"], shuffle=False)
    data = data.map(decode, ["raw", "label", "side"], ["data", "label"]).project(["data", "label"])
    net = nn.SequentialCell([nn.Conv2d(3, 4, 3, pad_mode="same"), nn.Flatten(), nn.Dense(4 * 16 * 16, 2)])
    model = ms.Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                     nn.Momentum(net.trainable_params(), 0.01, 0.9))
    with pytest.raises(UserError, match=r"column 'data' is \[2, 3, 12, 12\], but the network was "
                                        r"compiled for f32\[N,3,16,16\]") as info:
        model.train(1, data.batch(2, drop_remainder=True), dataset_sink_mode=False)
    assert "test_zoo_ops.py" in info.value.format() and "one size" in info.value.format()


# MindSpore 2.10's dtypes of x + y (tests/.. prom probe): a float meeting an
# integer keeps the float's dtype, where numpy widens to float64
PROMOTIONS = [(np.float32, np.int32, "Float32"), (np.float16, np.int64, "Float16"),
              (np.float64, np.int32, "Float64"), (np.uint8, np.int8, "Int16"),
              (np.bool_, np.float16, "Float16"), (np.int32, np.int64, "Int64"),
              (np.float16, np.float32, "Float32"), (np.float32, np.uint8, "Float32")]


@pytest.mark.parametrize("compiled", [False, True])
def test_two_tensors_promote_as_mindspore(compiled):
    """YOLOv5 adds an int32 grid (ms.numpy.arange) to float32 boxes."""
    add = ms.jit(lambda a, b: a + b) if compiled else (lambda a, b: a + b)
    for a, b, want in PROMOTIONS:
        x, y = ms.Tensor(np.ones(2, a)), ms.Tensor(np.ones(2, b))
        assert str(add(x, y).dtype) == want and str(add(y, x).dtype) == want, (a, b)


def test_yolov5s_small_apis():
    """ops.TupleToArray, dataset.config.set_enable_shared_mem, and
    vision.Decode(to_pil=True) called eagerly in a Python map (YOLOv5's
    MultiScaleTrans); in a pipeline's own map it is refused."""
    import io

    from PIL import Image

    import irc.dataset as ds
    import irc.dataset.vision as vision
    assert ops.TupleToArray()((1, 2, 3)).asnumpy().tolist() == [1, 2, 3]
    ds.config.set_enable_shared_mem(False)
    assert ds.config.get_enable_shared_mem() is False
    ds.config.set_enable_shared_mem(True)
    buf = io.BytesIO()
    Image.fromarray(np.arange(240, dtype=np.uint8).reshape(8, 10, 3)).save(buf, format="PNG")
    raw = np.frombuffer(buf.getvalue(), np.uint8)
    image = vision.Decode(True)(raw)
    assert isinstance(image, Image.Image) and image.size == (10, 8) and image.mode == "RGB"
    rows = ds.NumpySlicesDataset({"raw": [raw]}, shuffle=False)
    total = rows.map(lambda x: np.array(vision.Decode(True)(x)).astype(np.int32).sum(), ["raw"])
    assert [int(r[0]) for r in total.create_tuple_iterator(output_numpy=True)] == [28680]   # MindSpore's
    with pytest.raises(UserError, match="to_pil=True"):
        rows.map(vision.Decode(True), ["raw"])


def test_generator_rows_of_other_dtypes_reach_python_as_they_are():
    """YOLOv5's source yields int8 JPEG bytes in some rows and uint8 mosaics
    in others, which its Python map makes uniform: rows only Python reads
    keep their own dtypes, as MindSpore 2.10 gives them (helper-64); a column
    irc's kernels stack or compute on takes one dtype, and a row it would
    change (uint8 200 as int8 -56) is a located error, not other pixels."""
    import irc.dataset as ds

    class Source:
        def __getitem__(self, i):
            if i % 2 == 0:
                return np.array([1, -2, 3], np.int8), np.array([i], np.int32)
            return np.full((2, 2), 200, np.uint8), np.array([i], np.int32)

        def __len__(self):
            return 4

    def total(image, index):
        return image.astype(np.float32).sum().reshape(1), index

    data = ds.GeneratorDataset(Source(), ["image", "index"], shuffle=False)
    summed = data.map(operations=total, input_columns=["image", "index"], output_columns=["image", "index"])
    assert [float(s[0]) for s, _ in summed.create_tuple_iterator(output_numpy=True)] == [2, 800, 2, 800]
    assert [r[0].dtype for r in data.create_tuple_iterator(output_numpy=True)] == [np.int8, np.uint8] * 2
    with pytest.raises(UserError, match="gets a uint8 row where its first rows were int8"):
        list(data.batch(2).create_tuple_iterator(output_numpy=True))
    fits = ds.GeneratorDataset([(np.array([1.5], np.float64),), (np.array([2], np.int32),)], ["x"], shuffle=False)
    assert [r[0].tolist() for r in fits.batch(2).create_tuple_iterator(output_numpy=True)] == [[[1.5], [2.0]]]


def test_mindspore_1x_resize_bilinear_is_v2_with_its_size():
    """The model zoo's DeepLabv3 builds ``P.ResizeBilinear((h, w), True)``
    (MindSpore 1.x; 2.x removed it): ResizeBilinearV2 with that size, eager
    and compiled."""
    from irc.ops import operations as P
    x = ms.Tensor(np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4))
    want = P.ResizeBilinearV2(True)(x, (8, 8)).asnumpy()
    resize = P.ResizeBilinear((8, 8), True)
    np.testing.assert_array_equal(resize(x).asnumpy(), want)
    np.testing.assert_allclose(ms.jit(lambda t: resize(t))(x).asnumpy(), want, rtol=1e-6)   # ORT's Resize


def test_small_apis_of_the_zoos_nlp_models():
    """TextCNN's ops.Slice, FastText's ParallelMode.MODE_LIST, TinyBERT's
    grad_reducer = F.identity on a tuple of gradients: as MindSpore 2.10."""
    from irc.context import ParallelMode
    from irc.ops import functional as F
    x = ms.Tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    want = [[[13.0, 14.0, 15.0], [17.0, 18.0, 19.0]]]
    assert ops.Slice()(x, (1, 0, 1), (1, 2, -1)).asnumpy().tolist() == want
    assert ms.jit(lambda t: ops.Slice()(t, (1, 0, 1), (1, 2, -1)))(x).asnumpy().tolist() == want
    assert ops.slice(x, (0, 1, 0), (-1, 1, 2)).asnumpy().tolist() == [[[4.0, 5.0]], [[16.0, 17.0]]]
    with pytest.raises(UserError, match="same length"):
        ops.Slice()(x, (0, 0), (1, 1, 1))
    assert ParallelMode.MODE_LIST == ["stand_alone", "data_parallel", "hybrid_parallel",
                                      "semi_auto_parallel", "auto_parallel"]
    grads = (ms.Tensor(np.ones((2, 4), np.float32)), ms.Tensor(np.ones(2, np.float32)))
    assert F.identity(grads) is grads
    # seq2seq imports Lamb and trains with Adam: the import works, a Lamb is refused
    from irc.diagnostics import UnsupportedError
    from irc.nn.optim import Lamb
    with pytest.raises(UnsupportedError, match="nn.Lamb is not supported"):
        nn.Lamb(nn.Dense(2, 2).trainable_params(), 0.1)
    assert nn.Lamb is Lamb


def test_loss_gradients_for_logits_and_labels_as_mindspore(capsys):
    """Eleven losses differentiated for both inputs, and a Model.train step
    whose labels the network computes (YOLOv3's confidence): MindSpore's
    bprops (its SoftmaxCrossEntropyWithLogits kernel: softmax - labels, the
    labels' gradient zeros; the composite losses: the derivative)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "loss_label_grads.py", rel=1e-5, abs=1e-5)


def test_combined_layers_as_mindspore(capsys):
    """nn.Conv2dBnAct / nn.DenseBnAct (RetinaNet's and SSD's blocks): names,
    initial values, outputs in both modes and three steps, as MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "combined_layers.py", rel=1e-5, abs=1e-5)


def test_conv1d_transpose_as_mindspore():
    """nn.Conv1dTranspose (MelGAN's upsampling): MindSpore 2.10's weight
    shape, initial values after set_seed, outputs and input gradients."""
    ms.set_seed(3)
    x = ms.Tensor(np.arange(10, dtype=np.float32).reshape(1, 2, 5) / 10)
    # MindSpore 2.10: weight sum, the first outputs, the first input gradients
    expected = [((1, 3, 10), 0.24837, [0.36934, 0.24057, 0.47775], [-0.06844, -0.18652, -0.18652]),
                ((1, 3, 20), 0.46227, [-0.03129, -0.03473, 0.06073], [-0.03969, -0.03969, -0.03969]),
                ((1, 3, 11), -0.53907, [-0.01549, -0.01932, -0.14859], [0.46206, 0.46206, 0.46206])]
    for kw, (shape, total, first, grad) in zip(
            (dict(stride=2, pad_mode="pad", padding=1, has_bias=True), dict(stride=4, pad_mode="same"),
             dict(stride=1, pad_mode="valid", dilation=2)), expected):
        net = nn.Conv1dTranspose(2, 3, 4, **kw)
        y = net(x)
        assert net.weight.shape == (2, 3, 1, 4) and y.shape == shape
        assert float(net.weight.asnumpy().sum()) == pytest.approx(total, abs=1e-5)
        np.testing.assert_allclose(y.asnumpy().ravel()[:3], first, atol=1e-5)
        np.testing.assert_allclose(ops.GradOperation(get_all=True)(net)(x)[0].asnumpy().ravel()[:3], grad,
                                   atol=1e-5)


def test_math_primitives_as_mindspore(capsys):
    """ops.ACos() and the other attribute-less math primitives (the model
    zoo's ArcFace margin), eagerly and under ms.grad: atan2's gradient on
    the y axis too, as MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "trig_primitives.py", rel=1e-6, abs=1e-6)


def test_a_one_element_tensor_converts_to_a_python_number_as_mindspore():
    """float(loss) of a loss shaped [1] (ArcFace; FasterRCNN's callbacks), under numpy 2
    too; more than one element is MindSpore's ValueError."""
    loss = ms.Tensor(np.array([34.75], np.float32))
    assert (float(loss), int(loss), bool(loss)) == (34.75, 34, True)
    assert float(ms.Tensor(np.array([[3.5]], np.float32))) == 3.5
    two = ms.Tensor(np.array([1.0, 2.0], np.float32))
    for convert in (float, int, bool):
        with pytest.raises(ValueError, match="one element"):
            convert(two)


def test_more_tensor_methods_as_mindspore(capsys):
    """x.all()/x.any() (EcapaTDNN's finite check), isinf, dtype casts by name,
    *_as, dim/nelement, eagerly and jitted, as MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "tensor_methods.py", rel=0, abs=0)


def test_the_model_zoos_most_called_missing_primitives_as_mindspore(capsys):
    """ReverseV2, GatherD, Sort, ReduceProd, Meshgrid, BinaryCrossEntropy,
    L2Loss, Mod, Rint, Size, ScalarToTensor, ScalarCast, LinSpace,
    ScatterNdUpdate and the seeded random primitives, values and gradients
    as MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "zoo_primitives.py", rel=1e-6, abs=1e-6)


def test_the_model_zoos_further_functions_as_mindspore(capsys):
    """ops.range, tensor_dot, repeat_elements (its gradient a gather's along
    axis 1), add_flags, sequence_mask, pixel_shuffle/pixel_unshuffle, values
    and gradients as MindSpore 2.10's."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "zoo_functions.py", rel=1e-6, abs=1e-6)


def test_the_global_seed_and_random_ops_seed_pairs_as_mindspore(capsys):
    """ms.get_seed() None until set; mindspore.common.seed's _get_graph_seed
    counters (the model zoo's research Transformers seed Dropout with them)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "global_seed.py", rel=0, abs=0)


def test_tensors_print_as_mindspore(capsys):
    """print(loss) and print(output) in the model zoo's scripts: repr as
    MindSpore 2.10's printer writes it, str numpy's, np.float64 kept."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "tensor_repr.py", rel=0, abs=0)


def test_a_loss_with_constants_of_its_own_trains_beside_the_networks(capsys):
    """OCRNet's network and its loss each resize with bilinear interpolation
    matrices (large constants): traced separately into one module, the
    loss's overwrote the network's (helper-63).  MindSpore 2.10's losses."""
    import irc.dataset as ds
    from irc.train.callback import LossMonitor

    ms.set_seed(1)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.down = nn.Conv2d(3, 4, 3, stride=2, pad_mode="pad", padding=1)
            self.head = nn.Conv2d(4, 5, 1)

        def construct(self, x):
            y = ops.interpolate(self.down(x), size=(16, 32), mode="bilinear", align_corners=False)
            return self.head(y)

    class Loss(nn.Cell):
        def __init__(self):
            super().__init__()
            self.ce = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

        def construct(self, logits, label):
            logits = ops.interpolate(logits, size=(64, 128), mode="bilinear", align_corners=True)
            return self.ce(ops.transpose(logits, (0, 2, 3, 1)).reshape(-1, 5), label.reshape(-1))

    rng = np.random.RandomState(0)
    x = rng.randn(4, 3, 16, 32).astype(np.float32)
    y = rng.randint(0, 5, (4, 64, 128)).astype(np.int32)
    data = ds.NumpySlicesDataset({"image": x, "label": y}, shuffle=False).batch(2)
    net = Net()
    capsys.readouterr()
    ms.Model(net, loss_fn=Loss(), optimizer=nn.SGD(net.trainable_params(), 0.1)).train(
        1, data, callbacks=[LossMonitor(1)], dataset_sink_mode=False)
    losses = [float(line.rsplit(" ", 1)[1]) for line in capsys.readouterr().out.splitlines() if "loss is" in line]
    np.testing.assert_allclose(losses, [1.6236215829849243, 1.622053861618042], rtol=1e-5)


def test_leaky_relu_splits_its_gradient_at_zero_as_mindspore():
    """MindSpore's LeakyReLU is max(alpha x, x): at x = 0 exactly (zero
    padding, a ReLU before it: RetinaFace's blocks) its gradient is
    (1 + alpha) / 2, as MindSpore 2.10 prints it (helper-65)."""
    x = ms.Tensor(np.array([-1.0, 0.0, 0.0, 2.0], np.float32))
    for alpha, want in ((0.0, [0.0, 0.5, 0.5, 1.0]), (0.1, [0.1, 0.55, 0.55, 1.0])):
        got = ms.grad(lambda t, a=alpha: nn.LeakyReLU(alpha=a)(t).sum())(x).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)

        class Traced(nn.Cell):
            def construct(self, t, a=alpha):
                return ops.leaky_relu(t, a).sum()

        np.testing.assert_allclose(ms.jit(ms.grad(Traced()))(x).asnumpy(), want, rtol=1e-6)


def test_detection_primitives_as_mindspore(capsys):
    """tests/mindspore_style/detection_primitives.py: IOU, ScatterNd,
    CheckValid (the model zoo's CTPN stopped at IOU)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "detection_primitives.py", rel=1e-6, abs=1e-6)


def test_nms_choice_and_dynamic_rnn_as_mindspore(capsys):
    """tests/mindspore_style/nms_choice.py: NMSWithMask (sorted rows, its
    bitonic sort's order of equal scores, 0..N-1, the IoU without the +1),
    RandomChoiceWithMask's shapes, padding and mask, a Cell holding a
    DynamicRNN, and one-hot cross entropy of labels outside the classes
    (the model zoo's CTPN), eager and compiled."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "nms_choice.py", rel=1e-6, abs=1e-6)


def _nms_cases():
    rng = np.random.RandomState(7)
    for k in range(12):
        n = (1, 2, 7, 9, 64, 257, 1000)[k % 7]
        xy = rng.randint(0, 60, (n, 2)).astype(np.float32) + (rng.rand(n, 2).astype(np.float32) if k % 3 else 0)
        wh = rng.randint(0, 30, (n, 2)).astype(np.float32)
        score = (rng.randint(0, 4 if k % 2 else 1000, n) / 7.0).astype(np.float32)   # many ties, or few
        yield np.concatenate([xy, xy + wh, score[:, None]], 1).astype(np.float16 if k == 11 else np.float32), \
            (0.1, 0.3, 0.5, 0.7)[k % 4]


def test_nms_with_mask_compiled_is_the_kernel_step_for_step():
    """The ONNX form (a Scan over the bitonic sort's stages, the pairwise IoU
    in the boxes' dtype, a Scan of the greedy pass) gives the numpy
    reference's rows, order and mask exactly: up to 1000 boxes, equal scores,
    float16.  (The reference gave MindSpore 2.10's outputs on 60 such cases.)"""
    from irc.dialects.nn import nms_sorted_order
    for boxes, threshold in _nms_cases():
        nms = ops.NMSWithMask(threshold)
        eager = [t.asnumpy() for t in nms(ms.Tensor(boxes))]
        compiled = [t.asnumpy() for t in ms.jit(lambda b, nms=nms: nms(b))(ms.Tensor(boxes))]
        for want, got in zip(eager, compiled):
            assert want.dtype == got.dtype and np.array_equal(want, got), (len(boxes), threshold)
        order = nms_sorted_order(boxes[:, 4].copy())
        assert np.array_equal(eager[0], boxes[order]) and eager[1].tolist() == list(range(len(boxes)))
        assert (np.diff(boxes[order, 4].astype(np.float64)) <= 0).all()


def test_nms_with_mask_refuses_as_mindspore():
    with pytest.raises(TypeError, match="iou_threshold"):
        ops.NMSWithMask(1)
    with pytest.raises(UserError, match=r"\[N, 5\]"):
        ops.NMSWithMask(0.5)(ms.Tensor(np.zeros((3, 4), np.float32)))

    class Through(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(5, 5)
            self.nms = ops.NMSWithMask(0.5)

        def construct(self, x):
            return self.nms(self.dense(x))[0].sum()

    net = Through()
    with pytest.raises(UserError, match="cannot train through nn.NMSWithMask"):   # MindSpore: no bprop
        ms.jit(ms.grad(net, None, net.trainable_params()))(ms.Tensor(np.ones((4, 5), np.float32)))


def test_random_choice_with_mask_draws_anew_each_call():
    """irc's own draw (MindSpore's kernel seeds from std::random_device), a
    fresh one per call, eager and compiled: every true element in some
    order, the order changing; with fewer rows than true elements, distinct
    true ones."""
    x = ms.Tensor(np.arange(40).reshape(5, 8) % 3 == 0)
    true = sorted(map(tuple, np.argwhere(x.asnumpy()).tolist()))
    choose = ops.RandomChoiceWithMask(20)

    class Sample(nn.Cell):
        def __init__(self):
            super().__init__()
            self.choose = ops.RandomChoiceWithMask(20)

        def construct(self, t):
            return self.choose(t)

    compiled = ms.jit(Sample())
    for run in (choose, compiled):
        orders = []
        for _ in range(4):
            idx, mask = (t.asnumpy() for t in run(x))
            assert idx.shape == (20, 2) and idx.dtype == np.int32 and mask.tolist() == [True] * 14 + [False] * 6
            assert sorted(map(tuple, idx[:14].tolist())) == true and not idx[14:].any()
            orders.append(idx[:14].tolist())
        assert len({str(o) for o in orders}) > 1
    idx, mask = (t.asnumpy() for t in ops.RandomChoiceWithMask(5)(x))
    assert mask.all() and len(set(map(tuple, idx.tolist()))) == 5 and set(map(tuple, idx.tolist())) <= set(true)
    with pytest.raises(TypeError, match="bool"):
        choose(ms.Tensor(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match="count"):
        ops.RandomChoiceWithMask(0)


def test_dynamic_rnn_is_built_and_refused_when_called():
    """Ascend's DynamicRNN: MindSpore has no CPU or GPU kernel for it; a
    network holding one for its Ascend branch builds, a call is refused at
    the user's line with nn.LSTM as the hint."""
    rnn = ops.DynamicRNN(forget_bias=0.0)
    assert rnn.attrs["forget_bias"] == 0.0 and rnn.attrs["cell_type"] == "LSTM"
    x = ms.Tensor(np.ones((2, 1, 4), np.float32))
    with pytest.raises(UserError) as info:
        rnn(x, ms.Tensor(np.ones((8, 16), np.float32)), ms.Tensor(np.ones(16, np.float32)))
    text = info.value.format()
    assert "DynamicRNN runs only on Ascend" in text and "nn.LSTM" in text and "test_zoo_ops.py:" in text


def test_summary_ops_record_eager_values_as_mindspore(capsys):
    """tests/mindspore_style/summary_ops_eager.py: ops.ScalarSummary and
    TensorSummary called eagerly are written by the next SummaryRecord.record
    (the model zoo's YOLOX makes a ScalarSummary in its loss cell)."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "summary_ops_eager.py")


def test_boxes_and_roi_align_as_mindspore(capsys):
    """tests/mindspore_style/box_roi_align.py: BoundingBoxEncode/Decode,
    ROIAlign and its gradient (eager and GRAPH_MODE), and GRAPH_MODE's
    augmented assignment of a Tensor a Cell holds (what each call added
    stays) beside PyNative's (a new tensor), as the model zoo's Faster R-CNN
    meets them."""
    from printout import prints_as_mindspore
    prints_as_mindspore(capsys, "box_roi_align.py", rel=1e-5, abs=2e-5)


def test_roi_align_in_a_trained_network_and_its_refusals():
    """ROIAlign compiled inside a training step gives the eager value and
    gradient; roi_end_mode=0's gradient is its own forward's (MindSpore
    2.10's ROIAlignGrad takes roi_end_mode 1 whatever the forward's);
    sample_num <= 0 (a grid sized per roi) is refused, and bad arguments
    as MindSpore refuses them."""
    rng = np.random.RandomState(0)
    f = ms.Tensor(rng.randn(2, 3, 6, 8).astype(np.float32))
    rois = ms.Tensor(np.array([[0, 1, 1, 14, 10], [1, 0, 0, 3, 3], [1, 4, 2, 30, 9]], np.float32))
    for mode in (0, 1):
        op = ops.ROIAlign(2, 2, 0.25, 2, mode)
        w = ms.Tensor(np.arange(36, dtype=np.float32).reshape(3, 3, 2, 2))
        loss = lambda x, r, op=op, w=w: (op(x, r) * w).sum()  # noqa: E731
        eager = ms.grad(loss)(f, rois).asnumpy()
        compiled = ms.jit(ms.grad(loss))(f, rois).asnumpy()
        np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-6)
        # the gradient is the forward's transpose: <grad, e> = d/dt loss(f + t e)
        e = rng.randn(2, 3, 6, 8).astype(np.float32)
        step = 1e-2
        numeric = (float(loss(ms.Tensor(f.asnumpy() + step * e), rois).asnumpy())
                   - float(loss(ms.Tensor(f.asnumpy() - step * e), rois).asnumpy())) / (2 * step)
        assert abs(numeric - float((eager * e).sum())) < 1e-2 * max(1.0, abs(numeric))
    with pytest.raises(UserError, match="sample_num"):
        ops.ROIAlign(2, 2, 0.25, 0)(f, rois)
    with pytest.raises(TypeError, match="spatial_scale"):
        ops.ROIAlign(2, 2, 1, 2)
    with pytest.raises(ValueError, match="roi_end_mode"):
        ops.ROIAlign(2, 2, 0.25, 2, 2)


def test_scatter_nd_of_small_integers_compiles():
    """ScatterNd of uint8 / bool updates (Faster R-CNN's RPN labels are
    uint8): one one-hot MatMul in int32, cast back, duplicates summed and
    wrapping as MindSpore 2.10's (200 + 100 -> 44)."""
    idx = ms.Tensor(np.array([[1], [3], [1]], np.int32))
    for dtype, values, want in ((np.uint8, [200, 7, 100], [0, 44, 0, 7, 0]), (np.bool_, [True, False, True],
                                                                          [False, True, False, False, False])):
        up = ms.Tensor(np.array(values, dtype))
        eager = ops.scatter_nd(idx, up, (5,)).asnumpy()
        compiled = ms.jit(lambda i, u: ops.ScatterNd()(i, u, (5,)))(idx, up).asnumpy()
        assert eager.dtype == compiled.dtype == dtype and eager.tolist() == compiled.tolist() == want


def test_roi_align_in_chunks_of_rois_gives_the_same_values_and_gradients(monkeypatch):
    """At Faster R-CNN's full size the rows' product would take 2.9 GB: the
    rois go in chunks (here two a chunk), each the same arithmetic."""
    from irc.ops import derived
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((2, 6, 12, 14)).astype(np.float32))
    rois = ms.Tensor(np.array([[0, 1, 1, 9, 8], [1, 0, 2, 13, 11], [0, 3, 0, 6, 5], [1, 2, 2, 10, 10],
                               [0, 0, 0, 13, 11]], np.float32))
    op = ops.ROIAlign(3, 2, 0.5, 2)

    def values_and_gradient():
        return op(x, rois).asnumpy(), ms.grad(lambda f: (op(f, rois) ** 2).sum())(x).asnumpy()
    whole = values_and_gradient()
    monkeypatch.setattr(derived, "_ROI_CHUNK_ELEMENTS", 3 * 6 * 14 * 2)
    chunked = values_and_gradient()
    np.testing.assert_array_equal(chunked[0], whole[0])
    np.testing.assert_allclose(chunked[1], whole[1], rtol=1e-6, atol=1e-6)
