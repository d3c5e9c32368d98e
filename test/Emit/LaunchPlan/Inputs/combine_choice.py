"""Which kernels a forward launch plan launches: reads the plan (JSON on
stdin) and, for each problem given as an argument (name=value,... with the
symbols the runtime binds; a `ctas_per_sm.<kernel>` left out is 1), derives
kv_splits from the plan's own expression unless the problem sets it, then
prints the problem, kv_splits and every kernel whose `when` is positive, each
with its grid's first extent ("none" if no kernel launches)."""
import json
import math
import sys

OPS = {
    "add": lambda a: sum(a),
    "sub": lambda a: a[0] - a[1],
    "mul": lambda a: math.prod(a),
    "ceildiv": lambda a: -(-a[0] // a[1]),
    "min": min,
    "max": max,
}


def value(expr, symbols):
    if isinstance(expr, int):
        return expr
    if isinstance(expr, str):
        if expr.startswith("ctas_per_sm."):
            return symbols.get(expr, 1)
        return symbols[expr]
    return OPS[expr[0]]([value(e, symbols) for e in expr[1:]])


plan = json.load(sys.stdin)
for problem in sys.argv[1:]:
    symbols = {k: int(v) for k, v in (kv.split("=") for kv in problem.split(","))}
    for name, expr in plan.get("symbols", {}).items():
        symbols.setdefault(name, value(expr, symbols))
    launched = [f"{k['name']}({value(k['grid'][0], symbols)})" for k in plan["kernels"]
                if value(k.get("when", 1), symbols) > 0]
    print(problem, f"kv_splits={symbols.get('kv_splits')} ->", " ".join(launched) or "none")
