"""The C++ standard library's random numbers as MindSpore's dataset engine
draws them, bit for bit.

MindSpore's samplers and its ``shuffle`` operator draw from ``std::mt19937``
/ ``std::mt19937_64`` through libstdc++'s ``std::shuffle``,
``uniform_int_distribution``, ``exponential_distribution`` and
``discrete_distribution``.  A script that shuffles its data only reproduces
MindSpore's training run if irc picks the same rows in the same order, so
these are the same algorithms, checked against orders MindSpore 2.10 wrote
(``tests/fixtures/mindspore_orders.json``):

* ``uniform_int_distribution`` scales down by division with rejection (the
  form of the libstdc++ MindSpore 2.10 is built with, before Lemire's);
* ``std::shuffle`` draws two swap positions from one number while the
  range allows it (n <= 65535), one per position after that;
* ``generate_canonical<double>`` sums two 32-bit draws.

numpy's ``MT19937`` seeded with ``_legacy_seeding`` is ``std::mt19937``
(``init_genrand``); ``mt19937_64`` has no numpy twin, so it is written out
here, its twist vectorised.  Draws are made in blocks: a rejected draw puts
the values after it back.
"""
from __future__ import annotations

import abc
import math

import numpy as np

_U32_RANGE = 0xFFFFFFFF          # mt19937's max() - min()
_BLOCK = 4096


class _RawStream(abc.ABC):
    """Raw engine output in blocks, with unused values handed back; a
    subclass's ``_outputs(m)`` makes the engine's next ``m`` (or more)
    outputs, each in [MIN, MIN + RANGE] (the engine's ``min()`` and
    ``max() - min()``)."""
    MIN, RANGE = 0, _U32_RANGE

    def __init__(self):
        self._buf = np.zeros(0, np.uint64)
        self._at = 0

    @abc.abstractmethod
    def _outputs(self, m: int) -> np.ndarray:
        """The engine's next ``m`` or more outputs (uint64)."""

    def take(self, m: int) -> np.ndarray:
        """The next ``m`` outputs (uint64)."""
        left = len(self._buf) - self._at
        if left < m:
            self._buf = np.concatenate([self._buf[self._at:], self._outputs(max(m - left, _BLOCK))])
            self._at = 0
        out = self._buf[self._at:self._at + m]
        self._at += m
        return out

    def give_back(self, m: int) -> None:
        """Un-take the last ``m`` values taken."""
        self._at -= m

    def __call__(self) -> int:
        return int(self.take(1)[0])


# numpy's MT19937 of streams no longer used: a new one costs ~110 us (its
# SeedSequence's hashing), a reseed 1.5 us, and every epoch of a shuffled
# source makes one (ImageFolder's 60-image epochs: 2% of their time).
_SPARE_BITS: list = []
_SPARE_BITS_MAX = 16


class Mt19937(_RawStream):
    """``std::mt19937(seed)``."""

    def __init__(self, seed: int):
        try:
            self._bits = _SPARE_BITS.pop()
        except IndexError:
            self._bits = np.random.MT19937(0)
        self._bits._legacy_seeding(int(seed) & 0xFFFFFFFF)
        super().__init__()

    def _outputs(self, m: int) -> np.ndarray:
        return self._bits.random_raw(m).astype(np.uint64, copy=False)

    def __del__(self):
        bits = getattr(self, "_bits", None)
        if bits is not None and len(_SPARE_BITS) < _SPARE_BITS_MAX:
            _SPARE_BITS.append(bits)


