"""The clarify step's SLO card: what the candidate pinned down, compared with the brief.

No Django imports. Card values are numbers the candidate typed; each becomes a name in their
napkin-math worksheet (qps_peak, ttft_p99, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from questionbank import Brief

# field, label, brief key, unit in the worksheet, worksheet name
SLO_FIELDS = [
    ("context_length", "Context length", "context_length", "tok", "ctx_len"),
    ("peak_qps", "Peak load", "peak_qps", "QPS", "qps_peak"),
    ("ttft_p99_ms", "p99 TTFT", "ttft_p99_ms", "ms", "ttft_p99"),
    ("tpot_p99_ms", "p99 TPOT", "tpot_p99_ms", "ms", "tpot_p99"),
    ("e2e_p99_ms", "p99 end-to-end latency", "e2e_p99_ms", "ms", "e2e_p99"),
    ("input_tokens", "Input length", "input_tokens", "tok/req", "in_len"),
    ("output_tokens", "Output length", "output_tokens", "tok/req", "out_len"),
]
TEXT_FIELDS = [
    ("model", "Model"),
    ("gpu", "GPU class"),
    ("tenancy", "Tenancy"),
    ("cost", "Cost constraint"),
    ("quality", "Quality constraint"),
]
MAX_NUMBER = 1e12
RELATIVE_MATCH = 0.10  # a figure within 10% of the brief counts as the brief's


@dataclass
class CardReview:
    pinned: list[str]  # labels the candidate pinned, matching the brief
    differs: list[dict]  # {label, theirs, brief}
    missed: list[str]  # labels the brief has and the card lacks
    errors: dict[str, str]  # field -> message, for numbers that do not parse
    names: dict[str, str]  # worksheet name -> napkin expression
    score: float

    def to_dict(self) -> dict:
        return {
            "pinned": self.pinned,
            "differs": self.differs,
            "missed": self.missed,
            "errors": self.errors,
            "names": self.names,
            "score": self.score,
        }


def parse_number(raw: object) -> float | None:
    """A positive figure from a form field ('50', '1,000', '32k'); None when empty.

    Raises ValueError with a sentence for the candidate when the text is not a number.
    """
    text = str(raw or "").strip().replace(",", "").replace("_", "")
    if not text:
        return None
    scale = 1.0
    if text[-1] in "kK":
        scale, text = 1e3, text[:-1]
    elif text[-1] == "M":
        scale, text = 1e6, text[:-1]
    try:
        value = float(text) * scale
    except ValueError:
        raise ValueError("Enter a number, like 50 or 32k.") from None
    if not (0 < value < MAX_NUMBER):
        raise ValueError("Enter a positive number of a realistic size.")
    return value


def review_card(card: dict, brief: Brief) -> CardReview:
    """Compare an SLO card with the question's brief.

    A peak-QPS figure marked as a mean does not count as pinning the peak: sizing on the mean
    is the classic mistake the brief is written to catch.
    """
    pinned, differs, missed = [], [], []
    errors: dict[str, str] = {}
    names: dict[str, str] = {}
    relevant = 0
    for field, label, brief_key, unit, name in SLO_FIELDS:
        try:
            theirs = parse_number(card.get(field))
        except ValueError as exc:
            errors[field] = str(exc)
            theirs = None
        expected = brief.value_of(brief_key)
        if expected is not None:
            relevant += 1
        if theirs is None:
            if expected is not None:
                missed.append(label)
            continue
        names[name] = f"{_fmt(theirs)} {unit}"
        if field == "peak_qps" and card.get("qps_kind") == "mean":
            names.pop(name)
            names["qps_mean"] = f"{_fmt(theirs)} {unit}"
            if expected is not None:
                differs.append(
                    {
                        "label": label,
                        "theirs": f"{_fmt(theirs)} (as a mean)",
                        "brief": f"{_fmt(expected)} at peak",
                    }
                )
            continue
        if expected is None:
            continue
        if abs(theirs - float(expected)) <= RELATIVE_MATCH * float(expected):
            pinned.append(label)
        else:
            differs.append({"label": label, "theirs": _fmt(theirs), "brief": _fmt(expected)})
    for field, label in TEXT_FIELDS:
        value = str(card.get(field) or "").strip()
        expected = brief.value_of(field)
        if field in ("model", "gpu", "tenancy") and expected:
            relevant += 1
            if not value:
                missed.append(label)
            elif _same_thing(value, str(expected)):
                pinned.append(label)
            else:
                differs.append({"label": label, "theirs": value, "brief": str(expected)})
    score = (len(pinned) / relevant) if relevant else 0.0
    return CardReview(pinned, differs, missed, errors, names, round(score, 3))


def card_as_text(card: dict) -> str:
    """The card written out as the sentences a candidate would say, so the rubric graders
    read it with the notes: the figures that belong together (the latency SLO and the load it
    holds at; the input/output mix) share a sentence, as a spoken answer would put them."""

    def value(field: str) -> str:
        # Card values are one-line form inputs: keep each inside its own clause.
        return " ".join(str(card.get(field) or "").split())

    sentences = []
    serving = []
    if value("model"):
        serving.append(f"we serve {value('model')}")
    if value("gpu"):
        serving.append(f"on {value('gpu')} GPUs")
    if value("context_length"):
        serving.append(f"with a context length of {value('context_length')} tokens")
    if value("tenancy"):
        serving.append(f"for {value('tenancy')} tenancy")
    if serving:
        text = " ".join(serving)
        sentences.append(text[0].upper() + text[1:] + ".")
    slo = []
    if value("ttft_p99_ms"):
        slo.append(f"p99 TTFT at most {value('ttft_p99_ms')} ms")
    if value("tpot_p99_ms"):
        slo.append(f"p99 TPOT (time per output token) at most {value('tpot_p99_ms')} ms")
    if value("e2e_p99_ms"):
        slo.append(f"p99 end-to-end latency at most {value('e2e_p99_ms')} ms")
    load = ""
    if value("peak_qps"):
        kind = "a mean load" if card.get("qps_kind") == "mean" else "the peak load"
        load = f"{kind} of {value('peak_qps')} QPS (requests per second)"
    if slo:
        sentences.append(
            "The SLO is " + " and ".join(slo) + (f", held at {load}." if load else ".")
        )
    elif load:
        sentences.append(f"We size for {load}.")
    mix = []
    if value("input_tokens"):
        mix.append(f"{value('input_tokens')} input (prompt) tokens")
    if value("output_tokens"):
        mix.append(f"{value('output_tokens')} output (generated) tokens")
    if mix:
        sentences.append("A request averages " + " and ".join(mix) + ".")
    if value("cost"):
        sentences.append(f"Cost constraint: {value('cost')}.")
    if value("quality"):
        sentences.append(f"Quality constraint: {value('quality')}.")
    notes = str(card.get("notes") or "").strip()
    return "\n".join(sentences + ([notes] if notes else []))


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _same_thing(theirs: str, expected: str) -> bool:
    """'RTX 4090' names the brief's 'RTX 4090 (24 GB)'; a stray letter names nothing."""
    a, b = _normalise(theirs), _normalise(expected)
    return len(a) >= 3 and (a in b or b in a)


def _normalise(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())
