"""onnxruntime-gpu small enough to carry to a lent GPU machine (64 MiB a call).

The device tool's machines have CUDA 13 and PyTorch but only the CPU
onnxruntime.  onnxruntime-gpu's wheel is 255 MB, most of it CUDA kernels for
six GPU generations and for contrib ops (flash attention, MoE GEMMs) that
irc never emits.  This keeps the sm_90 (Hopper) kernels of onnxruntime's
standard CUDA ops, zeroes the rest inside the fatbins (lazy module loading
never reads them), and writes ``.gpu/ort.tar.xz`` (about 27 MB):

    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \\
        --platform manylinux_2_28_x86_64 -d /tmp/whl onnxruntime-gpu==1.31.1
    python benchmarks/ort_gpu_bundle.py /tmp/whl/onnxruntime_gpu-*.whl
    # on the device (carry .gpu): CUDA_MODULE_LOADING=LAZY; tar -C /tmp/site -xJf
    # .gpu/ort.tar.xz; PYTHONPATH=/tmp/site; pip install --no-deps --no-index -e .

Measurement tooling for the lent machine only; irc depends on the wheel itself.
Needs the ``zstd`` and ``xz`` programs (the kernels are zstd-compressed).
"""
from __future__ import annotations

import os
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile

MAGIC = struct.pack("<I", 0xBA55ED50)
KEEP_ARCH = 90
CONTRIB = (b"5flash", b"moe_", b"fpA_intB", b"7contrib", b"cutlass", b"xqa", b"fmha", b"_INTERNAL")


def fatbin_entries(data: bytes):
    """(payload offset, size, arch) of every entry of every fatbin in a library."""
    i = data.find(MAGIC)
    while i != -1:
        _, version, header, size = struct.unpack_from("<IHHQ", data, i)
        if version != 1 or header != 16:
            i = data.find(MAGIC, i + 4)
            continue
        p, end = i + header, i + header + size
        while p < end:
            _, _, entry_header, payload = struct.unpack_from("<HHIQ", data, p)
            arch = struct.unpack_from("<I", data, p + 28)[0]
            yield p + entry_header, payload, arch
            p += entry_header + payload
        i = data.find(MAGIC, end)


def keep(payload: bytes, arch: int) -> bool:
    if arch != KEEP_ARCH:
        return False
    cubin = subprocess.run(["zstd", "-d", "-c"], input=payload, capture_output=True).stdout
    core = b"11onnxruntime4cuda" in cubin
    return core or not any(w in cubin for w in CONTRIB)


def main(wheel: str, out: str = ".gpu/ort.tar.xz") -> int:
    with tempfile.TemporaryDirectory() as tmp:
        zipfile.ZipFile(wheel).extractall(tmp)
        capi = os.path.join(tmp, "onnxruntime", "capi")
        os.remove(os.path.join(capi, "libonnxruntime_providers_tensorrt.so"))
        lib = os.path.join(capi, "libonnxruntime_providers_cuda.so")
        data = bytearray(open(lib, "rb").read())
        for offset, size, arch in list(fatbin_entries(bytes(data))):
            if not keep(bytes(data[offset:offset + size]), arch):
                data[offset:offset + size] = bytes(size)
        open(lib, "wb").write(data)
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        with tarfile.open(out, "w:xz", preset=9) as tar:
            for name in sorted(os.listdir(tmp)):
                tar.add(os.path.join(tmp, name), arcname=name)
    print(f"{out}: {os.path.getsize(out) / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
