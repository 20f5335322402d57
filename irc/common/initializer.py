"""``mindspore.common.initializer``: how weights get their first values.

The random initializers draw MindSpore 2.10's numbers, bit for bit.  As
MindSpore's, each tensor takes one number from numpy's global generator,
``np.random.randint(1, 2**63, dtype=np.int64)`` (its ``_numpy_seed``), so
``np.random.seed`` and ``set_seed`` give MindSpore's weights and leave numpy's
generator where MindSpore leaves it.  That number seeds MindSpore's own
generator (C++: ``_random_uniform``, ``_random_normal``, ``_truncated_normal``
in ``mindspore/ccsrc/pybind_api/initializer/init_random.cc``, the maths in
``mindspore/ccsrc/include/common/random.h``), written here again in numpy:

- the stream: Philox-4x32-10, key ``(seed lo, seed hi)``, counter
  ``(i lo, i hi, seed lo, seed hi)`` for the i-th block of four uint32s;
  element k takes uint32 k (a normal pair, elements 2j and 2j + 1, takes
  uint32s 2j and 2j + 1), so MindSpore's worker threads, which each
  ``discard`` to their first element, change nothing;
- uniform ``U(a, b)``: ``(b - a) * (u / 2**32) + a``;
- normal: Box-Muller on the low 23 bits of each uint32 (``u = max(bits /
  2**23, 1e-7f)``; ``x = sqrt(-2 log u1) * sigma``, ``y = 2 * 3.1415926f * u2``;
  the pair ``mean + x cos y``, ``mean + x sin y``);
- truncated normal: the inverse CDF, ``erfc`` at the bounds and boost's
  ``erf_inv`` rational approximations at ``cdf(a) + u (cdf(b) - cdf(a))``;

in double from the arguments rounded to float32 (the C++ takes floats), each
element rounded to float32 at the end; a tensor of another dtype gets the
float32 values cast, as MindSpore's.  The transcendental functions are
numpy's float64 ones (glibc's, as MindSpore's, where numpy has no SIMD
version of its own).

Fans follow MindSpore: for a weight ``[out, in, *kernel]`` fan_in is
``in * prod(kernel)`` and fan_out ``out * prod(kernel)``.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import numpy as np

from ..diagnostics import UserNotImplementedError, UserTypeError, UserValueError, missing_names, user_frame
from . import dtype as mstype


# -----------------------------------------------------------------------------
# MindSpore's generators

def _numpy_seed() -> int:
    """MindSpore's ``_numpy_seed``: one draw from numpy's global generator per
    initialised tensor (``np.random.seed`` makes it reproducible)."""
    return int(np.random.randint(low=1, high=(1 << 63), dtype=np.int64))


_PHILOX_M0 = np.uint64(0xD2511F53)
_PHILOX_M1 = np.uint64(0xCD9E8D57)
_LOW32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)
_CHUNK = 1 << 17         # uint32s per pass: the work arrays stay in cache
_THREADS_FROM = 1 << 18  # a tensor this large is drawn on threads (numpy lets go of the GIL)


def _philox_key(seed: int) -> tuple:
    """The round keys of MindSpore's ``random::Philox(seed)``, and round 1's
    results that do not depend on the block index."""
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    lo, hi = seed & 0xFFFFFFFF, seed >> 32
    keys, k0, k1 = [], lo, hi
    for _ in range(10):
        keys.append((np.uint64(k0), np.uint64(k1)))
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    t1 = int(_PHILOX_M1) * lo                      # counter (i lo, i hi, lo, hi), key (lo, hi)
    c0 = np.uint64((t1 >> 32) ^ lo)                # hi(M1 * c2) ^ key0, then ^ c1
    c1 = np.uint64(t1 & 0xFFFFFFFF)                # lo(M1 * c2); c2 = hi(M0 * c0) ^ c3 ^ key1
    return keys[1:], c0, c1


def _philox_blocks(key: tuple, start: int, n: int) -> np.ndarray:
    """Blocks ``start .. start + n`` of the stream: ``4 n`` uint32s."""
    keys, first_c0, first_c1 = key
    a0, a1, a2, a3, b0, b1 = (np.empty(n, np.uint64) for _ in range(6))
    block = np.arange(start, start + n, dtype=np.uint64)
    np.right_shift(block, _SHIFT32, out=a0)        # the block index's high half
    a0 ^= first_c0
    a1.fill(first_c1)
    block &= _LOW32                                # and its low half
    np.multiply(block, _PHILOX_M0, out=b0)
    np.right_shift(b0, _SHIFT32, out=a2)           # (c3 ^ key1 = hi ^ hi = 0)
    np.bitwise_and(b0, _LOW32, out=a3)
    for k0, k1 in keys:
        np.multiply(a0, _PHILOX_M0, out=b0)
        np.multiply(a2, _PHILOX_M1, out=b1)
        np.bitwise_xor(a1, k0, out=a0)             # c0 = hi(M1 c2) ^ c1 ^ k0
        np.right_shift(b1, _SHIFT32, out=a2)
        a0 ^= a2
        np.bitwise_and(b1, _LOW32, out=a1)         # c1 = lo(M1 c2)
        np.bitwise_xor(a3, k1, out=a2)             # c2 = hi(M0 c0) ^ c3 ^ k1
        np.right_shift(b0, _SHIFT32, out=b1)
        a2 ^= b1
        np.bitwise_and(b0, _LOW32, out=a3)         # c3 = lo(M0 c0)
    out = np.empty((n, 4), np.uint32)
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = a0, a1, a2, a3
    return out.reshape(-1)


def _threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


def _stream(seed: int, count: int, fill, chunk: Optional[int] = None) -> None:
    """``fill(offset, bits)`` for the uint32s ``offset .. offset + len(bits)``
    of MindSpore's ``random::Philox(seed)`` stream, over its first ``count``:
    chunk by chunk, on worker threads for a large count (each chunk writes its
    own slice: the same numbers either way)."""
    key = _philox_key(seed)
    chunk = max(4, (chunk or _CHUNK) // 4 * 4)

    def run(offset: int) -> None:
        length = min(chunk, count - offset)
        fill(offset, _philox_blocks(key, offset // 4, (length + 3) // 4)[:length])

    offsets = range(0, count, chunk)
    workers = min(_threads(), len(offsets)) if count >= _THREADS_FROM else 1
    if workers > 1:
        with ThreadPoolExecutor(workers, thread_name_prefix="irc-init") as pool:
            for _ in pool.map(run, offsets):
                pass
    else:
        for offset in offsets:
            run(offset)


def _f32(value) -> float:
    """An argument as MindSpore's C++ receives it (a float), in double."""
    return float(np.float32(value))


