"""FlexAttention-style mods written in Python, translated to Kiln's `attn`
dialect.

A score_mod(score, b, h, q_idx, kv_idx) or mask_mod(b, h, q_idx, kv_idx) is
traced with torch.fx (each argument a symbolic scalar) and every node of the
graph becomes one op of the region: Python arithmetic and comparisons,
`&`, `|`, `~`, torch.where / tanh / exp / ... and indexing of tensors the
function closes over (which become the variant's captures). Anything else
raises KilnError naming the op. The translation is FileChecked
(test/Python/flex-translate.test).
"""
import collections
import math
import operator
import sys
import types
from typing import NamedTuple

import torch
import torch.fx

from ._capi import KilnError

# Tensors a mod may index, as memref element types.
_CAPTURE_TYPES = {torch.float32: "f32", torch.float64: "f64", torch.int32: "i32", torch.int64: "i64"}
_INTS = ("index", "i32", "i64")
_FLOATS = ("f32", "f64")

_ARITH = {operator.add: ("addi", "addf"), operator.sub: ("subi", "subf"), operator.mul: ("muli", "mulf")}
_COMPARE = {operator.lt: ("slt", "olt"), operator.le: ("sle", "ole"), operator.gt: ("sgt", "ogt"),
            operator.ge: ("sge", "oge"), operator.eq: ("eq", "oeq"), operator.ne: ("ne", "une")}
_LOGIC = {operator.and_: "andi", operator.or_: "ori", operator.xor: "xori"}
_MATH = {"tanh": "tanh", "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
         "rsqrt": "rsqrt", "sin": "sin", "cos": "cos", "erf": "erf", "floor": "floor", "ceil": "ceil"}
_MINMAX = {"minimum": ("minsi", "minimumf"), "maximum": ("maxsi", "maximumf")}


def _float_literal(value, type_="f64"):
    """An MLIR float literal: infinities and NaN as bit patterns, and a '.'
    before any exponent (MLIR reads 1e-05 as an integer and an identifier)."""
    value = float(value)
    if math.isnan(value):
        return "0x7FC00000" if type_ == "f32" else "0x7FF8000000000000"
    if math.isinf(value):
        if type_ == "f32":
            return "0xFF800000" if value < 0 else "0x7F800000"
        return "0xFFF0000000000000" if value < 0 else "0x7FF0000000000000"
    text = repr(value)
    if "e" in text and "." not in text:
        text = text.replace("e", ".0e")
    return text


class Value(NamedTuple):
    """An SSA value of the region and its type (f32, f64, index, i32, i64, i1)."""
    ssa: str
    type: str


class _Capture:
    """A tensor the mod closes over (an fx get_attr)."""

    def __init__(self, tensor):
        self.tensor = tensor


def _name(target):
    """How a node's op reads in messages: torch.sigmoid, operator.pow, x.foo()."""
    if isinstance(target, str):
        return f"Tensor.{target}"
    module = getattr(target, "__module__", None) or ""
    module = "torch" if module.startswith("torch") else module.replace("_operator", "operator")
    return f"{module}.{getattr(target, '__name__', str(target))}"


