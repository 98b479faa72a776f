"""Units and dimensions of the napkin-math language.

A dimension is a vector of integer exponents over six base dimensions: information (byte),
time (second), tokens, requests, compute (FLOP) and money (USD). Tokens and requests are
dimensions of their own so that tok/s and req/s never mix silently. Every unit is a scale
(a SymPy Rational, exact) onto those base units.
"""

from __future__ import annotations

from dataclasses import dataclass

from sympy import Integer, Rational

Dim = tuple[int, int, int, int, int, int]

BASE_SYMBOLS = ("B", "s", "tok", "req", "FLOP", "USD")
BASE_NAMES = ("bytes", "time", "tokens", "requests", "compute", "money")
# Each after "per": "tokens per request", not "per requests".
PER_NAMES = ("byte", "time", "token", "request", "compute", "money")
DIMENSIONLESS: Dim = (0, 0, 0, 0, 0, 0)
INFORMATION: Dim = (1, 0, 0, 0, 0, 0)
TIME: Dim = (0, 1, 0, 0, 0, 0)
TOKENS: Dim = (0, 0, 1, 0, 0, 0)
REQUESTS: Dim = (0, 0, 0, 1, 0, 0)
COMPUTE: Dim = (0, 0, 0, 0, 1, 0)
MONEY: Dim = (0, 0, 0, 0, 0, 1)


def dim_mul(a: Dim, b: Dim) -> Dim:
    return tuple(x + y for x, y in zip(a, b, strict=True))  # type: ignore[return-value]


def dim_div(a: Dim, b: Dim) -> Dim:
    return tuple(x - y for x, y in zip(a, b, strict=True))  # type: ignore[return-value]


def dim_pow(a: Dim, n: int) -> Dim:
    return tuple(x * n for x in a)  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Unit:
    """One named unit: `scale` base units (exact), of dimension `dim`."""

    name: str
    scale: Rational
    dim: Dim
    binary: bool = False  # a power-of-1024 information unit (KiB ... PiB)


def _units() -> dict[str, Unit]:
    table: dict[str, Unit] = {}

    def add(names: str, scale: Rational | int, dim: Dim, binary: bool = False) -> None:
        first = names.split()[0]
        for name in names.split():
            table[name] = Unit(first, Rational(scale), dim, binary)

    add("B byte bytes", 1, INFORMATION)
    add("bit bits", Rational(1, 8), INFORMATION)
    for i, prefix in enumerate("KMGTP", start=1):
        add(f"{prefix}B" + (" kB" if prefix == "K" else ""), 1000**i, INFORMATION)
        add(f"{prefix}iB", 1024**i, INFORMATION, binary=True)
        # Link speeds are quoted in decimal bits (a "100 Gbit" NIC moves 12.5 GB/s).
        add(f"{prefix}bit" + (" kbit" if prefix == "K" else ""), Rational(1000**i, 8), INFORMATION)
    add("s sec secs second seconds", 1, TIME)
    add("ms", Rational(1, 1000), TIME)
    add("us µs μs", Rational(1, 10**6), TIME)
    add("ns", Rational(1, 10**9), TIME)
    add("min mins minute minutes", 60, TIME)
    add("h hr hour hours", 3600, TIME)
    add("day days", 86400, TIME)
    add("week weeks", 7 * 86400, TIME)
    add("tok token tokens", 1, TOKENS)
    add("ktok", 1000, TOKENS)
    add("Mtok", 10**6, TOKENS)
    add("req request requests", 1, REQUESTS)
    add("QPS RPS", 1, dim_div(REQUESTS, TIME))
    add("Hz", 1, dim_div(DIMENSIONLESS, TIME))
    add("kHz", 1000, dim_div(DIMENSIONLESS, TIME))
    add("MHz", 10**6, dim_div(DIMENSIONLESS, TIME))
    add("GHz", 10**9, dim_div(DIMENSIONLESS, TIME))
    add("FLOP", 1, COMPUTE)
    add("GFLOP", 10**9, COMPUTE)
    add("TFLOP", 10**12, COMPUTE)
    add("PFLOP", 10**15, COMPUTE)
    add("TFLOPS", 10**12, dim_div(COMPUTE, TIME))
    add("PFLOPS", 10**15, dim_div(COMPUTE, TIME))
    add("USD", 1, MONEY)
    return table


