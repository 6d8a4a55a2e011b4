"""Lowering rules for convolutions and pools (NHWC): Conv2D and its two backprops, MaxPool,
AvgPool and their gradients (MaxPoolGradGrad too), with the numba kernels the generated
code calls as `kf_conv.*`.

A convolution is one GEMM, as in the Python runtime (ops/conv.py): the input is packed into
its [N*OH*OW, KH*KW*C] patch matrix by a native loop (`im2col`, zeros where a window hangs
over the padding), multiplied by the [KH*KW*C, O] filter through the backend's BLAS helper
(rules.matmul_text), and the product is the NHWC output (a reshape). The filter gradient is
patches^T @ dy (the transpose a BLAS flag), the input gradient dy @ filter^T added back
where each patch was read (`col2im`). Pools are direct loops over each window, in the
Python runtime's tap order (rows, then columns), so a max ties to the same element and an
average sums in the same order. Output sizes and SAME pads are computed at run time from
the actual shapes (TF's arithmetic), so a new batch or image size does not recompile; the
attrs (strides, dilations, padding) are one literal int tuple in the source. Shapes that do
not agree raise ValueError, which the call turns into InvalidArgumentError.
float32 and float64 only. Reads op attrs as data; never imports ops/.
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

try:  # the rules below are read without numba (autoclustering probes, the import check)
    import numba

    _njit = numba.njit(cache=True, error_model="numpy")
except ImportError:  # pragma: no cover - compile_graph raises the error naming the extra
    def _njit(fn: Any) -> Any:
        return fn


# ---------------------------------------------------------------- window arithmetic

@_njit
def _out(size, k, stride, dilation, same, before, after):
    """(output size, pad before) along one dim, as ops/conv.py's _out_and_pads."""
    extent = (k - 1) * dilation + 1
    if same:
        out = (size + stride - 1) // stride
        return out, max((out - 1) * stride + extent - size, 0) // 2
    if size + before + after < extent:
        raise ValueError("Computed output size would be negative (the window is larger "
                         "than the padded input)")
    return (size + before + after - extent) // stride + 1, before


@_njit
def _plan(h, w, kh, kw, g):
    """g = (stride_h, stride_w, dilation_h, dilation_w, same, top, bottom, left, right):
    (OH, OW, pad top, pad left)."""
    oh, top = _out(h, kh, g[0], g[2], g[4], g[5], g[6])
    ow, left = _out(w, kw, g[1], g[3], g[4], g[7], g[8])
    return oh, ow, top, left


# ---------------------------------------------------------------- convolution kernels

