"""mindspore.dataset.audio's transforms, eagerly, on a few waveforms (mono
of 257 and 400 samples, a batch [2, 200], a float64 one) and spectrograms:
run under MindSpore 2.10 it wrote audio_transforms.mindspore.json (each
output's shape, dtype, 24 of its values evenly spaced and the sum of its
magnitudes); tests/test_audio.py runs the same CASES under irc."""
import json
import sys

import numpy as np
import mindspore.dataset.audio as audio

rng = np.random.default_rng(0)
WAVES = {"mono257": (rng.standard_normal(257) * 0.4).astype(np.float32),
         "mono400": np.sin(np.arange(400) * 0.37).astype(np.float32) * 0.8,
         "batch2x200": (rng.standard_normal((2, 200)) * 0.4).astype(np.float32),
         "double300": rng.standard_normal(300) * 0.4}
# MindSpore 2.10's MelSpectrogram, MFCC and LFCC return garbage (NaN) for float64 (irc computes it): float32 only
FLOAT_WAVES = {k: v for k, v in WAVES.items() if v.dtype == np.float32}
SPECS = {"spec33x9": (rng.random((33, 9)) ** 2).astype(np.float32),
         "spec2x33x7": np.stack([rng.random((33, 7)) * 1e3, rng.random((33, 7)) * 1e-3]).astype(np.float32),
         "spec2x2x20x11": (rng.random((2, 2, 20, 11)) * 10).astype(np.float32),
         "double33x9": rng.random((33, 9)) ** 2}
SPECS33 = {k: v for k, v in SPECS.items() if v.shape[-2] == 33}
CODES = {"codes": rng.integers(0, 256, 300).astype(np.int32), "codes2x50": rng.integers(0, 16, (2, 50)).astype(np.float32)}

W, B, A = audio.WindowType, audio.BorderType, audio
SMALL = {"n_fft": 64, "win_length": 64, "hop_length": 32, "pad": 0, "window": W.HANN, "power": 2.0,
         "normalized": False, "center": True, "pad_mode": B.REFLECT, "onesided": True}
MEL = {**SMALL, "f_min": 0.0, "f_max": 8000.0, "n_mels": 16, "norm": A.NormType.NONE, "mel_scale": A.MelType.HTK}

