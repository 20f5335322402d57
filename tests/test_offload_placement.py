"""Where an offloaded tail runs: on the accelerator when there is one; with
none (the CPU only) on the host's kernels, which are the CPU's faster form
of it, the iterator still listing the offloaded maps as MindSpore's does."""
import re

import numpy as np

import irc
import irc.dataset as ds
import irc.dataset.transforms as T
import irc.dataset.vision as vision
from irc.backends import offload_runner
from irc.backends.host_engine import HostEngine
from irc.backends.offload_runner import OffloadEngine, TailOnHostEngine, tail_stays_on_host
from irc.backends.runtime import CPU, CUDA
from irc.backends.settings import settings


def chain(offload):
    d = ds.MnistDataset("samples/data/mnist/train", num_samples=96, shuffle=False)
    d = d.map(T.TypeCast(irc.int32), input_columns="label", offload=offload)
    ops = [vision.RandomHorizontalFlip(), vision.Rescale(1 / 255, 0), vision.HWC2CHW()]
    return d.map(ops, input_columns="image", offload=offload).batch(32)


def epoch(dataset):
    ds.config.set_seed(7)
    it = dataset.create_dict_iterator(num_epochs=1, output_numpy=True)
    return it, [row for row in it]


def test_with_no_accelerator_the_tail_runs_on_the_host():
    irc.set_context(device_target="CPU")
    assert tail_stays_on_host()
    assert isinstance(chain(True)._iteration_engine(), TailOnHostEngine)
    assert type(chain(False)._iteration_engine()) is HostEngine
    on_host, host_rows = epoch(chain(True))
    settings.offload_tail_on_cpu = True
    assert isinstance(chain(True)._iteration_engine(), OffloadEngine)
    on_ort, ort_rows = epoch(chain(True))
    _, plain_rows = epoch(chain(False))
    # the same maps listed, the same data (draws included) as onnxruntime's tail and as no offload
    listed = [(m.col_idxs, sorted(m.me_ops)) for m in on_host.offload_model.transform_list]
    assert listed == [(m.col_idxs, sorted(m.me_ops)) for m in on_ort.offload_model.transform_list]
    assert listed == [([1], ["transforms.TypeCast"]),
                      ([0], ["vision.HWC2CHW", "vision.RandomHorizontalFlip", "vision.Rescale"])]
    assert len(host_rows) == 3
    for a, b, c in zip(host_rows, ort_rows, plain_rows):
        for k in a:
            assert a[k].dtype == b[k].dtype == c[k].dtype
            np.testing.assert_array_equal(a[k], b[k])
            np.testing.assert_array_equal(a[k], c[k])


def test_an_accelerator_takes_the_tail(monkeypatch):
    monkeypatch.setattr(offload_runner, "providers_for", lambda target=None: [CUDA, CPU])
    assert not tail_stays_on_host()
    monkeypatch.setattr(offload_runner, "providers_for", lambda target=None: [CPU])
    assert tail_stays_on_host()


def test_the_tail_kept_on_the_host_runs_as_if_never_offloaded():
    """Per batch where the host runs it per batch (maps-after-batch): the
    offloaded maps keep no @device placement that would pin them per row."""
    from irc.compiler import ITERATE, ITERATE_ON_HOST, compile_dataset
    from irc.ir.text import print_module

    def host_text(module):      # the map's own offload flag aside
        return re.sub(r", offload = (true|false)", "", print_module(module).removeprefix("# auto_offload: true\n"))
    kept = compile_dataset(chain(True), ITERATE_ON_HOST).module
    plain = compile_dataset(chain(False), ITERATE).module
    assert "offload" not in kept.graphs and "@device" not in print_module(kept)
    assert host_text(kept) == host_text(plain)