UNITS: dict[str, Unit] = _units()

# Magnitude suffixes written straight after a number: 32k, 2M, and the binary 32Ki (32768).
SUFFIXES: dict[str, Integer] = {
    "k": Integer(10**3),
    "K": Integer(10**3),
    "M": Integer(10**6),
    "G": Integer(10**9),
    "T": Integer(10**12),
    "Ki": Integer(2**10),
    "Mi": Integer(2**20),
    "Gi": Integer(2**30),
    "Ti": Integer(2**40),
}

# Words that only label a count after a number (`10 GPUs`, `7e9 params`): they are plain
# numbers, so they never change a value. Anywhere else they are ordinary names.
COUNT_WORDS = frozenset({
    "GPU", "GPUs", "instance", "instances", "stream", "streams", "replica", "replicas",
    "param", "params", "parameter", "parameters", "seq", "seqs", "sequence", "sequences",
})  # fmt: skip


# Count words that may end a unit after '/', as "per" one of them: 2 B/param, $2/GPU/h. Only
# the singular: after '/' a plural (`/ GPUs`) is more likely a name the candidate forgot.
PER_COUNT_WORDS = frozenset({
    "GPU", "instance", "stream", "replica", "param", "parameter", "seq", "sequence",
})  # fmt: skip


def _spelling_hints() -> dict[str, str]:
    """Unit spellings people use that this language does not, with the unit to write."""
    hints = {"bps": "bit/s", "Bps": "B/s"}
    for prefix in "KMGTP":
        lower = "k" if prefix == "K" else prefix.lower()
        for p in {prefix, lower}:
            hints[f"{p}bps"] = f"{prefix}bit/s"
            hints[f"{p}Bps"] = f"{prefix}B/s"
            hints[f"{p}b"] = f"{prefix}B (bytes) or {prefix}bit"
        hints[f"{lower}bit"] = f"{prefix}bit"
    hints.update({
        "hrs": "h", "hz": "Hz", "msec": "ms", "msecs": "ms", "usec": "us", "usecs": "us",
        "nsec": "ns", "nsecs": "ns", "TPS": "tok/s", "tps": "tok/s", "toks": "tok",
        "reqs": "req", "qps": "QPS", "rps": "RPS", "FLOPs": "FLOP", "flops": "FLOP",
        "FLOPS": "FLOP/s", "GFLOPS": "GFLOP/s", "TFLOPs": "TFLOPS", "PFLOPs": "PFLOPS",
        "dollar": "USD", "dollars": "USD", "usd": "USD",
    })  # fmt: skip
    return hints


_SPELLING_HINTS = _spelling_hints()
_BY_LOWER: dict[str, list[str]] = {}
for _name in UNITS:
    _BY_LOWER.setdefault(_name.lower(), []).append(_name)


def unit_hint(word: str) -> str | None:
    """The known unit a word that is no unit most likely means: Gbps -> Gbit/s, gib -> GiB."""
    if word in UNITS:
        return None
    if word in _SPELLING_HINTS:
        return _SPELLING_HINTS[word]
    same = _BY_LOWER.get(word.lower(), [])
    return same[0] if len(same) == 1 else None


def describe_dim(dim: Dim) -> str:
    """A dimension in words, e.g. "bytes per time" for B/s: bytes, not "information", the name of
    the base dimension, which reads as jargon in a message."""
    if dim == DIMENSIONLESS:
        return "a plain number"
    num = [BASE_NAMES[i] for i, e in enumerate(dim) if e > 0 for _ in range(e)]
    den = [PER_NAMES[i] for i, e in enumerate(dim) if e < 0 for _ in range(-e)]
    text = " × ".join(num) if num else "1"
    if den:
        text += " per " + " per ".join(den)
    return text


