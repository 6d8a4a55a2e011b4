"""How each kilnflow op type becomes ONNX nodes (opset 18), for kf.onnx.export.

A lowering is `fn(converter, op, input_names) -> output names`. Static attrs (shapes, axes,
permutations) become int64 initializers. TF's NHWC convolutions and pools are transposed to
ONNX's NCHW and back. cond/while become If/Loop, their graphs lowered recursively.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List

import numpy as np

from kilnflow import dtypes, errors
from kilnflow.saving.onnx_export import onnx_type, unmapped
from kilnflow.shapes import TensorSpec

LOWERINGS: Dict[str, Callable] = {}


def _simple(onnx_op: str, **attrs: Any) -> Callable:
    return lambda cv, op, ins: cv.node(onnx_op, ins, op.name, **attrs)


for _kf, _onnx in {
        "AddV2": "Add", "Sub": "Sub", "Mul": "Mul", "RealDiv": "Div", "Neg": "Neg",
        "Abs": "Abs", "Exp": "Exp", "Log": "Log", "Sqrt": "Sqrt", "Tanh": "Tanh",
        "Sigmoid": "Sigmoid", "Relu": "Relu", "Floor": "Floor", "Ceil": "Ceil",
        "Round": "Round", "Sign": "Sign", "Sin": "Sin", "Cos": "Cos", "Erf": "Erf",
        "Reciprocal": "Reciprocal", "Maximum": "Max", "Minimum": "Min", "Pow": "Pow",
        "Equal": "Equal", "Greater": "Greater", "Less": "Less",
        "GreaterEqual": "GreaterOrEqual", "LessEqual": "LessOrEqual",
        "LogicalAnd": "And", "LogicalOr": "Or", "LogicalNot": "Not", "IsNan": "IsNaN",
        "IsInf": "IsInf", "Identity": "Identity", "StopGradient": "Identity",
        "CheckNumerics": "Identity", "Softplus": "Softplus", "Elu": "Elu", "AddN": "Sum",
        "SelectV2": "Where"}.items():
    LOWERINGS[_kf] = _simple(_onnx)


def lowering(*names: str) -> Callable:
    def register(fn: Callable) -> Callable:
        for name in names:
            LOWERINGS[name] = fn
        return fn
    return register


def _scalar(cv: Any, value: Any, like: Any) -> str:
    return cv.const(np.asarray(value, like.dtype.as_numpy_dtype))


@lowering("Const")
def _const(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return [cv.const(np.asarray(op.attrs["value"].array), base=op.name)]


@lowering("ReadVariableOp")
def _read(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return [cv.variable(op.attrs["handle"])]


@lowering("Einsum")
def _einsum(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Einsum", ins, op.name, equation=op.attrs["equation"])


@lowering("NotEqual")
def _not_equal(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Not", [cv.one("Equal", ins, op.name)], op.name)


@lowering("Square")
def _square(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Mul", [ins[0], ins[0]], op.name)


@lowering("SquaredDifference")
def _squared_difference(cv: Any, op: Any, ins: List[str]) -> List[str]:
    d = cv.one("Sub", ins, op.name)
    return cv.node("Mul", [d, d], op.name)


@lowering("Rsqrt")
def _rsqrt(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Reciprocal", [cv.one("Sqrt", ins, op.name)], op.name)


@lowering("Log1p")
def _log1p(cv: Any, op: Any, ins: List[str]) -> List[str]:
    one = _scalar(cv, 1, op.inputs[0])
    return cv.node("Log", [cv.one("Add", [ins[0], one], op.name)], op.name)


@lowering("Expm1")
def _expm1(cv: Any, op: Any, ins: List[str]) -> List[str]:
    one = _scalar(cv, 1, op.inputs[0])
    return cv.node("Sub", [cv.one("Exp", ins, op.name), one], op.name)


@lowering("Relu6")
def _relu6(cv: Any, op: Any, ins: List[str]) -> List[str]:
    x = op.inputs[0]
    return cv.node("Clip", [ins[0], _scalar(cv, 0, x), _scalar(cv, 6, x)], op.name)


@lowering("LeakyRelu")
def _leaky_relu(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("LeakyRelu", ins, op.name, alpha=float(op.attrs["alpha"]))


@lowering("FloorDiv")
def _floor_div(cv: Any, op: Any, ins: List[str]) -> List[str]:
    if not op.inputs[0].dtype.is_floating:
        raise errors.UnimplementedError(unmapped(op, "integer inputs (ONNX Div truncates)"))
    return cv.node("Floor", [cv.one("Div", ins, op.name)], op.name)


@lowering("BiasAdd")
def _bias_add(cv: Any, op: Any, ins: List[str]) -> List[str]:
    if op.attrs.get("data_format", "NHWC") not in ("NHWC", "N...C"):
        raise errors.UnimplementedError(unmapped(op, "a channels-first data_format"))
    return cv.node("Add", ins, op.name)


@lowering("Cast")
def _cast(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Cast", ins, op.name, to=onnx_type(op.attrs["dtype"]))


@lowering("MatMul")
def _matmul(cv: Any, op: Any, ins: List[str]) -> List[str]:
    args = []
    for name, t, flag in zip(ins, op.inputs, ("transpose_a", "transpose_b")):
        if op.attrs.get(flag):
            rank = t.shape.rank
            if rank is None:
                raise errors.UnimplementedError(unmapped(op, f"{flag} on an unknown rank"))
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            name = cv.one("Transpose", [name], op.name, perm=perm)
        args.append(name)
    return cv.node("MatMul", args, op.name)


@lowering("Reshape")
def _reshape(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Reshape", [ins[0], cv.ints(op.attrs["shape"])], op.name, allowzero=1)


@lowering("DynamicReshape")
def _dynamic_reshape(cv: Any, op: Any, ins: List[str]) -> List[str]:
    shape = cv.one("Cast", [ins[1]], op.name, to=onnx_type_int64(cv))
    return cv.node("Reshape", [ins[0], shape], op.name, allowzero=1)


def onnx_type_int64(cv: Any) -> int:
    return cv.onnx.TensorProto.INT64


@lowering("Transpose")
def _transpose(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Transpose", ins, op.name, perm=list(op.attrs["perm"]))


def _reduce_node(cv: Any, onnx_op: str, x: str, attrs: dict, base: str) -> List[str]:
    axis = attrs["axis"]
    keepdims = int(bool(attrs["keepdims"]))
    if axis is None:
        return cv.node(onnx_op, [x], base, keepdims=keepdims)
    axes = [axis] if isinstance(axis, int) else list(axis)
    if not axes:
        return cv.node("Identity", [x], base)
    return cv.node(onnx_op, [x, cv.ints(axes)], base, keepdims=keepdims)


@lowering("Sum", "Mean", "Max", "Min", "Prod")
def _reduce(cv: Any, op: Any, ins: List[str]) -> List[str]:
    onnx_op = {"Sum": "ReduceSum", "Mean": "ReduceMean", "Max": "ReduceMax",
               "Min": "ReduceMin", "Prod": "ReduceProd"}[op.type]
    return _reduce_node(cv, onnx_op, ins[0], op.attrs, op.name)


@lowering("All", "Any")
def _all_any(cv: Any, op: Any, ins: List[str]) -> List[str]:
    as_int = cv.one("Cast", ins, op.name, to=cv.onnx.TensorProto.INT32)
    reduced = _reduce_node(cv, "ReduceMin" if op.type == "All" else "ReduceMax", as_int,
                           op.attrs, op.name)
    return cv.node("Cast", reduced, op.name, to=cv.onnx.TensorProto.BOOL)


@lowering("ArgMax", "ArgMin")
def _arg(cv: Any, op: Any, ins: List[str]) -> List[str]:
    index = cv.one(op.type, ins, op.name, axis=int(op.attrs["axis"]), keepdims=0)
    return cv.node("Cast", [index], op.name, to=onnx_type(op.attrs["output_type"]))


@lowering("ConcatV2")
def _concat(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Concat", ins, op.name, axis=int(op.attrs["axis"]))


@lowering("Pack")
def _pack(cv: Any, op: Any, ins: List[str]) -> List[str]:
    axes = cv.ints([op.attrs["axis"]])
    parts = [cv.one("Unsqueeze", [name, axes], op.name) for name in ins]
    return cv.node("Concat", parts, op.name, axis=int(op.attrs["axis"]))


@lowering("ExpandDims")
def _expand_dims(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Unsqueeze", [ins[0], cv.ints([op.attrs["axis"]])], op.name)


@lowering("Squeeze")
def _squeeze(cv: Any, op: Any, ins: List[str]) -> List[str]:
    axis = op.attrs["axis"]
    if axis is None or axis == ():
        return cv.node("Squeeze", ins, op.name)
    axes = [axis] if isinstance(axis, int) else list(axis)
    return cv.node("Squeeze", [ins[0], cv.ints(axes)], op.name)


@lowering("Softmax", "LogSoftmax")
def _softmax(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node(op.type, ins, op.name, axis=int(op.attrs.get("axis", -1)))


@lowering("Shape", "Size")
def _shape(cv: Any, op: Any, ins: List[str]) -> List[str]:
    raw = cv.one(op.type, ins, op.name)
    return cv.node("Cast", [raw], op.name, to=onnx_type(op.attrs["out_type"]))


@lowering("Rank")
def _rank(cv: Any, op: Any, ins: List[str]) -> List[str]:
    if op.inputs[0].shape.rank is None:
        raise errors.UnimplementedError(unmapped(op, "an input of unknown rank"))
    return [cv.const(np.int32(op.inputs[0].shape.rank), base=op.name)]


@lowering("Fill")
def _fill(cv: Any, op: Any, ins: List[str]) -> List[str]:
    dtype = op.attrs["dtype"].as_numpy_dtype
    return [cv.const(np.full(op.attrs["shape"], op.attrs["value"], dtype), base=op.name)]


@lowering("DynamicFill")
def _dynamic_fill(cv: Any, op: Any, ins: List[str]) -> List[str]:
    shape = cv.one("Cast", ins, op.name, to=onnx_type_int64(cv))
    value = np.asarray([op.attrs["value"]], op.attrs["dtype"].as_numpy_dtype)
    return cv.node("ConstantOfShape", [shape], op.name,
                   value=cv.onnx.numpy_helper.from_array(value))


@lowering("GatherV2")
def _gather(cv: Any, op: Any, ins: List[str]) -> List[str]:
    if op.attrs.get("batch_dims", 0):
        raise errors.UnimplementedError(unmapped(op, "batch_dims"))
    return cv.node("Gather", ins, op.name, axis=int(op.attrs["axis"]))


@lowering("Tile")
def _tile(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Tile", [ins[0], cv.ints(op.attrs["multiples"])], op.name)


@lowering("BroadcastTo")
def _broadcast_to(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return cv.node("Expand", [ins[0], cv.ints(op.attrs["shape"])], op.name)


@lowering("Range")
def _range(cv: Any, op: Any, ins: List[str]) -> List[str]:
    a = op.attrs
    return [cv.const(np.arange(a["start"], a["limit"], a["delta"],
                               a["dtype"].as_numpy_dtype), base=op.name)]


@lowering("StridedSlice")
def _strided_slice(cv: Any, op: Any, ins: List[str]) -> List[str]:
    """Index specs: int (index), ('slice', begin, end, step), None (newaxis), '...'."""
    spec = list(op.attrs["spec"])
    rank = op.inputs[0].shape.rank
    if "..." in spec:
        if rank is None:
            raise errors.UnimplementedError(unmapped(op, "an ellipsis on an unknown rank"))
        at = spec.index("...")
        used = sum(1 for s in spec if s is not None and s != "...")
        spec[at:at + 1] = [("slice", None, None, None)] * (rank - used)
    starts, ends, axes, steps, drop, new = [], [], [], [], [], []
    axis, out_axis = 0, 0
    for s in spec:
        if s is None:
            new.append(out_axis)
            out_axis += 1
            continue
        if isinstance(s, int):
            starts.append(s)
            ends.append(s + 1 if s != -1 else np.iinfo(np.int64).max)
            axes.append(axis)
            steps.append(1)
            drop.append(axis)
        elif isinstance(s, tuple) and s and s[0] == "slice":
            _, begin, end, step = s
            step = 1 if step is None else step
            if (begin, end, step) != (None, None, 1):
                big = np.iinfo(np.int64).max
                starts.append(begin if begin is not None else (0 if step > 0 else big))
                ends.append(end if end is not None else (big if step > 0 else -big))
                axes.append(axis)
                steps.append(step)
            out_axis += 1
        else:
            raise errors.UnimplementedError(unmapped(op, f"the index {s!r}"))
        axis += 1
    x = ins[0]
    if axes:
        x = cv.one("Slice", [x, cv.ints(starts), cv.ints(ends), cv.ints(axes), cv.ints(steps)],
                   op.name)
    if drop:
        x = cv.one("Squeeze", [x, cv.ints(drop)], op.name)
    if new:
        x = cv.one("Unsqueeze", [x, cv.ints(new)], op.name)
    return [x] if x != ins[0] else cv.node("Identity", [x], op.name)


def _nchw(cv: Any, name: str, base: str) -> str:
    return cv.one("Transpose", [name], base, perm=[0, 3, 1, 2])


def _nhwc(cv: Any, name: str, base: str) -> List[str]:
    return cv.node("Transpose", [name], base, perm=[0, 2, 3, 1])


def _pad(op: Any) -> str:
    padding = op.attrs["padding"]
    if padding not in ("SAME", "VALID"):
        raise errors.UnimplementedError(unmapped(op, f"padding {padding!r}"))
    return "SAME_UPPER" if padding == "SAME" else "VALID"


@lowering("Conv2D")
def _conv2d(cv: Any, op: Any, ins: List[str]) -> List[str]:
    if op.attrs.get("data_format", "NHWC") != "NHWC":
        raise errors.UnimplementedError(unmapped(op, "a channels-first data_format"))
    kernel = op.inputs[1].shape
    if not kernel.is_fully_defined():
        raise errors.UnimplementedError(unmapped(op, "a filter of unknown shape"))
    w = cv.one("Transpose", [ins[1]], op.name, perm=[3, 2, 0, 1])
    y = cv.one("Conv", [_nchw(cv, ins[0], op.name), w], op.name,
               kernel_shape=list(kernel.as_list()[:2]), strides=list(op.attrs["strides"]),
               dilations=list(op.attrs["dilations"]), auto_pad=_pad(op))
    return _nhwc(cv, y, op.name)


@lowering("MaxPool", "AvgPool")
def _pool(cv: Any, op: Any, ins: List[str]) -> List[str]:
    if op.attrs.get("data_format", "NHWC") != "NHWC":
        raise errors.UnimplementedError(unmapped(op, "a channels-first data_format"))
    extra = {"count_include_pad": 0} if op.type == "AvgPool" else {}
    y = cv.one("MaxPool" if op.type == "MaxPool" else "AveragePool",
               [_nchw(cv, ins[0], op.name)], op.name, kernel_shape=list(op.attrs["ksize"]),
               strides=list(op.attrs["strides"]), auto_pad=_pad(op), **extra)
    return _nhwc(cv, y, op.name)


@lowering("OneHot")
def _one_hot(cv: Any, op: Any, ins: List[str]) -> List[str]:
    values = cv.one("Concat", [cv.one("Unsqueeze", [ins[2], cv.ints([0])], op.name),
                               cv.one("Unsqueeze", [ins[1], cv.ints([0])], op.name)],
                    op.name, axis=0)
    depth = cv.ints([op.attrs["depth"]])
    indices = cv.one("Cast", [ins[0]], op.name, to=onnx_type_int64(cv))  # what ORT runs
    return cv.node("OneHot", [indices, depth, values], op.name, axis=int(op.attrs["axis"]))


@lowering("NoOp", "Assert", "PrintV2")
def _dropped(cv: Any, op: Any, ins: List[str]) -> List[str]:
    return []  # no data outputs: nothing downstream reads them


@lowering("PadV2")
def _pad_v2(cv: Any, op: Any, ins: List[str]) -> List[str]:
    pads = [int(p[0]) for p in op.attrs["paddings"]] + [int(p[1]) for p in op.attrs["paddings"]]
    return cv.node("Pad", [ins[0], cv.ints(pads), ins[1]], op.name, mode="constant")


@lowering("SplitV")
def _split_v(cv: Any, op: Any, ins: List[str]) -> List[str]:
    sizes, axis = list(op.attrs["sizes"]), int(op.attrs["axis"])
    if -1 in sizes:
        dim = op.inputs[0].shape.as_list()[axis] if op.inputs[0].shape.rank else None
        if dim is None:
            raise errors.UnimplementedError(unmapped(op, "a -1 size on an unknown dimension"))
        sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
    return cv.node("Split", [ins[0], cv.ints(sizes)], op.name, n_out=len(sizes), axis=axis)


@lowering("Unpack")
def _unpack(cv: Any, op: Any, ins: List[str]) -> List[str]:
    n, axis = int(op.attrs["num"]), int(op.attrs["axis"])
    parts = cv.node("Split", [ins[0], cv.ints([1] * n)], op.name, n_out=n, axis=axis)
    axes = cv.ints([axis])
    return [cv.one("Squeeze", [part, axes], op.name) for part in parts]


@lowering("Cumsum")
def _cumsum(cv: Any, op: Any, ins: List[str]) -> List[str]:
    axis = cv.const(np.int64(op.attrs["axis"]))
    return cv.node("CumSum", [ins[0], axis], op.name, exclusive=int(op.attrs["exclusive"]),
                   reverse=int(op.attrs["reverse"]))


@lowering("ReverseV2")
def _reverse(cv: Any, op: Any, ins: List[str]) -> List[str]:
    axes = list(op.attrs["axis"])
    if not axes:
        return cv.node("Identity", ins, op.name)
    big = np.iinfo(np.int64).max
    return cv.node("Slice", [ins[0], cv.ints([-1] * len(axes)), cv.ints([-big] * len(axes)),
                             cv.ints(axes), cv.ints([-1] * len(axes))], op.name)


@lowering("FloorMod")
def _floor_mod(cv: Any, op: Any, ins: List[str]) -> List[str]:
    if not op.inputs[0].dtype.is_floating:
        return cv.node("Mod", ins, op.name, fmod=0)  # integers: the divisor's sign, as TF
    quotient = cv.one("Floor", [cv.one("Div", ins, op.name)], op.name)
    return cv.node("Sub", [ins[0], cv.one("Mul", [quotient, ins[1]], op.name)], op.name)


@lowering("TopKV2")
def _top_k(cv: Any, op: Any, ins: List[str]) -> List[str]:
    values, indices = cv.node("TopK", [ins[0], cv.ints([op.attrs["k"]])], op.name, n_out=2,
                              axis=-1, largest=1, sorted=1)
    return [values, cv.one("Cast", [indices], op.name, to=onnx_type(op.attrs["index_type"]))]


# ---------------------------------------------------------------- control flow

@lowering("If", "StatelessIf")
def _if(cv: Any, op: Any, ins: List[str]) -> List[str]:
    captured = ins[1:]
    specs = list(op.attrs["output_specs"])
    branches = {}
    for key in ("then_branch", "else_branch"):
        sub = op.attrs[key]
        env = {id(p): name for p, name in zip(sub.graph.inputs, sub.feed((), captured))}

        def outputs(env: dict, g: Any = sub.graph) -> list:
            cv.lower(g, env)
            return [(env[id(t)], spec) for t, spec in zip(g.outputs, specs)]
        branches[key] = cv.subgraph(f"{op.name}/{key}", env, [], outputs)
    return cv.node("If", [ins[0]], op.name, n_out=len(op.outputs), **branches)


@lowering("While", "StatelessWhile")
def _while(cv: Any, op: Any, ins: List[str]) -> List[str]:
    n = op.attrs["n_vars"]
    cond, body = op.attrs["cond_graph"], op.attrs["body_graph"]
    initial, captured = ins[:n], ins[n:]
    specs = list(op.attrs["output_specs"])[:n]
    limit = op.attrs["maximum_iterations"]

    def run_cond(state: list, env: dict) -> str:
        env.update({id(p): v for p, v in zip(cond.graph.inputs, cond.feed(state, captured))})
        cv.lower(cond.graph, env)
        return env[id(cond.graph.outputs[0])]

    first = run_cond(initial, {})
    iteration, cond_in = cv.fresh(f"{op.name}/i"), cv.fresh(f"{op.name}/cond")
    state = [cv.fresh(f"{op.name}/v{i}") for i in range(n)]
    helper, tp = cv.helper, cv.onnx.TensorProto
    inputs = [helper.make_tensor_value_info(iteration, tp.INT64, []),
              helper.make_tensor_value_info(cond_in, tp.BOOL, [])]
    inputs += [cv.value_info(name, spec) for name, spec in zip(state, specs)]

    def outputs(env: dict) -> list:
        env.update({id(p): v for p, v in zip(body.graph.inputs, body.feed(state, captured))})
        cv.lower(body.graph, env)
        new = [env[id(t)] for t in body.graph.outputs[:n]]
        again = run_cond(new, env)
        return [(again, TensorSpec([], dtypes.bool))] + list(zip(new, specs))

    body_proto = cv.subgraph(f"{op.name}/body", {}, inputs, outputs)
    trips = cv.const(np.int64(limit), base=f"{op.name}/max") if limit is not None else ""
    return cv.node("Loop", [trips, first] + initial, op.name, n_out=n, body=body_proto)

