"""The ``audio`` dialect: the transforms of ``mindspore.dataset.audio``.

torchaudio's transforms as MindSpore 2.10 computes them (its C++
``audio_utils.cc``); the numpy maths is in :mod:`.audio_dsp`.  A sample is a
waveform ``[..., time]`` or a spectrogram ``[..., freq, time]``; every op
but the random masks also runs on a batch (a leading axis), and all keep
MindSpore's result types: float64 stays float64, anything else becomes
float32 (MFCC and LFCC: always float32, MuLawEncoding: int32).

Attributes hold the enums as their lower-case values ("hann", "reflect",
"slaney" ...), and every default already resolved (win_length, hop_length,
f_max), so the IR text says what runs.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.registry import MAP, REQUIRED, Dialect
from ..ir.traits import Pure, Random
from ..ir.types import UNKNOWN, TensorType
from . import audio_dsp as dsp

FAMILY = "transforms"
DIALECT = Dialect("audio")
define = DIALECT.define

STFT_ATTRS = {"n_fft": 400, "win_length": 400, "hop_length": 200, "pad": 0, "window": "hann", "power": 2.0,
              "normalized": False, "center": True, "pad_mode": "reflect", "onesided": True}
MEL_ATTRS = {"n_mels": 128, "sample_rate": 16000, "f_min": 0.0, "f_max": 8000.0, "norm": "none",
             "mel_type": "htk"}


def _numeric(op: str, t: TensorType, min_rank: int, layout: str) -> None:
    if t.dtype in ("bytes", "bool"):
        raise TypeError(f"{op}: expected a numeric {layout} tensor, got {t}")
    if t.rank < min_rank:
        raise ValueError(f"{op}: the input tensor is not in shape of {layout}, got {t}")


def _float(t: TensorType) -> str:
    return "f64" if t.dtype == "f64" else "f32"


def _same_float(op: str, min_rank: int, layout: str):
    def infer(attrs, ins):
        _numeric(op, ins[0], min_rank, layout)
        return [ins[0].with_dtype(_float(ins[0]))]
    return infer


def _float_op(name: str, operand: str, attrs: dict, min_rank: int, layout: str, doc: str, kernel):
    """An op whose result is its input's shape in float: ``kernel(x, attrs)`` on a sample or a batch."""
    op = define(f"audio.{name}", kind=MAP, family=FAMILY, operands=(operand,), attrs=attrs,
                infer=_same_float(name, min_rank, layout), traits=(Pure(),), doc=doc)
    op.host_batch(lambda inputs, attrs, draws: [kernel(inputs[0], attrs)])
    return op


# --- Spectrogram and its kin ------------------------------------------------------