class _Region:
    """Emits one mod's region body, op by op, with typed SSA values."""

    def __init__(self, mod_kind, captures):
        self.kind, self.captures, self.lines, self.count = mod_kind, captures, [], 0

    def fresh(self):
        self.count += 1
        return f"%v{self.count}"

    def op(self, text, type_):
        value = self.fresh()
        self.lines.append(f"    {value} = {text}")
        return Value(value, type_)

    def constant(self, value, type_):
        if type_ == "i1":
            return self.op(f"arith.constant {'true' if value else 'false'}", "i1")
        if type_ in _FLOATS:
            return self.op(f"arith.constant {_float_literal(value, type_)} : {type_}", type_)
        return self.op(f"arith.constant {int(value)} : {type_}", type_)

    def cast(self, value, to):
        """value (ssa, type) converted to type `to`."""
        ssa, t = value
        if t == to:
            return value
        if t == "index" and to in ("i32", "i64"):
            return self.op(f"arith.index_cast {ssa} : index to {to}", to)
        if t in ("i32", "i64") and to == "index":
            return self.op(f"arith.index_cast {ssa} : {t} to index", to)
        if t == "i32" and to == "i64":
            return self.op(f"arith.extsi {ssa} : i32 to i64", to)
        if t == "i64" and to == "i32":
            return self.op(f"arith.trunci {ssa} : i64 to i32", to)
        if t == "index" and to in _FLOATS:
            return self.cast(self.cast(value, "i64"), to)
        if t in ("i32", "i64") and to in _FLOATS:
            return self.op(f"arith.sitofp {ssa} : {t} to {to}", to)
        if t == "i1" and to in _FLOATS:
            return self.op(f"arith.uitofp {ssa} : i1 to {to}", to)
        if t == "i1" and to in _INTS:
            widened = self.op(f"arith.extui {ssa} : i1 to i64", "i64")
            return self.cast(widened, to)
        if t == "f32" and to == "f64":
            return self.op(f"arith.extf {ssa} : f32 to f64", to)
        if t == "f64" and to == "f32":
            return self.op(f"arith.truncf {ssa} : f64 to f32", to)
        raise KilnError(f"{self.kind}: cannot convert a {t} value to {to}")

    def unify(self, a, b):
        """Both operands in one type: f32 if either is a float (f64 only if
        both are), else index if either is, else i64 if either is, else i32;
        Python constants take the other operand's type."""
        types = {x.type for x in (a, b) if isinstance(x, Value)}
        if not types:  # torch.where(c, 0.0, -inf): both branches constants
            types = {"f32" if any(isinstance(x, float) for x in (a, b)) else "index"}
        if types & set(_FLOATS) or any(isinstance(x, float) for x in (a, b)):
            to = "f64" if types == {"f64"} else "f32"
        elif "index" in types:
            to = "index"
        elif "i64" in types:
            to = "i64"
        elif types == {"i1"}:
            to = "i1"
        else:
            to = "i32"
        return [self.cast(x, to) if isinstance(x, Value) else self.constant(x, to) for x in (a, b)] + [to]


def _translate(fn, kind, captures):
    """One mod as (block arguments, region body, the yielded value's type);
    `captures` collects the tensors it indexes (shared by both mods)."""
    names = ["score", "b", "h", "q_idx", "kv_idx"] if kind == "score_mod" else ["b", "h", "q_idx", "kv_idx"]
    try:
        graph_module = _symbolic_trace(fn)
    except Exception as e:  # noqa: BLE001 - fx raises many kinds
        raise KilnError(f"{kind}: torch.fx could not trace it: {e}") from e
    placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(names):
        raise KilnError(f"{kind} must take {len(names)} arguments ({', '.join(names)}), "
                        f"got {len(placeholders)}")
    region = _Region(kind, captures)
    values = {}
    types = {"score": "f32"}
    for node, name in zip(placeholders, names):
        values[node] = Value(f"%{name}", types.get(name, "index"))
    result = None
    for node in graph_module.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "get_attr":
            tensor = getattr(graph_module, node.target)
            if not isinstance(tensor, torch.Tensor):
                raise KilnError(f"{kind} reads {node.target}, which is not a tensor")
            values[node] = _Capture(tensor)
            continue
        if node.op == "output":
            result = node.args[0]
            break
        args = list(torch.fx.node.map_arg(node.args, lambda n: values[n]))
        if node.target not in ("__getitem__", operator.getitem):
            args = [_scalar(region, a) for a in args]
        if node.kwargs:
            raise KilnError(f"{kind}: {_name(node.target)} with keyword arguments is not supported")
        values[node] = _emit(region, node, args)
    if not isinstance(result, torch.fx.Node):
        raise KilnError(f"{kind} must return a value computed from its arguments, got {result!r}")
    out = values[result]
    if kind == "score_mod":
        out = region.cast(out, "f32")
    elif out[1] != "i1":
        raise KilnError(f"mask_mod must return a boolean (a comparison), got a {out[1]} value")
    args = [f"%{n}: {'f32' if n == 'score' else 'index'}" for n in names]
    return args, region.lines, out


