"""A design question as typed, immutable data: the one shape every consumer reads.

`QuestionSpec.from_meta` builds it from a question file's front matter once that front matter
has passed `questionbank.files.validate_question` (or from the same JSON stored on a published
revision). It does not validate: a mapping that skipped validation may raise KeyError here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

STEP_KEYS = ("clarify", "estimate", "architecture", "bottlenecks", "tradeoffs")
# The step that always has a diagram box; others ask for one with `diagram: true`.
DIAGRAM_STEP = "architecture"
# The one slug pattern (questions and concepts): it also keeps a slug inside its folder.
# At most 50 characters: the database's slug columns (Django's SlugField) hold no more.
SLUG_MAX_CHARS = 50
SLUG_RE = re.compile(rf"^(?=.{{1,{SLUG_MAX_CHARS}}}$)[a-z0-9]+(?:-[a-z0-9]+)*$")
# Where a quantity's short label ends: a comma (unless it sits between digits, a thousands
# separator as in 2,500) or an opening parenthesis.
_SHORT_LABEL_END = re.compile(r"(?<!\d),|,(?!\d)| \(")


def _named[Item](items: Iterable[Item], attribute: str, name: str, what: str) -> Item:
    """The first of `items` whose `attribute` is `name`; LookupError ("no step 'x'", with
    `what` for the kind) when none is."""
    for item in items:
        if getattr(item, attribute) == name:
            return item
    raise LookupError(f"no {what} {name!r}")


@dataclass(frozen=True)
class DiagramRule:
    """What a candidate's architecture diagram must show to earn a rubric point.

    Exactly one of:
    - `path`: a chain of direct edges, in arrow order, between nodes whose label (or id)
      holds a phrase of each group in turn ([[gateway], [router], [vllm, replica]] is
      gateway -> router -> replicas; a line without an arrow head counts either way). With
      `edge_label`, one of those phrases must also be written on an edge of the chain or in
      the label of one of its nodes; a chain without it earns a partial.
    - `node`: one node whose label (or id) holds a phrase of the first group, and a phrase of
      every other group in its own label or on an edge touching it ([[autoscal], [queue]]:
      "Autoscaler: queue depth", or `vllm -->|queue depth| autoscaler`).
    Phrases match as the offline grader's `recognise` phrases do (grading/text.py)."""

    path: tuple[tuple[str, ...], ...] = ()
    node: tuple[tuple[str, ...], ...] = ()
    edge_label: tuple[str, ...] = ()

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None) -> DiagramRule | None:
        """The rule from its authored mapping; None for a point without one."""
        if not isinstance(meta, Mapping) or not (meta.get("path") or meta.get("node")):
            return None
        return cls(
            path=_phrase_groups(meta.get("path")),
            node=_phrase_groups(meta.get("node")),
            edge_label=tuple(str(p) for p in meta.get("edge_label") or () if str(p).strip()),
        )


@dataclass(frozen=True)
class RubricPoint:
    """One rubric point: what it says, its weight, and the phrases the offline grader looks for
    (`all_groups`: every group must be matched in one sentence for a hit; `partial_groups`
    likewise for a partial)."""

    id: str
    says: str
    weight: float = 1.0
    all_groups: tuple[tuple[str, ...], ...] = ()
    partial_groups: tuple[tuple[str, ...], ...] = ()
    concepts: tuple[str, ...] = ()
    # What an interviewer asks when the candidate missed this point (mock interviews).
    probe: str = ""
    # What the candidate's architecture diagram must show to earn it (None: prose only).
    diagram: DiagramRule | None = None


