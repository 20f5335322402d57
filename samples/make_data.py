"""Regenerate the sample data sets under ``samples/data/`` (byte-identically),
or write CIFAR-10 files of the full size MindSpore's reader needs.

    python samples/make_data.py                      # samples/data/
    python samples/make_data.py --cifar10-full DIR   # DIR/data_batch_1..5.bin, test_batch.bin

* ``mnist/``: real MNIST idx files made from scikit-learn's bundled UCI 8x8
  handwritten digits (1,797 images), upscaled to 20x20 and centred in a
  28x28 canvas as MNIST does; 1,500 train / 297 test.
* ``cifar10/``: real CIFAR-10 binary files (1 label byte + 3,072 bytes of
  R, G, B planes per record) of synthetic 32x32 shape images, 10 classes;
  1,000 train / 200 test.
* ``imagefolder/<class>/*.jpg``: 3 classes x 20 JPEG images of 40-80 pixels.

MindSpore's ``Cifar10Dataset`` reads exactly 10,000 records from every
``.bin`` file (its ``cifar_op.cc``; a shorter file is "Invalid cifar10
file"), so it cannot read the small shipped files, and 2 x 30 MB do not
belong in git.  ``--cifar10-full DIR`` writes CIFAR-10's own layout at full
size from the same generator: 10,000 records per file, 1,000 per class; the
shipped files are the first 1,000 / 200 records of ``data_batch_1.bin`` /
``test_batch.bin``.

Everything is drawn from fixed seeds with numpy only (Pillow encodes the
JPEGs), so a rerun writes the same bytes.  scikit-learn is needed only here.
"""
from __future__ import annotations

import functools
import io
import shutil
import struct
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"

MNIST_TRAIN = 1500
CIFAR_FILE_RECORDS = 10_000     # per .bin file, as MindSpore's reader requires
# file -> (seed, records shipped in samples/data/cifar10; the first ones of the full file)
CIFAR_FILES = {"data_batch_1.bin": (1, 1000), "data_batch_2.bin": (12, 0),
               "data_batch_3.bin": (13, 0), "data_batch_4.bin": (14, 0),
               "data_batch_5.bin": (15, 0), "test_batch.bin": (2, 200)}
CIFAR_CLASSES = ["circle", "square", "triangle", "cross", "ring",
                 "diamond", "hstripes", "vstripes", "checker", "dot_grid"]
FOLDER_CLASSES = ["disc", "bars", "triangle"]
FOLDER_PER_CLASS = 20


# -----------------------------------------------------------------------------
# helpers