def _random_uniform(seed: int, size: int, a, b) -> np.ndarray:
    """MindSpore's ``_random_uniform(seed, arr, a, b)``: float32 U(a, b)."""
    a, b = _f32(a), _f32(b)
    scale = (b - a) * 2.0 ** -32       # (b - a) * (u / 2**32): one rounding either way
    out = np.empty(size, np.float32)

    def fill(offset, bits):
        values = bits.astype(np.float64)
        values *= scale
        values += a
        out[offset:offset + len(bits)] = values
    _stream(seed, size, fill)
    return out


_NORMAL_FLOOR = float(np.float32(1.0e-7))
_TWO_PI = 2.0 * float(np.float32(3.1415926))


def _random_normal(seed: int, size: int, mean, sigma) -> np.ndarray:
    """MindSpore's ``_random_normal(seed, arr, mean, sigma)``: float32
    N(mean, sigma) by Box-Muller, two elements per pair of uint32s."""
    mean, sigma = _f32(mean), _f32(sigma)
    count = size + (size & 1)
    out = np.empty(count, np.float32)

    def fill(offset, bits):
        u = np.bitwise_and(bits, np.uint32(0x7FFFFF)).astype(np.float64)
        u *= 2.0 ** -23
        np.maximum(u, _NORMAL_FLOOR, out=u)
        x = np.log(u[0::2])
        x *= -2.0
        np.sqrt(x, out=x)
        x *= sigma
        y = u[1::2] * _TWO_PI
        part = np.cos(y)
        part *= x
        part += mean
        out[offset:offset + len(bits):2] = part
        np.sin(y, out=part)
        part *= x
        part += mean
        out[offset + 1:offset + len(bits):2] = part
    _stream(seed, count, fill)
    return out[:size]


