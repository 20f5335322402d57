"""Host pipeline throughput: irc's engine vs a hand-written per-sample loop.

Two chains, on the shipped sample data, over several epochs:

* **lenet** (seed 002): MNIST 28x28 -> Resize 32x32 LINEAR -> Rescale(1/255)
  -> Rescale(1/0.3081, -0.1307/0.3081) -> HWC2CHW, TypeCast(int32) on the
  label, shuffle(10000), batch(32, drop_remainder=True);
* **imagefolder** (seed 000): ImageFolder JPEGs -> Decode + RandomResizedCrop
  (or RandomCropDecodeResize) -> RandomHorizontalFlip -> Normalize ->
  HWC2CHW, TypeCast(int32), batch(32).

Beside irc the same work is done by a plain loop over samples with numpy and
Pillow (the code a user would write by hand), in the same process and run,
by MindSpore 2.10's engine (same chain, same workers) in a subprocess of
the same invocation when ``--mindspore-python`` names an interpreter that has
it (default ``/tmp/msv/bin/python`` when present), and by a PyTorch
DataLoader (torchvision.transforms.v2, ``num_workers`` = irc's workers, the
same batches) when ``--torch-python`` names one with torchvision (default
``/tmp/tvv/bin/python``).  The last table alternates irc, irc with offload
and the peers, several rounds, medians.  ``--folder DIR`` runs the
ImageFolder chain on other JPEGs; ``--folder imagenet-like`` on 300 generated
JPEGs of ImageNet's size (use it with ``--size 224``).

The last table compares worker threads with worker processes on the
per-sample part of the ImageFolder chain (decode + crop + resize), the
measurement behind the engine's choice of threads.

    python benchmarks/pipeline.py [--epochs 20] [--workers 2] [--size 224] [--folder DIR|imagenet-like]
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import irc  # noqa: E402
import irc.dataset as ds  # noqa: E402
import irc.dataset.transforms as transforms  # noqa: E402
import irc.dataset.vision as vision  # noqa: E402
from irc.backends.offload_runner import tail_stays_on_host  # noqa: E402
from irc.backends.settings import settings  # noqa: E402
from irc.dataset import config  # noqa: E402
from irc.dataset.vision import Inter  # noqa: E402
from peers import MINDSPORE_PYTHON, TORCH_PYTHON, run_peer  # noqa: E402

MNIST = os.path.join(ROOT, "samples", "data", "mnist", "train")
FOLDER = os.path.join(ROOT, "samples", "data", "imagefolder")
MEAN, STD = [0.485 * 255, 0.456 * 255, 0.406 * 255], [0.229 * 255, 0.224 * 255, 0.225 * 255]


# =============================================================================
# irc pipelines
# =============================================================================

def lenet_pipeline(workers: int, offload: bool = False):
    """Seed 002's chain; with offload the Rescale/Rescale/HWC2CHW tail and the
    TypeCast run as one onnxruntime call per batch inside the iterator."""
    config.set_auto_offload(offload)
    d = ds.MnistDataset(MNIST)
    d = d.map(input_columns="label", operations=transforms.TypeCast(irc.int32), num_parallel_workers=workers)
    d = d.map(input_columns="image", operations=vision.Resize((32, 32), interpolation=Inter.LINEAR),
              num_parallel_workers=workers)
    d = d.map(input_columns="image", operations=vision.Rescale(1.0 / 255.0, 0.0), num_parallel_workers=workers)
    d = d.map(input_columns="image", operations=vision.Rescale(1 / 0.3081, -1 * 0.1307 / 0.3081),
              num_parallel_workers=workers)
    d = d.map(input_columns="image", operations=vision.HWC2CHW(), num_parallel_workers=workers)
    d = d.shuffle(buffer_size=10000)
    return d.batch(32, drop_remainder=True)


def folder_pipeline(workers: int, size: int, fused: bool, offload: bool = False):
    """Seed 000's chain; with offload its Normalize/HWC2CHW tail (and the
    flip) run as one onnxruntime call per batch."""
    config.set_auto_offload(offload)
    d = ds.ImageFolder(FOLDER, shuffle=True)
    crop = [vision.RandomCropDecodeResize(size)] if fused else [vision.Decode(), vision.RandomResizedCrop(size)]
    ops = crop + [vision.RandomHorizontalFlip(prob=0.5), vision.Normalize(mean=MEAN, std=STD), vision.HWC2CHW()]
    d = d.map(operations=transforms.TypeCast(irc.int32), input_columns="label", num_parallel_workers=workers)
    d = d.map(operations=ops, input_columns="image", num_parallel_workers=workers)
    return d.batch(32)


def run_irc(dataset, epochs: int, warmup: int = 0, tail_on_onnxruntime: bool = False) -> tuple[int, float]:
    """(images, seconds) of ``epochs`` epochs after ``warmup`` untimed ones
    (the peers' measure: their workers start in the first epoch);
    ``tail_on_onnxruntime``: an offloaded tail through onnxruntime even with
    no accelerator (by default it then stays on the host)."""
    settings.offload_tail_on_cpu = tail_on_onnxruntime
    it = dataset.create_tuple_iterator(num_epochs=warmup + epochs, output_numpy=True)
    settings.offload_tail_on_cpu = False
    for _ in range(warmup):
        for _row in it:
            pass
    start = time.perf_counter()
    images = 0
    for _ in range(epochs):
        for image, _label in it:
            images += len(image)
    it.stop()
    return images, time.perf_counter() - start


# =============================================================================
# MindSpore's engine on the same chains (a subprocess: its own interpreter)
# =============================================================================

# What both peer scripts share: their arguments (see _run_peer) and the
# timing, the same as run_irc's: a warm-up epoch (it starts the workers),
# then ``epochs`` timed ones over ``batches``.
_PEER_ARGS = f"""
chain, data, size, workers, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
MEAN, STD = {MEAN!r}, {STD!r}
"""

_PEER_TIMING = r"""
for _ in batches:      # warm-up epoch
    pass
n, start = 0, time.perf_counter()
for _ in range(epochs):
    for image, _label in batches:
        n += len(image)
print(n, time.perf_counter() - start)
"""

MINDSPORE_SCRIPT = r"""
import sys, time
import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
from mindspore.dataset.vision import Inter
""" + _PEER_ARGS + r"""
ds.config.set_seed(1)
if chain == "lenet":
    d = ds.MnistDataset(data)
    d = d.map(input_columns="label", operations=transforms.TypeCast(ms.int32), num_parallel_workers=workers)
    for op in (vision.Resize((32, 32), interpolation=Inter.LINEAR), vision.Rescale(1.0 / 255.0, 0.0),
               vision.Rescale(1 / 0.3081, -1 * 0.1307 / 0.3081), vision.HWC2CHW()):
        d = d.map(input_columns="image", operations=op, num_parallel_workers=workers)
    d = d.shuffle(buffer_size=10000).batch(32, drop_remainder=True)
else:
    d = ds.ImageFolderDataset(data, num_parallel_workers=workers, shuffle=True)
    d = d.map(operations=transforms.TypeCast(ms.int32), input_columns="label", num_parallel_workers=workers)
    d = d.map(operations=[vision.RandomCropDecodeResize(size), vision.RandomHorizontalFlip(prob=0.5),
                          vision.Normalize(mean=MEAN, std=STD), vision.HWC2CHW()],
              input_columns="image", num_parallel_workers=workers)
    d = d.batch(32)
batches = d.create_tuple_iterator(num_epochs=epochs + 1, output_numpy=True)
""" + _PEER_TIMING


def run_mindspore(python: str, chain: str, data: str, size: int, workers: int, epochs: int):
    """(images, seconds) of MindSpore's engine, or None without MindSpore."""
    return _run_peer("MindSpore", MINDSPORE_SCRIPT, python, chain, data, size, workers, epochs)


def _run_peer(name: str, script: str, python: str, chain: str, data: str, size: int, workers: int,
              epochs: int):
    out = run_peer(name, python, ["-c", script, chain, data, str(size), str(workers), str(epochs)])
    if out is None:
        return None
    n, seconds = out.split()[-2:]
    return int(n), float(seconds)


# =============================================================================
# a PyTorch DataLoader on the same chains (torchvision.transforms.v2)
# =============================================================================

TORCH_SCRIPT = r"""
import os, sys, time
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from torchvision import datasets
from torchvision.transforms import v2
""" + _PEER_ARGS + r"""
torch.manual_seed(1)

class Mnist(Dataset):
    def __init__(self, d):
        raw = lambda name, header: np.fromfile(os.path.join(d, name), dtype=np.uint8)[header:]
        self.images = torch.from_numpy(raw("train-images-idx3-ubyte", 16).reshape(-1, 1, 28, 28).copy())
        self.labels = raw("train-labels-idx1-ubyte", 8).astype(np.int32)
        self.tf = v2.Compose([v2.Resize((32, 32), interpolation=v2.InterpolationMode.BILINEAR, antialias=False),
                              v2.ToDtype(torch.float32), v2.Normalize([0.1307 * 255], [0.3081 * 255])])
    def __len__(self):
        return len(self.labels)
    def __getitem__(self, i):
        return self.tf(self.images[i]), self.labels[i]

if chain == "lenet":
    d = Mnist(data)
    batches = DataLoader(d, batch_size=32, shuffle=True, drop_last=True, num_workers=workers,
                         persistent_workers=workers > 0)
else:
    tf = v2.Compose([v2.RandomResizedCrop(size), v2.RandomHorizontalFlip(0.5), v2.PILToTensor(),
                     v2.ToDtype(torch.float32), v2.Normalize(MEAN, STD)])
    d = datasets.ImageFolder(data, transform=tf)
    batches = DataLoader(d, batch_size=32, shuffle=True, num_workers=workers, persistent_workers=workers > 0)
""" + _PEER_TIMING


def run_torch(python: str, chain: str, data: str, size: int, workers: int, epochs: int):
    """(images, seconds) of a torch DataLoader, or None without torchvision."""
    return _run_peer("torch DataLoader", TORCH_SCRIPT, python, chain, data, size, workers, epochs)


# =============================================================================
# hand-written per-sample loops (numpy + Pillow)
# =============================================================================

def _idx(path: str, header: int) -> np.ndarray:
    return np.fromfile(path, dtype=np.uint8)[header:]


def hand_lenet(epochs: int, rng: np.random.Generator) -> tuple[int, float]:
    start = time.perf_counter()
    images = _idx(os.path.join(MNIST, "train-images-idx3-ubyte"), 16).reshape(-1, 28, 28)
    labels = _idx(os.path.join(MNIST, "train-labels-idx1-ubyte"), 8)
    count = 0
    for _ in range(epochs):
        rows = []
        for i in rng.permutation(len(labels)):
            img = np.asarray(Image.fromarray(images[i]).resize((32, 32), Image.BILINEAR))
            x = img.astype(np.float32) * np.float32(1 / 255)
            x = x * np.float32(1 / 0.3081) + np.float32(-0.1307 / 0.3081)
            rows.append((x[None], np.int32(labels[i])))
        for b in range(len(rows) // 32):
            chunk = rows[b * 32:(b + 1) * 32]
            batch = np.stack([r[0] for r in chunk]), np.array([r[1] for r in chunk])
            count += len(batch[0])
    return count, time.perf_counter() - start


def _folder_files():
    classes = sorted(os.listdir(FOLDER))
    return [(os.path.join(FOLDER, c, f), i) for i, c in enumerate(classes)
            for f in sorted(os.listdir(os.path.join(FOLDER, c)))]


def _random_resized_crop(img: Image.Image, size: int, rng) -> Image.Image:
    w, h = img.size
    area = w * h
    for _ in range(10):
        target = area * rng.uniform(0.08, 1.0)
        ratio = np.exp(rng.uniform(np.log(3 / 4), np.log(4 / 3)))
        cw, ch = int(round(np.sqrt(target * ratio))), int(round(np.sqrt(target / ratio)))
        if 0 < cw <= w and 0 < ch <= h:
            top, left = rng.integers(0, h - ch + 1), rng.integers(0, w - cw + 1)
            return img.resize((size, size), Image.BILINEAR, box=(left, top, left + cw, top + ch))
    return img.resize((size, size), Image.BILINEAR)


def hand_sample(path: str, size: int, rng) -> np.ndarray:
    with open(path, "rb") as f:
        img = Image.open(io.BytesIO(f.read())).convert("RGB")
    x = np.asarray(_random_resized_crop(img, size, rng))
    if rng.random() < 0.5:
        x = x[:, ::-1]
    x = (x.astype(np.float32) - np.float32(MEAN)) / np.float32(STD)
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def hand_folder(epochs: int, size: int, rng) -> tuple[int, float]:
    start = time.perf_counter()
    files = _folder_files()
    count = 0
    for _ in range(epochs):
        batch = []
        for path, label in files:
            batch.append((hand_sample(path, size, rng), np.int32(label)))
            if len(batch) == 32:
                count += len(np.stack([b[0] for b in batch]))
                batch = []
        if batch:
            count += len(np.stack([b[0] for b in batch]))
    return count, time.perf_counter() - start


# =============================================================================
# threads vs processes on the per-sample work
# =============================================================================

def _decode_crop(args):
    path, size, seed = args
    return hand_sample(path, size, np.random.default_rng(seed)).shape


def worker_kinds(size: int, workers: int, rounds: int) -> list[tuple[str, float]]:
    files = [p for p, _ in _folder_files()] * rounds
    jobs = [(p, size, i) for i, p in enumerate(files)]
    out = []
    start = time.perf_counter()
    for j in jobs:
        _decode_crop(j)
    out.append(("1 thread (inline)", len(jobs) / (time.perf_counter() - start)))
    for name, cls in (("threads", ThreadPoolExecutor), ("processes", ProcessPoolExecutor)):
        with cls(workers) as pool:
            list(pool.map(_decode_crop, jobs[:workers * 2]))     # start the workers
            start = time.perf_counter()
            list(pool.map(_decode_crop, jobs, chunksize=8))
            out.append((f"{workers} {name}", len(jobs) / (time.perf_counter() - start)))
    return out


def op_costs(size: int) -> list[tuple[str, float]]:
    """Mean per-sample cost of the ops that dominate the ImageFolder chain,
    with BLAS on one thread as the engine runs them."""
    from irc.backends.host_engine import _BLAS
    _BLAS.enter()
    try:
        return _op_costs(size)
    finally:
        _BLAS.exit()


def _op_costs(size: int) -> list[tuple[str, float]]:
    from irc.ir.registry import get
    datas = [open(p, "rb").read() for p, _ in _folder_files()]
    decode, rrc = get("vision.Decode"), get("vision.RandomResizedCrop")
    attrs = rrc.normalize_attrs({"size": [size, size]})
    draws = np.random.default_rng(0).random((len(datas), rrc.num_draws(attrs)))

    def timed(fn):
        start = time.perf_counter()
        out = [fn(i, d) for i, d in enumerate(datas)]
        return out, (time.perf_counter() - start) / len(datas) * 1e6

    images, t_decode = timed(lambda i, d: decode.host_sample_fn([d], {}, None)[0])
    _, t_rrc = timed(lambda i, d: rrc.host_sample_fn([images[i]], attrs, draws[i]))
    _, t_pil_decode = timed(lambda i, d: np.asarray(Image.open(io.BytesIO(d)).convert("RGB")))
    rng = np.random.default_rng(0)
    _, t_pil_rrc = timed(lambda i, d: np.asarray(_random_resized_crop(Image.fromarray(images[i]), size, rng)))
    return [("irc vision.Decode", t_decode), (f"irc vision.RandomResizedCrop({size})", t_rrc),
            ("Pillow decode", t_pil_decode), (f"Pillow crop + resize({size})", t_pil_rrc)]


# =============================================================================

def imagenet_like_folder(dest: str, count: int = 300, classes: int = 3, seed: int = 0) -> str:
    """``count`` JPEGs the size of ImageNet's (300-500 px a side, quality 90,
    ~50-100 KB: smooth colour fields, edges and sensor-like noise) in
    ``classes`` class folders under ``dest``; the shipped sample's images
    are 40-80 px, far cheaper to decode than what users train on."""
    rng = np.random.default_rng(seed)
    for k in range(count):
        h, w = (int(v) for v in rng.integers(300, 501, 2))
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        image = np.empty((h, w, 3), np.float32)
        for c in range(3):
            fy, fx, phase = rng.uniform(0.002, 0.03, 2).tolist() + [rng.uniform(0, 6.3)]
            image[..., c] = 128 + 90 * np.sin(fy * yy + fx * xx + phase)
        cy, cx, r = rng.integers(0, h), rng.integers(0, w), rng.integers(30, 150)
        image[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] *= 0.5          # an object's edge
        image += rng.normal(0, 6, image.shape)
        folder = os.path.join(dest, f"class{k % classes}")
        os.makedirs(folder, exist_ok=True)
        Image.fromarray(np.clip(image, 0, 255).astype(np.uint8)).save(
            os.path.join(folder, f"{k:04d}.jpg"), quality=90)
    return dest


def table(title: str, rows: list[tuple[str, str]]) -> str:
    width = max(len(r[0]) for r in rows)
    lines = [title, "-" * len(title)]
    lines += [f"  {name.ljust(width)}  {value:>14}" for name, value in rows]
    return "\n".join(lines)


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:,.0f} img/s"


def versus_peers(args, chain: str) -> list[tuple[str, str]]:
    """irc, irc with offload, MindSpore and a torch DataLoader on one chain,
    the same workers, alternated for ``--repeats`` rounds: medians and ratios."""
    if chain == "lenet":
        data, size, epochs = MNIST, 32, args.epochs
        build = lambda offload: lenet_pipeline(args.workers, offload)     # noqa: E731
    else:
        data, size, epochs = FOLDER, args.size, args.folder_epochs
        build = lambda offload: folder_pipeline(args.workers, args.size, True, offload)     # noqa: E731
    runs = {"irc": lambda: run_irc(build(False), epochs, warmup=1),
            "irc with offload": lambda: run_irc(build(True), epochs, warmup=1),
            "irc with offload, tail on onnxruntime": lambda: run_irc(build(True), epochs, warmup=1,
                                                                     tail_on_onnxruntime=True),
            "MindSpore 2.10": lambda: run_mindspore(args.mindspore_python, chain, data, size, args.workers, epochs),
            "torch DataLoader": lambda: run_torch(args.torch_python, chain, data, size, args.workers, epochs)}
    rates: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, run in runs.items():
            result = run()
            if result:
                rates[name].append(result[0] / result[1])
    config.set_auto_offload(False)
    medians = {name: float(np.median(r)) for name, r in rates.items() if r}
    rows = [(f"{name}, workers={args.workers}, median of {len(rates[name])}", f"{m:,.0f} img/s")
            for name, m in medians.items()]
    where = "the host: no accelerator" if tail_stays_on_host() else "the accelerator"
    rows.append((f"irc with offload (tail on {where}) / irc",
                 f"{medians['irc with offload'] / medians['irc']:.2f}x"))
    rows.append(("irc with offload, tail on onnxruntime / irc",
                 f"{medians['irc with offload, tail on onnxruntime'] / medians['irc']:.2f}x"))
    for peer in ("MindSpore 2.10", "torch DataLoader"):
        if peer in medians:
            rows.append((f"irc / {peer}", f"{medians['irc'] / medians[peer]:.2f}x"))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=20, help="epochs of the LeNet chain (default 20)")
    ap.add_argument("--folder-epochs", type=int, default=3, help="epochs of the ImageFolder chain")
    ap.add_argument("--workers", type=int, default=2, help="num_parallel_workers of the maps")
    ap.add_argument("--size", type=int, default=32, help="crop size (the shipped sample uses 32) of the ImageFolder chain")
    ap.add_argument("--no-worker-kinds", action="store_true", help="skip the threads/processes table")
    ap.add_argument("--folder", default=None,
                    help="an ImageFolder of JPEGs (default: the shipped sample); 'imagenet-like': "
                         "300 generated JPEGs of ImageNet's size, 300-500 px")
    ap.add_argument("--mindspore-python", default=MINDSPORE_PYTHON,
                    help="an interpreter with MindSpore 2.10 ('' to skip MindSpore)")
    ap.add_argument("--torch-python", default=TORCH_PYTHON,
                    help="an interpreter with torch and torchvision ('' to skip the DataLoader)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved irc/peer rounds (medians)")
    args = ap.parse_args(argv)
    global FOLDER
    if args.folder == "imagenet-like":
        FOLDER = imagenet_like_folder(tempfile.mkdtemp(prefix="irc-imagenet-like-"))
    elif args.folder:
        FOLDER = os.path.abspath(args.folder)
    config.set_seed(1)
    rng = np.random.default_rng(1)

    # warm-up: file caches, lazy imports, resize tables
    run_irc(lenet_pipeline(args.workers), 1)
    hand_lenet(1, rng)
    rows = []
    for workers in sorted({1, args.workers}):
        n, t = run_irc(lenet_pipeline(workers), args.epochs)
        rows.append((f"irc, num_parallel_workers={workers}", rate(n, t)))
    from irc.backends.settings import settings as _settings
    chosen, _settings.device_target = _settings.device_target, "CPU"
    try:      # this row alone on the CPU: the comparisons below use the accelerator where there is one
        run_irc(lenet_pipeline(1, offload=True), 1, tail_on_onnxruntime=True)
        n, t = run_irc(lenet_pipeline(1, offload=True), args.epochs, tail_on_onnxruntime=True)
    finally:
        _settings.device_target = chosen
    rows.append(("irc with offload (tail on onnxruntime CPU), workers=1", rate(n, t)))
    config.set_auto_offload(False)
    n, t = hand_lenet(args.epochs, rng)
    rows.append(("hand loop (numpy + Pillow, per sample)", rate(n, t)))
    ms = run_mindspore(args.mindspore_python, "lenet", MNIST, 32, args.workers, args.epochs)
    if ms:
        rows.append((f"MindSpore 2.10 engine, workers={args.workers} (same run)", rate(*ms)))
    print(table(f"LeNet chain (seed 002): MNIST 28x28 -> 32x32, shuffle 10000, batch 32; "
                f"{args.epochs} epochs of {lenet_pipeline(1).get_dataset_size() * 32} images", rows))
    print()

    rows = []
    for fused in (False, True):
        name = "RandomCropDecodeResize" if fused else "Decode + RandomResizedCrop"
        for workers in sorted({1, args.workers}):
            n, t = run_irc(folder_pipeline(workers, args.size, fused), args.folder_epochs)
            rows.append((f"irc {name}, workers={workers}", rate(n, t)))
    n, t = hand_folder(args.folder_epochs, args.size, rng)
    rows.append(("hand loop (Pillow decode/crop/resize, numpy)", rate(n, t)))
    print(table(f"ImageFolder chain (seed 000): JPEG -> crop {args.size}x{args.size}, flip, normalize, "
                f"batch 32; {args.folder_epochs} epochs of {len(_folder_files())} images", rows))
    print("  per sample, irc's host ops (OPS.md semantics: OpenCV INTER_LINEAR; OpenCV itself when installed) vs Pillow "
          "(antialiased when shrinking):")
    for name, us in op_costs(args.size):
        print(f"    {name:<40} {us:8.0f} us")

    for chain, title in (("lenet", "LeNet chain"), ("folder", f"ImageFolder chain at {args.size}")):
        print()
        print(table(f"{title}: irc, irc with offload and the peers alternated, "
                    f"{args.workers} workers, a warm-up epoch each", versus_peers(args, chain)))

    if not args.no_worker_kinds:
        print()
        kinds = worker_kinds(args.size, args.workers, rounds=3)
        print(table(f"Per-sample work (decode + crop + resize {args.size}) by worker kind",
                    [(name, f"{r:,.0f} img/s") for name, r in kinds]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
