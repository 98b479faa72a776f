"""Reads for authoring: the question list with its status, revisions and their diffs."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import yaml
from django.db.models import Count, Q
from django.http import Http404

from authoring.models import Draft, ProblemReport
from questions.models import Concept, Question, QuestionRevision


@dataclass(frozen=True)
class QuestionRow:
    """One line of the editor's question list."""

    slug: str
    title: str
    published_number: int | None  # the current revision's number; None: never published
    revision_count: int
    has_draft: bool  # a saved draft whose text differs from the published one
    open_reports: int


def question_rows() -> list[QuestionRow]:
    """Every question an instructor can open: published ones and drafts never published."""
    questions = Question.objects.select_related("current_revision").annotate(
        published=Count("revisions", filter=Q(revisions__is_published=True), distinct=True),
        open_reports=Count(
            "problem_reports",
            filter=Q(problem_reports__status=ProblemReport.Status.OPEN),
            distinct=True,
        ),
    )
    drafts = {d.slug: d for d in Draft.objects.filter(kind=Draft.Kind.QUESTION)}
    rows = []
    for q in questions:
        current = q.current_revision
        draft = drafts.pop(q.slug, None)
        if current is None and draft is None:
            continue  # a preview of a draft since deleted: nothing to open
        rows.append(
            QuestionRow(
                slug=q.slug,
                title=current.title if current else q.slug,
                published_number=current.number if current else None,
                revision_count=q.published,
                has_draft=draft is not None
                and (current is None or draft.text != current.source_text),
                open_reports=q.open_reports,
            )
        )
    rows += [QuestionRow(slug, slug, None, 0, True, 0) for slug in drafts]
    return sorted(rows, key=lambda r: r.slug)


def question_revisions(slug: str) -> list[QuestionRevision]:
    """The question's published revisions, newest first."""
    return list(
        QuestionRevision.objects.filter(question__slug=slug, is_published=True)
        .only("number", "title", "created_at", "content_hash", "question_id")
        .order_by("-number")
    )


def question_revision(slug: str, number: int) -> QuestionRevision:
    """A published revision; Http404 for any other number."""
    revision = (
        QuestionRevision.objects.select_related("question")
        .filter(question__slug=slug, number=number, is_published=True)
        .first()
    )
    if revision is None:
        raise Http404("No such revision.")
    return revision


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add" | "del" | "hunk" | "same"
    text: str


# difflib compares the changed lines pairwise: on lines that repeat (a file's "weight: 1",
# "expect:" and list items) its time grows faster than the square of their number: 8,000
# changed lines against 8,000 took 14 s, 20,000 took 210 s. Past this many pairs the changed
# block is shown whole, removed then added (2,000 x 2,000 lines: 0.3 s at worst).
DIFF_PAIRS_MAX = 4_000_000
DIFF_CONTEXT = 3


def revision_diff(
    revision: QuestionRevision,
) -> tuple[QuestionRevision | None, list[DiffLine], bool]:
    """The published revision before `revision`, a unified diff from it (the whole text as
    added for the first revision), and whether the diff is coarse: too many lines changed to
    compare one by one, so the changed block is shown removed then added. The template
    escapes every line."""
    previous = (
        QuestionRevision.objects.filter(
            question_id=revision.question_id, is_published=True, number__lt=revision.number
        )
        .order_by("-number")
        .first()
    )
    old = previous.source_text.splitlines() if previous else []
    new = revision.source_text.splitlines()
    same_head = 0
    while same_head < min(len(old), len(new)) and old[same_head] == new[same_head]:
        same_head += 1
    same_tail = 0
    while (
        same_tail < min(len(old), len(new)) - same_head
        and old[-1 - same_tail] == new[-1 - same_tail]
    ):
        same_tail += 1
    if (len(old) - same_head - same_tail) * (len(new) - same_head - same_tail) > DIFF_PAIRS_MAX:
        return previous, _coarse_diff(old, new, same_head, same_tail), True
    lines = []
    diff = difflib.unified_diff(old, new, lineterm="", n=DIFF_CONTEXT)
    for index, line in enumerate(diff):
        if index < 2:
            continue  # the "---" / "+++" file header
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same")
        lines.append(DiffLine(kind, line))
    return previous, lines, False


def _coarse_diff(old: list[str], new: list[str], head: int, tail: int) -> list[DiffLine]:
    """One hunk: the lines between the `head` and `tail` lines both texts share removed, the
    new ones added, with the shared lines around them as context."""
    start = max(0, head - DIFF_CONTEXT)
    after = min(tail, DIFF_CONTEXT)
    old_end, new_end = len(old) - tail + after, len(new) - tail + after

    def span(first: int, end: int) -> str:
        count = end - first
        return f"{first + 1 if count else first},{count}"

    lines = [DiffLine("hunk", f"@@ -{span(start, old_end)} +{span(start, new_end)} @@")]
    lines += [DiffLine("same", " " + line) for line in old[start:head]]
    lines += [DiffLine("del", "-" + line) for line in old[head : len(old) - tail]]
    lines += [DiffLine("add", "+" + line) for line in new[head : len(new) - tail]]
    lines += [DiffLine("same", " " + line) for line in old[len(old) - tail : old_end]]
    return lines


def open_reports(slug: str) -> list[ProblemReport]:
    return list(
        ProblemReport.objects.filter(question__slug=slug, status=ProblemReport.Status.OPEN)
        .select_related("revision", "reporter")
        .order_by("-created_at")
    )


@dataclass(frozen=True)
class ConceptRow:
    slug: str
    title: str
    published: bool
    has_draft: bool  # a saved draft whose text differs from the stored note


def concept_rows() -> list[ConceptRow]:
    """Every concept note an instructor can open: stored ones and drafts never published."""
    drafts = {d.slug: d for d in Draft.objects.filter(kind=Draft.Kind.CONCEPT)}
    rows = []
    for concept in Concept.objects.all():
        draft = drafts.pop(concept.slug, None)
        changed = draft is not None and draft.text != concept_source_text(concept)
        rows.append(ConceptRow(concept.slug, concept.title, True, changed))
    rows += [ConceptRow(slug, slug, False, True) for slug in drafts]
    return sorted(rows, key=lambda r: r.slug)


def concept_source_text(concept: Concept) -> str:
    """A concept note as its file: the text it was loaded from, or (for a note loaded before
    that was kept) the file rebuilt from its fields."""
    if concept.source_text:
        return concept.source_text
    meta = {"slug": concept.slug, "title": concept.title, "summary": concept.summary}
    if concept.related:
        meta["related"] = list(concept.related)
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    return f"---\n{front}---\n{concept.body_markdown}\n"
