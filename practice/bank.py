"""The question bank as the home page lists it: every published question with what a
candidate finds it by (topic, difficulty, model, GPU, and words of its title, summary, tags,
model and GPU), its estimated time, and the candidate's own status on it, in the order the
candidate chose (`SORTS`: easiest first unless they chose another).

Filtering happens here, in Python, over the published questions (one query for them): the
bank is tens of questions, each already parsed once per process (`question_spec`), and a
search that folds case and accents the same way on every database is simpler here than in
SQL. Input is bounded: each parameter is cut to MAX_PARAM_CHARS, a search to MAX_SEARCH_WORDS
words; a filter value the bank does not offer is ignored, as if no filter were chosen.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from urllib.parse import urlencode

from django.utils.text import slugify

from planner.engine.catalog import brief_head, load_catalog
from practice.selectors import NOT_STARTED, QuestionStatus, question_statuses
from questionbank.files import DIFFICULTIES
from questions import selectors as question_selectors
from questions.models import QuestionRevision

MAX_PARAM_CHARS = 200
MAX_SEARCH_WORDS = 12


@dataclass(frozen=True)
class Option:
    """One choice of a filter: its value in the URL and what the page shows."""

    value: str
    label: str


@dataclass(frozen=True)
class Menu:
    """One filter's select box: its parameter, its label, its choices, the one applied."""

    name: str
    label: str
    options: list[Option]
    chosen: str


@dataclass(frozen=True)
class BankFilters:
    """What the candidate asked for; "" is no filter (and, for `sort`, the bank's own order)."""

    q: str = ""
    topic: str = ""
    difficulty: str = ""
    model: str = ""
    gpu: str = ""
    sort: str = ""

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> BankFilters:
        """From a GET query (`request.GET`): each known parameter cut to MAX_PARAM_CHARS
        characters, made visible (`_visible`) and trimmed; other parameters are ignored."""
        return cls(
            **{
                f.name: _visible(str(params.get(f.name) or "")[:MAX_PARAM_CHARS]).strip()
                for f in fields(cls)
            }
        )

    @property
    def query(self) -> str:
        """The URL query of the choices made, empty ones left out: the link to share."""
        return urlencode([(f.name, v) for f in fields(self) if (v := getattr(self, f.name))])

    @property
    def narrowed(self) -> bool:
        """Whether any filter or search is chosen (an order narrows nothing)."""
        return any(getattr(self, f.name) for f in fields(self) if f.name != "sort")


@dataclass(frozen=True)
class BankEntry:
    """A published question as its card shows it."""

    revision: QuestionRevision
    model: Option
    gpu: Option | None
    minutes: float | None  # the question's own estimate, else the sum of its steps'
    status: QuestionStatus
    search_text: str  # folded (`fold`) title, summary, tags, model and GPU

    @property
    def slug(self) -> str:
        return self.revision.question.slug


@dataclass(frozen=True)
class Bank:
    """The questions that match `filters` (as applied: an unknown value dropped), how many
    are published in all, and the choices each filter offers."""

    entries: list[BankEntry]
    total: int
    filters: BankFilters
    menus: list[Menu]  # topic, difficulty, model, GPU
    sort: Menu  # the orders offered (those by the candidate's own record only when signed in)

    @property
    def order_said(self) -> str:
        """The chosen order as the count says it ("hardest first"); "" for the bank's own."""
        chosen = next((o for o in self.sort.options if o.value == self.sort.chosen), None)
        return chosen.label[0].lower() + chosen.label[1:] if chosen and chosen.value else ""