def bilinear(img: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """Half-pixel-centre bilinear resize of a 2-D float image (numpy only)."""
    h, w = img.shape

    def taps(n_in, n_out):
        pos = np.clip((np.arange(n_out) + 0.5) * n_in / n_out - 0.5, 0, n_in - 1)
        i0 = np.floor(pos).astype(int)
        i1 = np.minimum(i0 + 1, n_in - 1)
        return i0, i1, pos - i0

    y0, y1, fy = taps(h, out_h)
    x0, x1, fx = taps(w, out_w)
    rows = img[:, x0] * (1 - fx) + img[:, x1] * fx
    return rows[y0] * (1 - fy)[:, None] + rows[y1] * fy[:, None]


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


# -----------------------------------------------------------------------------
# MNIST

def idx_images(images: np.ndarray) -> bytes:
    n, rows, cols = images.shape
    return struct.pack(">IIII", 0x00000803, n, rows, cols) + images.astype(np.uint8).tobytes()


def idx_labels(labels: np.ndarray) -> bytes:
    return struct.pack(">II", 0x00000801, len(labels)) + labels.astype(np.uint8).tobytes()


def make_mnist() -> None:
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = np.zeros((len(digits.images), 28, 28), np.float64)
    for i, d in enumerate(digits.images):              # 0..16, ink high
        images[i, 4:24, 4:24] = bilinear(d.astype(np.float64), 20, 20)
    images = np.clip(np.rint(images * (255.0 / 16.0)), 0, 255).astype(np.uint8)
    labels = digits.target.astype(np.uint8)

    order = np.random.default_rng(20240601).permutation(len(images))
    train, test = order[:MNIST_TRAIN], order[MNIST_TRAIN:]
    out = DATA / "mnist"
    write(out / "train" / "train-images-idx3-ubyte", idx_images(images[train]))
    write(out / "train" / "train-labels-idx1-ubyte", idx_labels(labels[train]))
    write(out / "test" / "t10k-images-idx3-ubyte", idx_images(images[test]))
    write(out / "test" / "t10k-labels-idx1-ubyte", idx_labels(labels[test]))


# -----------------------------------------------------------------------------
# CIFAR-10 (synthetic)

@functools.lru_cache(maxsize=None)
def pixel_grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column coordinates of every pixel (shared: 60,000 images are drawn)."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    yy.flags.writeable = xx.flags.writeable = False
    return yy, xx


def shape_mask(kind: str, h: int, w: int, cy: float, cx: float, r: float, rng) -> np.ndarray:
    yy, xx = pixel_grid(h, w)
    dy, dx = yy - cy, xx - cx
    if kind in ("circle", "disc"):
        return dy ** 2 + dx ** 2 <= r ** 2
    if kind == "square":
        return (np.abs(dy) <= r * 0.85) & (np.abs(dx) <= r * 0.85)
    if kind == "triangle":
        return (dy <= r * 0.8) & (dy >= -r) & (np.abs(dx) <= (dy + r) * 0.6)
    if kind == "cross":
        w = max(r * 0.3, 1.5)
        return ((np.abs(dy) <= w) & (np.abs(dx) <= r)) | ((np.abs(dx) <= w) & (np.abs(dy) <= r))
    if kind == "ring":
        d = np.sqrt(dy ** 2 + dx ** 2)
        return (d <= r) & (d >= r * 0.55)
    if kind == "diamond":
        return np.abs(dy) + np.abs(dx) <= r
    if kind == "hstripes":
        period = rng.integers(4, 7)
        return (yy // (period / 2)) % 2 == 0
    if kind in ("vstripes", "bars"):
        period = rng.integers(4, 7)
        return (xx // (period / 2)) % 2 == 0
    if kind == "checker":
        cell = rng.integers(3, 6)
        return ((yy // cell) + (xx // cell)) % 2 == 0
    if kind == "dot_grid":
        step = rng.integers(6, 9)
        return ((yy % step) - step / 2) ** 2 + ((xx % step) - step / 2) ** 2 <= 2.5
    raise ValueError(kind)


def render(kind: str, h: int, w: int, rng, noise: float = 12.0) -> np.ndarray:
    """An RGB uint8 image of one shape on a random background, with noise."""
    bg = rng.uniform(0, 255, 3)
    fg = rng.uniform(0, 255, 3)
    while np.abs(fg - bg).sum() < 180:                 # keep the shape visible
        fg = rng.uniform(0, 255, 3)
    r = min(h, w) * rng.uniform(0.25, 0.4)
    cy, cx = rng.uniform(r, h - r), rng.uniform(r, w - r)
    mask = shape_mask(kind, h, w, cy, cx, r, rng)
    img = np.where(mask[..., None], fg, bg)
    img = img + rng.normal(0.0, noise, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def cifar_records(n: int, rng) -> bytes:
    labels = np.arange(n) % len(CIFAR_CLASSES)
    rng.shuffle(labels)
    out = bytearray()
    for label in labels:
        img = render(CIFAR_CLASSES[label], 32, 32, rng)
        out.append(int(label))
        out += img.transpose(2, 0, 1).tobytes()        # R plane, G plane, B plane
    return bytes(out)


def make_cifar10() -> None:
    out = DATA / "cifar10"
    for name, (seed, shipped) in CIFAR_FILES.items():
        if shipped:
            write(out / name, cifar_records(shipped, np.random.default_rng(seed)))
    write_cifar_meta(out)


def write_cifar_meta(out: Path) -> None:
    write(out / "batches.meta.txt", ("\n".join(CIFAR_CLASSES) + "\n").encode())


def cifar_full_file(name: str) -> bytes:
    """One full-size CIFAR-10 file: the shipped records first (if any), then
    the rest from a seed of their own."""
    seed, shipped = CIFAR_FILES[name]
    head = cifar_records(shipped, np.random.default_rng(seed)) if shipped else b""
    return head + cifar_records(CIFAR_FILE_RECORDS - shipped, np.random.default_rng([seed, 1]))


def make_cifar10_full(out: Path, train_batches: int = 5) -> list[Path]:
    """CIFAR-10's binary layout at full size in ``out`` (what MindSpore's
    Cifar10Dataset reads): ``train_batches`` data_batch files and test_batch."""
    names = [f"data_batch_{b}.bin" for b in range(1, train_batches + 1)] + ["test_batch.bin"]
    for name in names:
        write(out / name, cifar_full_file(name))
    write_cifar_meta(out)
    return [out / name for name in names]


# -----------------------------------------------------------------------------
# ImageFolder (JPEG)

def make_imagefolder() -> None:
    from PIL import Image

    out = DATA / "imagefolder"
    rng = np.random.default_rng(3)
    for cls in FOLDER_CLASSES:
        for i in range(FOLDER_PER_CLASS):
            h, w = (int(v) for v in rng.integers(40, 81, 2))
            img = render(cls, h, w, rng, noise=8.0)
            buf = io.BytesIO()
            Image.fromarray(img).save(buf, format="JPEG", quality=90)
            write(out / cls / f"{cls}_{i:03d}.jpg", buf.getvalue())


def main(argv=None) -> None:
    import argparse
    parser = argparse.ArgumentParser(description="Write irc's sample data sets.")
    parser.add_argument("--cifar10-full", metavar="DIR", type=Path,
                        help="instead, write full-size CIFAR-10 binary files (10,000 records "
                             "each, as MindSpore's Cifar10Dataset needs) into DIR")
    parser.add_argument("--train-batches", type=int, default=5, choices=range(0, 6),
                        metavar="{0..5}", help="with --cifar10-full: how many data_batch files "
                                               "(default 5, as CIFAR-10)")
    args = parser.parse_args(argv)
    if args.cifar10_full:
        files = make_cifar10_full(args.cifar10_full, args.train_batches)
        total = sum(f.stat().st_size for f in files)
        print(f"wrote {len(files)} CIFAR-10 files to {args.cifar10_full} ({total / 1e6:.1f} MB)")
        return
    for sub in ("mnist", "cifar10", "imagefolder"):
        shutil.rmtree(DATA / sub, ignore_errors=True)
    make_mnist()
    make_cifar10()
    make_imagefolder()
    total = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    print(f"wrote {DATA} ({total / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