def _stft_shape(a: dict, shape) -> list:
    """[..., time] -> [..., freq, frames]."""
    freq = a["n_fft"] // 2 + 1 if a["onesided"] else a["n_fft"]
    time = shape[-1]
    if time == UNKNOWN:
        return [*shape[:-1], freq, UNKNOWN]
    length = time + 2 * a["pad"] + (2 * (a["n_fft"] // 2) if a["center"] else 0)
    if length < a["n_fft"]:
        raise ValueError(f"the waveform's {time} samples are fewer than n_fft = {a['n_fft']}")
    return [*shape[:-1], freq, 1 + (length - a["n_fft"]) // a["hop_length"]]


def _infer_spectrogram(attrs, ins):
    _numeric("Spectrogram", ins[0], 1, "<..., time>")
    return [TensorType(_float(ins[0]), _stft_shape(attrs, ins[0].shape))]


SPECTROGRAM = define("audio.Spectrogram", kind=MAP, family=FAMILY, operands=("waveform",), attrs=STFT_ATTRS,
                     infer=_infer_spectrogram, traits=(Pure(),),
                     doc="[..., time] -> |STFT|^power [..., n_fft // 2 + 1 (onesided), frames]")


@SPECTROGRAM.host_batch
def _spectrogram_batch(inputs, attrs, draws):
    return [dsp.spectrogram(inputs[0], attrs)]


def mel_fbanks(attrs, n_stft: int) -> np.ndarray:
    return dsp.mel_fbanks(n_stft, attrs["f_min"], attrs["f_max"], attrs["n_mels"], attrs["sample_rate"],
                          attrs["norm"], attrs["mel_type"])


def _infer_mel_scale(attrs, ins):
    t = ins[0]
    _numeric("MelScale", t, 2, "<..., freq, time>")
    if t.shape[-2] not in (UNKNOWN, attrs["n_stft"]):
        raise ValueError(f"MelScale: expected {attrs['n_stft']} frequency bins (n_stft), got {t}")
    return [TensorType(_float(t), [*t.shape[:-2], attrs["n_mels"], t.shape[-1]])]


MEL_SCALE = define("audio.MelScale", kind=MAP, family=FAMILY, operands=("spectrogram",),
                   attrs={**MEL_ATTRS, "n_stft": 201}, infer=_infer_mel_scale, traits=(Pure(),),
                   doc="[..., n_stft, time] -> [..., n_mels, time] through triangular mel filters")


@MEL_SCALE.host_batch
def _mel_scale_batch(inputs, attrs, draws):
    x = inputs[0]
    return [dsp.apply_fbank(x, mel_fbanks(attrs, attrs["n_stft"])).astype(dsp.out_dtype(x))]


def _infer_mel_spectrogram(attrs, ins):
    _numeric("MelSpectrogram", ins[0], 1, "<..., time>")
    shape = _stft_shape(attrs, ins[0].shape)
    return [TensorType(_float(ins[0]), [*shape[:-2], attrs["n_mels"], shape[-1]])]


MEL_SPECTROGRAM = define("audio.MelSpectrogram", kind=MAP, family=FAMILY, operands=("waveform",),
                         attrs={**STFT_ATTRS, **MEL_ATTRS}, infer=_infer_mel_spectrogram, traits=(Pure(),),
                         doc="[..., time] -> Spectrogram then MelScale [..., n_mels, frames]")


def mel_spectrogram(x, attrs) -> np.ndarray:
    spec = dsp.spectrogram(x, attrs).astype(np.float64)
    return dsp.apply_fbank(spec, mel_fbanks(attrs, spec.shape[-2]))


@MEL_SPECTROGRAM.host_batch
def _mel_spectrogram_batch(inputs, attrs, draws):
    return [mel_spectrogram(inputs[0], attrs).astype(dsp.out_dtype(inputs[0]))]


def _infer_cepstrum(op: str, n_out: str, bins: str):
    def infer(attrs, ins):
        _numeric(op, ins[0], 1, "<..., time>")
        shape = _stft_shape(attrs, ins[0].shape)
        if attrs[n_out] > attrs[bins]:
            raise ValueError(f"{op}: {n_out} {attrs[n_out]} must be at most {bins} {attrs[bins]}")
        return [TensorType("f32", [*shape[:-2], attrs[n_out], shape[-1]])]
    return infer


MFCC = define("audio.MFCC", kind=MAP, family=FAMILY, operands=("waveform",),
              attrs={**STFT_ATTRS, **MEL_ATTRS, "n_mfcc": 40, "dct_norm": "ortho", "log_mels": False},
              infer=_infer_cepstrum("MFCC", "n_mfcc", "n_mels"), traits=(Pure(),),
              doc="[..., time] -> the DCT of the MelSpectrogram's decibels (or log) [..., n_mfcc, frames], "
                  "float32")


@MFCC.host_batch
def _mfcc_batch(inputs, attrs, draws):
    return [dsp.cepstrum(mel_spectrogram(inputs[0], attrs), attrs["n_mfcc"], attrs["dct_norm"],
                         attrs["log_mels"], batched=True)]


LFCC = define("audio.LFCC", kind=MAP, family=FAMILY, operands=("waveform",),
              attrs={**STFT_ATTRS, "sample_rate": 16000, "n_filter": 128, "n_lfcc": 40, "f_min": 0.0,
                     "f_max": 8000.0, "dct_norm": "ortho", "log_lf": False},
              infer=_infer_cepstrum("LFCC", "n_lfcc", "n_filter"), traits=(Pure(),),
              doc="[..., time] -> the DCT of linear-filtered Spectrogram decibels (or log) [..., n_lfcc, frames], "
                  "float32")


@LFCC.host_batch
def _lfcc_batch(inputs, attrs, draws):
    spec = dsp.spectrogram(inputs[0], attrs).astype(np.float64)
    fb = dsp.linear_fbanks(spec.shape[-2], attrs["f_min"], attrs["f_max"], attrs["n_filter"], attrs["sample_rate"])
    return [dsp.cepstrum(dsp.apply_fbank(spec, fb), attrs["n_lfcc"], attrs["dct_norm"], attrs["log_lf"],
                         batched=True)]


# --- decibels --------------------------------------------------------------------------

AMPLITUDE_TO_DB = define("audio.AmplitudeToDB", kind=MAP, family=FAMILY, operands=("spectrogram",),
                         attrs={"stype": "power", "ref_value": 1.0, "amin": 1e-10, "top_db": 80.0},
                         infer=_same_float("AmplitudeToDB", 2, "<..., freq, time>"), traits=(Pure(),),
                         doc="10 (power) or 20 (magnitude) log10(max(x, amin) / ref_value), at least the "
                             "peak of each [channel, freq, time] block less top_db")


@AMPLITUDE_TO_DB.host_batch
def _amplitude_to_db_batch(inputs, attrs, draws):
    x = inputs[0]
    multiplier = 10.0 if attrs["stype"] == "power" else 20.0
    ref = math.log10(max(attrs["amin"], attrs["ref_value"]))
    return [dsp.amplitude_to_db(x, multiplier, attrs["amin"], ref, attrs["top_db"], batched=True)
            .astype(dsp.out_dtype(x))]


def _db_to_amplitude(x, attrs):
    with np.errstate(over="ignore"):        # a large dB value is inf, as in MindSpore
        return dsp.db_to_amplitude(x, attrs["ref"], attrs["power"]).astype(dsp.out_dtype(x))


DB_TO_AMPLITUDE = _float_op("DBToAmplitude", "input", {"ref": REQUIRED, "power": REQUIRED}, 0, "a tensor",
                            "ref * (10^(x / 10))^power", _db_to_amplitude)


# --- masks -----------------------------------------------------------------------------

def _mask_op(op: str, axis: int):
    def infer(attrs, ins):
        t = ins[0]
        _numeric(op, t, 2, "<..., freq, time>")
        size = t.shape[axis]
        if size != UNKNOWN and not attrs["iid_masks"] and attrs["mask_start"] + attrs["mask_width"] > size:
            raise ValueError(f"{op}: mask_start {attrs['mask_start']} + the mask's width "
                             f"{attrs['mask_width']} must be at most the axis' length {size}")
        if size != UNKNOWN and attrs["mask_width"] > size:
            raise ValueError(f"{op}: the mask parameter {attrs['mask_width']} must be at most the "
                             f"axis' length {size}")
        return [t]

    which = "frequency (axis -2)" if axis == -2 else "time (axis -1)"
    opdef = define(f"audio.{op}", kind=MAP, family=FAMILY, operands=("spectrogram",),
                   attrs={"iid_masks": False, "mask_width": 0, "mask_start": 0, "mask_value": 0.0}, infer=infer,
                   traits=(Pure(), Random(lambda attrs: 2 if attrs["iid_masks"] else 0)),
                   doc=f"[..., freq, time] with a band of {which} set to mask_value: [mask_start, + mask_width) "
                       f"when not iid_masks, else a width uniform in [0, mask_width] at a start uniform in "
                       f"[0, length - width] (MindSpore's distribution, irc's draws), one band for the sample")

    @opdef.host_batch
    def _mask_batch(inputs, attrs, draws):
        x = np.asarray(inputs[0])
        if not attrs["iid_masks"]:
            return [dsp.mask_along_axis(x, attrs["mask_start"], attrs["mask_width"], attrs["mask_value"], axis)]
        out = np.array(x, copy=True)
        for row, (u_width, u_start) in enumerate(draws):      # a band a sample, from its own draws
            width = min(int(u_width * (attrs["mask_width"] + 1)), attrs["mask_width"])
            span = x.shape[axis] - width + 1
            out[row] = dsp.mask_along_axis(x[row], min(int(u_start * span), span - 1), width,
                                           attrs["mask_value"], axis)
        return [out]
    return opdef


TIME_MASKING = _mask_op("TimeMasking", -1)
FREQUENCY_MASKING = _mask_op("FrequencyMasking", -2)


# --- waveform ops ------------------------------------------------------------------------

COMPUTE_DELTAS = _float_op(
    "ComputeDeltas", "spectrogram", {"win_length": 5, "pad_mode": "edge"}, 2, "<..., freq, time>",
    "the regression deltas over win_length frames along time, ends padded by pad_mode",
    lambda x, attrs: dsp.compute_deltas(x, attrs["win_length"], attrs["pad_mode"]))


def _infer_mu_law_encoding(attrs, ins):
    _numeric("MuLawEncoding", ins[0], 0, "a tensor")
    return [ins[0].with_dtype("i32")]


MU_LAW_ENCODING = define("audio.MuLawEncoding", kind=MAP, family=FAMILY, operands=("waveform",),
                         attrs={"quantization_channels": 256}, infer=_infer_mu_law_encoding, traits=(Pure(),),
                         doc="a waveform in [-1, 1] -> its mu-law codes in [0, quantization_channels), int32")


@MU_LAW_ENCODING.host_batch
def _mu_law_encoding_batch(inputs, attrs, draws):
    return [dsp.mu_law_encode(inputs[0], attrs["quantization_channels"])]


def _mu_law_decode(x, attrs):
    with np.errstate(over="ignore"):        # a code past the channels is inf, as in MindSpore
        return dsp.mu_law_decode(x, attrs["quantization_channels"])


MU_LAW_DECODING = _float_op("MuLawDecoding", "codes", {"quantization_channels": 256}, 0, "a tensor",
                            "mu-law codes -> the waveform in [-1, 1]", _mu_law_decode)


VOL = _float_op("Vol", "waveform", {"gain": REQUIRED, "gain_type": "amplitude"}, 0, "a tensor",
                "the waveform times the gain (amplitude ratio, power ratio or dB), clamped to [-1, 1]",
                lambda x, attrs: dsp.vol(x, attrs["gain"], attrs["gain_type"]))


def _infer_fade(attrs, ins):
    t = ins[0]
    _numeric("Fade", t, 1, "<..., time>")
    if t.shape[-1] != UNKNOWN and max(attrs["fade_in_len"], attrs["fade_out_len"]) > t.shape[-1]:
        raise ValueError(f"Fade: fade_in_len {attrs['fade_in_len']} and fade_out_len {attrs['fade_out_len']} "
                         f"must be at most the waveform's length {t.shape[-1]}")
    return [t.with_dtype(_float(t))]


FADE = define("audio.Fade", kind=MAP, family=FAMILY, operands=("waveform",),
              attrs={"fade_in_len": 0, "fade_out_len": 0, "fade_shape": "linear"}, infer=_infer_fade,
              traits=(Pure(),), doc="the waveform faded in over its first and out over its last samples")


@FADE.host_batch
def _fade_batch(inputs, attrs, draws):
    return [dsp.fade(inputs[0], attrs["fade_in_len"], attrs["fade_out_len"], attrs["fade_shape"])]


def _infer_resample(attrs, ins):
    t = ins[0]
    _numeric("Resample", t, 1, "<..., time>")
    time = t.shape[-1]
    if time != UNKNOWN and attrs["orig_freq"] != attrs["new_freq"]:
        g = math.gcd(int(attrs["orig_freq"]), int(attrs["new_freq"]))
        time = math.ceil(int(attrs["new_freq"]) // g * time / (int(attrs["orig_freq"]) // g))
    return [TensorType(_float(t), [*t.shape[:-1], time])]


RESAMPLE = define("audio.Resample", kind=MAP, family=FAMILY, operands=("waveform",),
                  attrs={"orig_freq": 16000.0, "new_freq": 16000.0, "resample_method": "sinc_interpolation",
                         "lowpass_filter_width": 6, "rolloff": 0.99, "beta": None},
                  infer=_infer_resample, traits=(Pure(),),
                  doc="[..., time] resampled from orig_freq to new_freq by a windowed-sinc filter "
                      "(Hann, or Kaiser with beta)")


@RESAMPLE.host_batch
def _resample_batch(inputs, attrs, draws):
    return [dsp.resample(inputs[0], attrs["orig_freq"], attrs["new_freq"], attrs["resample_method"],
                         attrs["lowpass_filter_width"], attrs["rolloff"], attrs["beta"])]


SLIDING_WINDOW_CMN = _float_op(
    "SlidingWindowCmn", "features", {"cmn_window": 600, "min_cmn_window": 100, "center": False, "norm_vars": False},
    2, "<..., time, feature>",
    "[..., time, feature] less the mean (and over the deviation) of a sliding window of cmn_window frames "
    "(Kaldi's CMN)",
    lambda x, attrs: dsp.sliding_window_cmn(x, attrs["cmn_window"], attrs["min_cmn_window"], attrs["center"],
                                            attrs["norm_vars"]))
