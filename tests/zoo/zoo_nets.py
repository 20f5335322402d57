"""The model zoo's ResNet and MobileNetV2 (copies under ResNet/ and
MobileNetV2/), built and fed one way, whichever framework ``mindspore``
names: real MindSpore (make_mindspore_reference.py writes the reference
numbers) or irc (tests/test_model_zoo_nets.py compares with them).

ResNet draws its weights from numpy's global generator (kaiming_normal), so
the same ``np.random.seed`` gives both frameworks the same weights.
MobileNetV2's layers first draw from MindSpore's own generator, so its
weights are set afterwards from a seeded generator, the same in both; both
nets get random BatchNorm statistics so evaluation mode is not the identity.
"""
import importlib
import os
import sys
import zlib

import numpy as np

ZOO = os.path.dirname(os.path.abspath(__file__))
NETS = ("resnet18", "resnet50", "mobilenet_v2")
INPUT_SHAPE = (2, 3, 32, 32)
CLASSES = 10


def _zoo_module(folder: str, name: str):
    """Import ``src.<name>`` of a zoo folder (each folder has its own ``src``)."""
    for key in [k for k in sys.modules if k == "src" or k.startswith("src.")]:
        del sys.modules[key]
    sys.path.insert(0, os.path.join(ZOO, folder))
    try:
        return importlib.import_module(f"src.{name}")
    finally:
        sys.path.remove(os.path.join(ZOO, folder))


def build(name: str):
    """The network, in evaluation mode, with its reference weights."""
    np.random.seed(1)
    if name in ("resnet18", "resnet50"):
        net = getattr(_zoo_module("ResNet", "resnet"), name)(CLASSES)
    else:
        m = _zoo_module("MobileNetV2", "mobilenetV2")
        backbone = m.MobileNetV2Backbone()
        head = m.MobileNetV2Head(input_channel=backbone.out_channels, num_classes=CLASSES)
        net = m.mobilenet_v2(backbone, head)
        _set(net, _random_weight)
    _set(net, _random_batchnorm)
    net.set_train(False)
    return net


def _rng(name: str):
    return np.random.default_rng([7, zlib.crc32(name.encode())])


def _random_weight(name: str, shape: tuple):
    if name.endswith(("weight",)) and len(shape) >= 2:
        fan_in = int(np.prod(shape[1:]))
        return _rng(name).standard_normal(shape) * np.sqrt(2.0 / fan_in)
    if name.endswith("bias"):
        return _rng(name).standard_normal(shape) * 0.1
    return None


def _random_batchnorm(name: str, shape: tuple):
    rng = _rng(name)
    if name.endswith(("moving_mean", "beta")):
        return rng.standard_normal(shape) * 0.1
    if name.endswith(("moving_variance", "gamma")):
        return rng.uniform(0.5, 1.5, shape)
    return None


def _set(net, values) -> None:
    from mindspore import Tensor
    for name, p in net.parameters_and_names():
        v = values(name, tuple(p.shape))
        if v is not None:
            p.set_data(Tensor(np.asarray(v, np.float32)))


def inputs() -> np.ndarray:
    return np.random.default_rng(11).standard_normal(INPUT_SHAPE).astype(np.float32)


def parameter_digest(net) -> list:
    """[name, shape, sum, sum of squares] per parameter, in the net's order."""
    return [[name, list(p.shape), float(np.asarray(p.asnumpy(), np.float64).sum()),
             float(np.square(np.asarray(p.asnumpy(), np.float64)).sum())]
            for name, p in net.parameters_and_names()]