def fold(text: str) -> str:
    """`text` for matching: compatibility-decomposed, accents dropped, case folded
    ("Qwen2.5 Résumé" -> "qwen2.5 resume"), every dash a hyphen ("7B–8B" -> "7b-8b", as a
    keyboard types it), and invisible format characters (a zero-width space, a soft hyphen,
    a direction mark, pasted with a word) dropped."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(_folded_char(c) for c in decomposed).casefold()


def _visible(text: str) -> str:
    """`text` as the search box shows it back and the search reads it: a control character
    (an escape, a tab) is a space between words, and an invisible format character (a zero-width
    space, a direction override, pasted with a word) is dropped, so the box never echoes
    what the search ignored, or garbles the line with a reversed direction."""
    return "".join(
        " " if (cat := unicodedata.category(c)) == "Cc" else "" if cat == "Cf" else c for c in text
    )


def _folded_char(c: str) -> str:
    if unicodedata.combining(c):
        return ""
    category = unicodedata.category(c)
    if category == "Cf":
        return ""
    if category == "Pd" or c == "\u2212":  # a dash, or the minus sign
        return "-"
    return c


def search_words(query: str) -> list[str]:
    """The words of a search, folded; at most MAX_SEARCH_WORDS (the rest are ignored)."""
    return fold(query[:MAX_PARAM_CHARS]).split()[:MAX_SEARCH_WORDS]


def hardware_option(kind: str, text: str) -> Option | None:
    """The filter choice a brief's model or GPU falls under: the catalogue's entry when the
    wording names one (`Catalog.in_brief`: so "A100 (80 GB)" and "A100 80GB SXM" are one
    choice), else the wording's name part itself; None for an empty text. `kind` is "model"
    or "gpu"."""
    head = brief_head(text)
    if not head:
        return None
    entry = load_catalog().in_brief(kind, text)
    if entry is not None:
        return Option(entry.key, entry.name)
    return Option(slugify(head) or fold(head), head)


def estimated_minutes(revision: QuestionRevision) -> float | None:
    """The question's own `minutes`, else the sum of its steps' (None when neither says)."""
    spec = revision.question_spec
    if spec.minutes:
        return spec.minutes
    steps = [s.minutes for s in spec.steps if s.minutes]
    return sum(steps) if steps else None


def _entry(revision: QuestionRevision, status: QuestionStatus) -> BankEntry:
    spec = revision.question_spec
    model = hardware_option("model", spec.brief.model) or Option("", "")
    gpu = hardware_option("gpu", spec.brief.gpu)
    searched = [spec.title, spec.summary, *spec.tags, spec.brief.model, model.label]
    if gpu is not None:
        searched += [spec.brief.gpu, gpu.label]
    return BankEntry(
        revision=revision,
        model=model,
        gpu=gpu,
        minutes=estimated_minutes(revision),
        status=status,
        search_text=fold("\n".join(searched)),
    )


def _matches(entry: BankEntry, filters: BankFilters, words: list[str]) -> bool:
    revision = entry.revision
    return (
        (not filters.topic or filters.topic in revision.question_spec.tags)
        and (not filters.difficulty or filters.difficulty == revision.difficulty)
        and (not filters.model or filters.model == entry.model.value)
        and (not filters.gpu or (entry.gpu is not None and filters.gpu == entry.gpu.value))
        and all(word in entry.search_text for word in words)
    )


def _options(chosen: dict[str, Option]) -> list[Option]:
    return sorted(chosen.values(), key=lambda o: fold(o.label))


def bank_order(revision: QuestionRevision) -> tuple[int, str]:
    """Where a question stands in the bank: easiest first, then by title."""
    return (_DIFFICULTY_RANK.get(revision.difficulty, len(DIFFICULTIES)), fold(revision.title))


_DIFFICULTY_RANK = {d: i for i, d in enumerate(DIFFICULTIES)}


def _hardest_first(entry: BankEntry) -> tuple:
    rank, title = bank_order(entry.revision)
    return (-rank, title)


def _shortest_first(entry: BankEntry) -> tuple:
    # A question that states no time goes last: the candidate chose this order to fit a slot.
    return (entry.minutes is None, entry.minutes or 0, bank_order(entry.revision))


def _not_started_first(entry: BankEntry) -> tuple:
    status = entry.status
    return (status.started, not status.in_progress, bank_order(entry.revision))


def _lowest_score_first(entry: BankEntry) -> tuple:
    # The weakest scored questions are the ones worth another go; an unscored one says
    # nothing yet, so it follows them.
    score = entry.status.best_score
    return (score is None, score or 0.0, bank_order(entry.revision))


@dataclass(frozen=True)
class Sort:
    """An order the bank can be listed in: its value in the URL, its label, its key, and
    whether it orders by the candidate's own record (offered only to a signed-in one)."""

    value: str
    label: str
    key: Callable[[BankEntry], tuple]
    own_record: bool = False


SORTS = (
    Sort("", "Easiest first", lambda e: bank_order(e.revision)),
    Sort("hardest", "Hardest first", _hardest_first),
    Sort("shortest", "Shortest first", _shortest_first),
    Sort("title", "By title", lambda e: fold(e.revision.title)),
    Sort("not-started", "Not started first", _not_started_first, own_record=True),
    Sort("lowest-score", "Lowest best score first", _lowest_score_first, own_record=True),
)


def question_bank(*, user, filters: BankFilters) -> Bank:
    """Every published question in the order `filters.sort` names (easiest first then by
    title for none, or for an order the bank does not offer this user), with `user`'s status
    on each (a signed-out visitor's is NOT_STARTED), kept when it matches every filter and
    every word of the search. Four queries whatever the bank's size: the questions and
    `question_statuses`'s three (none for a visitor)."""
    statuses = question_statuses(user=user)
    entries = [
        _entry(r, statuses.get(r.question_id, NOT_STARTED))
        for r in question_selectors.question_list()
    ]
    sorts = {s.value: s for s in SORTS if user.is_authenticated or not s.own_record}
    order = sorts.get(filters.sort, SORTS[0])
    entries.sort(key=order.key)

    topics = {t: Option(t, t) for e in entries for t in e.revision.question_spec.tags}
    models = {e.model.value: e.model for e in entries if e.model.value}
    gpus = {e.gpu.value: e.gpu for e in entries if e.gpu is not None}
    present = {e.revision.difficulty for e in entries}
    difficulties = [Option(d, d) for d in DIFFICULTIES if d in present]
    # A value the bank does not offer (a stale link, a typo, a hostile string) is no filter.
    applied = replace(
        filters,
        topic=filters.topic if filters.topic in topics else "",
        difficulty=filters.difficulty if filters.difficulty in present else "",
        model=filters.model if filters.model in models else "",
        gpu=filters.gpu if filters.gpu in gpus else "",
        sort=order.value,
    )
    words = search_words(applied.q)
    return Bank(
        entries=[e for e in entries if _matches(e, applied, words)],
        total=len(entries),
        filters=applied,
        menus=[
            Menu("topic", "Topic", _options(topics), applied.topic),
            Menu("difficulty", "Difficulty", difficulties, applied.difficulty),
            Menu("model", "Model", _options(models), applied.model),
            Menu("gpu", "GPU", _options(gpus), applied.gpu),
        ],
        sort=Menu("sort", "Sort", [Option(s.value, s.label) for s in sorts.values()], order.value),
    )