class _ModTracer(torch.fx.Tracer):
    """torch.fx's tracer, but an nn.Parameter a function mod reads (a
    learnable bias) becomes an attribute like any other tensor: fx would
    look for it among the root module's parameters, and the fresh root of a
    function has none. (A module used as a mod is its own root: fx finds
    its parameters there, and the root is the user's, not to be changed.)"""

    def create_arg(self, a):
        if isinstance(a, torch.nn.Parameter) and not isinstance(self.traced, torch.nn.Module) and not any(
                p is a for p in self.root.parameters()):
            name = f"_kiln_parameter{len(list(self.root.parameters()))}"
            self.root.register_parameter(name, a)
            return self.create_node("get_attr", name, (), {})
        return super().create_arg(a)


def _symbolic_trace(fn):
    tracer = _ModTracer()
    tracer.traced = fn
    graph = tracer.trace(fn)
    return torch.fx.GraphModule(tracer.root, graph, getattr(fn, "__name__", type(fn).__name__))


def _scalar(region, arg):
    """A tensor used as a value: a 0-d one (torch.tensor(0.5), or bias[-1],
    which fx evaluates) is read as a rank-0 capture; others must be indexed."""
    if not isinstance(arg, _Capture):
        return arg
    tensor = arg.tensor
    if tensor.dim() != 0:
        raise KilnError(f"{region.kind} uses a {tensor.dim()}-d tensor as a value; index it with scalars")
    slot = _capture_slot(region, tensor, "reads")
    return region.op(f"memref.load %c{slot}[] : {_memref(tensor)}", _CAPTURE_TYPES[tensor.dtype])


def _capture_slot(region, tensor, verb):
    """The capture number of `tensor`, declaring it on first use."""
    if tensor.dtype not in _CAPTURE_TYPES:
        raise KilnError(f"{region.kind} {verb} a {tensor.dtype} tensor; Kiln captures "
                        f"{', '.join(map(str, _CAPTURE_TYPES))}")
    slot = next((i for i, c in enumerate(region.captures) if c is tensor), None)
    if slot is None:
        region.captures.append(tensor)
        slot = len(region.captures) - 1
    return slot


