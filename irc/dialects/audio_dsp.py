"""The numpy maths of the ``audio`` dialect (torchaudio's transforms as
MindSpore 2.10 re-implements them in ``audio_utils.cc``).

Every function takes a waveform or spectrogram with any leading axes
(``[..., time]`` or ``[..., freq, time]``), so one call serves a sample and a
batch.  Results are float32 unless the input is float64 (MindSpore keeps
double, and computes integers as float); the sums run in float64 and are
rounded once at the end, which is within FFT rounding of MindSpore's float
maths.  This module imports nothing from irc, so it can be checked against
MindSpore in MindSpore's own environment.
"""
from __future__ import annotations

import math

import numpy as np


def out_dtype(x) -> np.dtype:
    """MindSpore's audio result type: double stays double, the rest is float."""
    return np.dtype(np.float64) if np.asarray(x).dtype == np.float64 else np.dtype(np.float32)


def as_float(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


# --- windows and the STFT ------------------------------------------------------

def window(kind: str, length: int) -> np.ndarray:
    """A periodic window of ``length`` points (torch's ``*_window``; kaiser with beta 12)."""
    n = np.arange(length, dtype=np.float64)
    if kind == "hann":
        return 0.5 - 0.5 * np.cos(2 * np.pi * n / length)
    if kind == "hamming":
        return 0.54 - 0.46 * np.cos(2 * np.pi * n / length)
    if kind == "blackman":
        return 0.42 - 0.5 * np.cos(2 * np.pi * n / length) + 0.08 * np.cos(4 * np.pi * n / length)
    if kind == "bartlett":
        return 1.0 - np.abs(2.0 * n / length - 1.0)
    if kind == "kaiser":
        return np.kaiser(length + 1, 12.0)[:-1] if length > 1 else np.ones(length)
    raise ValueError(f"unknown window {kind!r}")


_PAD_MODES = {"reflect": "reflect", "constant": "constant", "edge": "edge", "symmetric": "symmetric"}


def pad_last(x: np.ndarray, left: int, right: int, mode: str) -> np.ndarray:
    widths = [(0, 0)] * (x.ndim - 1) + [(left, right)]
    return np.pad(x, widths, mode=_PAD_MODES[mode])


def padded_window(kind: str, n_fft: int, win_length: int) -> np.ndarray:
    """The window centred in n_fft points (zeros either side)."""
    w = np.zeros(n_fft)
    left = (n_fft - win_length) // 2
    w[left:left + win_length] = window(kind, win_length)
    return w


def stft(x, n_fft: int, hop: int, win_length: int, window_kind: str, center: bool, pad_mode: str,
         onesided: bool) -> np.ndarray:
    """[..., time] -> complex [..., freq, frames]."""
    x = as_float(x)
    if center:
        if pad_mode == "reflect" and x.shape[-1] <= n_fft // 2:
            raise ValueError(f"the waveform's {x.shape[-1]} samples are too few to reflect-pad by "
                             f"n_fft // 2 = {n_fft // 2}")
        x = pad_last(x, n_fft // 2, n_fft // 2, pad_mode)
    if x.shape[-1] < n_fft:
        raise ValueError(f"the waveform's {x.shape[-1]} samples are fewer than n_fft = {n_fft}")
    frames = 1 + (x.shape[-1] - n_fft) // hop
    index = np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :]
    framed = x[..., index] * padded_window(window_kind, n_fft, win_length)      # [..., frames, n_fft]
    spec = np.fft.rfft(framed, axis=-1) if onesided else np.fft.fft(framed, axis=-1)
    return np.swapaxes(spec, -1, -2)


def spectrogram(x, a: dict) -> np.ndarray:
    """``audio.Spectrogram``: |STFT|^power of [..., time] -> [..., freq, frames]."""
    dtype = out_dtype(x)
    y = as_float(x)
    if a["pad"]:
        y = pad_last(y, a["pad"], a["pad"], "constant")
    spec = stft(y, a["n_fft"], a["hop_length"], a["win_length"], a["window"], a["center"], a["pad_mode"],
                a["onesided"])
    if a["normalized"]:
        spec = spec / np.sqrt(np.sum(window(a["window"], a["win_length"]) ** 2))
    mag = np.abs(spec)
    return (mag if a["power"] == 1 else mag ** a["power"]).astype(dtype)


# --- filter banks ------------------------------------------------------------------

def hz_to_mel(f, mel_type: str):
    f = np.asarray(f, dtype=np.float64)
    if mel_type == "htk":
        return 2595.0 * np.log10(1.0 + f / 700.0)
    f_sp, min_log_hz, min_log_mel, logstep = 200.0 / 3, 1000.0, 15.0, math.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep, f / f_sp)


