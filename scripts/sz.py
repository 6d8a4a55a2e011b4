"""The size budget of the kilnflow package: code lines per package against a deliberate cap,
and no file over 600 physical lines. Exits 1 when anything is over (CI runs it).

Code lines are lines holding a token other than comments and blank lines (docstrings count).
A package without a cap fails too: a new package gets its cap, with a reason, in the same
commit that creates it. Raise a cap only deliberately, in the commit that needs it, with the
reason; the budget keeps files and layers readable, it is not there to block new ops.
"""
from __future__ import annotations

import io
import os
import sys
import tokenize
from typing import Dict, List, Tuple

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kilnflow")
FILE_CAP = 600  # physical lines in one file: past this, split it by story

# package (or "." for the top-level modules) -> (cap in code lines, why this size)
CAPS: Dict[str, Tuple[int, str]] = {
    ".": (3_600, "dtypes, shapes, tensor, variables, graph, context, public namespaces: "
                 "the vocabulary every layer shares; new namespaces are re-exports only "
                 "(issue 12's math/nn/random re-exports took it past 2.6k; device_config, "
                 "tf.config's devices and threads, past 2.8k; type_spec (composite tensors), the "
                 "variable creator scope and the new namespaces' re-exports, past 3.2k; TF 2's "
                 "ResourceVariable/UnreadVariable views, DType/TensorShape conveniences and "
                 "DLPack on tensors, 3.47k)"),
    "core": (600, "OpDef, defop, bind, shape rules, Const: must stay small enough to read "
                  "in one sitting, it is what every op goes through"),
    "ops": (10_000, "the op families (4.8k at the split); grows with TF's API surface; "
                    "issue 12's random/math/nn/strings/linalg names took it to 8.7k "
                    "(image still to come)"),
    "runtime": (1_000, "codegen, loader, interpreter, fused engine: how graphs run"),
    "runtime/jit": (3_400, "the numba backend of jit_compile=True: lowering, fused loops, "
                           "per-op rules, numba helpers, the disk cache (issue 16); output "
                           "donation, lowerable() for autoclustering took it past 1.2k; "
                           "NumPy's own BLAS (blas.py) and in-place updates past 1.4k; "
                           "slicing/gather/TensorArray writes (indexing.py) past 1.7k; "
                           "random streams (random_ops.py), convolutions/pooling (conv.py), the array "
                           "ops of Keras train steps (array_ops.py) and TensorArrays of "
                           "inferred rank (tensorlist.py, lists.py): 3.3k"),
    "passes": (1_200, "one small pass per file; a new pass costs 100-200 lines"),
    "autodiff": (500, "one reverse walk for tape and graphs; rules live with the ops"),
    "function": (1_500, "tracing, trace keys, the cache, diagnostics; jit_grad (issue 16: a "
                        "jit function's compiled gradient under an outer tape) took it past 1.2k; "
                        "TF 2.21's printed signatures (issue 12, ~120)"),
    "autograph": (3_200, "converters, pyct and operators (2.7k today)"),
    "compat": (1_900, "the TF1 surface: Graph/Session, variable scopes, collections, Saver, "
                      "v1 optimizers, losses, layers, TF1's renamed names (1.3k with those); "
                      "wrap_function/prune and the SavedModelBuilder/loader (1.7k)"),
    "saving": (2_800, "checkpoints, saved models, the graph format, safe file I/O, ONNX "
                      "export (its op lowerings: ~550), TF checkpoint reader (~300)"),
    "data": (3_500, "kf.data: Dataset sources, transformations, iterators, options (2.2k "
                    "at creation); one node class per transformation; file readers, CSV "
                    "and the tf.data.experimental functions (+0.95k)"),
    "summary": (700, "kf.summary: writers, TensorBoard protos (scalars, histograms, images, "
                     "text, audio), GraphDef export, trace_on/trace_export"),
    "profiler": (550, "kf.profiler: start/stop, Trace, Chrome trace JSON, top-ops table; "
                      "the mode debuggers (compare_modes, check_numerics) built on its twins"),
    "distribute": (2_600, "strategies, replica contexts, distributed input and variables, "
                          "cluster resolvers, the Ray worker runner (the distributed extra); "
                          "ClusterSpec sessions (partitions on task actors, Server) and "
                          "ParameterServerStrategy took it past 1.6k (issue 18)"),
    "keras": (5_000, "Keras layers, models, training (3.8k); grows with the layer list"),
}
CAPS["functional"] = (1_000, "TF's composite names defining no ops (issue 12): map_fn, scan, "
                             "folds, vectorized_map, gradient utilities, v2 initializers, types")
# Keras 3 breadth (issue 14): every Keras 3 loss, the metrics package, 1-D conv/pooling,
# activation/reshaping/noise/preprocessing layers, whole-model saving (5.2k at the raise)
CAPS["keras"] = (8_000, "Keras 3 layers, losses, metrics, models, training and saving")
# issue 12's array/conv/special/matrix-function families (array_extra, shape_extra, conv_extra,
# special_bessel, matrix_functions: 1.2k), tf.image and the rest of tf.signal (resize kernels,
# colour, boxes/NMS, the PNG/BMP codecs, multi-dim FFTs, windows, STFT/DCT/MDCT/mel: about 2k)
# and issue 14's text lookup, FarmHash and conv3d-transpose ops took ops past 10k
CAPS["ops"] = (14_000, CAPS["ops"][1] + "; issue 12's array, special, matrix-function, image "
               "and signal families and issue 14's text/hash ops: about 13k")