def _emit(region, node, args):
    """The op of one call_function / call_method node."""
    target = node.target
    kind = region.kind
    if target == "__getitem__" or target is operator.getitem:
        base, index = args
        if not isinstance(base, _Capture):
            raise KilnError(f"{kind}: only tensors the mod closes over can be indexed")
        tensor = base.tensor
        indices = tuple(index) if isinstance(index, (tuple, list)) and not isinstance(index, Value) else (index,)
        if len(indices) != tensor.dim():
            raise KilnError(f"{kind} indexes a {tensor.dim()}-d tensor with {len(indices)} indices; "
                            "index every dimension with a scalar")
        slot = _capture_slot(region, tensor, "indexes")
        ssa = []
        for i, size in zip(indices, tensor.shape):
            if not isinstance(i, Value):
                ssa.append(region.constant(i + size if i < 0 else i, "index")[0])
                continue
            i = region.cast(i, "index")
            if i.ssa in ("%b", "%h", "%q_idx", "%kv_idx"):  # never negative
                ssa.append(i.ssa)
                continue
            # A negative index counts from the end, as torch indexing does.
            zero, extent = region.constant(0, "index"), region.constant(size, "index")
            negative = region.op(f"arith.cmpi slt, {i[0]}, {zero[0]} : index", "i1")
            wrapped = region.op(f"arith.addi {i[0]}, {extent[0]} : index", "index")
            ssa.append(region.op(f"arith.select {negative[0]}, {wrapped[0]}, {i[0]} : index", "index")[0])
        element = _CAPTURE_TYPES[tensor.dtype]
        loaded = region.op(f"memref.load %c{slot}[{', '.join(ssa)}] : {_memref(tensor)}", element)
        return loaded
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    if target in _ARITH or target in (operator.truediv, operator.floordiv, operator.mod):
        a, b, t = region.unify(*args)
        if target is operator.truediv:
            if t not in _FLOATS:
                a, b, t = region.cast(a, "f32"), region.cast(b, "f32"), "f32"
            return region.op(f"arith.divf {a[0]}, {b[0]} : {t}", t)
        if target is operator.floordiv:
            if t in _FLOATS:
                q = region.op(f"arith.divf {a[0]}, {b[0]} : {t}", t)
                return region.op(f"math.floor {q[0]} : {t}", t)
            return region.op(f"arith.floordivsi {a[0]}, {b[0]} : {t}", t)
        if target is operator.mod:
            if t in _FLOATS:
                raise KilnError(f"{kind}: % of floats is not supported")
            # Python's %: the remainder takes the divisor's sign.
            r = region.op(f"arith.remsi {a[0]}, {b[0]} : {t}", t)
            zero = region.constant(0, t)
            nonzero = region.op(f"arith.cmpi ne, {r[0]}, {zero[0]} : {t}", "i1")
            r_neg = region.op(f"arith.cmpi slt, {r[0]}, {zero[0]} : {t}", "i1")
            b_neg = region.op(f"arith.cmpi slt, {b[0]}, {zero[0]} : {t}", "i1")
            differ = region.op(f"arith.xori {r_neg[0]}, {b_neg[0]} : i1", "i1")
            fix = region.op(f"arith.andi {nonzero[0]}, {differ[0]} : i1", "i1")
            shifted = region.op(f"arith.addi {r[0]}, {b[0]} : {t}", t)
            return region.op(f"arith.select {fix[0]}, {shifted[0]}, {r[0]} : {t}", t)
        if t == "i1":
            raise KilnError(f"{kind}: arithmetic on booleans is not supported")
        integer, floating = _ARITH[target]
        return region.op(f"arith.{floating if t in _FLOATS else integer} {a[0]}, {b[0]} : {t}", t)
    if target in _COMPARE:
        a, b, t = region.unify(*args)
        integer, floating = _COMPARE[target]
        if t in _FLOATS:
            return region.op(f"arith.cmpf {floating}, {a[0]}, {b[0]} : {t}", "i1")
        return region.op(f"arith.cmpi {integer}, {a[0]}, {b[0]} : {t}", "i1")
    if target in _LOGIC:
        a, b, t = region.unify(*args)
        if t != "i1":
            raise KilnError(f"{kind}: {_name(target)} of integers is not supported (only of booleans)")
        return region.op(f"arith.{_LOGIC[target]} {a[0]}, {b[0]} : i1", "i1")
    if target in (operator.invert, operator.not_) or name == "logical_not":
        (a,) = args
        if a[1] != "i1":
            raise KilnError(f"{kind}: ~ of a {a[1]} value is not supported (only of booleans)")
        true = region.constant(True, "i1")
        return region.op(f"arith.xori {a[0]}, {true[0]} : i1", "i1")
    if target is operator.neg or name == "neg":
        (a,) = args
        if a[1] in _FLOATS:
            return region.op(f"arith.negf {a[0]} : {a[1]}", a[1])
        zero = region.constant(0, a[1])
        return region.op(f"arith.subi {zero[0]}, {a[0]} : {a[1]}", a[1])
    if name in ("where",) and len(args) == 3:
        cond, a, b = args
        if not (isinstance(cond, Value) and cond.type == "i1"):
            raise KilnError(f"{kind}: torch.where needs a boolean condition")
        a, b, t = region.unify(a, b)
        return region.op(f"arith.select {cond[0]}, {a[0]}, {b[0]} : {t}", t)
    if name in _MATH and len(args) == 1:
        if not isinstance(args[0], Value):
            raise KilnError(f"{kind}: {_name(target)} of a Python constant; compute it in Python")
        a = region.cast(args[0], "f32") if args[0].type not in _FLOATS else args[0]
        return region.op(f"math.{_MATH[name]} {a[0]} : {a[1]}", a[1])
    if name == "abs" and len(args) == 1:
        (a,) = args
        return region.op(f"math.{'absf' if a[1] in _FLOATS else 'absi'} {a[0]} : {a[1]}", a[1])
    if name in _MINMAX and len(args) == 2:
        a, b, t = region.unify(*args)
        integer, floating = _MINMAX[name]
        return region.op(f"arith.{floating if t in _FLOATS else integer} {a[0]}, {b[0]} : {t}", t)
    raise KilnError(f"{kind} uses {_name(target)}, which Kiln cannot translate; supported: + - * / // % "
                    f"and comparisons, & | ~, torch.where, {', '.join(sorted(_MATH))}, abs, minimum, maximum, "
                    "and indexing of captured tensors")


