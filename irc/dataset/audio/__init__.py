"""``mindspore.dataset.audio``: spectrograms, filter banks, cepstra, masks and
waveform transforms (the ``audio`` dialect, ``irc/dialects/audio.py``).

Each class checks its arguments as MindSpore 2.10 does and resolves its
defaults (``win_length``, ``hop_length``, ``f_max``, MFCC's ``melkwargs``)
into the op's attributes.
"""
from __future__ import annotations

from enum import Enum

from ...dialects import audio_dsp
from .._ops import TensorOperation, arg_error, check_bool, check_int, check_number, is_int

__all__ = ["AmplitudeToDB", "BorderType", "ComputeDeltas", "DBToAmplitude", "DensityFunction", "Fade", "FadeShape",
           "FrequencyMasking", "GainType", "Interpolation", "LFCC", "MFCC", "MelScale", "MelSpectrogram", "MelType",
           "Modulation", "MuLawDecoding", "MuLawEncoding", "NormMode", "NormType", "Resample", "ResampleMethod",
           "ScaleType", "SlidingWindowCmn", "Spectrogram", "TimeMasking", "Vol", "WindowType", "create_dct",
           "linear_fbanks", "melscale_fbanks"]


# --- the enums (MindSpore's names and values) ----------------------------------------

def _str_enum(name: str, members: str, upper: bool = False):
    """A str Enum of MindSpore's: its members, each valued by its lower-case name."""
    return Enum(name, [(m, m if upper else m.lower()) for m in members.split()], type=str, module=__name__)


WindowType = _str_enum("WindowType", "BARTLETT BLACKMAN HAMMING HANN KAISER")
BorderType = _str_enum("BorderType", "CONSTANT EDGE REFLECT SYMMETRIC")
NormType = _str_enum("NormType", "SLANEY NONE")
MelType = _str_enum("MelType", "HTK SLANEY")
ScaleType = _str_enum("ScaleType", "POWER MAGNITUDE")
NormMode = _str_enum("NormMode", "ORTHO NONE")
GainType = _str_enum("GainType", "AMPLITUDE POWER DB")
FadeShape = _str_enum("FadeShape", "QUARTER_SINE HALF_SINE LINEAR LOGARITHMIC EXPONENTIAL")
ResampleMethod = _str_enum("ResampleMethod", "SINC_INTERPOLATION KAISER_WINDOW")
DensityFunction = _str_enum("DensityFunction", "TPDF RPDF GPDF", upper=True)
Modulation = _str_enum("Modulation", "SINUSOIDAL TRIANGULAR")
Interpolation = _str_enum("Interpolation", "LINEAR QUADRATIC")


def _enum(op: str, name: str, value, cls) -> str:
    """A member of ``cls`` (MindSpore takes no string) -> its value."""
    if not isinstance(value, cls):
        raise arg_error(TypeError, f"{op}: Argument {name} with value {value!r} is not of type "
                                   f"[{cls.__name__}], but got {type(value).__name__}.")
    return value.value


def _float(op: str, name: str, v, lo=None, **kw) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise arg_error(TypeError, f"{op}: Argument {name} with value {v!r} is not of type [int, float], "
                                   f"but got {type(v).__name__}.")
    return check_number(op, name, v, lo, **kw)


# --- argument groups ------------------------------------------------------------------------

def _stft_attrs(op: str, n_fft, win_length, hop_length, pad, window, power, normalized, center, pad_mode,
                onesided) -> dict:
    n_fft = check_int(op, "n_fft", n_fft, 1)
    win_length = n_fft if win_length is None else check_int(op, "win_length", win_length, 1)
    if win_length > n_fft:
        raise arg_error(ValueError, f"{op}: win_length must be less than or equal to n_fft, but got win_length: "
                                    f"{win_length} and n_fft: {n_fft}.")
    hop_length = win_length // 2 if hop_length is None else check_int(op, "hop_length", hop_length, 1)
    if hop_length < 1:
        raise arg_error(ValueError, f"{op}: the default hop_length win_length // 2 is 0: give a hop_length")
    return {"n_fft": n_fft, "win_length": win_length, "hop_length": hop_length, "pad": check_int(op, "pad", pad, 0),
            "window": _enum(op, "window", window, WindowType), "power": _float(op, "power", power, 0.0),
            "normalized": check_bool(op, "normalized", normalized), "center": check_bool(op, "center", center),
            "pad_mode": _enum(op, "pad_mode", pad_mode, BorderType), "onesided": check_bool(op, "onesided", onesided)}


