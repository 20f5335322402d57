"""mindspore.dataset.audio: its transforms as MindSpore 2.10 computes them
(tests/mindspore_style/audio_transforms.py and its .mindspore.json), eagerly,
in a pipeline (before and after batch) and as IR text; the random masks draw
their bands per sample; bad arguments are refused at the user's line."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import irc.dataset as ds
import irc.dataset.audio as audio
from irc.diagnostics import UserError
from irc.ir.text import parse_module, print_module
from printout import load_script

HERE = os.path.join(os.path.dirname(__file__), "mindspore_style")
with open(os.path.join(HERE, "audio_transforms.mindspore.json")) as f:
    MINDSPORE = json.load(f)
SCRIPT = load_script("audio_transforms.py")
WAVE = SCRIPT.WAVES["batch2x200"]


@pytest.mark.parametrize("case", sorted(MINDSPORE))
def test_eagerly_as_mindspore(case):
    """rtol 1e-4 where FFTs and float sums round differently; exact where
    MindSpore's maths is (mu-law codes, fixed masks, an amplitude Vol)."""
    for name, y in SCRIPT.outputs(case).items():
        mine, want = SCRIPT.summary(y), MINDSPORE[case][name]
        assert (mine["shape"], mine["dtype"]) == (want["shape"], want["dtype"]), (case, name)
        if case in SCRIPT.EXACT:
            assert mine["values"] == want["values"], (case, name)
            continue
        scale = np.nanmax(np.abs(np.asarray(want["values"])[np.isfinite(want["values"])]), initial=0.0)
        np.testing.assert_allclose(mine["values"], want["values"], rtol=1e-4, atol=1e-5 * scale,
                                   err_msg=f"{case}/{name}")
        np.testing.assert_allclose(mine["abs_sum"], want["abs_sum"], rtol=1e-4, err_msg=f"{case}/{name}")


def test_a_pipeline_runs_them_per_sample_and_per_batch_and_prints_as_ir():
    chain = [audio.Vol(0.8), audio.Fade(10, 20), audio.MelSpectrogram(n_fft=64, n_mels=16),
             audio.AmplitudeToDB(top_db=60.0), audio.FrequencyMasking(False, 3, 4)]
    waves = np.stack([WAVE[0], WAVE[1], WAVE[0] * 0.5, WAVE[1] * 2.0])
    d = ds.NumpySlicesDataset({"audio": waves}, shuffle=False).map(chain, "audio").batch(2)
    d = d.map([audio.ComputeDeltas(), audio.SlidingWindowCmn(5, 2)], "audio")
    rows = [r["audio"] for r in d.create_dict_iterator(num_epochs=1, output_numpy=True)]
    eager = []
    for w in waves:
        for op in chain:
            w = op(w)
        eager.append(w)
    for op in (audio.ComputeDeltas(), audio.SlidingWindowCmn(5, 2)):
        eager = [op(e) for e in eager]
    np.testing.assert_allclose(np.concatenate(rows), np.stack(eager), rtol=1e-6, atol=1e-6)
    text = print_module(d._iteration_module())
    assert "audio.MelSpectrogram" in text and "audio.SlidingWindowCmn" in text
    assert print_module(parse_module(text)) == text


def test_iid_masks_draw_a_band_per_sample_within_mindspores_range():
    spec = np.ones((4, 20, 30), np.float32)
    d = ds.NumpySlicesDataset({"s": spec}, shuffle=False).map(
        [audio.TimeMasking(True, 6), audio.FrequencyMasking(True, 5, mask_value=2.0)], "s")

    def bands():
        return [r["s"] for r in d.create_dict_iterator(num_epochs=1, output_numpy=True)]
    ds.config.set_seed(3)
    first = bands()
    ds.config.set_seed(3)
    assert all((a == b).all() for a, b in zip(first, bands()))
    for s in first:
        cols = np.flatnonzero((s == 0).all(axis=0))
        assert cols.size <= 6 and (cols.size == 0 or np.ptp(cols) == cols.size - 1)
        rows = np.flatnonzero((s == 2).all(axis=1))
        assert rows.size <= 5 and (rows.size == 0 or np.ptp(rows) == rows.size - 1)
    assert len({np.flatnonzero((s == 0).all(axis=0)).tobytes() for s in first}) > 1


def test_the_filter_bank_functions_and_the_import_under_the_alias():
    from irc.capture import mindspore_alias
    with mindspore_alias():
        import mindspore.dataset.audio as ms_audio
    assert ms_audio.Spectrogram is audio.Spectrogram
    assert audio.melscale_fbanks(33, 0.0, 8000.0, 10, 16000).shape == (33, 10)
    assert audio.linear_fbanks(33, 0.0, 8000.0, 12, 16000).dtype == np.float32
    assert audio.create_dct(13, 40, audio.NormMode.ORTHO).shape == (40, 13)


@pytest.mark.parametrize("make, message", [
    (lambda: audio.Spectrogram(n_fft=64, win_length=100), "win_length must be less than or equal to n_fft"),
    (lambda: audio.Spectrogram(window="hann"), "window with value 'hann' is not of type"),
    (lambda: audio.MelScale(f_min=9000.0, f_max=8000.0), "f_max should be greater than f_min"),
    (lambda: audio.MFCC(dct_type=3), "dct_type must be 2"),
    (lambda: audio.MFCC(melkwargs={"n_fft": 64, "nfft": 3}), "melkwargs has no argument 'nfft'"),
    (lambda: audio.TimeMasking(time_mask_param=-1), "time_mask_param must be >= 0"),
    (lambda: audio.Vol(-1.0), "gain must be >= 0"),
    (lambda: audio.Vol(0.0, audio.GainType.POWER), "gain must be > 0"),
    (lambda: audio.ComputeDeltas(2), "win_length must be >= 3"),
    (lambda: audio.AmplitudeToDB()(WAVE[0]), "AmplitudeToDB: the input tensor is not in shape of <..., freq, time>"),
    (lambda: audio.MelScale(n_stft=33)(np.ones((20, 5), np.float32)), "expected 33 frequency bins"),
    (lambda: audio.Fade(300)(WAVE), "must be at most the waveform's length 200"),
    (lambda: audio.TimeMasking(False, 5, 28)(np.ones((3, 30), np.float32)), "mask_start 28"),
])
def test_bad_arguments_are_located(make, message):
    with pytest.raises(UserError, match=message) as caught:
        make()
    assert "test_audio.py" in str(caught.value.where)