def _memref(tensor):
    """The capture's type: its shape as it is now (a new shape is a new
    variant, compiled once)."""
    return f"memref<{''.join(f'{n}x' for n in tensor.shape)}{_CAPTURE_TYPES[tensor.dtype]}>"


def variant_text(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale=None, gqa_group=1):
    """The attn.attention text of the mods, and the tensors they capture
    (in the variant's capture order)."""
    captures = []
    regions = []
    for fn, kind in ((score_mod, "score_mod"), (mask_mod, "mask_mod")):
        if fn is not None:
            regions.append((kind, *_translate(fn, kind, captures)))
    attrs = [f"qk_head_dim = {head_dim}", f"v_head_dim = {head_dim_v}",
             f"element_type = {'bf16' if dtype == torch.bfloat16 else 'f16'}"]
    if scale is not None:
        attrs.append(f"scale = {_float_literal(scale)}")
    if gqa_group != 1:
        attrs.append(f"gqa_group = {gqa_group}")
    if captures:
        decls = ", ".join(f'#attn.capture<"c{i}", {_memref(t)}, [{", ".join(str(n) for n in t.shape)}]>'
                          for i, t in enumerate(captures))
        attrs.append(f"captures = [{decls}]")
    text = [f"attn.attention @flex {{{', '.join(attrs)}}}"]
    capture_args = [f"%c{i}: {_memref(t)}" for i, t in enumerate(captures)]
    for kind, args, lines, out in regions:
        text.append(f"  {kind}({', '.join(args + capture_args)}) {{")
        text.extend(lines)
        text.append(f"    attn.yield {out[0]} : {out[1]}")
        text.append("  }")
    return "\n".join(text) + "\n", captures


# Translations of the same mods, kept: tracing costs milliseconds per call.
# Bounded, since an entry holds its captured tensors (ids in a key stay
# unique while the entry holds the tensor).
_translations = collections.OrderedDict()
_MAX_TRANSLATIONS = 64