def base_unit_text(dim: Dim) -> str:
    """The dimension written in base units, e.g. 'B/s', 'tok/req', '1/s'."""
    num, den = [], []
    for symbol, e in zip(BASE_SYMBOLS, dim, strict=True):
        if e:
            part = symbol if abs(e) == 1 else f"{symbol}^{abs(e)}"
            (num if e > 0 else den).append(part)
    text = "*".join(num) if num else ("1" if den else "")
    if den:
        text += "/" + "/".join(den)
    return text


# Readable units: for each base dimension, the ladder of units to pick from, smallest first.
_DECIMAL_BYTES = [
    ("B", 1),
    ("KB", 10**3),
    ("MB", 10**6),
    ("GB", 10**9),
    ("TB", 10**12),
    ("PB", 10**15),
]
_BINARY_BYTES = [
    ("B", 1),
    ("KiB", 1024),
    ("MiB", 1024**2),
    ("GiB", 1024**3),
    ("TiB", 1024**4),
    ("PiB", 1024**5),
]
_TIME_LADDER = [
    ("ns", Rational(1, 10**9)),
    ("us", Rational(1, 10**6)),
    ("ms", Rational(1, 1000)),
    ("s", 1),
    ("min", 60),
    ("h", 3600),
    ("day", 86400),
]
_FLOP_LADDER = [("FLOP", 1), ("GFLOP", 10**9), ("TFLOP", 10**12), ("PFLOP", 10**15)]


def _pick(ladder: list, magnitude: float, limits: dict[str, float] | None = None) -> tuple:
    """The largest unit of the ladder in which |magnitude| is at least 1 (else the smallest)."""
    chosen = ladder[0]
    for entry in ladder:
        if magnitude >= float(entry[1]) * (limits or {}).get(entry[0], 1.0):
            chosen = entry
    return chosen


def readable_unit(
    dim: Dim, magnitude: float, binary: bool, days: bool = False
) -> tuple[str, Rational]:
    """The unit to show a value of `dim` in, and its scale in base units.

    `magnitude` is |value| in base units; `binary` prefers KiB..PiB over KB..PB. One unit of
    the numerator is scaled (GB/s, ms/tok, TFLOP/s); the rest stay in base units. Time on its
    own climbs to minutes only past 2 min and to hours past 2 h, because "90 s" reads better
    than "1.5 min". It climbs to days only when `days` (a day or week was written): a month
    of 730 hours reads as 729.3 h, not 30.39 day.
    """
    if dim == DIMENSIONLESS:
        return "", Rational(1)
    mag = abs(magnitude)
    positive = [i for i, e in enumerate(dim) if e > 0]
    rest = list(dim)
    lead = ""
    scale: Rational = Rational(1)
    # Money per time reads as an hourly price (USD/h), the way GPU rental is quoted.
    if dim == dim_div(MONEY, TIME):
        return "USD/h", Rational(1, 3600)
    for i in positive:
        if dim[i] != 1:
            continue
        if i == 0:
            ladder = _BINARY_BYTES if binary else _DECIMAL_BYTES
            name, sc = _pick(ladder, mag)
        elif i == 1:
            limits = {"min": 2.0, "h": 2.0, "day": 2.0} if dim == TIME else None
            ladder = _TIME_LADDER[: 7 if days else 6] if dim == TIME else _TIME_LADDER[:4]
            name, sc = _pick(ladder, mag, limits)
        elif i == 4:
            name, sc = _pick(_FLOP_LADDER, mag)
        else:
            name, sc = BASE_SYMBOLS[i], 1
        lead, scale = name, Rational(sc)
        rest[i] = 0
        break
    tail = base_unit_text(tuple(rest))  # type: ignore[arg-type]
    if not lead:
        return tail, scale
    if tail.startswith("1/"):
        return lead + tail[1:], scale
    if tail:
        return f"{lead}*{tail}", scale
    return lead, scale