@dataclass(frozen=True)
class Misconception:
    """A wrong idea candidates hold about a step: what it claims, the rubric points it
    contradicts, why it breaks (Markdown), what to read, and the phrase groups the offline
    grader recognises it by (every group matched in one sentence)."""

    id: str
    idea: str
    contradicts: tuple[str, ...]
    explanation: str
    concepts: tuple[str, ...] = ()
    all_groups: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class FollowUp:
    """An interviewer's follow-up of the trade-offs step, answered and graded on its own."""

    id: str
    prompt: str
    reference: str
    rubric: tuple[RubricPoint, ...]
    concepts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Given:
    """A name predefined in the candidate's worksheet; `value` is a napkin-math expression."""

    name: str
    label: str
    value: str


@dataclass(frozen=True)
class Mistake:
    """A known wrong way to a quantity, with the hint shown when an answer matches it.

    Exactly one of `formula` (a napkin expression over the givens and earlier quantities) and
    `replace` (the quantity's own formula with these givens swapped for these expressions,
    e.g. {"rho": "1"}) is set; `kind` is an optional tag the checker reports back.
    """

    hint: str
    formula: str = ""
    replace: tuple[tuple[str, str], ...] = ()
    kind: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The authored mapping, for the napkin-math checker."""
        out: dict[str, Any] = {"hint": self.hint}
        if self.formula:
            out["formula"] = self.formula
        if self.replace:
            out["replace"] = dict(self.replace)
        if self.kind:
            out["kind"] = self.kind
        return out

    @classmethod
    def from_meta(cls, m: Mapping[str, Any]) -> Mistake:
        return cls(
            hint=str(m["hint"]),
            formula=str(m.get("formula") or ""),
            replace=tuple((str(k), str(v)) for k, v in (m.get("replace") or {}).items()),
            kind=str(m.get("kind") or ""),
        )


@dataclass(frozen=True)
class Quantity:
    """A number the candidate must compute: the instructor's formula over the givens (and
    earlier quantities), its unit, a relative tolerance and an optional rounding."""

    id: str
    label: str
    formula: str
    unit: str
    tolerance: float
    rounding: str | None = None
    mistakes: tuple[Mistake, ...] = ()

    @property
    def short_label(self) -> str:
        """The label up to its first comma or parenthesis ("Decode TPOT floor with BF16
        weights"), for names that must stay short, like a button's accessible name. A comma
        between digits separates thousands ("Streams of 2,500 tokens that fit"): no cut there."""
        return _SHORT_LABEL_END.split(self.label, maxsplit=1)[0].strip()

    @property
    def rounded_formula(self) -> str:
        """The formula wrapped in its rounding (`ceil(...)`), as later quantities use it."""
        return f"{self.rounding}({self.formula})" if self.rounding else self.formula

    def as_dict(self) -> dict[str, Any]:
        """The authored mapping, for the napkin-math checker (which takes plain data)."""
        out: dict[str, Any] = {
            "id": self.id,
            "label": self.label,
            "formula": self.formula,
            "unit": self.unit,
            "tolerance": self.tolerance,
        }
        if self.rounding:
            out["rounding"] = self.rounding
        if self.mistakes:
            out["mistakes"] = [m.as_dict() for m in self.mistakes]
        return out


@dataclass(frozen=True)
class StepSpec:
    """One of the five steps: prompt, rubric, reference and concepts, plus the napkin math
    (estimate) or the follow-ups (tradeoffs)."""

    key: str
    prompt: str
    reference: str
    rubric: tuple[RubricPoint, ...]
    concepts: tuple[str, ...] = ()
    minutes: float | None = None
    givens: tuple[Given, ...] = ()
    quantities: tuple[Quantity, ...] = ()
    follow_ups: tuple[FollowUp, ...] = ()
    # Markdown for a human interviewer only: hints to give when the candidate is stuck.
    interviewer_notes: str = ""
    misconceptions: tuple[Misconception, ...] = ()
    # Mermaid flowchart text shown with the reference answer ("" for none).
    reference_diagram: str = ""
    # Whether the step asks for a diagram: the architecture step always, another when its
    # question says `diagram: true`.
    has_diagram: bool = False

    def follow_up(self, follow_up_id: str) -> FollowUp:
        """The follow-up with this id; LookupError when the step has none by that id."""
        return _named(self.follow_ups, "id", follow_up_id, "follow-up")

    def quantity(self, quantity_id: str) -> Quantity:
        """The quantity with this id; LookupError when the step has none by that id."""
        return _named(self.quantities, "id", quantity_id, "quantity")

    def estimate_dict(self) -> dict[str, Any]:
        """Givens and quantities as the napkin-math engine takes them (plain data)."""
        return {
            "givens": [{"name": g.name, "label": g.label, "value": g.value} for g in self.givens],
            "quantities": [q.as_dict() for q in self.quantities],
        }


@dataclass(frozen=True)
class Brief:
    """The requirements the candidate must pin down (figures in tokens, QPS and ms)."""

    model: str
    gpu: str = ""
    context_length: float | None = None
    peak_qps: float | None = None
    mean_qps: float | None = None
    ttft_p99_ms: float | None = None
    tpot_p99_ms: float | None = None
    e2e_p99_ms: float | None = None
    input_tokens: float | None = None
    output_tokens: float | None = None
    tenancy: str = ""
    constraints: tuple[str, ...] = ()

    def value_of(self, key: str) -> Any:
        """The authored value of a brief key, or None when the brief leaves it out."""
        value = getattr(self, key, None)
        return value if value not in ("", ()) else None

    @property
    def prefill_only(self) -> bool:
        """A service that answers each request with one pooled output (an embedding, a
        rerank score) and decodes nothing: its brief gives output_tokens 1."""
        return self.value_of("output_tokens") == 1

    def as_dict(self) -> dict[str, Any]:
        """The authored keys and values, in the schema's order (for the model grader's prompt)."""
        out: dict[str, Any] = {}
        for key in BRIEF_ORDER:
            value = self.value_of(key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out


BRIEF_ORDER = tuple(Brief.__dataclass_fields__)


@dataclass(frozen=True)
class Source:
    """A datasheet, model card, document or paper a question's figures were taken from."""

    title: str
    url: str
    facts: str = ""