def _referenced(fn):
    """What `fn` can read from outside: its closure cells and the globals its
    code names, as a hashable key, with the tensors among them; None when
    something it reads could change the translation unseen (a list, an
    object, a function of the user's)."""
    if not hasattr(fn, "__code__"):
        return None
    values = [cell.cell_contents for cell in (fn.__closure__ or ()) if _has_contents(cell)]
    values += [fn.__globals__[n] for n in fn.__code__.co_names if n in fn.__globals__]
    # The code object itself (compared by content, constants included; the
    # key keeps it alive), not its id, which a later function may reuse.
    key, tensors = [fn.__code__], []
    for v in values:
        if isinstance(v, torch.Tensor):
            key.append(("tensor", id(v), tuple(v.shape), v.dtype))
            tensors.append(v)
        elif v is None or isinstance(v, (bool, int, float, str)):
            key.append(("constant", type(v).__name__, v))
        elif any(v is m for m in (torch, math, operator)) or (callable(v) and not hasattr(v, "__code__") and getattr(
                v, "__module__", "") in ("torch", "torch._C._VariableFunctions", "math", "operator", "builtins",
                                         "_operator")):
            # torch, math, operator and their built-in functions; any other
            # module or object could change what the mods compute unseen.
            key.append(("library", id(v)))
        else:
            return None
    return tuple(key), tensors