class Mt19937_64(_RawStream):
    """``std::mt19937_64(seed)``."""
    RANGE = 2**64 - 1

    _N, _M = 312, 156
    _UPPER, _LOWER = np.uint64(0xFFFFFFFF80000000), np.uint64(0x7FFFFFFF)
    _MATRIX = np.uint64(0xB5026F5AA96619E9)

    def __init__(self, seed: int):
        super().__init__()
        state = [int(seed) & 0xFFFFFFFFFFFFFFFF]
        for i in range(1, self._N):
            prev = state[-1]
            state.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & 0xFFFFFFFFFFFFFFFF)
        self._state = np.array(state, np.uint64)

    def _mix(self, upper: np.ndarray, lower: np.ndarray, far: np.ndarray) -> np.ndarray:
        y = (upper & self._UPPER) | (lower & self._LOWER)
        return far ^ (y >> np.uint64(1)) ^ ((y & np.uint64(1)) * self._MATRIX)

    def _twist(self) -> None:
        # in three runs: every value a run reads is final before the run starts
        mt, n, m = self._state, self._N, self._M
        mt[:n - m] = self._mix(mt[:n - m], mt[1:n - m + 1], mt[m:])
        mt[n - m:n - 1] = self._mix(mt[n - m:n - 1], mt[n - m + 1:], mt[:m - 1])
        mt[n - 1:] = self._mix(mt[n - 1:], mt[:1], mt[m - 1:m])

    def _outputs(self, m: int) -> np.ndarray:
        """The next whole twists' tempered outputs, at least ``m``."""
        blocks = []
        for _ in range(-(-m // self._N)):
            self._twist()
            y = self._state.copy()
            y ^= (y >> np.uint64(29)) & np.uint64(0x5555555555555555)
            y ^= (y << np.uint64(17)) & np.uint64(0x71D67FFFEDA60000)
            y ^= (y << np.uint64(37)) & np.uint64(0xFFF7EEE000000000)
            y ^= y >> np.uint64(43)
            blocks.append(y)
        return np.concatenate(blocks)


class MinstdRand0(_RawStream):
    """``std::minstd_rand0(seed)``, libstdc++'s ``std::default_random_engine``
    (what MindRecord's shuffles draw from): x <- 16807 x mod (2**31 - 1)."""
    MIN, RANGE = 1, 2**31 - 3
    _A, _M = 16807, 2**31 - 1
    _POWERS = None              # A**1 .. A**_BLOCK mod M: a block is x * powers mod M

    def __init__(self, seed: int):
        x = int(seed) % self._M
        self._x = x or 1
        super().__init__()

    def _outputs(self, m: int) -> np.ndarray:
        cls = type(self)
        if cls._POWERS is None:
            powers = [cls._A]
            for _ in range(_BLOCK - 1):
                powers.append(powers[-1] * cls._A % cls._M)
            cls._POWERS = np.array(powers, np.uint64)
        blocks = []
        for _ in range(-(-m // _BLOCK)):
            block = np.uint64(self._x) * cls._POWERS % np.uint64(cls._M)   # < 2**62: exact
            self._x = int(block[-1])
            blocks.append(block)
        return np.concatenate(blocks)


# -- distributions -----------------------------------------------------------------

def uniform_below(gen: _RawStream, bounds) -> np.ndarray:
    """One ``uniform_int_distribution(0, bound - 1)(gen)`` per bound, in order
    (each bound in [1, gen.RANGE + 1])."""
    bounds = np.asarray(bounds, dtype=np.uint64).reshape(-1)
    out = np.empty(len(bounds), np.uint64)
    # a bound of RANGE + 1 takes the raw draw: scaling 1, nothing rejected
    scaling = np.where(bounds > gen.RANGE, np.uint64(1), np.uint64(gen.RANGE) // np.maximum(bounds, 1))
    past = bounds * scaling
    expected_rejections = float(np.sum(1.0 - past / (gen.RANGE + 1.0)))
    if expected_rejections > len(bounds) / 256:
        return _uniform_scalar(gen, past, scaling)
    i, chunk = 0, _BLOCK
    while i < len(bounds):
        m = min(len(bounds) - i, chunk)
        raw = gen.take(m) - np.uint64(gen.MIN)
        rejected = raw >= past[i:i + m]
        j = int(rejected.argmax()) if rejected.any() else m
        out[i:i + j] = raw[:j] // scaling[i:i + j]
        if j < m:                       # draw j again from the value after the rejected one
            gen.give_back(m - j - 1)
            chunk = max(64, 2 * (j + 1))
        else:
            chunk = min(2 * chunk, 1 << 20)
        i += j
    return out


def uniform_int(gen: _RawStream, bound: int) -> int:
    """One ``uniform_int_distribution(0, bound - 1)(gen)`` (bound <= RANGE):
    uniform_below for a single draw, without arrays."""
    scaling = gen.RANGE // bound
    past = bound * scaling
    while True:
        x = gen() - gen.MIN
        if x < past:
            return x // scaling


def _uniform_scalar(gen: Mt19937, past: np.ndarray, scaling: np.ndarray) -> np.ndarray:
    """uniform_below one draw at a time: cheaper than re-aligning blocks
    where rejections are frequent (bounds near 2**32)."""
    raw = gen.take(2 * len(past) + 64).tolist()
    at, out = 0, []
    for limit, scale in zip(past.tolist(), scaling.tolist()):
        while True:
            if at == len(raw):
                raw, at = gen.take(len(past) + 64).tolist(), 0
            x = raw[at] - gen.MIN
            at += 1
            if x < limit:
                break
        out.append(x // scale)
    gen.give_back(len(raw) - at)
    return np.asarray(out, dtype=np.uint64)


def canonical(gen: Mt19937, m: int) -> np.ndarray:
    """``m`` draws of ``generate_canonical<double, 53>(gen)``."""
    raw = gen.take(2 * m).reshape(m, 2).astype(np.float64)
    u = (raw[:, 0] + raw[:, 1] * 4294967296.0) / 18446744073709551616.0
    return np.minimum(u, np.nextafter(1.0, 0.0))


def canonical_float(gen: Mt19937, m: int) -> np.ndarray:
    """``m`` draws of ``generate_canonical<float, 24>(gen)`` (what
    ``uniform_real_distribution<float>`` scales): one 32-bit draw made a
    float, divided by 2**32 in float, kept below 1; as float64."""
    u = gen.take(m).astype(np.float32) / np.float32(4294967296.0)
    return np.minimum(u, np.nextafter(np.float32(1.0), np.float32(0.0))).astype(np.float64)


def exponential(gen: Mt19937, m: int) -> np.ndarray:
    """``m`` draws of ``exponential_distribution<double>(1)(gen)``; libm's log
    (math.log), as the C++ calls it."""
    return np.array([-math.log(1.0 - u) for u in canonical(gen, m).tolist()], np.float64)


def discrete(gen: Mt19937, weights, m: int) -> np.ndarray:
    """``m`` draws of ``discrete_distribution<int64_t>(weights)(gen)``: the
    first index whose cumulative probability reaches the draw."""
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    total = np.cumsum(w)[-1]               # std::accumulate: in order
    cumulative = np.cumsum(w / total)
    cumulative[-1] = 1.0
    return np.searchsorted(cumulative, canonical(gen, m), side="left").astype(np.int64)


# -- std::sample -------------------------------------------------------------------

def sample_indices(gen: _RawStream, population: int, n: int) -> list[int]:
    """The indices ``std::sample(first, last, out, n, gen)`` keeps of a
    forward range of ``population``: selection sampling in order, two
    positions' draws from one number while the range allows it."""
    kept: list[int] = []
    left, n, i = population, min(n, population), 0
    if left and gen.RANGE // left >= left:
        while n and left >= 2:
            first, second = divmod(uniform_int(gen, left * (left - 1)), left - 1)
            left -= 1
            if first < n:
                kept.append(i)
                n -= 1
            i += 1
            if not n:
                break
            left -= 1
            if second < n:
                kept.append(i)
                n -= 1
            i += 1
    while n:
        left -= 1
        if uniform_int(gen, left + 1) < n:
            kept.append(i)
            n -= 1
        i += 1
    return kept


# -- std::shuffle ------------------------------------------------------------------

def shuffle_order(gen: _RawStream, n: int) -> np.ndarray:
    """The permutation ``std::shuffle(v.begin(), v.end(), gen)`` applies:
    afterwards ``v[i]`` holds what ``v[order[i]]`` held."""
    order = list(range(n))
    if n < 2:
        return np.arange(n, dtype=np.int64)
    if gen.RANGE // n >= n:
        # two swap positions from one draw in [0, s * (s + 1)): for positions
        # i and i + 1, s = i + 1 (after one lone swap when n is even)
        lone = n % 2 == 0
        firsts = np.arange(2 if lone else 1, n, 2, dtype=np.uint64) + np.uint64(1)
        bounds = firsts * (firsts + np.uint64(1))
        draws = uniform_below(gen, np.concatenate([[2], bounds]) if lone else bounds)
        i = 1
        if lone:
            j = int(draws[0])
            order[1], order[j] = order[j], order[1]
            draws, i = draws[1:], 2
        for x, s in zip(draws.tolist(), firsts.tolist()):
            j, k = divmod(x, s + 1)
            order[i], order[j] = order[j], order[i]
            order[i + 1], order[k] = order[k], order[i + 1]
            i += 2
    else:
        draws = uniform_below(gen, np.arange(2, n + 1, dtype=np.uint64))
        for i, j in enumerate(draws.tolist(), start=1):
            order[i], order[j] = order[j], order[i]
    return np.asarray(order, dtype=np.int64)
