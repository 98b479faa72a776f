"""Benchmark of the napkin-math engine: `python -m bench.napkin` (also run by bench.run).

Prints one JSON line: {"bench": "napkin", "benign_median_ms", "benign_p99_ms",
"hostile_max_ms", "ratio_vs_sympify"}. The benign set is >= 200 realistic estimates built
from the seed's figures; each is timed cold (the parse cache cleared first), and the same
expressions, rewritten as Python syntax with units as symbols, are timed through
`sympify(...).evalf()` in the same run. The hostile set (>= 50) is timed once each.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from typing import Any

from planner.engine import evaluate_expression
from planner.engine.parser import (
    BinOp,
    Call,
    Group,
    Name,
    Neg,
    Node,
    Num,
    UnitRef,
    UnitSpec,
    WithUnit,
    parse_line,
)
from planner.engine.units import SUFFIXES

REPEATS = 5

_TEMPLATES = [
    "{a} GB / ({e} * {b} GB/s) in ms",
    "{a} GB / ({e} * {b} GB/s)",
    "2 * {l} * {h} * 128 * 2 B",
    "2 * {l} * {h} * 128 * 2 B * {c} in GiB",
    "56 KiB/tok * {c} tok",
    "{t} tok/s / ({o} tok/req)",
    "ceil({q} QPS / ({e} * {t} tok/s / ({o} tok/req)))",
    "ceil({q} / ({e} * {r}))",
    "{q} QPS * {s} s in req",
    "{p}e9 * 2 B",
    "{p}e9 * 0.5 B + 1.09e9 * 2 B",
    "(24 GiB * 0.9 - {a} GB - 2 GB) / (56 KiB/tok * {c} tok)",
    "floor((24 GiB * {e} - {a} GB) / (56 KiB * {c}))",
    "2 * {p}e9 FLOP/tok * {c} tok / ({e} * 165 TFLOP/s)",
    "{c} tok * 2 * {p}e9 FLOP/tok in TFLOP",
    "1 / ({t} tok/s) in ms/tok",
    "{a} GB in GiB",
    "{c}k tok",
    "{b} GB/s * {s} s in TB",
    "max({a} GB, {b} MB)",
    "min({r} req/s, {t} tok/s / ({o} tok/req))",
    "{q} * {s} / ({e} * {r})",
    "sqrt({c}) * {e}",
    "log2({c})",
    "2.5 USD/h * {n} * 24 h",
    "{n} * {a} GB + {b} GB",
    "({a} + {b}) * {e} ^ 2",
    "{c} / 1024",
    "{q} QPS * ({o} tok/req) in tok/s",
    "10 Gbit/s * {s} s in GB",
]


def benign_expressions(n: int = 240, seed: int = 7) -> list[str]:
    """Realistic napkin lines: the seed's formulas with the numbers varied."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        template = _TEMPLATES[i % len(_TEMPLATES)]
        out.append(
            template.format(
                a=rng.choice(["15.2", "5.5", "28", "65", "140", "3.8"]),
                b=rng.choice(["1008", "300", "1555", "2039", "3350", "4800"]),
                e=rng.choice(["0.7", "0.6", "0.8", "0.9", "0.5"]),
                l=rng.choice([28, 32, 48, 64, 80]),
                h=rng.choice([4, 8]),
                c=rng.choice([8192, 32768, 131072, 4096, 2048]),
                t=rng.choice([2000, 1500, 3000, 800]),
                o=rng.choice([256, 128, 512]),
                q=rng.choice([50, 500, 10, 40, 120]),
                r=rng.choice(["7.8", "7.8125", "4", "12.5"]),
                s=rng.choice([2, 10, 60, 3600]),
                p=rng.choice(["7.6", "14.7", "32.5", "72.7", "8.03"]),
                n=rng.choice([1, 2, 4, 8, 10]),
            )
        )
    return out