@dataclass(frozen=True)
class QuestionSpec:
    """A whole question: what the list shows, the brief, and the five steps in order."""

    slug: str
    title: str
    summary: str
    difficulty: str
    brief: Brief
    steps: tuple[StepSpec, ...]
    tags: tuple[str, ...] = ()
    minutes: float | None = None
    scenario: str = ""  # the Markdown after the front matter
    sources: tuple[Source, ...] = ()  # where the question's figures come from

    def step(self, key: str) -> StepSpec:
        """The step with this key; LookupError for a key that is not one of STEP_KEYS."""
        return _named(self.steps, "key", key, "step")

    def follow_up(self, follow_up_id: str) -> FollowUp:
        """A follow-up of the trade-offs step by id; LookupError when there is none."""
        return self.step("tradeoffs").follow_up(follow_up_id)

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any], *, scenario: str = "") -> QuestionSpec:
        """The spec from validated front matter (or the JSON stored from it) and the
        scenario's Markdown."""
        steps = meta["steps"]
        return cls(
            slug=meta["slug"],
            title=meta["title"],
            summary=meta["summary"],
            difficulty=meta["difficulty"],
            brief=brief_from_dict(meta["brief"]),
            steps=tuple(step_from_dict(key, steps[key]) for key in STEP_KEYS if key in steps),
            tags=tuple(meta.get("tags") or ()),
            minutes=meta.get("minutes"),
            scenario=scenario,
            sources=tuple(
                Source(title=s["title"], url=s["url"], facts=s.get("facts", ""))
                for s in meta.get("sources") or ()
            ),
        )


def brief_from_dict(brief: Mapping[str, Any]) -> Brief:
    values = {key: brief[key] for key in BRIEF_ORDER if key in brief}
    if "constraints" in values:
        values["constraints"] = tuple(values["constraints"] or ())
    return Brief(**values)