# name: (the transform, the inputs it takes)
CASES = {
    "Spectrogram": (lambda: audio.Spectrogram(n_fft=64), WAVES),
    "SpectrogramHamming": (lambda: audio.Spectrogram(n_fft=64, window=W.HAMMING, power=1.0), WAVES),
    "SpectrogramBlackman": (lambda: audio.Spectrogram(n_fft=48, hop_length=10, window=W.BLACKMAN), WAVES),
    "SpectrogramBartlett": (lambda: audio.Spectrogram(n_fft=64, win_length=40, window=W.BARTLETT), WAVES),
    "SpectrogramKaiser": (lambda: audio.Spectrogram(n_fft=32, window=W.KAISER, pad_mode=B.SYMMETRIC), WAVES),
    "SpectrogramPadNorm": (lambda: audio.Spectrogram(n_fft=64, pad=5, normalized=True, pad_mode=B.CONSTANT), WAVES),
    "SpectrogramNoCenter": (lambda: audio.Spectrogram(n_fft=64, center=False, power=0.5), WAVES),
    "SpectrogramEdgeTwoSided": (lambda: audio.Spectrogram(n_fft=32, pad_mode=B.EDGE, onesided=False), WAVES),
    "MelScale": (lambda: audio.MelScale(n_mels=10, sample_rate=16000, n_stft=33), SPECS33),
    "MelScaleSlaney": (lambda: audio.MelScale(8, 8000, 50.0, 3500.0, 33, A.NormType.SLANEY, A.MelType.SLANEY),
                       SPECS33),
    "MelSpectrogram": (lambda: audio.MelSpectrogram(n_fft=64, n_mels=12), FLOAT_WAVES),
    "MelSpectrogramSlaney": (lambda: audio.MelSpectrogram(22050, 128, 100, 50, 30.0, 9000.0, 0, 20, W.HAMMING,
                                                          1.0, norm=A.NormType.SLANEY, mel_scale=A.MelType.SLANEY),
                             FLOAT_WAVES),
    "AmplitudeToDB": (lambda: audio.AmplitudeToDB(), SPECS),
    "AmplitudeToDBMagnitude": (lambda: audio.AmplitudeToDB(A.ScaleType.MAGNITUDE, 2.0, 1e-5, 20.0), SPECS),
    "DBToAmplitude": (lambda: audio.DBToAmplitude(2.0, 0.5), {**WAVES, **SPECS}),
    "MFCC": (lambda: audio.MFCC(n_mfcc=8, melkwargs=MEL), FLOAT_WAVES),
    "MFCCLogNone": (lambda: audio.MFCC(8000, 10, 2, A.NormMode.NONE, True, {**MEL, "f_max": 4000.0, "n_mels": 20}),
                    FLOAT_WAVES),
    "LFCC": (lambda: audio.LFCC(n_filter=16, n_lfcc=8, speckwargs=SMALL), FLOAT_WAVES),
    "LFCCLog": (lambda: audio.LFCC(8000, 20, 12, 100.0, 3000.0, 2, A.NormMode.NONE, True, SMALL), FLOAT_WAVES),
    "TimeMasking": (lambda: audio.TimeMasking(False, 3, 2, 0.5), SPECS),
    "FrequencyMasking": (lambda: audio.FrequencyMasking(False, 5, 10), SPECS),
    "ComputeDeltas": (lambda: audio.ComputeDeltas(), SPECS),
    "ComputeDeltasReflect": (lambda: audio.ComputeDeltas(7, B.REFLECT), SPECS),
    "ComputeDeltasConstant": (lambda: audio.ComputeDeltas(4, B.CONSTANT), SPECS),
    "MuLawEncoding": (lambda: audio.MuLawEncoding(), WAVES),
    "MuLawEncoding16": (lambda: audio.MuLawEncoding(16), WAVES),
    "MuLawDecoding": (lambda: audio.MuLawDecoding(), CODES),
    "MuLawDecoding16": (lambda: audio.MuLawDecoding(16), CODES),
    "Vol": (lambda: audio.Vol(2.5), WAVES),
    "VolPower": (lambda: audio.Vol(3.0, A.GainType.POWER), WAVES),
    "VolDb": (lambda: audio.Vol(-6.0, A.GainType.DB), WAVES),
    **{f"Fade{s.name}": (lambda s=s: audio.Fade(30, 50, s), WAVES) for s in A.FadeShape},
    "Resample": (lambda: audio.Resample(16000, 8000), WAVES),
    "ResampleUp": (lambda: audio.Resample(8000, 16000, lowpass_filter_width=4, rolloff=0.9), WAVES),
    "ResampleKaiser": (lambda: audio.Resample(441, 160, A.ResampleMethod.KAISER_WINDOW, 6, 0.95, 8.0), WAVES),
    "SlidingWindowCmn": (lambda: audio.SlidingWindowCmn(), SPECS),
    "SlidingWindowCmnSmall": (lambda: audio.SlidingWindowCmn(5, 3), SPECS),
    "SlidingWindowCmnCenter": (lambda: audio.SlidingWindowCmn(6, 2, True), SPECS),
}
# MindSpore's maths is exact there (integer codes, a fixed band, one product)
EXACT = {"TimeMasking", "FrequencyMasking", "MuLawEncoding", "MuLawEncoding16", "Vol"}


def outputs(case):
    make, inputs = CASES[case]
    op = make()
    return {name: np.asarray(op(x)) for name, x in inputs.items()}


def summary(y):
    flat = y.ravel()
    pick = flat[np.linspace(0, flat.size - 1, min(24, flat.size)).astype(int)] if flat.size else flat
    return {"shape": list(y.shape), "dtype": str(y.dtype), "values": [float(v) for v in pick],
            "abs_sum": float(np.abs(y.astype(np.float64)).sum())}


if __name__ == "__main__":
    if sys.argv[1:2] == ["npz"]:       # every output in full, to measure the largest differences
        np.savez_compressed(sys.argv[2], **{f"{c}/{n}": y for c in CASES for n, y in outputs(c).items()})
    else:
        json.dump({c: {n: summary(y) for n, y in outputs(c).items()} for c in CASES}, sys.stdout, indent=0)