# issue 12's TF-exact random streams (Philox in NumPy, the V2 key/counter ops), batched
# gather, string hashes/fingerprint/edit distance, and issue 14's projective image transform
# and crossed-feature hash took ops to 14.6k
CAPS["ops"] = (15_500, CAPS["ops"][1] + "; TF's random streams, string hashes, projective "
               "image transforms: about 14.6k")
CAPS["linalg"] = (1_000, "kf.linalg: the namespace's re-exports and the LinearOperator classes "
                         "(structure-aware matmul/solve/determinant over the ops)")
CAPS["sparse"] = (900, "kf.sparse: SparseTensor, IndexedSlices, the tf.sparse ops built from "
                       "public kf ops (issue 12, ~700 at creation)")
CAPS["ragged"] = (1_100, "kf.ragged: RaggedTensor, its spec, the tf.ragged ops and the ragged "
                         "string ops built from public kf ops (issue 12, ~870 at creation)")
CAPS["ragged"] = (1_350, "kf.ragged as above plus TF's ragged dispatch of the dense ops "
                         "(reductions, concat/stack, binary math; issue 12, 1.2k at the raise)")
# issue 14, second pass: Conv3D/transposed/depthwise/separable convolutions, the text
# preprocessing layers, dataset-driven fit and multi-output training (8.0k at the raise)
CAPS["keras"] = (9_500, "Keras 3 layers, losses, metrics, models, training and saving")
# issue 14, the layer breadth pass: keras.layers measured on its own (4.4k at the split) so
# the image augmentation, ConvLSTM and merge-function layers grow it without crowding the
# training loop's share of the keras cap
CAPS["keras/layers"] = (7_000, "keras.layers: Keras 3's layer list (4.4k at the split)")
CAPS["keras/metrics"] = (1_500, "keras.metrics (issue 14): Metric/Mean, the wrapped metric "
                              "functions, confusion-matrix metrics (AUC, IoU family, "
                              "at-rate metrics), correlations; ~900 when given its own cap")
CAPS["keras/utils"] = (900, "keras.utils (issue 14): PyDataset, datasets from arrays and "
                            "directories, sequence padding, DOT export, the small utilities")
CAPS["keras/ops"] = (2_800, "keras.ops (issue 14): Keras 3's ~340 backend-neutral ops "
                             "(numpy-like, nn, math, linalg, image, core) as thin wrappers "
                             "over kf ops, one family per file (2.5k at creation, all 341 names)")

CAPS["experimental"] = (300, "kf.experimental: DLPack exchange, Optional's constructors, strict "
                             "mode (issue 12, ~120 at creation)")
CAPS["training"] = (1_000, "kf.train's newer names (issue 12): ExponentialMovingAverage, "
                           "Coordinator, checkpoint state files, tf.train.Example protos")
CAPS["debug_tools"] = (300, "kf.debugging's reporting switches (issue 12): traceback "
                            "filtering, eager device-placement logging")
CAPS["framework"] = (300, "TF's framework-level value classes that are neither ops nor "
                          "namespaces (issue 12: DeviceSpec)")
# issue 15 audit: TF-written checkpoints matched through TF's object graph (names, then the
# weights' order), sealed saved_model.json, concurrent-read safety (2.83k at the raise)
CAPS["saving"] = (2_950, "checkpoints, saved models, the graph format, safe file I/O, ONNX "
                         "export (~550), TF checkpoint reader and object graph (~400)")

def code_lines(path: str) -> int:
    """Lines holding a token other than comments, newlines and indentation."""
    with open(path, "rb") as f:
        source = f.read()
    lines = set()
    try:
        for tok in tokenize.tokenize(io.BytesIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                            tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER):
                continue
            lines.update(range(tok.start[0], tok.end[0] + 1))
    except tokenize.TokenError:
        return source.count(b"\n")
    return len(lines)


def measure(root: str) -> Tuple[Dict[str, int], List[Tuple[int, str]]]:
    """(code lines per package, [(physical lines, file) for files over FILE_CAP])."""
    per_package: Dict[str, int] = {}
    big = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            package = rel.split(os.sep)[0] if os.sep in rel else "."
            nested = "/".join(rel.split(os.sep)[:2])
            if rel.count(os.sep) > 1 and nested in CAPS:  # a sub-package with its own cap
                package = nested
            per_package[package] = per_package.get(package, 0) + code_lines(path)
            with open(path, "rb") as f:
                physical = f.read().count(b"\n")
            if physical > FILE_CAP:
                big.append((physical, rel))
    return per_package, big


def check(root: str = ROOT, caps: Dict[str, Tuple[int, str]] = CAPS) -> List[str]:
    """The budget's violations (empty when everything fits), after printing the table."""
    per_package, big = measure(root)
    problems = []
    for package, n in sorted(per_package.items()):
        cap = caps.get(package)
        shown = f"kilnflow/{package if package != '.' else ''}"
        if cap is None:
            problems.append(f"{shown}: {n} code lines and no cap in scripts/sz.py (add one, "
                            "with a reason)")
            print(f"{n:7d}  {shown:24s} (no cap)")
            continue
        print(f"{n:7d}  {shown:24s} cap {cap[0]:6d}  {cap[1]}")
        if n > cap[0]:
            problems.append(f"{shown}: {n} code lines, over its cap of {cap[0]}")
    print(f"{sum(per_package.values()):7d}  kilnflow (all)")
    for physical, rel in sorted(big, reverse=True):
        problems.append(f"kilnflow/{rel}: {physical} lines, over the {FILE_CAP}-line file cap "
                        "(split it by story)")
    return problems


def main() -> int:
    problems = check()
    for problem in problems:
        print(f"OVER BUDGET: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
