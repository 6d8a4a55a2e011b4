"""Graph -> Python source: one statement per operation, named after it, calling its kernel.

Constants and other non-literal attrs become globals of the generated module; values are
deleted after their last use so large intermediates are freed early. Ops may provide a
`codegen` hook (control flow) that emits nested functions instead of a kernel call.
Reads graph and ops; never imports function/ or passes/.
"""
from __future__ import annotations

import keyword
import re
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes

_LITERAL_TYPES = (int, float, bool, str, type(None))
_FUNCTION_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\(")
_NOT_IDENTIFIER_CHAR = re.compile(r"[^A-Za-z0-9_]")
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_MAX_IDENTIFIER = 64  # long graph names are cut (uniqueness is restored by Namer)


def identifier(text: str) -> str:
    """The one way a graph or user name enters generated source: an ASCII identifier.

    Every character outside `[A-Za-z0-9_]` becomes `_` (so Unicode look-alikes, which
    Python would fold together under NFKC, can never name the same variable), leading
    underscores go (no dunders), and keywords and leading digits get a `v_` prefix.
    The result is not unique; `Namer.fresh` makes it so.
    """
    name = _NOT_IDENTIFIER_CHAR.sub("_", str(text))[:_MAX_IDENTIFIER].strip("_") or "v"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = "v_" + name
    return name


def attr_keyword(name: str) -> str:
    """An attr name as a keyword argument in generated source; anything else is refused.

    Attr names come from op declarations, but a loaded graph could carry any string:
    one that is not a plain ASCII identifier is never pasted into source.
    """
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name) or keyword.iskeyword(name):
        raise ValueError(f"invalid attr name {name!r}: attr names are ASCII identifiers")
    return name


def _inline_template(op: Any) -> Any:
    """A Python expression over {0}, {1}.. that computes `op`, emitted instead of a call.

    An attr-less op whose kernel is a bare NumPy ufunc uses its fusable template:
    `a * b` computes what `k_Mul(a, b)` does (the operator is the ufunc) but skips a
    call, which is most of the cost on small arrays inside loops. Kernels that silence
    NumPy warnings are wrappers, not ufuncs, so they keep their call. Other ops may give
    one for a given node through their `inline` field (e.g. MatMul of known ranks: `a @ b`).
    """
    opdef = op.opdef
    inline = opdef.inline
    if inline is not None:
        return inline(op)
    if op.attrs or opdef.fusable is None or not isinstance(opdef.kernel, np.ufunc):
        return None
    if "{" in opdef.fusable.replace("{0}", "").replace("{1}", "").replace("{2}", ""):
        return None
    return opdef.fusable


class Namer:
    """Valid, unique Python identifiers derived from graph names."""

    def __init__(self, reserved: Sequence[str] = ()) -> None:
        self.used = set(reserved)

    def fresh(self, base: str) -> str:
        name = identifier(base)
        candidate, n = name, 1
        while candidate in self.used:
            candidate = f"{name}_{n}"
            n += 1
        self.used.add(candidate)
        return candidate


class Emitter:
    """Accumulates source lines and the globals they refer to."""

    def __init__(self, namer: Namer, globals_: Dict[str, Any]) -> None:
        self.namer = namer
        self.globals = globals_
        self.lines: List[str] = []
        self.origins: Dict[int, Any] = {}  # generated line number -> the op it runs
        self.silenced = False  # some kernel relies on NumPy warnings being off
        self.probe: Any = None  # times each op: only in profiled twins (runtime/profile.py)
        self._by_id: Dict[int, str] = {}

    def global_ref(self, value: Any, hint: str) -> str:
        """A global name bound to `value` (shared when the same object is used again)."""
        name = self._by_id.get(id(value))
        if name is None:
            name = self.namer.fresh(hint)
            self.globals[name] = value
            self._by_id[id(value)] = name
        return name

    def attr_text(self, value: Any) -> str:
        if isinstance(value, _LITERAL_TYPES) and not (isinstance(value, float) and
                                                      value != value):
            text = repr(value)
            if text not in ("inf", "-inf"):
                return text
        if isinstance(value, tuple) and all(isinstance(v, (int, bool, str, type(None)))
                                            for v in value):
            return repr(value)
        if isinstance(value, _dtypes.DType):
            return self.global_ref(value, f"dt_{value.name}")
        return self.global_ref(value, "c")

    def kernel_ref(self, opdef: Any) -> str:
        kernel = opdef.kernel
        if getattr(kernel, "silences_numpy", False):
            # The generated function enters np.errstate once; call the bare kernel
            self.silenced = True
            kernel = kernel.__wrapped__
        return self.global_ref(kernel, f"k_{opdef.name}")


