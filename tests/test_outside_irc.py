"""MindSpore code run outside the ``irc`` command, and irc's data run by
MindSpore.

* A MindSpore project's own test suite (tests/fixtures/ms_project, which
  passes under MindSpore 2.10 itself) runs against irc under
  ``pytest -p irc.pytest_plugin``.
* ``irc exec`` runs a script as python does: its argv, its exit status,
  Python's traceback of its own errors.
* The shipped sample data reads in irc exactly as MindSpore 2.10 reads it
  (digests of MindSpore's arrays, baked below), and the full-size CIFAR-10
  files ``samples/make_data.py --cifar10-full`` writes are what MindSpore's
  Cifar10Dataset reads (it needs 10,000 records per file).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest

from irc import importhook
from irc.cli import main

ROOT = Path(__file__).resolve().parent.parent
PROJECT = Path(__file__).resolve().parent / "fixtures" / "ms_project"
DATA = ROOT / "samples" / "data"


@pytest.fixture
def alias_off_after():
    """Tests that turn the process-wide alias on leave it off again."""
    was_on = importhook.installed()
    yield
    if not was_on:
        importhook.uninstall()


# -----------------------------------------------------------------------------
# a MindSpore project's test suite

def run_pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, *args, "-p", "no:cacheprovider", "-rA"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


def test_a_projects_test_suite_runs_against_irc_under_the_plugin(tmp_path):
    project = Path(shutil.copytree(PROJECT, tmp_path / "ms_project"))
    ran = run_pytest(project, "-m", "pytest", "-p", "irc.pytest_plugin")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "mindspore: irc " in ran.stdout                         # the report header
    passed = {line.split("::")[-1] for line in ran.stdout.splitlines() if line.startswith("PASSED")}
    assert passed == {"test_numpy_slices_batches_in_order", "test_fixture_from_conftest",
                      "test_dense_forward", "test_model_train_lowers_the_loss"}
    if importlib.util.find_spec("mindspore") is None:              # without irc: nothing imports
        bare = run_pytest(project, "-m", "pytest")
        assert bare.returncode != 0 and "No module named 'mindspore'" in bare.stdout + bare.stderr


# -----------------------------------------------------------------------------
# irc exec and the import hook

def test_exec_runs_a_script_as_python_does(tmp_path, capsys, alias_off_after):
    script = tmp_path / "tool.py"
    script.write_text(textwrap.dedent("""\
        import sys
        import mindspore as ms
        from mindspore import nn
        print("RAN", sys.argv, ms.__name__, type(nn.Dense(2, 3)).__module__.split(".")[0])
        if "--fail" in sys.argv:
            raise ValueError("bad input")
        sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 0)
    """))
    argv_before = sys.argv[:]
    assert main(["exec", str(script), "--traceback", "7"]) == 7    # its exit status
    out = capsys.readouterr().out
    assert f"RAN [{str(script)!r}, '--traceback', '7'] irc irc" in out
    assert sys.argv == argv_before
    assert main(["exec", str(script), "--fail"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):\n") and "ValueError: bad input" in err
    assert f'File "{script}", line 6' in err and "exec_cmd.py" not in err   # its frames only


def test_exec_runs_a_module(tmp_path, monkeypatch, capsys, alias_off_after):
    (tmp_path / "mytool.py").write_text(
        "import sys, mindspore.dataset as ds\nprint('MOD', sys.argv[1:], ds.__name__)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["exec", "-m", "mytool", "a", "-m", "b"]) == 0
    assert "MOD ['a', '-m', 'b'] irc.dataset" in capsys.readouterr().out


def test_exec_needs_a_script_or_a_module(capsys):
    assert main(["exec"]) == 1
    assert "give either a script or -m MODULE" in capsys.readouterr().err


def test_import_hook_on_and_off(alias_off_after):
    import irc
    assert importhook.install() is True and importhook.install() is False
    import mindspore
    import mindspore.dataset.vision as vision
    assert mindspore is irc and vision.__name__ == "irc.dataset.vision"
    importhook.uninstall()
    assert not importhook.installed() and "mindspore" not in sys.modules


def test_import_hook_refuses_when_mindspore_itself_is_loaded(monkeypatch):
    from irc.diagnostics import UserError
    monkeypatch.setitem(sys.modules, "mindspore", types.ModuleType("mindspore"))
    with pytest.raises(UserError, match="MindSpore itself is already imported"):
        importhook.install()
    assert not importhook.installed()


# -----------------------------------------------------------------------------
# sample data MindSpore reads

def digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def read_all(dataset) -> list[np.ndarray]:
    columns = list(zip(*dataset.create_tuple_iterator(output_numpy=True)))
    return [np.stack(c) if c[0].ndim else np.array(c) for c in columns]


# sha256 of the arrays MindSpore 2.10 (CPU) yields for the shipped files
# (shuffle=False): images, then labels.
MINDSPORE_MNIST = {
    "train": ("0dc9f643cf8edd2b5f1ca59f0b60c9ca5ea96eb0862928e7f45648c8979e7488",
              "fc884fc78c0e2eb716f4487e2bdfea7abc4a1644087ac8c42ec23d50359726d0"),
    "test": ("152c69599719329dbb3c7019b79a51b99ebc4a57dc4f1f5c24a8eac2bbfd7d15",
             "3ca2ead24a7edeaef15d768814e83dfaa454207d3d4f066b4b828c9104ddfd17"),
}
# ImageFolderDataset(decode=True): each image's shape (as str) and bytes, in
# order; the labels (int32).
MINDSPORE_IMAGEFOLDER = ("04984ac560068fd6f37ea9dcf74b521ea80fbd6e0240c4330b1ead47a452cca8",
                         "eec2888a5ce682d2d90f4251d9275ada7e4d6a0f8895c5920a87aaed6d1fcab9")
# Cifar10Dataset(usage="test") over `make_data.py --cifar10-full`'s test_batch.bin.
MINDSPORE_CIFAR_FULL_TEST = ("e4ae72c5c206f0ac0763e9567bca49fcf682728be91c020c5813be6646a9049b",
                             "9a004c507fb73599f3cbb9402303b4e7233028b8958e5ccbaa3d9999e2430519")


@pytest.mark.parametrize("usage", ["train", "test"])
def test_shipped_mnist_reads_as_in_mindspore(usage):
    import irc.dataset as ds
    images, labels = read_all(ds.MnistDataset(str(DATA / "mnist" / usage), usage=usage,
                                              shuffle=False))
    assert (images.dtype, labels.dtype) == (np.uint8, np.uint32)
    assert (digest(images), digest(labels)) == MINDSPORE_MNIST[usage]


def test_shipped_imagefolder_reads_as_in_mindspore():
    import irc.dataset as ds
    data = ds.ImageFolderDataset(str(DATA / "imagefolder"), shuffle=False, decode=True)
    rows = list(data.create_tuple_iterator(output_numpy=True))
    h = hashlib.sha256()
    for image, _ in rows:
        h.update(str(image.shape).encode())
        h.update(image.tobytes())
    labels = np.array([label for _, label in rows])
    assert (h.hexdigest(), digest(labels)) == MINDSPORE_IMAGEFOLDER


def load_make_data():
    spec = importlib.util.spec_from_file_location("make_data", ROOT / "samples" / "make_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_full_size_cifar10_is_what_mindspore_reads(tmp_path):
    """MindSpore reads exactly 10,000 records from each .bin; the shipped
    files (1,000 / 200 records) are the first records of the full ones."""
    import irc.dataset as ds
    make_data = load_make_data()
    files = make_data.make_cifar10_full(tmp_path, train_batches=0)
    assert [f.name for f in files] == ["test_batch.bin"]
    full = files[0].read_bytes()
    assert len(full) == 10_000 * 3073
    shipped = (DATA / "cifar10" / "test_batch.bin").read_bytes()
    assert full.startswith(shipped) and len(shipped) == 200 * 3073
    images, labels = read_all(ds.Cifar10Dataset(str(tmp_path), usage="test", shuffle=False))
    assert images.shape == (10_000, 32, 32, 3)
    assert np.bincount(labels).tolist() == [1000] * 10
    assert (digest(images), digest(labels)) == MINDSPORE_CIFAR_FULL_TEST