# boost's erf_inv rational approximations, as MindSpore's TruncatedNormal has them
_ERF_INV_SMALL = (  # p <= 0.5
    0.0891314744949340820313,
    (-0.000508781949658280665617, -0.00836874819741736770379, 0.0334806625409744615033,
     -0.0126926147662974029034, -0.0365637971411762664006, 0.0219878681111168899165,
     0.00822687874676915743155, -0.00538772965071242932965),
    (1.0, -0.970005043303290640362, -1.56574558234175846809, 1.56221558398423026363,
     0.662328840472002992063, -0.71228902341542847553, -0.0527396382340099713954,
     0.0795283687341571680018, -0.00233393759374190016776, 0.000886216390456424707504))
_ERF_INV_MID = (  # q >= 0.25
    2.249481201171875,
    (-0.202433508355938759655, 0.105264680699391713268, 8.37050328343119927838,
     17.6447298408374015486, -18.8510648058714251895, -44.6382324441786960818,
     17.445385985570866523, 21.1294655448340526258, -3.67192254707729348546),
    (1.0, 6.24264124854247537712, 3.9713437953343869095, -28.6608180499800029974,
     -20.1432634680485188801, 48.5609213108739935468, 10.8268667355460159008,
     -22.6436933413139721736, 1.72114765761200282724))
_ERF_INV_TAIL = (  # x = sqrt(-log q): (below, offset, Y, P, Q)
    (3.0, 1.125, 0.807220458984375,
     (-0.131102781679951906451, -0.163794047193317060787, 0.117030156341995252019,
      0.387079738972604337464, 0.337785538912035898924, 0.142869534408157156766,
      0.0290157910005329060432, 0.00214558995388805277169, -0.679465575181126350155e-6,
      0.285225331782217055858e-7, -0.681149956853776992068e-9),
     (1.0, 3.46625407242567245975, 5.38168345707006855425, 4.77846592945843778382,
      2.59301921623620271374, 0.848854343457902036425, 0.152264338295331783612,
      0.01105924229346489121)),
    (6.0, 3.0, 0.93995571136474609375,
     (-0.0350353787183177984712, -0.00222426529213447927281, 0.0185573306514231072324,
      0.00950804701325919603619, 0.00187123492819559223345, 0.000157544617424960554631,
      0.460469890584317994083e-5, -0.230404776911882601748e-9, 0.266339227425782031962e-11),
     (1.0, 1.3653349817554063097, 0.762059164553623404043, 0.220091105764131249824,
      0.0341589143670947727934, 0.00263861676657015992959, 0.764675292302794483503e-4)),
    (18.0, 6.0, 0.98362827301025390625,
     (-0.0167431005076633737133, -0.00112951438745580278863, 0.00105628862152492910091,
      0.000209386317487588078668, 0.149624783758342370182e-4, 0.449696789927706453732e-6,
      0.462596163522878599135e-8, -0.281128735628831791805e-13, 0.99055709973310326855e-16),
     (1.0, 0.591429344886417493481, 0.138151865749083321638, 0.0160746087093676504695,
      0.000964011807005165528527, 0.275335474764726041141e-4, 0.282243172016108031869e-6)),
    (44.0, 18.0, 0.99714565277099609375,
     (-0.0024978212791898131227, -0.779190719229053954292e-5, 0.254723037413027451751e-4,
      0.162397777342510920873e-5, 0.396341011304801168516e-7, 0.411632831190944208473e-9,
      0.145596286718675035587e-11, -0.116765012397184275695e-17),
     (1.0, 0.207123112214422517181, 0.0169410838120975906478, 0.000690538265622684595676,
      0.145007359818232637924e-4, 0.144437756628144157666e-6, 0.509761276599778486139e-9)),
    (math.inf, 44.0, 0.99941349029541015625,
     (-0.000539042911019078575891, -0.28398759004727721098e-6, 0.899465114892291446442e-6,
      0.229345859265920864296e-7, 0.225561444863500149219e-9, 0.947846627503022684216e-12,
      0.135880130108924861008e-14, -0.348890393399948882918e-21),
     (1.0, 0.0845746234001899436914, 0.00282092984726264681981, 0.468292921940894236786e-4,
      0.399968812193862100054e-6, 0.161809290887904476097e-8, 0.231558608310259605225e-11)),
)
_ROOT_TWO = float(np.float32(1.4142135))
_Z_LOW = float(np.nextafter(np.float32(0), np.float32(2)))
_Z_HIGH = float(np.nextafter(np.float32(2), np.float32(0)))