def mel_to_hz(m, mel_type: str):
    m = np.asarray(m, dtype=np.float64)
    if mel_type == "htk":
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    f_sp, min_log_hz, min_log_mel, logstep = 200.0 / 3, 1000.0, 15.0, math.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


def _triangles(all_freqs: np.ndarray, f_pts: np.ndarray) -> np.ndarray:
    """[n_freqs, n_filters] triangles on the points f_pts (n_filters + 2 of them)."""
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return np.maximum(0.0, np.minimum(down, up))


def mel_fbanks(n_freqs: int, f_min: float, f_max: float, n_mels: int, sample_rate: int, norm: str,
               mel_type: str) -> np.ndarray:
    """``audio.melscale_fbanks``: [n_freqs, n_mels]."""
    all_freqs = np.linspace(0, sample_rate // 2, n_freqs)
    m_pts = np.linspace(hz_to_mel(f_min, mel_type), hz_to_mel(f_max, mel_type), n_mels + 2)
    f_pts = mel_to_hz(m_pts, mel_type)
    fb = _triangles(all_freqs, f_pts)
    if norm == "slaney":
        fb *= 2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels])
    return fb


def linear_fbanks(n_freqs: int, f_min: float, f_max: float, n_filter: int, sample_rate: int) -> np.ndarray:
    """``audio.linear_fbanks``: [n_freqs, n_filter]."""
    return _triangles(np.linspace(0, sample_rate // 2, n_freqs), np.linspace(f_min, f_max, n_filter + 2))


def dct_matrix(n_out: int, n_in: int, norm: str) -> np.ndarray:
    """``audio.create_dct``: the DCT-II as [n_in, n_out], float32 as MindSpore makes it."""
    i = np.arange(n_in, dtype=np.float64)[:, None]
    j = np.arange(n_out, dtype=np.float64)[None, :]
    d = np.cos(np.pi / n_in * (i + 0.5) * j)
    if norm == "ortho":
        d[:, 0] *= 1.0 / math.sqrt(2.0)
        d *= math.sqrt(2.0 / n_in)
    else:
        d *= 2.0
    return d.astype(np.float32)


def apply_fbank(spec, fb: np.ndarray) -> np.ndarray:
    """[..., freq, time] x [freq, k] -> [..., k, time]."""
    spec = as_float(spec)
    if spec.shape[-2] != fb.shape[0]:
        raise ValueError(f"expected {fb.shape[0]} frequency bins (the <..., freq, time> shape's freq), "
                         f"got {spec.shape[-2]}")
    return np.swapaxes(np.swapaxes(spec, -1, -2) @ fb, -1, -2)


# --- decibels ----------------------------------------------------------------------

def amplitude_to_db(x, multiplier: float, amin: float, db_multiplier: float, top_db: float,
                    batched: bool = False) -> np.ndarray:
    """10 or 20 log10(max(x, amin)) - offset, floored top_db below the peak of
    each [channel, freq, time] block (the last three axes of a sample, as
    torchaudio packs them)."""
    db = multiplier * np.log10(np.maximum(as_float(x), amin)) - multiplier * db_multiplier
    if db.size:
        axes = tuple(range(max(db.ndim - 3, 1 if batched else 0), db.ndim))
        db = np.maximum(db, db.max(axis=axes, keepdims=True) - top_db)
    return db


def db_to_amplitude(x, ref: float, power: float) -> np.ndarray:
    return ref * (10.0 ** (0.1 * as_float(x))) ** power


# --- cepstra -----------------------------------------------------------------------

def cepstrum(energies, n_out: int, norm: str, log: bool, batched: bool = False) -> np.ndarray:
    """Mel or linear energies [..., k, time] -> their DCT [..., n_out, time] (float32)."""
    k = energies.shape[-2]
    if log:
        feats = np.log(energies + 1e-6)
    else:
        feats = amplitude_to_db(energies, 10.0, 1e-10, 0.0, 80.0, batched)
    d = dct_matrix(n_out, k, norm).astype(np.float64)
    return np.swapaxes(np.swapaxes(feats, -1, -2) @ d, -1, -2).astype(np.float32)


# --- waveform ops --------------------------------------------------------------------

def compute_deltas(x, win_length: int, pad_mode: str) -> np.ndarray:
    """Regression deltas along time over win_length frames."""
    dtype = out_dtype(x)
    n = (win_length - 1) // 2
    denom = n * (n + 1) * (2 * n + 1) / 3
    y = pad_last(as_float(x), n, n, pad_mode)
    t = x.shape[-1]
    out = sum(k * y[..., n + k:n + k + t] for k in range(-n, n + 1) if k)
    return (out / denom).astype(dtype)


def mu_law_encode(x, channels: int) -> np.ndarray:
    mu = np.float32(channels - 1)
    x = np.asarray(x, dtype=np.float32)
    x_mu = np.sign(x) * np.log1p(mu * np.abs(x)) / np.log1p(mu)
    return ((x_mu + 1) / 2 * mu + np.float32(0.5)).astype(np.int32)


def mu_law_decode(x, channels: int) -> np.ndarray:
    dtype = out_dtype(x)          # computed in that type, as MindSpore does
    mu = dtype.type(channels - 1)
    y = np.asarray(x).astype(dtype) / mu * dtype.type(2) - dtype.type(1)
    return (np.sign(y) * (np.exp(np.abs(y) * np.log1p(mu)) - dtype.type(1)) / mu).astype(dtype)


def fade_curve(n: int, shape: str, out: bool, dtype) -> np.ndarray:
    """The gain over n samples, from a linspace in the waveform's type (MindSpore's)."""
    f = np.linspace(0.0, 1.0, n).astype(dtype).astype(np.float64)
    if not out:
        curves = {"linear": lambda: f, "exponential": lambda: 2.0 ** (f - 1) * f,
                  "logarithmic": lambda: np.log10(0.1 + f) + 1,
                  "quarter_sine": lambda: np.sin(f * np.pi / 2),
                  "half_sine": lambda: np.sin(f * np.pi - np.pi / 2) / 2 + 0.5}
    else:
        curves = {"linear": lambda: 1 - f, "exponential": lambda: 2.0 ** -f * (1 - f),
                  "logarithmic": lambda: np.log10(1.1 - f) + 1,
                  "quarter_sine": lambda: np.sin(f * np.pi / 2 + np.pi / 2),
                  "half_sine": lambda: np.sin(f * np.pi + np.pi / 2) / 2 + 0.5}
    return curves[shape]()


def fade(x, fade_in: int, fade_out: int, shape: str) -> np.ndarray:
    dtype = out_dtype(x)
    t = x.shape[-1]
    if fade_in > t or fade_out > t:
        raise ValueError(f"fade_in_len {fade_in} and fade_out_len {fade_out} must be at most the "
                         f"waveform's length {t}")
    gain = np.ones(t, dtype=dtype)
    gain[:fade_in] = fade_curve(fade_in, shape, False, dtype)
    gain[t - fade_out:] *= fade_curve(fade_out, shape, True, dtype).astype(dtype)
    return np.asarray(x).astype(dtype) * gain


def vol(x, gain: float, gain_type: str) -> np.ndarray:
    dtype = out_dtype(x)
    if gain_type == "db":
        factor = 10.0 ** (gain / 20.0)
    elif gain_type == "power":
        factor = 10.0 ** (10.0 * math.log10(gain) / 20.0)
    else:
        factor = gain
    return np.clip(np.asarray(x).astype(dtype) * dtype.type(factor), -1.0, 1.0).astype(dtype)


def resample_kernel(orig: int, new: int, width_param: int, rolloff: float, method: str, beta):
    """torchaudio's windowed-sinc kernel: [new, 2 * width + orig] and width."""
    base = min(orig, new) * rolloff
    width = math.ceil(width_param * orig / base)
    idx = np.arange(-width, width + orig, dtype=np.float64)[None, :] / orig
    t = np.arange(0, -new, -1, dtype=np.float64)[:, None] / new + idx
    t = np.clip(t * base, -width_param, width_param)
    if method == "sinc_interpolation":
        win = np.cos(t * np.pi / width_param / 2) ** 2
    else:
        b = 14.769656459379492 if beta is None else beta
        win = np.i0(b * np.sqrt(1 - (t / width_param) ** 2)) / np.i0(b)
    t = t * np.pi
    safe = np.where(t == 0, 1.0, t)
    return np.where(t == 0, 1.0, np.sin(safe) / safe) * win * (base / orig), width


def resample(x, orig_freq: float, new_freq: float, method: str, width_param: int, rolloff: float,
             beta) -> np.ndarray:
    dtype = out_dtype(x)
    y = as_float(x)
    if orig_freq == new_freq:
        return y.astype(dtype)
    g = math.gcd(int(orig_freq), int(new_freq))
    orig, new = int(orig_freq) // g, int(new_freq) // g
    kernel, width = resample_kernel(orig, new, width_param, rolloff, method, beta)
    length = y.shape[-1]
    padded = pad_last(y, width, width + orig, "constant")
    frames = (padded.shape[-1] - kernel.shape[1]) // orig + 1
    index = np.arange(frames)[:, None] * orig + np.arange(kernel.shape[1])[None, :]
    out = padded[..., index] @ kernel.T                  # [..., frames, new]
    out = out.reshape(*y.shape[:-1], frames * new)
    return out[..., :math.ceil(new * length / orig)].astype(dtype)


def sliding_window_cmn(x, cmn_window: int, min_cmn_window: int, center: bool, norm_vars: bool) -> np.ndarray:
    """Kaldi's sliding cepstral mean (and variance) normalisation of
    [..., time, feat], torchaudio's running sums (and window edges) included."""
    dtype = out_dtype(x)
    y = as_float(x)
    shape = y.shape
    frames, feats = shape[-2], shape[-1]
    y = y.reshape(-1, frames, feats)
    out = np.zeros_like(y)
    cur_sum = np.zeros((y.shape[0], feats))
    cur_sumsq = np.zeros((y.shape[0], feats))
    last_start = last_end = -1
    for t in range(frames):
        if center:
            start = t - cmn_window // 2
            end = start + cmn_window
        else:
            start, end = t - cmn_window, t + 1
        if start < 0:
            end -= start
            start = 0
        if not center and end > t:
            end = max(t + 1, min_cmn_window)
        if end > frames:
            start -= end - frames
            end = frames
            start = max(start, 0)
        if last_start == -1:
            part = y[:, start:end - start, :]
            cur_sum += part.sum(axis=1)
            if norm_vars:
                cur_sumsq += (part ** 2).sum(axis=1)
        else:
            if start > last_start:
                cur_sum -= y[:, last_start, :]
                if norm_vars:
                    cur_sumsq -= y[:, last_start, :] ** 2
            if end > last_end:
                cur_sum += y[:, last_end, :]
                if norm_vars:
                    cur_sumsq += y[:, last_end, :] ** 2
        n = end - start
        last_start, last_end = start, end
        out[:, t, :] = y[:, t, :] - cur_sum / n
        if norm_vars:
            if n == 1:
                out[:, t, :] = 0.0
            else:
                variance = cur_sumsq / n - cur_sum ** 2 / n ** 2
                out[:, t, :] *= variance ** -0.5
    return out.reshape(shape).astype(dtype)


def mask_along_axis(x, start: int, width: int, value: float, axis: int) -> np.ndarray:
    """[..., freq, time] with [start, start + width) of freq (axis -2) or time (-1) set to value."""
    y = np.array(x, copy=True)
    index = [slice(None)] * y.ndim
    index[axis] = slice(start, start + width)
    y[tuple(index)] = value
    return y