def _has_contents(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:  # an empty cell
        return False


def cached_variant_text(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale=None, gqa_group=1):
    """variant_text, reusing an earlier translation when the mods, what they
    read from outside (tensors by identity and shape, constants by value)
    and the options are the same; captured tensors reached any other way
    make the mods uncacheable (translated on every call)."""
    parts = [_referenced(fn) if fn is not None else ((), []) for fn in (score_mod, mask_mod)]
    if any(p is None for p in parts):
        return variant_text(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale, gqa_group)
    key = (parts[0][0], parts[1][0], head_dim, head_dim_v, dtype, scale, gqa_group)
    if key in _translations:
        _translations.move_to_end(key)
        return _translations[key]
    result = variant_text(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale, gqa_group)
    seen = [t for _, tensors in parts for t in tensors]
    if all(any(c is t for t in seen) for c in result[1]):
        _translations[key] = result
        if len(_translations) > _MAX_TRANSLATIONS:
            _translations.popitem(last=False)
    return result


# Under torch.compile. Dynamo cannot trace torch.fx tracing, so the mods are
# translated while Dynamo traces the caller, as a constant of the graph
# (torch.compiler.assume_constant_result), from what Dynamo can pass as
# constants: each mod's code object, the numbers it closes over, and the
# shape and dtype of each tensor it reads from outside. The tensors
# themselves stay traced values, passed to the op as its captures. A rebuilt
# function with meta tensors of the same shapes in their place is what fx
# traces; every capture of the translation is then one of those tensors (by
# identity), or a constant the mod made itself (torch.tensor(0.5)).

def traced_variant_text(score_mod, mask_mod, head_dim, head_dim_v, dtype, scale=None, gqa_group=1):
    """cached_variant_text for code that Dynamo traces: the text is a
    constant of the graph and the captures are the traced tensors. None
    where a mod reads from outside something else than tensors, numbers,
    strings and the torch / math / operator modules (an object such as
    `self`, a dict, a list, a function of the user's): their tensors could
    change unseen, so the caller translates eagerly (a graph break)."""
    tensors = []
    described = []
    for fn in (score_mod, mask_mod):
        if fn is None:
            described.append(None)
            continue
        described.append(_describe_outside(fn, tensors))
        if described[-1] is None:
            return None
    text, order = _translate_described(described[0], described[1], head_dim, head_dim_v, str(dtype), scale,
                                       gqa_group)
    captures = []
    for entry in order:
        if entry[0] == "outside":
            captures.append(tensors[entry[1]])
        else:
            _, values, dtype_name, shape = entry
            captures.append(torch.tensor(values, dtype=getattr(torch, dtype_name)).reshape(shape))
    return text, captures


def _constant_outside(value):
    """Whether a value a mod reads from outside translates as a constant."""
    return value is None or isinstance(value, (bool, int, float, str)) or any(
        value is m for m in (torch, math, operator))


def _describe_outside(fn, tensors):
    """(code, module, closure, global tensors): what fn reads from outside,
    as constants; the tensors are appended to `tensors` and described by
    their index, shape and dtype. None where fn reads anything else (see
    traced_variant_text). Traced by Dynamo."""
    if not hasattr(fn, "__code__") or fn.__module__ not in sys.modules:
        return None
    closure = []
    for cell in fn.__closure__ or ():
        value = cell.cell_contents
        if isinstance(value, torch.Tensor):
            closure.append(_describe_tensor(value, tensors))
        elif not _constant_outside(value):
            return None
        elif type(value) is bool or not isinstance(value, (int, float)):
            closure.append(("value", value))
        # A number Dynamo made symbolic (an argument of the compiled function
        # that changed between calls) cannot be a constant argument, and
        # Dynamo's isinstance does not tell it from a Python number: its
        # repr() in an f-string specializes both kinds (guarded, recompiled
        # per value, as each value is a new variant anyway), and round-trips.
        else:
            closure.append(("float" if isinstance(value, float) else "int", f"{value!r}"))
    module = sys.modules[fn.__module__]
    global_tensors = []
    for name in fn.__code__.co_names:
        if hasattr(module, name):
            value = getattr(module, name)
            if isinstance(value, torch.Tensor):
                global_tensors.append((name, _describe_tensor(value, tensors)))
            elif not _constant_outside(value):
                return None
    return fn.__code__, fn.__module__, tuple(closure), tuple(global_tensors)


def _describe_tensor(tensor, tensors):
    # A capture's shape is part of the variant's text: specialize on it (a
    # new shape recompiles, as it is a new variant) rather than let Dynamo
    # make it symbolic.
    torch._dynamo.mark_static(tensor)
    tensors.append(tensor)
    return ("tensor", len(tensors) - 1, tuple(tensor.shape), str(tensor.dtype).removeprefix("torch."))


@torch.compiler.assume_constant_result
def _translate_described(score_mod, mask_mod, head_dim, head_dim_v, dtype_name, scale, gqa_group):
    """(text, capture order) of mods described by _describe_outside; each
    entry of the order is ("outside", index) or ("constant", values, dtype,
    shape). Runs once per trace, outside the graph."""
    stand_ins = {}
    fns = [None if d is None else _rebuild(d, stand_ins) for d in (score_mod, mask_mod)]
    text, captures = variant_text(fns[0], fns[1], head_dim, head_dim_v, getattr(torch, dtype_name.split(".")[-1]),
                                  scale, gqa_group)
    order = []
    for tensor in captures:
        if id(tensor) in stand_ins:
            order.append(("outside", stand_ins[id(tensor)][0]))
        elif tensor.device.type == "meta":
            raise KilnError("under torch.compile a mod may index the tensors it reads with its arguments only; "
                            "a tensor computed from one while tracing (such as bias[-1]) cannot be captured")
        else:
            order.append(("constant", tuple(tensor.flatten().tolist()), str(tensor.dtype).removeprefix("torch."),
                          tuple(tensor.shape)))
    return text, tuple(order)


def _rebuild(described, stand_ins):
    """The mod as a function again, each tensor it reads from outside a meta
    tensor of the same shape and dtype (recorded in `stand_ins` by id)."""
    code, module_name, closure, global_tensors = described

    def stand_in(entry):
        _, index, shape, dtype_name = entry
        tensor = torch.empty(shape, dtype=getattr(torch, dtype_name), device="meta")
        stand_ins[id(tensor)] = (index, tensor)
        return tensor

    def cell(entry):
        if entry[0] == "tensor":
            return stand_in(entry)
        if entry[0] == "value":
            return entry[1]
        return float(entry[1]) if entry[0] == "float" else int(entry[1])

    cells = tuple(types.CellType(cell(c)) for c in closure)
    namespace = dict(sys.modules[module_name].__dict__)
    for name, entry in global_tensors:
        namespace[name] = stand_in(entry)
    return types.FunctionType(code, namespace, code.co_name, None, cells)