def _polynomial(coefficients, x: np.ndarray) -> np.ndarray:
    """Horner's rule from the highest coefficient, as MindSpore's."""
    total = x * coefficients[-1]
    total += coefficients[-2]
    for c in coefficients[-3::-1]:
        total *= x
        total += c
    return total


def _erf_inv_small(p: np.ndarray) -> np.ndarray:     # p <= 0.5
    y, num, den = _ERF_INV_SMALL
    g = p + 10.0
    g *= p
    r = _polynomial(num, p)
    r /= _polynomial(den, p)
    r *= g
    g *= y
    g += r                                          # g * Y + g * r
    return g


def _erf_inv_mid(q: np.ndarray) -> np.ndarray:       # q >= 0.25
    y, num, den = _ERF_INV_MID
    g = np.log(q)
    g *= -2.0
    np.sqrt(g, out=g)
    xs = q - 0.25
    r = _polynomial(num, xs)
    r /= _polynomial(den, xs)
    r += y
    g /= r                                          # g / (Y + r)
    return g


def _erf_inv_tail(q: np.ndarray) -> np.ndarray:      # q < 0.25
    x = np.log(q)
    np.negative(x, out=x)
    np.sqrt(x, out=x)
    out = np.empty_like(x)
    done = np.zeros(x.shape, bool)
    for below, offset, y, num, den in _ERF_INV_TAIL:
        if not done.any() and x.max() < below:   # all in this range (x < 3 mostly)
            here, v = slice(None), x
        else:
            here = (x < below) & ~done
            done |= here
            if not here.any():
                continue
            v = x[here]
        xs = v - offset
        r = _polynomial(num, xs)
        r /= _polynomial(den, xs)
        r *= v
        v = v * y
        v += r                                      # Y * x + R * x
        out[here] = v
        if isinstance(here, slice):
            break
    return out