def step_from_dict(key: str, step: Mapping[str, Any]) -> StepSpec:
    """A step from its authored mapping."""
    return StepSpec(
        key=key,
        prompt=str(step.get("prompt") or ""),
        reference=str(step.get("reference") or ""),
        rubric=rubric_from_list(step.get("rubric")),
        concepts=tuple(step.get("concepts") or ()),
        minutes=step.get("minutes"),
        givens=tuple(
            Given(str(g["name"]), str(g.get("label", "")), str(g["value"]))
            for g in step.get("givens") or ()
        ),
        quantities=tuple(_quantity(q) for q in step.get("quantities") or ()),
        follow_ups=tuple(
            FollowUp(
                id=fu["id"],
                prompt=str(fu.get("prompt") or ""),
                reference=str(fu.get("reference") or ""),
                rubric=rubric_from_list(fu.get("rubric")),
                concepts=tuple(fu.get("concepts") or ()),
            )
            for fu in step.get("follow_ups") or ()
        ),
        interviewer_notes=str(step.get("interviewer_notes") or ""),
        reference_diagram=str(step.get("reference_diagram") or ""),
        has_diagram=key == DIAGRAM_STEP or step.get("diagram") is True,
        misconceptions=tuple(
            Misconception(
                id=str(m["id"]),
                idea=str(m.get("idea") or ""),
                contradicts=tuple(str(c) for c in m.get("contradicts") or ()),
                explanation=str(m.get("explanation") or ""),
                concepts=tuple(m.get("concepts") or ()),
                all_groups=_phrase_groups((m.get("recognise") or {}).get("all")),
            )
            for m in step.get("misconceptions") or ()
        ),
    )


def _quantity(q: Mapping[str, Any]) -> Quantity:
    return Quantity(
        id=str(q["id"]),
        label=str(q.get("label", "")),
        formula=str(q["formula"]),
        unit=str(q.get("unit") or ""),
        tolerance=float(q["tolerance"]),
        rounding=q.get("rounding"),
        mistakes=tuple(Mistake.from_meta(m) for m in q.get("mistakes") or ()),
    )


def rubric_from_list(rubric: Iterable[Mapping[str, Any]] | None) -> tuple[RubricPoint, ...]:
    """Rubric points from their authored mappings, in order.

    Raises ValueError for a point without an id. A bare phrase where a group is expected is
    read as a group of one, and a weight that is not a positive number as 1, so a mapping
    written by hand (a test, a script) reads the way the validator would have asked for.
    """
    points = []
    for raw in rubric or ():
        if not isinstance(raw, Mapping) or not raw.get("id"):
            raise ValueError(f"rubric point without an id: {raw!r}")
        recognise = raw.get("recognise") or {}
        weight = raw.get("weight", 1)
        points.append(
            RubricPoint(
                id=str(raw["id"]),
                says=str(raw.get("says") or raw["id"]).strip(),
                weight=float(weight)
                if isinstance(weight, int | float) and not isinstance(weight, bool) and weight > 0
                else 1.0,
                all_groups=_phrase_groups(recognise.get("all")),
                partial_groups=_phrase_groups(recognise.get("partial")),
                concepts=tuple(raw.get("concepts") or ()),
                probe=str(raw.get("probe") or "").strip(),
                diagram=DiagramRule.from_meta(raw.get("diagram")),
            )
        )
    return tuple(points)


def _phrase_groups(value: Any) -> tuple[tuple[str, ...], ...]:
    groups = []
    for group in value or ():
        if isinstance(group, str):
            group = [group]
        phrases = tuple(str(p) for p in group if str(p).strip())
        if phrases:
            groups.append(phrases)
    return tuple(groups)


def as_step(step: StepSpec | FollowUp | Mapping[str, Any]) -> StepSpec | FollowUp:
    """A gradable part (a step or a follow-up) as typed data; a mapping is read as a step's
    authored front matter."""
    if isinstance(step, StepSpec | FollowUp):
        return step
    return step_from_dict(str(step.get("key", "")), step)