HOSTILE = [
    "9**9**9**9", "((9**9)**9999)**9999", "10**100**100", "2^2^2^2^2", "9^9^9",
    "(2^1000)^1000", "10^(10^10)", "1e999999999", "1e308 * 1e308", "1" * 400, "9" * 31,
    "0.1^(10^9)", "(1/3)^100000", "99999999999999999999^99999999999999999999",
    "sqrt(10^1000)", "log2(2^100000)", "ceil(10^400)", "1+" * 240 + "1",
    "(" * 400 + "1" + ")" * 400, "-" * 480 + "1", "sqrt(" * 80 + "2" + ")" * 80,
    "max(" + ",".join(["1"] * 240) + ")", "1*" * 240 + "1", "2^" * 120 + "2", "a" * 10000,
    "1 GB " * 100, "__import__('os').system('id')", "().__class__.__bases__[0]",
    "eval('1+1')", "exec('import os')", "open('/etc/passwd').read()", "lambda: 1",
    "[x for x in ()]", "{0.__class__}", "f'{1}'", "globals()", "x.__dict__", "import os",
    "１２ GB", "𝟗**𝟗**𝟗", "1\n2", "\x00", "2 ^ (1/3) ^ 999", "(2^0.5)^(2^0.5)^(2^0.5)^999",
    "1e99 * 1e99 * 1e99", "1e-99 * 1e-99", "ceil(" * 20 + "1" + ")" * 20,
    " + ".join(f"1/{p}" for p in range(101, 260, 2)), "10^-1000", "0^-1", "(-8)^(1/3)",
    "sqrt(-1)", "log2(0)", "1/0", "2^(3 s)", "min(1 GB, 1 s)",
]  # fmt: skip


def _unit_text(spec: UnitSpec) -> str:
    """A unit as a product of plain symbols (u_GB) for sympify."""
    return "*".join(f"u_{u}**({p})" for u, p in spec.factors)


def _sympy_text(node: Node) -> str:
    """Our tree as Python syntax for sympify, units as plain symbols (u_GB)."""
    match node:
        case Num(text=text):
            text = text.replace("_", "")
            if text[-1] in "kKMGT":
                return f"({text[:-1]}*{SUFFIXES[text[-1]]})"
            return text
        case Name(id=name):
            return name
        case UnitRef(unit=spec):
            return f"({_unit_text(spec)})"
        case WithUnit(operand=operand, unit=spec):
            return f"({_sympy_text(operand)})*({_unit_text(spec)})"
        case Group(inner=inner):
            return f"({_sympy_text(inner)})"
        case Neg(operand=operand):
            return f"(-{_sympy_text(operand)})"
        case BinOp(op=op, left=left, right=right):
            op = "**" if op == "^" else op
            return f"({_sympy_text(left)}){op}({_sympy_text(right)})"
        case Call(func=func, args=args):
            inner = ", ".join(_sympy_text(a) for a in args)
            name = {"ceil": "ceiling", "min": "Min", "max": "Max", "ln": "log",
                    "abs": "Abs"}.get(func, func)  # fmt: skip
            if func == "log2":
                return f"log({inner}, 2)"
            if func == "log10":
                return f"log({inner}, 10)"
            return f"{name}({inner})"
    raise ValueError(node)


def sympy_form(text: str) -> str:
    line = parse_line(text)
    out = _sympy_text(line.expr)
    if line.target is not None:
        out = f"({out})/({_unit_text(line.target)})"
    return out


def _time_ms(fn: Any, *args: Any) -> float:
    started = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - started) * 1000


def _ours_cold(text: str) -> None:
    evaluate_expression(text)


def _sympify(text: str) -> None:
    from sympy import sympify

    # Trusted bench input only: this is the baseline the safe engine is compared with.
    sympify(text).evalf()


def run() -> dict[str, Any]:
    benign = benign_expressions()
    baseline = [sympy_form(t) for t in benign]
    # Warm both libraries' imports and caches of code, not of these expressions.
    _ours_cold("1 + 1")
    _sympify("1 + 1")
    ours, theirs = [], []
    for text, python_text in zip(benign, baseline, strict=True):
        mine, base = [], []
        for _ in range(REPEATS):
            parse_line.cache_clear()  # cold: every run parses from scratch
            mine.append(_time_ms(_ours_cold, text))
            base.append(_time_ms(_sympify, python_text))
        ours.append(statistics.median(mine))
        theirs.append(statistics.median(base))
    hostile = []
    for text in HOSTILE:
        parse_line.cache_clear()
        result_ms = _time_ms(_ours_cold, text)
        hostile.append(result_ms)
    ours.sort()
    p99 = ours[min(len(ours) - 1, int(round(0.99 * (len(ours) - 1))))]
    return {
        "bench": "napkin",
        "benign_median_ms": round(statistics.median(ours), 4),
        "benign_p99_ms": round(p99, 4),
        "hostile_max_ms": round(max(hostile), 4),
        "ratio_vs_sympify": round(statistics.median(ours) / statistics.median(theirs), 4),
        "benign_count": len(benign),
        "hostile_count": len(HOSTILE),
        "sympify_median_ms": round(statistics.median(theirs), 4),
    }


def main() -> dict[str, Any]:
    """Run the benchmark and print its one JSON line."""
    result = run()
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