def _erf_inv(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """boost's ``erf_inv_imp(p, q)`` (q = 1 - p), element by element."""
    small = p <= 0.5
    if small.all():
        return _erf_inv_small(p)
    out = np.empty_like(p)
    out[small] = _erf_inv_small(p[small])
    mid = q >= 0.25
    mid &= ~small
    out[mid] = _erf_inv_mid(q[mid])
    small |= mid                                    # now: not in the tail
    if not small.all():
        tail = ~small
        out[tail] = _erf_inv_tail(q[tail])
    return out


def _truncated_normal(seed: int, size: int, a, b, mean, sigma) -> np.ndarray:
    """MindSpore's ``_truncated_normal(seed, arr, a, b, mean, sigma)``: float32
    N(mean, sigma) restricted to [a, b] by the inverse CDF."""
    a, b, mean, sigma = _f32(a), _f32(b), _f32(mean), _f32(sigma)
    if not sigma > 0:
        raise UserValueError(f"TruncatedNormal: sigma must be positive, got {sigma}",
                             where=user_frame())

    def cdf(x: float) -> float:
        return math.erfc(-(x / _ROOT_TWO)) / 2.0

    cdf_a, cdf_b = cdf((a - mean) / sigma), cdf((b - mean) / sigma)
    width = cdf_b - cdf_a
    out = np.empty(size, np.float32)

    def fill(offset, bits):
        z = bits.astype(np.float64)        # z = 2 (cdf_a + u (cdf_b - cdf_a)), u = bits / 2**32
        z *= width * 2.0 ** -31            # (scaling by 2 is exact: one rounding as MindSpore's)
        z += 2.0 * cdf_a
        if z.min() <= 0.0:                 # erfc_inv keeps z inside (0, 2)
            z[z <= 0.0] = _Z_LOW
        if z.max() >= 2.0:
            z[z >= 2.0] = _Z_HIGH
        upper = z > 1.0
        q = np.subtract(2.0, z, out=z, where=upper)   # q = 2 - z above 1, else z
        p = 1.0 - q                                   # p = 1 - q either way
        x = _erf_inv(p, q)
        x *= -_ROOT_TWO                    # -erfc_inv(z) * sqrt(2), erfc_inv's sign
        np.negative(x, out=x, where=upper)
        x *= sigma
        x += mean
        out[offset:offset + len(bits)] = x
    _stream(seed, size, fill, _CHUNK // 4)
    return out


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def _uniform(shape, a, b) -> np.ndarray:
    return _random_uniform(_numpy_seed(), _size(shape), a, b).reshape(shape)


def _normal(shape, mean, sigma) -> np.ndarray:
    if sigma < 0:
        raise UserValueError(f"a normal initializer's sigma must not be negative, got {sigma}",
                             where=user_frame())
    return _random_normal(_numpy_seed(), _size(shape), mean, sigma).reshape(shape)


# -----------------------------------------------------------------------------
# the initializers

def _fans(shape) -> tuple[int, int]:
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity: str, param: float) -> float:
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        return math.sqrt(2.0 / (1 + param ** 2))
    raise UserValueError(f"unknown nonlinearity {nonlinearity!r} for He initialisation",
                         where=user_frame(),
                         hint="use 'relu', 'leaky_relu', 'tanh', 'sigmoid' or 'linear'")


def _at_least_2d(shape, what: str) -> None:
    if len(shape) < 2:
        raise UserValueError(f"{what} needs a tensor of at least 2 dimensions, got shape "
                             f"{list(shape)}", where=user_frame())


class Initializer:
    """Base class: ``init(arr)`` fills a numpy array in place (as MindSpore's).
    irc's initializers give their values by ``_values(shape)``; a user's
    subclass written for MindSpore overrides ``_initialize(arr)`` instead
    (the model zoo's KaimingUniform), and fills the array it is given."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def __call__(self, arr: np.ndarray) -> None:
        return self._initialize(arr)

    def _initialize(self, arr: np.ndarray) -> None:
        arr[...] = self._values(tuple(arr.shape))

    def _values(self, shape: tuple) -> np.ndarray:
        """The initial values for ``shape``: float32 for a random initializer
        (MindSpore's draws), float64 otherwise; cast by the caller."""
        # the abstract base: a user's subclass that defines neither method
        raise UserNotImplementedError(f"Must be overridden! {type(self).__name__} defines neither "
                                      f"_initialize(self, arr) nor _values(self, shape)",
                                      where=user_frame(),
                                      hint="fill the array in _initialize(self, arr), as MindSpore's "
                                           "initializers do")

    def _fills_in_place(self) -> bool:
        """A subclass of MindSpore's kind: only its ``_initialize`` says what it makes."""
        return type(self)._initialize is not Initializer._initialize

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


class Zero(Initializer):
    def _values(self, shape):
        return np.zeros(shape)


class One(Initializer):
    def _values(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _values(self, shape):
        return np.full(shape, self.value)


class Identity(Initializer):
    """A 2-D identity matrix (``np.eye``)."""

    def _values(self, shape):
        if len(shape) != 2:
            raise UserValueError(f"Identity initializes 2-D tensors only, got shape "
                                 f"{list(shape)}", where=user_frame())
        return np.eye(shape[0], shape[1])


class Dirac(Initializer):
    """Dirac delta kernels for a 3-, 4- or 5-D convolution weight, per group."""

    def __init__(self, groups: int = 1):
        super().__init__(groups=groups)
        self.groups = groups

    def _values(self, shape):
        if len(shape) not in (3, 4, 5):
            raise UserValueError(f"Dirac initializes 3-, 4- or 5-D tensors only, got shape "
                                 f"{list(shape)}", where=user_frame())
        if shape[0] % self.groups:
            raise UserValueError(f"Dirac: the first dimension ({shape[0]}) must divide by "
                                 f"groups ({self.groups})", where=user_frame())
        data = np.zeros(shape)
        per_group = shape[0] // self.groups
        centre = tuple(d // 2 for d in shape[2:])
        for group in range(self.groups):
            for dim in range(min(per_group, shape[1])):
                data[(group * per_group + dim, dim) + centre] = 1
        return data


class Normal(Initializer):
    """N(mean, sigma)."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma, self.mean = sigma, mean

    def _values(self, shape):
        return _normal(shape, self.mean, self.sigma)


class TruncatedNormal(Initializer):
    """N(mean, sigma) restricted to [a, b] (MindSpore's inverse-CDF draw)."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0, b: float = 2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        if a >= b:
            raise UserValueError(f"TruncatedNormal: a ({a}) must be below b ({b})",
                                 where=user_frame())
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def _values(self, shape):
        return _truncated_normal(_numpy_seed(), _size(shape), self.a, self.b, self.mean,
                                 self.sigma).reshape(shape)


class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _values(self, shape):
        return _uniform(shape, -self.scale, self.scale)


class XavierUniform(Initializer):
    """U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, gain: float = 1):
        super().__init__(gain=gain)
        self.gain = gain

    def _values(self, shape):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _uniform(shape, -bound, bound)


class XavierNormal(Initializer):
    """N(0, gain * sqrt(2 / (fan_in + fan_out)))."""

    def __init__(self, gain: float = 1):
        super().__init__(gain=gain)
        self.gain = gain

    def _values(self, shape):
        fan_in, fan_out = _fans(shape)
        return _normal(shape, 0.0, self.gain * math.sqrt(2.0 / float(fan_in + fan_out)))


class _He(Initializer):
    def __init__(self, negative_slope: float = 0, mode: str = "fan_in",
                 nonlinearity: str = "leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        if mode not in ("fan_in", "fan_out"):
            raise UserValueError(f"{type(self).__name__}: mode must be 'fan_in' or 'fan_out', "
                                 f"got {mode!r}", where=user_frame())
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _std(self, shape) -> float:
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


class HeUniform(_He):
    """U(-b, b), b = gain * sqrt(3 / fan) (Kaiming uniform)."""

    def _values(self, shape):
        bound = math.sqrt(3.0) * self._std(shape)
        return _uniform(shape, -bound, bound)


class HeNormal(_He):
    """N(0, gain / sqrt(fan)) (Kaiming normal)."""

    def _values(self, shape):
        return _normal(shape, 0.0, self._std(shape))


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix, trailing dimensions flattened: the Q of a
    QR of a N(0, 1) draw, signs fixed by R's diagonal, times ``gain``."""

    def __init__(self, gain: float = 1.):
        super().__init__(gain=gain)
        self.gain = gain

    def _values(self, shape):
        _at_least_2d(shape, "Orthogonal")
        rows = shape[0]
        cols = _size(shape) // rows
        data = _normal((rows, cols), 0, 1)
        if rows < cols:
            data = data.T
        q, r = np.linalg.qr(data)
        q *= np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return (q * self.gain).reshape(shape)


class Sparse(Initializer):
    """N(0, sigma) with ``ceil(sparsity * rows)`` zeros in each column (rows
    drawn by ``np.random.permutation``, as MindSpore's)."""

    def __init__(self, sparsity: float, sigma: float = 0.01):
        super().__init__(sparsity=sparsity, sigma=sigma)
        self.sparsity, self.sigma = sparsity, sigma

    def _values(self, shape):
        if len(shape) != 2:
            raise UserValueError(f"Sparse initializes 2-D tensors only, got shape {list(shape)}",
                                 where=user_frame())
        rows, cols = shape
        zeros = int(np.ceil(self.sparsity * rows))
        data = _normal(shape, 0, self.sigma)
        for col in range(cols):
            data[np.random.permutation(list(range(rows)))[:zeros], col] = 0.
        return data


class VarianceScaling(Initializer):
    """MindSpore's ``VarianceScaling(scale, mode, distribution)``.  As in
    MindSpore 2.10, ``'truncated_normal'`` (the default) draws the uniform
    ``U(-sqrt(3 scale / n), sqrt(3 scale / n))`` (its branch tests for
    ``'truncated_norm'``); ``'untruncated_normal'`` is N(0, sqrt(scale / n))."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in",
                 distribution: str = "truncated_normal"):
        super().__init__(scale=scale, mode=mode, distribution=distribution)
        if scale <= 0.:
            raise UserValueError(f"VarianceScaling: scale must be positive, got {scale}",
                                 where=user_frame())
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise UserValueError(f"VarianceScaling: mode must be 'fan_in', 'fan_out' or "
                                 f"'fan_avg', got {mode!r}", where=user_frame())
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise UserValueError(f"VarianceScaling: distribution must be 'uniform', "
                                 f"'truncated_normal' or 'untruncated_normal', got "
                                 f"{distribution!r}", where=user_frame())
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def _values(self, shape):
        _at_least_2d(shape, "VarianceScaling")
        fan_in, fan_out = _fans(shape)
        scale = self.scale
        if self.mode == "fan_in":
            scale /= max(1., fan_in)
        elif self.mode == "fan_out":
            scale /= max(1., fan_out)
        else:
            scale /= max(1., (fan_in + fan_out) / 2.)
        if self.distribution == "untruncated_normal":
            return _normal(shape, 0, np.sqrt(scale))
        limit = np.sqrt(3.0 * scale)
        return _uniform(shape, -limit, limit)


# MindSpore's string names (matched without case): each class's own name and
# its aliases.
_ALIASES = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One,
    "normal": Normal, "truncatednormal": TruncatedNormal, "uniform": Uniform,
    "xavier_uniform": XavierUniform, "xavieruniform": XavierUniform,
    "xavier_normal": XavierNormal, "xaviernormal": XavierNormal,
    "he_uniform": HeUniform, "heuniform": HeUniform,
    "he_normal": HeNormal, "henormal": HeNormal,
    "identity": Identity, "dirac": Dirac, "orthogonal": Orthogonal,
    "variancescaling": VarianceScaling,
}


def _resolve(init) -> Initializer:
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str):
        cls = _ALIASES.get(init.lower())
        if cls is None:
            raise UserValueError(f"unknown initializer {init!r}", where=user_frame(),
                                 hint=f"use one of: {', '.join(sorted(_ALIASES))}, or an "
                                      f"Initializer")
        return cls()
    if isinstance(init, (bool, np.bool_)) or not isinstance(init, (int, float, np.number)):
        raise UserTypeError(f"initializer must be a name, an Initializer, a number or a Tensor; "
                            f"got {type(init).__name__}", where=user_frame())
    return Constant(init)


def initializer(init, shape=None, dtype=mstype.float32):
    """A Tensor of ``shape`` filled by ``init`` (a name, an Initializer, a
    number, or a Tensor/array whose shape must equal ``shape``).  irc fills it
    now; MindSpore when a Parameter takes it (or ``init_data``), which is the
    same draw unless the script makes several before it makes their
    Parameters, in another order."""
    from .tensor import Tensor
    np_dtype = mstype.numpy_dtype(dtype)
    if isinstance(init, (Tensor, np.ndarray)):
        array = np.asarray(init)
        if shape is not None and tuple(array.shape) != _shape(shape):
            raise UserValueError(f"the initial value has shape {list(array.shape)}, expected "
                                 f"{list(_shape(shape))}", where=user_frame())
        t = Tensor(array.astype(np_dtype))
        t.init_desc = "tensor"
        return t
    init = _resolve(init)
    if shape is None:
        raise UserValueError("initializer(...) needs a shape", where=user_frame())
    shape = _shape(shape)
    if init._fills_in_place():       # as MindSpore's init_data: the array of the dtype, filled
        values = np.zeros(shape, np_dtype)
        init(values)
    else:
        values = np.asarray(init._values(shape))
    if values.dtype != np.float32:      # MindSpore's draws are float32, cast as they are
        values = values.astype(np.float64)
    t = Tensor(values.astype(np_dtype))
    t.init_desc = repr(init)
    return t


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        out = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise UserTypeError(f"a shape must be ints, got {shape!r}", where=user_frame()) from None
    if any(d < 0 for d in out):
        raise UserValueError(f"a shape cannot have negative dimensions, got {list(out)}",
                             where=user_frame())
    return out


def describe(init) -> Optional[str]:
    """A short text for the ``init`` attribute of a param node."""
    if init is None:
        return None
    if isinstance(init, str):
        return init
    return repr(init) if isinstance(init, Initializer) else type(init).__name__


__getattr__ = missing_names(__name__)