def _freq_range(op: str, sample_rate, f_min, f_max) -> tuple[int, float, float]:
    sample_rate = check_int(op, "sample_rate", sample_rate, 1)
    f_min = _float(op, "f_min", f_min, 0.0)
    f_max = float(sample_rate // 2) if f_max is None else _float(op, "f_max", f_max, 0.0, lo_open=True)
    if f_min >= f_max:
        raise arg_error(ValueError, f"{op}: f_max should be greater than f_min, but got f_min: {f_min} "
                                    f"and f_max: {f_max}.")
    if f_max > sample_rate // 2:
        raise arg_error(ValueError, f"{op}: f_max should be at most sample_rate // 2 = {sample_rate // 2}, "
                                    f"got {f_max}")
    return sample_rate, f_min, f_max


def _mel_attrs(op: str, n_mels, sample_rate, f_min, f_max, norm, mel_type) -> dict:
    sample_rate, f_min, f_max = _freq_range(op, sample_rate, f_min, f_max)
    return {"n_mels": check_int(op, "n_mels", n_mels, 1), "sample_rate": sample_rate, "f_min": f_min,
            "f_max": f_max, "norm": _enum(op, "norm", norm, NormType),
            "mel_type": _enum(op, "mel_scale" if op != "MelScale" else "mel_type", mel_type, MelType)}


def _kwargs(op: str, name: str, given, defaults: dict) -> dict:
    """MFCC's melkwargs / LFCC's speckwargs with MindSpore's defaults filled in."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise arg_error(TypeError, f"{op}: Argument {name} with value {given!r} is not of type [dict], "
                                   f"but got {type(given).__name__}.")
    unknown = sorted(set(given) - set(defaults) - {"win_length", "hop_length"})
    if unknown:
        raise arg_error(ValueError, f"{op}: {name} has no argument {unknown[0]!r} "
                                    f"(it takes {', '.join(sorted(defaults))}, win_length, hop_length)")
    out = {**defaults, **given}
    out.setdefault("win_length", out["n_fft"])
    out.setdefault("hop_length", out["win_length"] // 2 if is_int(out["win_length"]) else None)
    return out


_STFT_DEFAULTS = {"n_fft": 400, "pad": 0, "window": WindowType.HANN, "power": 2.0, "normalized": False,
                  "center": True, "pad_mode": BorderType.REFLECT, "onesided": True}


def _stft_of(op: str, kw: dict) -> dict:
    return _stft_attrs(op, kw["n_fft"], kw["win_length"], kw["hop_length"], kw["pad"], kw["window"], kw["power"],
                       kw["normalized"], kw["center"], kw["pad_mode"], kw["onesided"])


# --- the transforms ---------------------------------------------------------------------------

class Spectrogram(TensorOperation):
    """[..., time] -> its spectrogram [..., n_fft // 2 + 1, frames]."""
    op_name = "audio.Spectrogram"

    def __init__(self, n_fft=400, win_length=None, hop_length=None, pad=0, window=WindowType.HANN, power=2.0,
                 normalized=False, center=True, pad_mode=BorderType.REFLECT, onesided=True):
        super().__init__(**_stft_attrs("Spectrogram", n_fft, win_length, hop_length, pad, window, power,
                                       normalized, center, pad_mode, onesided))


class MelScale(TensorOperation):
    """[..., n_stft, time] -> [..., n_mels, time]."""
    op_name = "audio.MelScale"

    def __init__(self, n_mels=128, sample_rate=16000, f_min=0.0, f_max=None, n_stft=201, norm=NormType.NONE,
                 mel_type=MelType.HTK):
        attrs = _mel_attrs("MelScale", n_mels, sample_rate, f_min, f_max, norm, mel_type)
        super().__init__(**attrs, n_stft=check_int("MelScale", "n_stft", n_stft, 1))


class MelSpectrogram(TensorOperation):
    """[..., time] -> its mel spectrogram [..., n_mels, frames]."""
    op_name = "audio.MelSpectrogram"

    def __init__(self, sample_rate=16000, n_fft=400, win_length=None, hop_length=None, f_min=0.0, f_max=None,
                 pad=0, n_mels=128, window=WindowType.HANN, power=2.0, normalized=False, center=True,
                 pad_mode=BorderType.REFLECT, onesided=True, norm=NormType.NONE, mel_scale=MelType.HTK):
        op = "MelSpectrogram"
        super().__init__(**_stft_attrs(op, n_fft, win_length, hop_length, pad, window, power, normalized, center,
                                       pad_mode, onesided),
                         **_mel_attrs(op, n_mels, sample_rate, f_min, f_max, norm, mel_scale))


class MFCC(TensorOperation):
    """[..., time] -> its mel-frequency cepstral coefficients [..., n_mfcc, frames]."""
    op_name = "audio.MFCC"

    def __init__(self, sample_rate=16000, n_mfcc=40, dct_type=2, norm=NormMode.ORTHO, log_mels=False,
                 melkwargs=None):
        op = "MFCC"
        if dct_type != 2:
            raise arg_error(ValueError, f"MFCC: Input dct_type must be 2, but got : {dct_type}.")
        kw = _kwargs(op, "melkwargs", melkwargs, {**_STFT_DEFAULTS, "f_min": 0.0, "f_max": None, "n_mels": 128,
                                                  "norm": NormType.NONE, "mel_scale": MelType.HTK})
        super().__init__(**_stft_of(op, kw),
                         **_mel_attrs(op, kw["n_mels"], sample_rate, kw["f_min"], kw["f_max"], kw["norm"],
                                      kw["mel_scale"]),
                         n_mfcc=check_int(op, "n_mfcc", n_mfcc, 1), dct_norm=_enum(op, "norm", norm, NormMode),
                         log_mels=check_bool(op, "log_mels", log_mels))


class LFCC(TensorOperation):
    """[..., time] -> its linear-frequency cepstral coefficients [..., n_lfcc, frames]."""
    op_name = "audio.LFCC"

    def __init__(self, sample_rate=16000, n_filter=128, n_lfcc=40, f_min=0.0, f_max=None, dct_type=2,
                 norm=NormMode.ORTHO, log_lf=False, speckwargs=None):
        op = "LFCC"
        if dct_type != 2:
            raise arg_error(ValueError, f"LFCC: Input dct_type must be 2, but got : {dct_type}.")
        sample_rate, f_min, f_max = _freq_range(op, sample_rate, f_min, f_max)
        kw = _kwargs(op, "speckwargs", speckwargs, _STFT_DEFAULTS)
        super().__init__(**_stft_of(op, kw), sample_rate=sample_rate, f_min=f_min, f_max=f_max,
                         n_filter=check_int(op, "n_filter", n_filter, 1), n_lfcc=check_int(op, "n_lfcc", n_lfcc, 1),
                         dct_norm=_enum(op, "norm", norm, NormMode), log_lf=check_bool(op, "log_lf", log_lf))


class AmplitudeToDB(TensorOperation):
    """A power or magnitude spectrogram -> decibels."""
    op_name = "audio.AmplitudeToDB"

    def __init__(self, stype=ScaleType.POWER, ref_value=1.0, amin=1e-10, top_db=80.0):
        op = "AmplitudeToDB"
        super().__init__(stype=_enum(op, "stype", stype, ScaleType),
                         ref_value=_float(op, "ref_value", ref_value, 0.0, lo_open=True),
                         amin=_float(op, "amin", amin, 0.0, lo_open=True),
                         top_db=_float(op, "top_db", top_db, 0.0, lo_open=True))


class DBToAmplitude(TensorOperation):
    """Decibels -> amplitude: ref * (10^(x / 10))^power."""
    op_name = "audio.DBToAmplitude"

    def __init__(self, ref, power):
        super().__init__(ref=_float("DBToAmplitude", "ref", ref), power=_float("DBToAmplitude", "power", power))


class _Masking(TensorOperation):
    def __init__(self, op: str, param_name: str, iid_masks, mask_param, mask_start, mask_value):
        super().__init__(iid_masks=check_bool(op, "iid_masks", iid_masks),
                         mask_width=check_int(op, param_name, mask_param, 0),
                         mask_start=check_int(op, "mask_start", mask_start, 0),
                         mask_value=_float(op, "mask_value", mask_value, 0.0))


class TimeMasking(_Masking):
    """A band of time steps of [..., freq, time] set to mask_value: time_mask_param
    steps from mask_start, or (iid_masks) a random band of at most time_mask_param."""
    op_name = "audio.TimeMasking"

    def __init__(self, iid_masks=False, time_mask_param=0, mask_start=0, mask_value=0.0):
        super().__init__("TimeMasking", "time_mask_param", iid_masks, time_mask_param, mask_start, mask_value)


class FrequencyMasking(_Masking):
    """A band of frequencies of [..., freq, time] set to mask_value: freq_mask_param
    bins from mask_start, or (iid_masks) a random band of at most freq_mask_param."""
    op_name = "audio.FrequencyMasking"

    def __init__(self, iid_masks=False, freq_mask_param=0, mask_start=0, mask_value=0.0):
        super().__init__("FrequencyMasking", "freq_mask_param", iid_masks, freq_mask_param, mask_start, mask_value)


class ComputeDeltas(TensorOperation):
    """The delta (regression) coefficients of [..., freq, time] along time."""
    op_name = "audio.ComputeDeltas"

    def __init__(self, win_length=5, pad_mode=BorderType.EDGE):
        super().__init__(win_length=check_int("ComputeDeltas", "win_length", win_length, 3),
                         pad_mode=_enum("ComputeDeltas", "pad_mode", pad_mode, BorderType))


class MuLawEncoding(TensorOperation):
    """A waveform in [-1, 1] -> mu-law codes (int32)."""
    op_name = "audio.MuLawEncoding"

    def __init__(self, quantization_channels=256):
        super().__init__(quantization_channels=check_int("MuLawEncoding", "quantization_channels",
                                                         quantization_channels, 1))


class MuLawDecoding(TensorOperation):
    """Mu-law codes -> a waveform in [-1, 1]."""
    op_name = "audio.MuLawDecoding"

    def __init__(self, quantization_channels=256):
        super().__init__(quantization_channels=check_int("MuLawDecoding", "quantization_channels",
                                                         quantization_channels, 1))


class Vol(TensorOperation):
    """The waveform's volume changed by gain, clamped to [-1, 1]."""
    op_name = "audio.Vol"

    def __init__(self, gain, gain_type=GainType.AMPLITUDE):
        gain_type = _enum("Vol", "gain_type", gain_type, GainType)
        lo, lo_open = {"amplitude": (0.0, False), "power": (0.0, True), "db": (None, False)}[gain_type]
        super().__init__(gain=_float("Vol", "gain", gain, lo, lo_open=lo_open), gain_type=gain_type)


class Fade(TensorOperation):
    """The waveform faded in and out."""
    op_name = "audio.Fade"

    def __init__(self, fade_in_len=0, fade_out_len=0, fade_shape=FadeShape.LINEAR):
        super().__init__(fade_in_len=check_int("Fade", "fade_in_len", fade_in_len, 0),
                         fade_out_len=check_int("Fade", "fade_out_len", fade_out_len, 0),
                         fade_shape=_enum("Fade", "fade_shape", fade_shape, FadeShape))


class Resample(TensorOperation):
    """[..., time] resampled from orig_freq to new_freq."""
    op_name = "audio.Resample"

    def __init__(self, orig_freq=16000, new_freq=16000, resample_method=ResampleMethod.SINC_INTERPOLATION,
                 lowpass_filter_width=6, rolloff=0.99, beta=None):
        op = "Resample"
        orig, new = (_float(op, n, v, 0.0, lo_open=True) for n, v in (("orig_freq", orig_freq),
                                                                       ("new_freq", new_freq)))
        if orig != int(orig) or new != int(new):
            raise arg_error(ValueError, f"{op}: irc resamples between whole frequencies, got {orig} -> {new}")
        super().__init__(orig_freq=orig, new_freq=new,
                         resample_method=_enum(op, "resample_method", resample_method, ResampleMethod),
                         lowpass_filter_width=check_int(op, "lowpass_filter_width", lowpass_filter_width, 1),
                         rolloff=_float(op, "rolloff", rolloff, 0.0, hi=1.0, lo_open=True),
                         beta=None if beta is None else _float(op, "beta", beta, 0.0, lo_open=True))


class SlidingWindowCmn(TensorOperation):
    """Sliding-window cepstral mean (and variance) normalisation."""
    op_name = "audio.SlidingWindowCmn"

    def __init__(self, cmn_window=600, min_cmn_window=100, center=False, norm_vars=False):
        op = "SlidingWindowCmn"
        super().__init__(cmn_window=check_int(op, "cmn_window", cmn_window, 0),
                         min_cmn_window=check_int(op, "min_cmn_window", min_cmn_window, 0),
                         center=check_bool(op, "center", center), norm_vars=check_bool(op, "norm_vars", norm_vars))


# --- the filter-bank functions --------------------------------------------------------------------

def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm=NormType.NONE, mel_type=MelType.HTK):
    """The [n_freqs, n_mels] mel filter bank (float32)."""
    a = _mel_attrs("melscale_fbanks", n_mels, sample_rate, f_min, f_max, norm, mel_type)
    n_freqs = check_int("melscale_fbanks", "n_freqs", n_freqs, 1)
    return audio_dsp.mel_fbanks(n_freqs, a["f_min"], a["f_max"], a["n_mels"], a["sample_rate"], a["norm"],
                                a["mel_type"]).astype("float32")


def linear_fbanks(n_freqs, f_min, f_max, n_filter, sample_rate):
    """The [n_freqs, n_filter] linear triangular filter bank (float32)."""
    sample_rate, f_min, f_max = _freq_range("linear_fbanks", sample_rate, f_min, f_max)
    return audio_dsp.linear_fbanks(check_int("linear_fbanks", "n_freqs", n_freqs, 1), f_min, f_max,
                                   check_int("linear_fbanks", "n_filter", n_filter, 1), sample_rate).astype("float32")


def create_dct(n_mfcc, n_mels, norm=NormMode.NONE):
    """The [n_mels, n_mfcc] DCT-II matrix (float32)."""
    return audio_dsp.dct_matrix(check_int("create_dct", "n_mfcc", n_mfcc, 1),
                                check_int("create_dct", "n_mels", n_mels, 1), _enum("create_dct", "norm", norm, NormMode))
