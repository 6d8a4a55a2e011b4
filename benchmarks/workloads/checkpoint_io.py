"""checkpoint_io: saving and loading a large checkpoint (issue 15: 256 MiB).

Load: kilnflow's safetensors reader and `Checkpoint.read` into variables, against reading
the same bytes with NumPy (the floor) and the reference `safetensors` package when it is
installed (target: within 2x its full-load time). Save: `Checkpoint.write` (atomic and
fsynced) against NumPy writing the same bytes to one file. Peak memory during a load is
measured with tracemalloc (NumPy reports its buffers there; memory-mapped file pages are
not heap) and printed as a multiple of the file size (target: <= 1.2x).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import tracemalloc
from typing import Any, Callable, Iterator

import numpy as np

import kilnflow as kf
from benchmarks.harness import Case, Config, Target, Variant
from kilnflow import train
from kilnflow.saving import safetensors

NAME = "checkpoint_io"
DESCRIPTION = "save and load a 256 MiB checkpoint: time and peak memory vs NumPy / safetensors"
PARTS = 16


def _peak_bytes(load: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        result = load()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return peak


_RSS_CHILD = """
import os, sys
sys.path.insert(0, {root!r})
import numpy as np
from kilnflow.saving import safetensors
from kilnflow import train
import kilnflow as kf
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
mode, prefix, parts, n = {mode!r}, {prefix!r}, {parts}, {n}
if mode == "read":
    root = train.Checkpoint(**{{f"w{{i}}": kf.Variable(np.zeros(n, np.float32))
                               for i in range(parts)}})
elif mode == "reference":
    from safetensors import numpy as reference
base = rss("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # resets VmHWM, the peak resident size, to the current size
if mode == "load_file":
    kept = safetensors.load_file(prefix + ".safetensors")
elif mode == "read":
    root.read(prefix)
else:
    kept = reference.load_file(prefix + ".safetensors")
print(rss("VmHWM") - base)
"""


def _peak_rss(mode: str, prefix: str, n: int) -> Any:
    """Growth of the peak resident set (heap and mapped file pages alike) while one load
    runs in a fresh process; None where /proc cannot tell (not Linux)."""
    if not os.path.exists("/proc/self/clear_refs"):
        return None
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = _RSS_CHILD.format(root=root, mode=mode, prefix=prefix, parts=PARTS, n=n)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return int(out.stdout.strip()) if out.returncode == 0 else None


def _reference() -> Any:
    try:
        from safetensors import numpy as reference
    except ImportError:
        return None
    return reference


def cases(config: Config) -> Iterator[Case]:
    mib = config.pick(256, 64, 1)
    rng = np.random.default_rng(0)
    arrays = {f"w{i}": rng.random(mib * 2 ** 20 // 4 // PARTS, dtype=np.float32)
              for i in range(PARTS)}
    directory = tempfile.mkdtemp(prefix="kf_ckpt_bench_")
    try:
        yield from _cases(config, arrays, directory, mib)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _cases(config: Config, arrays: dict, directory: str, mib: int) -> Iterator[Case]:
    variables = {k: kf.Variable(v) for k, v in arrays.items()}
    root = train.Checkpoint(**variables)
    prefix = root.write(os.path.join(directory, "ckpt"))
    tensors_path = prefix + ".safetensors"
    raw_path = os.path.join(directory, "raw.bin")
    np.concatenate(list(arrays.values())).tofile(raw_path)
    size = os.path.getsize(tensors_path)
    loaded = safetensors.load_file(tensors_path)
    for key, value in arrays.items():
        np.testing.assert_array_equal(loaded[key + "/.ATTRIBUTES/VARIABLE_VALUE"], value)
    del loaded

    fresh = train.Checkpoint(**{k: kf.Variable(np.zeros_like(v)) for k, v in arrays.items()})
    reference = _reference()
    load_variants = [
        Variant("NumPy np.fromfile (the same bytes)", lambda: np.fromfile(raw_path, np.uint8)),
        Variant("kilnflow safetensors.load_file", lambda: safetensors.load_file(tensors_path)),
        Variant("kilnflow Checkpoint.read into variables", lambda: fresh.read(prefix)),
    ]
    if reference is not None:  # like the peer frameworks: compared when installed
        load_variants.append(Variant("safetensors (reference) load_file",
                                     lambda: reference.load_file(tensors_path)))
    peaks = {"kilnflow load_file": _peak_bytes(lambda: safetensors.load_file(tensors_path)),
             "kilnflow Checkpoint.read": _peak_bytes(lambda: fresh.read(prefix))}
    if reference:
        peaks["reference load_file"] = _peak_bytes(lambda: reference.load_file(tensors_path))
    rss = {"kilnflow load_file": _peak_rss("load_file", prefix, len(arrays["w0"])),
           "kilnflow Checkpoint.read": _peak_rss("read", prefix, len(arrays["w0"]))}
    if reference:
        rss["reference load_file"] = _peak_rss("reference", prefix, len(arrays["w0"]))
    notes = [f"file: {size / 2 ** 20:.0f} MiB in {PARTS} float32 tensors; peak heap during a "
             "load, as a multiple of the file size: "
             + ", ".join(f"{name} {peak / size:.2f}x" for name, peak in peaks.items())
             + " (target <= 1.2x)"
             + ("" if reference else "; the reference safetensors package is not installed")]
    if any(v is not None for v in rss.values()):
        notes.append("peak resident-set growth during a load in a fresh process (heap and "
                     "mapped file pages), as a multiple of the file size: "
                     + ", ".join(f"{name} {v / size:.2f}x" for name, v in rss.items()
                                 if v is not None) + " (target <= 1.2x)")
    targets = [Target("full load within 2x the reference safetensors library",
                      "kilnflow safetensors.load_file", "speedup", 0.5,
                      other="safetensors (reference) load_file")] if reference else []
    yield Case(f"load a {mib} MiB checkpoint", load_variants,
               floor="NumPy np.fromfile (the same bytes)", targets=targets, notes=notes)

    save_to = os.path.join(directory, "again")
    save_variants = [
        Variant("NumPy ndarray.tofile (the same bytes)",
                lambda: np.concatenate(list(arrays.values())).tofile(raw_path)),
        Variant("kilnflow Checkpoint.write (atomic, fsynced)", lambda: root.write(save_to)),
        Variant("kilnflow safetensors.save_file (atomic, fsynced)",
                lambda: safetensors.save_file(arrays, tensors_path + ".copy")),
    ]
    yield Case(f"save a {mib} MiB checkpoint", save_variants,
               floor="NumPy ndarray.tofile (the same bytes)",
               notes=["the floor neither fsyncs nor renames; kilnflow's saves do both"])