def emit_body(graph_ops: Sequence, emitter: Emitter, env: Dict[int, str], indent: str,
              keep: set) -> None:
    """Emit statements for `graph_ops`; env maps id(tensor) -> expression for its value.

    Values whose tensors are in `keep` (the outputs) are never deleted.
    """
    last_use: Dict[int, int] = {}
    for i, op in enumerate(graph_ops):
        for t in op.inputs:
            last_use[id(t)] = i
    for i, op in enumerate(graph_ops):
        if op.outputs and id(op.outputs[0]) in env:  # fed from outside: an input
            continue
        hook = op.opdef.codegen
        if op.opdef.name == "Const" and hook is None:
            array = op.attrs["value"].array
            # A NumPy scalar, not a 0-d array: arithmetic on scalars is ~10x cheaper
            # (strings stay arrays: a bare bytes object is no tensor value)
            value = array[()] if array.ndim == 0 and array.dtype != object else array
            env[id(op.outputs[0])] = emitter.global_ref(value, "c_" + op.name)
            continue
        if emitter.probe is not None:
            emitter.probe.before(op, emitter, indent)
        emitter.origins[len(emitter.lines) + 2] = op  # +1: the def line, +1: 1-based
        template = None if hook is not None else _inline_template(op)
        if hook is not None:
            hook(op, emitter, env, indent)
        elif template is not None:
            for fn in _FUNCTION_CALL.findall(template):
                emitter.globals.setdefault(fn, getattr(np, fn))
            name = emitter.namer.fresh(op.name)
            env[id(op.outputs[0])] = name
            expression = template.format(*[env[id(t)] for t in op.inputs])
            emitter.lines.append(f"{indent}{name} = {expression}")
        else:
            args = [env[id(t)] for t in op.inputs]
            args += [f"{attr_keyword(k)}={emitter.attr_text(v)}" for k, v in op.attrs.items()]
            call = f"{emitter.kernel_ref(op.opdef)}({', '.join(args)})"
            outs = [emitter.namer.fresh(op.name) for _ in op.outputs]
            for t, name in zip(op.outputs, outs):
                env[id(t)] = name
            if not outs:
                emitter.lines.append(f"{indent}{call}")
            elif op.opdef.multi_output:
                emitter.lines.append(f"{indent}{', '.join(outs)}{',' if len(outs) == 1 else ''}"
                                     f" = {call}")
            else:
                emitter.lines.append(f"{indent}{outs[0]} = {call}")
        if emitter.probe is not None:
            emitter.probe.after(op, emitter, indent, env)
        dead = [env[id(t)] for t in op.inputs if last_use.get(id(t)) == i and id(t) not in keep
                and env[id(t)] not in emitter.globals]
        dead += [env[id(t)] for t in op.outputs if id(t) not in last_use and id(t) not in keep
                 and env[id(t)] not in emitter.globals]
        dead = sorted(set(dead))
        if dead:
            emitter.lines.append(f"{indent}del {', '.join(dead)}")


def _numpy_names() -> List[str]:
    """Names templates may call (np.maximum as `maximum`): reserved so values never clash."""
    from kilnflow.core.opdef import REGISTRY
    names = set()
    for opdef in REGISTRY.values():
        if opdef.fusable:
            names.update(_FUNCTION_CALL.findall(opdef.fusable))
    return sorted(names)


def generate(name: str, graph_ops: Sequence, inputs: Sequence, outputs: Sequence,
             probe: Any = None) -> Tuple[str, Dict[str, Any], Dict[int, Any]]:
    """Source of `def <name>(<inputs>): ... return (<outputs>,)`, its globals, and a map
    from generated line numbers to the ops they run (for error messages). A `probe`
    (runtime/profile.py) adds timing lines around each op: the profiled twin."""
    namer = Namer(["np", "errstate"] + _numpy_names())
    globals_: Dict[str, Any] = {}
    emitter = Emitter(namer, globals_)
    emitter.probe = probe
    env: Dict[int, str] = {}
    params = []
    for t in inputs:
        param = namer.fresh(t.op.name)
        env[id(t)] = param
        params.append(param)
    fn_name = namer.fresh(name)
    keep = {id(t) for t in outputs}
    emit_body(graph_ops, emitter, env, "    ", keep)
    returned = [env[id(t)] for t in outputs]
    result = f"({', '.join(returned)}{',' if len(returned) == 1 else ''})"
    body = emitter.lines + [f"    return {result}"]
    origins = emitter.origins
    if emitter.silenced:  # TF lets log(0) and x/0 give inf/nan quietly: once per call
        globals_["errstate"] = np.errstate
        body = ['    with errstate(all="ignore"):'] + ["    " + line for line in body]
        origins = {line + 1: op for line, op in origins.items()}
    source = "\n".join([f"def {fn_name}({', '.join(params)}):"] + body) + "\n"
    return source, {"__fn_name__": fn_name, **globals_}, origins
