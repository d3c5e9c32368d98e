"""Which split-KV combine kernels a plan launches: reads a launch plan (JSON
on stdin), evaluates every `*_combine*` kernel's `when` for the problems
given as arguments (name=value,... with the symbols the runtime binds) and
prints one line per problem: the symbols, then the kernels whose `when` is
positive (or "none")."""
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
        return symbols[expr]
    return OPS[expr[0]]([value(e, symbols) for e in expr[1:]])


plan = json.load(sys.stdin)
combines = [k for k in plan["kernels"] if "_combine" in k["name"]]
for problem in sys.argv[1:]:
    symbols = {k: int(v) for k, v in (kv.split("=") for kv in problem.split(","))}
    launched = [k["name"] for k in combines if value(k.get("when", 1), symbols) > 0]
    print(problem, "->", " ".join(launched) or "none")
