"""OpDef, defop() and bind(): every op is declared once and applied through bind().

An OpDef carries the shape rule, NumPy kernel, gradient rule and flags. bind() is the
one place that looks at the mode: eagerly it runs the kernel and wraps the result;
while a graph is being built it asks the graph to add an Operation. Either way, active
tapes record the application. Imports tensor, dtypes, shapes, errors, context only.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, FrozenSet, Optional, Sequence, Tuple

import numpy as np

from kilnflow import errors
from kilnflow.context import allocation_limit, ctx
from kilnflow.tensor import EagerTensor, wrap

_new_eager = EagerTensor.__new__

REGISTRY: dict = {}
NO_ATTRS: dict = {}  # shared empty attrs: no dict per call


class OpDef:
    """Everything every mode needs to know about one op (STYLE.md, convention 1): the fields
    `defop` documents, plus the eager dispatch's cache (`simple`, `ok_dtype`, `np_dtypes`),
    which bind() fills and nothing else reads."""

    __slots__ = ("name", "shape", "kernel", "grad", "stateful", "random", "commutative",
                 "fusable", "multi_output", "same_dtype", "dtypes", "check_eager", "watch_attr",
                 "codegen", "inline", "reduction", "identity", "shape_only", "permutation_attr",
                 "reshape_attr", "transpose_flags", "fresh_output",
                 "np_dtypes", "simple", "ok_dtype", "__weakref__")

    def __init__(self, name: str, **fields: Any):
        self.name = name
        for field, value in fields.items():
            setattr(self, field, value)
        self.stateful = self.stateful or self.random
        # Eager dispatch cache. np_dtypes: `dtypes` as NumPy dtypes. Binary ops whose inputs
        # share one dtype are `simple`: after one full check, a call with the same dtype
        # object (`ok_dtype`) skips the checks entirely.
        self.np_dtypes = None if self.dtypes is None else frozenset(d._np for d in self.dtypes)
        self.simple = self.same_dtype is True and not self.check_eager and not self.multi_output
        self.ok_dtype: Any = None

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


def defop(name: str, *, shape: Callable, kernel: Callable, grad: Optional[Callable] = None,
          stateful: bool = False, random: bool = False, commutative: bool = False,
          fusable: Optional[str] = None, multi_output: bool = False, same_dtype: Any = True,
          dtypes: Optional[Sequence] = None, check_eager: bool = False,
          watch_attr: Optional[str] = None, codegen: Optional[Callable] = None,
          inline: Optional[Callable] = None, reduction: Optional[str] = None,
          identity: bool = False, shape_only: bool = False,
          permutation_attr: Optional[str] = None, reshape_attr: Optional[str] = None,
          transpose_flags: Optional[Tuple[str, str]] = None,
          fresh_output: bool = False) -> OpDef:
    """Declare an op: every field some layer reads, in one call.

    What the op computes, in every mode:
      shape(*inputs, **attrs) -> TensorSpec or list of TensorSpecs (inputs have .shape and
          .dtype; dims may be None). Its keyword parameters after the inputs are the op's
          declared attrs (a loaded graph may use no others).
      kernel(*arrays, **attrs) -> ndarray, or a tuple of them when multi_output
      grad(op, *output_grads) -> one gradient (or None) per input, written with public ops
      same_dtype: True (all inputs), False, or a tuple of input positions that must agree
      dtypes: the dtypes allowed for input 0 (checked in both modes)
      check_eager: also run the shape rule eagerly (for kernels NumPy would not reject)
      watch_attr: the attr holding an object (a variable's handle) that tapes treat as the
          op's input, so gradients of its output reach that object (ReadVariableOp)
    Flags: stateful (never pruned, merged or reordered), random (draws numbers; stateful),
      commutative (CSE may swap inputs).
    fusable: the op as a NumPy expression template, for fusion, algebraic facts and inlining.
      `{0}`, `{1}`.. stand for the inputs and `{name}` for attr `name`; the result must be a
      Python expression over those, NumPy functions by bare name (`maximum({0}, {1})`,
      `where({0} > 0, {0}, 0)`) and operators, e.g. `({0} * {1})`, `(-{0})`,
      `{0}.astype({dtype})`. Passes read meaning from it (`({0} * {1})` has identity 1).
    Facts the passes read (through passes/facts.py):
      reduction: 'sum' | 'mean' | 'max' | 'min' | 'prod' | 'any' | 'all'
      identity: the op returns its input unchanged (Identity)
      shape_only: the result depends only on the input's static shape (Shape, Size, Rank)
      permutation_attr / reshape_attr: the attr holding a transpose's perm / a reshape's dims
      transpose_flags: the attrs that transpose a matmul's operands
      fresh_output: the kernel always returns a new array, never a view (its buffer may be
          reused by plan_buffers)
    How generated code runs it (runtime/codegen.py):
      codegen(op, emitter, env, indent): emits the op's source itself (control flow)
      inline(op) -> a Python expression over {0}, {1}.. used instead of a kernel call, or None
    """
    if name in REGISTRY:
        raise ValueError(f"Op {name} is declared twice")
    op = OpDef(name, shape=shape, kernel=kernel, grad=grad, stateful=stateful, random=random,
               commutative=commutative, fusable=fusable, multi_output=multi_output,
               same_dtype=same_dtype,
               dtypes=frozenset(dtypes) if dtypes is not None else None,
               check_eager=check_eager, watch_attr=watch_attr, codegen=codegen, inline=inline,
               reduction=reduction, identity=identity, shape_only=shape_only,
               permutation_attr=permutation_attr, reshape_attr=reshape_attr,
               transpose_flags=transpose_flags, fresh_output=fresh_output)
    REGISTRY[name] = op
    return op


def declared_attrs(op: OpDef, n_inputs: int) -> FrozenSet[str]:
    """The attr names `op` accepts when applied to `n_inputs` inputs.

    Read from the shape rule's signature (the parameters after the inputs), or from the
    kernel's when the rule takes `**attrs`; a NumPy ufunc kernel takes none. Loading a
    graph refuses any other attr name, so a file cannot smuggle text in as a keyword.
    """
    for fn in (op.shape, getattr(op.kernel, "__wrapped__", op.kernel)):
        if isinstance(fn, np.ufunc):
            return frozenset()
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            return frozenset()
        if any(p.kind is p.VAR_KEYWORD for p in params):
            continue
        positional = [p.name for p in params
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        keyword_only = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        return frozenset(positional[n_inputs:] + keyword_only)
    return frozenset()


def bind(op: OpDef, inputs: Sequence, attrs: dict = NO_ATTRS, name: Optional[str] = None) -> Any:
    """Apply `op` to `inputs` (tensors, already converted) with `attrs`.

    Returns a tensor, or a tuple of tensors for multi-output ops. `name` names the graph
    node (default: the op's type); eagerly it is ignored.
    """
    if ctx.plain_eager:  # the common case first: eager, no tape
        if op.simple and len(inputs) == 2:  # inlined: a frame is a third of the overhead
            a = inputs[0]._value
            b = inputs[1]._value
            dtype = a.dtype
            if dtype is not op.ok_dtype or b.dtype is not dtype:
                _check_binary(op, inputs, dtype)
            try:
                out = op.kernel(a, b, **attrs) if attrs else op.kernel(a, b)
            except errors.OpError:
                raise
            except Exception as exc:
                raise kernel_error(op, inputs, attrs, exc) from exc
            if type(out) is np.ndarray:
                t = _new_eager(EagerTensor)
                t._value = out
                return t
            return wrap(out)
        return _run_eagerly(op, inputs, attrs)
    graph = ctx.graph
    if graph is not None:
        check_dtypes(op, inputs)
        outputs = graph.create_op(op, inputs, attrs, name).outputs
        result = tuple(outputs) if op.multi_output else outputs[0]
    else:
        result = _run_eagerly(op, inputs, attrs)
    for tape in ctx.tapes:
        tape.record(op, inputs, attrs, result)
    return result


def _run_eagerly(op: OpDef, inputs: Sequence, attrs: dict) -> Any:
    """Eager execution (bind inlines the commonest case, a simple binary op)."""
    if len(inputs) == 2:  # unpacked by arity: cheaper than building a list
        a = inputs[0]._value
        b = inputs[1]._value
        arrays: Sequence = (a, b)
        if op.same_dtype is True and a.dtype is not b.dtype and a.dtype != b.dtype:
            check_dtypes(op, inputs)  # raises the TF-style message
    elif len(inputs) == 1:
        arrays = (inputs[0]._value,)
    else:
        arrays = [t._value for t in inputs]
        if op.same_dtype is True and len(arrays) > 1:
            first = arrays[0].dtype
            for x in arrays:
                if x.dtype != first:
                    check_dtypes(op, inputs)
    if op.same_dtype and op.same_dtype is not True:
        check_dtypes(op, inputs)
    if op.np_dtypes is not None and arrays and arrays[0].dtype not in op.np_dtypes:
        check_dtypes(op, inputs)
    if op.check_eager:
        infer(op, inputs, attrs)
    try:
        out = op.kernel(*arrays, **attrs) if attrs else op.kernel(*arrays)
    except errors.OpError:
        raise
    except Exception as exc:  # turn NumPy's complaint into a message naming the op
        raise kernel_error(op, inputs, attrs, exc) from exc
    if op.multi_output:
        return tuple([wrap(o) for o in out])
    if type(out) is np.ndarray:
        t = _new_eager(EagerTensor)
        t._value = out
        return t
    return wrap(out)


def _check_binary(op: OpDef, inputs: Sequence, dtype: Any) -> None:
    """The full dtype checks of a simple binary op; remembers a dtype that passed."""
    if inputs[1]._value.dtype != dtype:
        check_dtypes(op, inputs)  # raises
    if op.np_dtypes is not None and dtype not in op.np_dtypes:
        check_dtypes(op, inputs)  # raises
    op.ok_dtype = dtype


def check_dtypes(op: OpDef, inputs: Sequence) -> None:
    """TF never promotes: inputs that must agree in dtype raise InvalidArgumentError."""
    if op.same_dtype and len(inputs) > 1:
        positions = range(len(inputs)) if op.same_dtype is True else op.same_dtype
        first = None
        for i in positions:
            dtype = inputs[i].dtype
            if first is None:
                first = dtype
            elif dtype is not first:
                raise errors.InvalidArgumentError(errors.with_location(
                    f"cannot compute {op.name} as input #{i}(zero-based) was expected to be a "
                    f"{first.name} tensor but is a {dtype.name} tensor [Op:{op.name}]"))
    if op.dtypes is not None and inputs:
        dtype = inputs[0].dtype
        if dtype not in op.dtypes:
            allowed = ", ".join(sorted(d.name for d in op.dtypes))
            raise errors.InvalidArgumentError(errors.with_location(
                f"Value for attr 'T' of {dtype.name} is not in the list of allowed values: "
                f"{allowed} [Op:{op.name}]"))


def infer(op: OpDef, inputs: Sequence, attrs: dict) -> list:
    """Run the shape rule; its ValueErrors become InvalidArgumentErrors naming the op."""
    try:
        specs = op.shape(*inputs, **attrs)
    except errors.OpError:
        raise
    except TypeError as exc:
        raise TypeError(errors.with_location(f"{exc} [Op:{op.name}]")) from exc
    except (ValueError, IndexError) as exc:
        raise errors.InvalidArgumentError(errors.with_location(f"{exc} [Op:{op.name}]")) from exc
    specs = list(specs) if isinstance(specs, (list, tuple)) else [specs]
    limit = allocation_limit()
    for spec in specs:
        count = spec.shape.num_elements() if spec.shape.rank is not None else None
        if count is not None and count * spec.dtype.size > limit:
            raise errors.ResourceExhaustedError(errors.with_location(
                f"OOM when allocating tensor with shape {spec.shape} and type "
                f"{spec.dtype.name}: {count * spec.dtype.size} bytes exceed the allocation "
                f"limit of {limit} (kf.config.experimental.set_allocation_limit) "
                f"[Op:{op.name}]"))
    return specs


def kernel_error(op: OpDef, inputs: Sequence, attrs: dict, exc: Exception) -> Exception:
    """The error to raise when a kernel fails: the shape rule's, else NumPy's, with the op."""
    infer(op, inputs, attrs)  # raises the clearer message when the rule can tell
    return errors.class_for(exc)(errors.with_location(
        f"{type(exc).__name__}: {exc} [Op:{op.name}]"))


def np_errors_ignored(kernel: Callable) -> Callable:
    """Kernels that TF lets produce inf/nan quietly (log(0), x/0) run with NumPy warnings off."""
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return kernel(*args, **kwargs)
    quiet.__name__ = getattr(kernel, "__name__", "kernel")
    quiet.__wrapped__ = kernel
    quiet.silences_numpy = True  # codegen calls __wrapped__ inside one errstate per call
    return quiet