@_njit
def _inside(ow, w, stride, offset):
    """The output columns [lo, hi) whose input column ox * stride + offset is in [0, w)."""
    lo = max(0, (stride - 1 - offset) // stride)
    hi = min(ow, (w - 1 - offset) // stride + 1)
    return lo, max(lo, hi)


@_njit
def im2col(x, kh, kw, cin, g):
    """The [N*OH*OW, KH*KW*C] patch matrix of x (zeros for padding), in the filter's
    (KH, KW, C) row order. Filled one tap and one output row at a time over the columns
    in range (no per-element bounds test: 4x faster for one channel)."""
    n, h, w, c = x.shape
    if c != cin:
        raise ValueError("Conv2D: input depth must equal the filter's in_channels")
    oh, ow, top, left = _plan(h, w, kh, kw, g)
    out = np.zeros((n * oh * ow, kh * kw * c), x.dtype)
    for b in range(n):
        for oy in range(oh):
            base = (b * oh + oy) * ow
            for i in range(kh):
                iy = oy * g[0] - top + i * g[2]
                if iy < 0 or iy >= h:
                    continue
                for j in range(kw):
                    offset = j * g[3] - left
                    lo, hi = _inside(ow, w, g[1], offset)
                    col = (i * kw + j) * c
                    row = x[b, iy]
                    dst = out[base:base + ow, col:col + c]
                    for ox in range(lo, hi):
                        src = row[ox * g[1] + offset]
                        patch = dst[ox]
                        for k in range(c):
                            patch[k] = src[k]
    return out


@_njit
def im2col_t(x, kh, kw, cin, g):
    """im2col's transpose, [KH*KW*C, N*OH*OW], written along output positions: faster for
    few channels (the GEMM takes it with a transpose flag)."""
    n, h, w, c = x.shape
    if c != cin:
        raise ValueError("Conv2D: input depth must equal the filter's in_channels")
    oh, ow, top, left = _plan(h, w, kh, kw, g)
    out = np.zeros((kh * kw * c, n * oh * ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            offset = j * g[3] - left
            lo, hi = _inside(ow, w, g[1], offset)
            for k in range(c):
                dst = out[(i * kw + j) * c + k]
                for b in range(n):
                    for oy in range(oh):
                        iy = oy * g[0] - top + i * g[2]
                        if iy < 0 or iy >= h:
                            continue
                        base = (b * oh + oy) * ow
                        for ox in range(lo, hi):
                            dst[base + ox] = x[b, iy, ox * g[1] + offset, k]
    return out


@_njit
def col2im(cols, n, h, w, kh, kw, g):
    """The [N, H, W, C] sum of patch gradients `cols` [N*OH*OW, KH*KW*C] added back where
    im2col read them (padding dropped)."""
    c = cols.shape[1] // (kh * kw)
    oh, ow, top, left = _plan(h, w, kh, kw, g)
    out = np.zeros((n, h, w, c), cols.dtype)
    for b in range(n):
        for oy in range(oh):
            base = (b * oh + oy) * ow
            for i in range(kh):
                iy = oy * g[0] - top + i * g[2]
                if iy < 0 or iy >= h:
                    continue
                for j in range(kw):
                    offset = j * g[3] - left
                    lo, hi = _inside(ow, w, g[1], offset)
                    col = (i * kw + j) * c
                    for ox in range(lo, hi):
                        ix = ox * g[1] + offset
                        for k in range(c):
                            out[b, iy, ix, k] += cols[base + ox, col + k]
    return out


@_njit
def filter_rows(w, cin):
    """The [KH*KW*C, O] filter matrix, checking its in_channels against the input's."""
    if w.shape[2] != cin:
        raise ValueError("Conv2D: input depth must equal the filter's in_channels")
    return np.ascontiguousarray(w).reshape((w.shape[0] * w.shape[1] * w.shape[2], w.shape[3]))


@_njit
def grad_rows(dy, n, h, w, kh, kw, o, g):
    """dy as [N*OH*OW, O], checking it has the shape the forward conv gives."""
    oh, ow, _, _ = _plan(h, w, kh, kw, g)
    if dy.shape[0] != n or dy.shape[1] != oh or dy.shape[2] != ow or dy.shape[3] != o:
        raise ValueError("Conv2D backprop: out_backprop's shape does not match the "
                         "convolution's output shape")
    return np.ascontiguousarray(dy).reshape((n * oh * ow, o))


@_njit
def to_nhwc(product, x, kh, kw, g):
    """The [N*OH*OW, O] GEMM result as the NHWC output (a view)."""
    oh, ow, _, _ = _plan(x.shape[1], x.shape[2], kh, kw, g)
    return product.reshape((x.shape[0], oh, ow, product.shape[1]))


# ---------------------------------------------------------------- pool kernels

@_njit
def max_pool(x, kh, kw, g):
    """Each window's max (padding never wins; NaN propagates as np.maximum)."""
    n, h, w, c = x.shape
    oh, ow, top, left = _plan(h, w, kh, kw, g)
    out = np.empty((n, oh, ow, c), x.dtype)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                best = out[b, oy, ox]
                best[:] = -np.inf
                for i in range(kh):
                    iy = oy * g[0] - top + i
                    for j in range(kw):
                        ix = ox * g[1] - left + j
                        if 0 <= iy < h and 0 <= ix < w:
                            for k in range(c):
                                v = x[b, iy, ix, k]
                                if v > best[k] or v != v:
                                    best[k] = v
    return out


@_njit
def max_pool_grad(x, d, kh, kw, g, second):
    """MaxPoolGrad (second False): dy `d` of each window routed to its first maximum in
    tap order (as TF and the Python runtime: a padding tap holding -inf first takes it, so
    it is dropped). MaxPoolGradGrad (second True): each window's `d` (x-shaped) read at
    that same element."""
    n, h, w, c = x.shape
    oh, ow, top, left = _plan(h, w, kh, kw, g)
    want = (n, h, w, c) if second else (n, oh, ow, c)
    if d.shape[0] != want[0] or d.shape[1] != want[1] or d.shape[2] != want[2] or \
            d.shape[3] != want[3]:
        raise ValueError("MaxPoolGrad: the gradient's shape does not match the pool's")
    out = np.zeros((n, oh, ow, c) if second else (n, h, w, c), d.dtype)
    best = np.empty(c, x.dtype)
    claimed = np.empty(c, np.bool_)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                best[:] = -np.inf
                claimed[:] = False
                for i in range(kh):
                    iy = oy * g[0] - top + i
                    for j in range(kw):
                        ix = ox * g[1] - left + j
                        if 0 <= iy < h and 0 <= ix < w:
                            for k in range(c):
                                v = x[b, iy, ix, k]
                                if v > best[k] or v != v:
                                    best[k] = v
                for i in range(kh):
                    iy = oy * g[0] - top + i
                    for j in range(kw):
                        ix = ox * g[1] - left + j
                        inside = 0 <= iy < h and 0 <= ix < w
                        for k in range(c):
                            if claimed[k]:
                                continue
                            v = x[b, iy, ix, k] if inside else -np.inf
                            if v == best[k]:
                                claimed[k] = True
                                if inside and second:
                                    out[b, oy, ox, k] = d[b, iy, ix, k]
                                elif inside:
                                    out[b, iy, ix, k] += d[b, oy, ox, k]
    return out


@_njit
def _count(oy, ox, h, w, kh, kw, top, left, g):
    """How many real (unpadded) inputs a window covers: TF averages over those only."""
    rows = min(oy * g[0] - top + kh, h) - max(oy * g[0] - top, 0)
    cols = min(ox * g[1] - left + kw, w) - max(ox * g[1] - left, 0)
    return max(rows, 0) * max(cols, 0)


@_njit
def avg_pool(x, kh, kw, g):
    n, h, w, c = x.shape
    oh, ow, top, left = _plan(h, w, kh, kw, g)
    out = np.zeros((n, oh, ow, c), x.dtype)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                acc = out[b, oy, ox]
                for i in range(kh):
                    iy = oy * g[0] - top + i
                    for j in range(kw):
                        ix = ox * g[1] - left + j
                        if 0 <= iy < h and 0 <= ix < w:
                            for k in range(c):
                                acc[k] += x[b, iy, ix, k]
                count = _count(oy, ox, h, w, kh, kw, top, left, g)
                for k in range(c):  # float64 division rounded once more: the same bits
                    acc[k] /= count
    return out


@_njit
def avg_pool_grad(dy, n, h, w, c, kh, kw, g):
    """Each window's dy / count added to the inputs it covers."""
    oh, ow, top, left = _plan(h, w, kh, kw, g)
    if dy.shape[0] != n or dy.shape[1] != oh or dy.shape[2] != ow or dy.shape[3] != c:
        raise ValueError("AvgPoolGrad: the gradient's shape does not match the pool's "
                         "output shape")
    out = np.zeros((n, h, w, c), dy.dtype)
    share = np.empty(c, dy.dtype)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                count = _count(oy, ox, h, w, kh, kw, top, left, g)
                for k in range(c):
                    share[k] = dy[b, oy, ox, k] / count
                for i in range(kh):
                    iy = oy * g[0] - top + i
                    for j in range(kw):
                        ix = ox * g[1] - left + j
                        if 0 <= iy < h and 0 <= ix < w:
                            for k in range(c):
                                out[b, iy, ix, k] += share[k]
    return out


# ---------------------------------------------------------------- rules

class _Products:
    """What rules.matmul_text records on the Lowering (table rules do not receive it)."""
    uses_blas = False


def _floating(t: Any) -> bool:
    return np.dtype(t.dtype.as_numpy_dtype) in (np.float32, np.float64) and t.shape.rank == 4


def _geometry(op: Any, dilated: bool = True) -> str:
    """The attrs as the kernels' literal tuple g (see _plan)."""
    strides = tuple(int(s) for s in op.attrs["strides"])
    dilations = tuple(int(d) for d in op.attrs.get("dilations", (1, 1))) if dilated else (1, 1)
    padding = op.attrs["padding"]
    if padding == "SAME":
        pads = (1, 0, 0, 0, 0)
    elif padding == "VALID":
        pads = (0, 0, 0, 0, 0)
    else:
        (top, bottom), (left, right) = padding
        pads = (0, int(top), int(bottom), int(left), int(right))
    return repr(strides + dilations + pads)


def _sizes(op: Any, sizes: str) -> List[str]:
    """The 4 dims a backprop op is given (input_sizes / filter_sizes): literals when the
    output shape is static, else read from the sizes tensor."""
    dims = op.outputs[0].shape.as_list()
    return [str(d) if d is not None else f"np.intp({sizes}[{k}])" for k, d in enumerate(dims)]


def _few_channels(x: Any) -> bool:
    """Below 4 input channels (known statically) the patches are built transposed
    (im2col_t): 2.5x faster for one channel, as in the Python runtime's kernel."""
    c = x.shape.as_list()[3]
    return c is not None and c < 4


def _gemm(a: str, b: str, ta: bool, tb: bool, dtype: Any) -> str:
    from kilnflow.runtime.jit.rules import matmul_text
    return matmul_text(a, b, ta, tb, dtype, _Products())


def conv2d(op: Any, args: List[str]) -> Optional[str]:
    x, w = op.inputs
    if not (_floating(x) and _floating(w)):
        return None
    xs, ws, g = args[0], args[1], _geometry(op)
    kh, kw = f"{ws}.shape[0]", f"{ws}.shape[1]"
    few = _few_channels(x)
    patches = f"kf_conv.im2col{'_t' if few else ''}({xs}, {kh}, {kw}, {ws}.shape[2], {g})"
    product = _gemm(patches, f"kf_conv.filter_rows({ws}, {xs}.shape[3])", few, False,
                    x.dtype)
    return f"kf_conv.to_nhwc({product}, {xs}, {kh}, {kw}, {g})"


def conv2d_backprop_filter(op: Any, args: List[str]) -> Optional[str]:
    """patches(x)^T @ dy, reshaped to the filter."""
    x, sizes, dy = op.inputs
    if not (_floating(x) and _floating(dy)) or sizes.shape.as_list() != [4]:
        return None
    xs, ss, dys, g = args[0], args[1], args[2], _geometry(op)
    kh, kw, c, o = _sizes(op, ss)
    few = _few_channels(x)
    patches = f"kf_conv.im2col{'_t' if few else ''}({xs}, {kh}, {kw}, {c}, {g})"
    rows = f"kf_conv.grad_rows({dys}, {xs}.shape[0], {xs}.shape[1], {xs}.shape[2], {kh}, " \
        f"{kw}, {o}, {g})"
    product = _gemm(patches, rows, not few, False, dy.dtype)
    return f"{product}.reshape(({kh}, {kw}, {c}, {o}))"


def conv2d_backprop_input(op: Any, args: List[str]) -> Optional[str]:
    """col2im(dy @ filter^T)."""
    sizes, w, dy = op.inputs
    if not (_floating(w) and _floating(dy)) or sizes.shape.as_list() != [4]:
        return None
    ss, ws, dys, g = args[0], args[1], args[2], _geometry(op)
    n, h, wd, c = _sizes(op, ss)
    kh, kw = f"{ws}.shape[0]", f"{ws}.shape[1]"
    rows = f"kf_conv.grad_rows({dys}, {n}, {h}, {wd}, {kh}, {kw}, {ws}.shape[3], {g})"
    product = _gemm(rows, f"kf_conv.filter_rows({ws}, {c})", False, True, dy.dtype)
    return f"kf_conv.col2im({product}, {n}, {h}, {wd}, {kh}, {kw}, {g})"


def _pool(kernel: str) -> Any:
    def rule(op: Any, args: List[str]) -> Optional[str]:
        if not all(_floating(t) for t in op.inputs if t.shape.rank != 1):
            return None
        kh, kw = (int(k) for k in op.attrs["ksize"])
        g = _geometry(op, dilated=False)
        if kernel == "max_pool":
            return f"kf_conv.max_pool({args[0]}, {kh}, {kw}, {g})"
        if kernel in ("max_pool_grad", "max_pool_grad_grad"):
            return f"kf_conv.max_pool_grad({args[0]}, {args[1]}, {kh}, {kw}, {g}, " \
                f"{kernel == 'max_pool_grad_grad'})"
        if kernel == "avg_pool":
            return f"kf_conv.avg_pool({args[0]}, {kh}, {kw}, {g})"
        if op.inputs[0].shape.as_list() != [4]:
            return None
        n, h, w, c = _sizes(op, args[0])
        return f"kf_conv.avg_pool_grad({args[1]}, {n}, {h}, {w}, {c}, {kh}, {kw}, {g})"
    return rule


def clusterable(op: Any) -> bool:
    """Autoclustering leaves these ops to the Python runtime (lower.py asks): numba types a
    convolution's statement slowly (~0.15 s each), and Keras's 3-D convolutions and ConvLSTMs
    are dozens of Conv2Ds, so their train steps' clusters took 40-110 s each to compile
    (the test suite's Conv3D model: 150 s) while the Python runtime's conv is one GEMM."""
    return False


RULES = {"Conv2D": conv2d, "Conv2DBackpropFilter": conv2d_backprop_filter,
         "Conv2DBackpropInput": conv2d_backprop_input, "MaxPool": _pool("max_pool"),
         "MaxPoolGrad": _pool("max_pool_grad"), "MaxPoolGradGrad": _pool("max_pool_grad_grad"),
         "AvgPool": _pool("avg_pool"),
         "AvgPoolGrad": _pool("avg_pool_grad")}
