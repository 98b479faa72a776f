"""The clarify step's SLO card: what the candidate pinned down, compared with the brief.

No Django imports. Card values are numbers the candidate typed; each becomes a name in their
napkin-math worksheet (qps_peak, ttft_p99, ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grading.text import form_block, typed_opening
from planner.engine import evaluate_expression
from questionbank import Brief


@dataclass(frozen=True)
class CardField:
    """One field of the SLO card. `name` is the form field, the card's key and the brief's
    key it is compared with. A number field has a unit and a worksheet name (the candidate's
    figure becomes `worksheet_name = value unit` in their napkin math); a text field is
    compared with the brief only when `in_brief`."""

    name: str
    label: str
    unit: str = ""
    worksheet_name: str = ""
    in_brief: bool = True

    def figure(self, value: float) -> str:
        """A value of this field as a sentence writes it, with its unit in words."""
        unit = {"tok": "tokens", "tok/req": "tokens a request"}.get(self.unit, self.unit)
        return f"{_fmt(value)} {unit}".strip()


NUMBER_FIELDS = (
    CardField("context_length", "Context length", "tok", "ctx_len"),
    CardField("peak_qps", "Peak load", "QPS", "qps_peak"),
    CardField("ttft_p99_ms", "p99 TTFT", "ms", "ttft_p99"),
    CardField("tpot_p99_ms", "p99 TPOT", "ms", "tpot_p99"),
    CardField("e2e_p99_ms", "p99 end-to-end latency", "ms", "e2e_p99"),
    CardField("input_tokens", "Input length", "tok/req", "in_len"),
    CardField("output_tokens", "Output length", "tok/req", "out_len"),
)
TEXT_FIELDS = (
    CardField("model", "Model"),
    CardField("gpu", "GPU class"),
    CardField("tenancy", "Tenancy"),
    CardField("cost", "Cost constraint", in_brief=False),
    CardField("quality", "Quality constraint", in_brief=False),
)
# Whether the load figure is the peak or the mean (a radio beside peak_qps).
QPS_KIND = "qps_kind"
CARD_FIELD_NAMES = (*(f.name for f in NUMBER_FIELDS + TEXT_FIELDS), QPS_KIND)
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


# The card's units as the napkin calculator spells them, in the order a figure is tried.
CALCULATOR_UNITS = {"QPS": ("req/s",), "tok/req": ("tok/req", "tok")}


def parse_number(raw: object, unit: str = "") -> float | None:
    """A positive figure from a form field ('50', '1,000', '32k'); None when empty. The figure
    may carry a unit the napkin calculator reads ('300 ms', '0.3 s', '50 QPS', '8k tokens'):
    it is converted to the field's `unit`, and a unit of another kind is refused.

    Raises ValueError with a sentence for the candidate when the text is not a number.
    """
    text = _figure_text(raw)
    if not text:
        return None
    wanted = f" in {unit}" if unit else ""
    refusal = f"Enter a number{wanted}, like 50 or 32k."
    if len(text) > 80:
        raise ValueError(refusal)
    read = evaluate_expression(text)
    if read.error is None and read.unit and unit:
        # A figure with its own unit, converted to the field's ("256 tokens" is per request).
        for target in CALCULATOR_UNITS.get(unit, (unit,)):
            converted = evaluate_expression(text, to_unit=target)
            if converted.error is None:
                read = converted
                break
        else:
            raise ValueError(f"That is not a figure in {unit}. {refusal}")
    if read.error is not None or read.value is None or read.name is not None:
        raise ValueError(refusal)
    if read.unit and not unit:
        raise ValueError(refusal)
    value = float(read.value)
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
    for f in NUMBER_FIELDS:
        try:
            theirs = parse_number(card.get(f.name), f.unit)
        except ValueError as exc:
            errors[f.name] = str(exc)
            theirs = None
        expected = brief.value_of(f.name)
        if expected is not None:
            relevant += 1
        if theirs is None:
            if expected is not None:
                missed.append(f.label)
            continue
        figure = f"{_fmt(theirs)} {f.unit}"
        if f.name == "peak_qps" and card.get(QPS_KIND) == "mean":
            names["qps_mean"] = figure
            if expected is not None:
                differs.append(
                    {
                        "label": f.label,
                        "theirs": f"{f.figure(theirs)} (as a mean)",
                        "brief": f"{f.figure(expected)} at peak",
                    }
                )
            continue
        names[f.worksheet_name] = figure
        if expected is None:
            continue
        if abs(theirs - float(expected)) <= RELATIVE_MATCH * float(expected):
            pinned.append(f.label)
        else:
            differs.append(
                {"label": f.label, "theirs": f.figure(theirs), "brief": f.figure(expected)}
            )
    for card_field in TEXT_FIELDS:
        value = str(card.get(card_field.name) or "").strip()
        expected = brief.value_of(card_field.name) if card_field.in_brief else None
        if expected:
            relevant += 1
            if not value:
                missed.append(card_field.label)
            elif (
                _same_gpu(value, str(expected))
                if card_field.name == "gpu"
                else _same_thing(value, str(expected))
            ):
                pinned.append(card_field.label)
            else:
                differs.append({"label": card_field.label, "theirs": value, "brief": str(expected)})
    score = (len(pinned) / relevant) if relevant else 0.0
    return CardReview(pinned, differs, missed, errors, names, round(score, 3))


def _figure_text(raw: object) -> str:
    """A figure as the calculator reads it: thousands separators and underscores dropped."""
    return str(raw or "").strip().replace(",", "").replace("_", "")


def figure_readings(card: dict, brief: Brief) -> dict[str, str]:
    """How the calculator read a card's figures where that reading may not be what was meant
    and is not the brief's value ("8k" for a context of 8192): label -> the calculator's own
    note, the words the worksheet and the planner show under such a line ("8k reads as 8,000;
    for a power of two such as 8,192 write 8Ki.")."""
    readings = {}
    for f in NUMBER_FIELDS:
        expected = brief.value_of(f.name)
        try:
            theirs = parse_number(card.get(f.name), f.unit)
        except ValueError:
            continue  # refused, and said so (unread_figures)
        if theirs is None or expected is None or theirs == float(expected):
            continue
        notes = evaluate_expression(_figure_text(card.get(f.name))).notes
        if notes:
            readings[f.label] = " ".join(notes)
    return readings


def figure_errors(card: dict) -> dict[str, str]:
    """Field name -> why its figure is not read (`parse_number`'s sentence), for each number
    field of the card holding text that is not a number ("fast", "-5 ms"). The one judge of a
    figure: the step page says it beside the field as the candidate works, and the submitted
    card's review lists the same sentence under "Not read" (`unread_figures`)."""
    errors = {}
    for f in NUMBER_FIELDS:
        try:
            parse_number(card.get(f.name), f.unit)
        except ValueError as exc:
            errors[f.name] = str(exc)
    return errors


def unread_figures(card: dict) -> list[dict]:
    """The card's number fields that hold text which is not a number ("300ms", "fifty"):
    {label, theirs, message} each. The review counts them as missed; the candidate did
    write something, so the page says what it could not read and why."""
    errors = figure_errors(card)
    return [
        {"label": f.label, "theirs": str(card.get(f.name)), "message": errors[f.name]}
        for f in NUMBER_FIELDS
        if f.name in errors
    ]


def card_as_text(card: dict) -> str:
    """The card as the graders read it: its values under their labels in a form values block
    (`grading.text.form_block`), then the candidate's notes.

    The block is context, never evidence: the graders quote only the notes, which are the
    candidate's own words, and the card itself is checked against the brief by
    `review_card`. No sentence is written for the candidate, so nothing the app wrote can be
    quoted back as theirs.
    """

    def value(field: str) -> str:
        # Card values are one-line form inputs: keep each on its own line.
        return " ".join(str(card.get(field) or "").split())

    lines = []
    for f in NUMBER_FIELDS:
        if not value(f.name):
            continue
        figure = f"{value(f.name)} {f.unit}"
        if f.name == "peak_qps":
            figure += " (a mean)" if card.get(QPS_KIND) == "mean" else " (at peak)"
        lines.append(f"{f.label}: {figure}")
    lines += [f"{f.label}: {value(f.name)}" for f in TEXT_FIELDS if value(f.name)]
    block = form_block(lines)
    notes = str(card.get("notes") or "").strip()
    if not block:  # the notes open the text: they must not pass for a form values block
        return typed_opening(notes)
    return "\n".join(part for part in (block, notes) if part)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _same_thing(theirs: str, expected: str) -> bool:
    """'RTX 4090' names the brief's 'RTX 4090 (24 GB)'; a stray letter names nothing. A
    name shorter than three characters counts where its words open the brief's: 'L4' names
    'L4 (24 GB)', though not 'L40S (48 GB)', in which its letters also stand."""
    a, b = _normalise(theirs), _normalise(expected)
    if len(a) >= 3 and (a in b or b in a):
        return True
    words, brief_words = _words(theirs), _words(expected)
    return bool(words) and brief_words[: len(words)] == words


# A count of cards written beside a GPU class: "4x RTX 4090", "4 × H100", "H100 x8".
_COUNT_BEFORE = re.compile(r"^\s*(\d+)\s*[x×*]\s*(?=\S)", re.IGNORECASE)
# The x after a class stands apart from it: "RTX 4090" is no count of 4090.
_COUNT_AFTER = re.compile(r"\s[x×*]\s*(\d+)\s*$", re.IGNORECASE)
# A count as a brief words it: "four per workstation", "TP = 2 per instance", "8x H100".
_NUMBER_WORDS = {
    w: n
    for n, w in enumerate(
        "one two three four five six seven eight nine ten eleven twelve".split(), start=1
    )
}
_BRIEF_COUNT = re.compile(
    r"\b(\d+|" + "|".join(_NUMBER_WORDS) + r")\s+per\b|^\s*(\d+)\s*[x×]\s*", re.IGNORECASE
)


def _gpu_count(text: str) -> tuple[int | None, str]:
    """A candidate's GPU class split into the count written beside it and the class itself:
    "4x RTX 4090 24GB" -> (4, "RTX 4090 24GB"); (None, text) when there is no count."""
    for pattern in (_COUNT_BEFORE, _COUNT_AFTER):
        if match := pattern.search(text):
            return int(match.group(1)), (text[: match.start()] + text[match.end() :]).strip()
    return None, text


def _brief_gpu_count(text: str) -> int | None:
    """The number of cards a brief's GPU class names ("four per workstation"), else None."""
    match = _BRIEF_COUNT.search(text)
    if match is None:
        return None
    word = (match.group(1) or match.group(2)).lower()
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _same_gpu(theirs: str, expected: str) -> bool:
    """The brief's GPU class, with or without a count of cards beside it: "4x RTX 4090"
    names "RTX 4090 (24 GB), four per workstation"; "8x RTX 4090" does not, since the brief
    fixes four. Where the brief names no count, how many cards is the candidate's to size."""
    count, gpu_class = _gpu_count(theirs)
    if not _same_thing(gpu_class, expected):
        return False
    wanted = _brief_gpu_count(expected)
    return count is None or wanted is None or count == wanted


def _normalise(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())
