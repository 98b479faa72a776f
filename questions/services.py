"""Writes: loading content into the database."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from questionbank import ContentTree, Problem, QuestionSpec, read_tree
from questionbank.files import ContentFile, question_spec
from questionbank.rendering import render_markdown, render_question
from questions.models import Concept, Question, QuestionRevision
from questions.selectors import concepts_cache_clear


@dataclass
class LoadReport:
    created: list[str] = field(default_factory=list)  # "slug r1"
    unchanged: list[str] = field(default_factory=list)
    # Files holding an older revision's text than the current one (published since, e.g. in
    # the editor): kept back, not published over the newer revision.
    behind: list[str] = field(default_factory=list)
    concepts_saved: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def content_load(*, root: Path) -> LoadReport:
    """Validate every file under `root`, then store it; nothing is stored when any file is bad.

    Idempotent: a question whose file is unchanged keeps its revision; an edited file becomes
    a new immutable revision, which becomes current. A file whose text is an older published
    revision of its question is behind the database (a release of the files after an
    instructor published in the editor): it is reported in `behind` and changes nothing.
    Concepts are updated in place.
    """
    known = set(Concept.objects.values_list("slug", flat=True))
    return content_store(read_tree(root, known_concepts=known))


def content_store(tree: ContentTree) -> LoadReport:
    """Store a read and validated content tree, as `content_load` does (which reads the files
    first); nothing is stored when the tree has problems. The tree is only read, so one parse
    may be stored many times (the test suite stores one per test)."""
    report = LoadReport(problems=tree.problems)
    if tree.problems:
        return report
    with transaction.atomic():
        for cf in tree.concepts:
            if concept_publish(cf=cf):
                report.concepts_saved.append(cf.meta["slug"])
        for cf in tree.questions:
            older = _older_revision_with_text(cf.meta["slug"], cf.text)
            if older is not None:
                report.behind.append(older)
                continue
            label = question_revision_publish(
                spec=question_spec(cf),
                source_text=cf.text,
                meta=cf.meta,
                source_path=str(cf.path),
            )
            (report.created if label[1] else report.unchanged).append(label[0])
    return report


def _older_revision_with_text(slug: str, text: str) -> str | None:
    """ "slug rN" when `text` is a published revision of the question older than its current
    one, else None."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    question = Question.objects.filter(slug=slug).select_related("current_revision").first()
    if question is None or question.current_revision is None:
        return None
    if question.current_revision.content_hash == digest:
        return None
    older = question.revisions.filter(is_published=True, content_hash=digest).first()
    if older is None:
        return None
    return f"{slug} r{older.number} (current: r{question.current_revision.number})"


def concept_publish(*, cf: ContentFile) -> bool:
    """Store a validated concept note (updated in place; its HTML rendered once, here).
    False when the stored note already has exactly this text."""
    digest = cf.content_hash
    concept = Concept.objects.filter(slug=cf.meta["slug"]).first()
    if concept and concept.content_hash == digest:
        return False
    Concept.objects.update_or_create(
        slug=cf.meta["slug"],
        defaults={
            "title": cf.meta["title"],
            "summary": cf.meta["summary"],
            "related": cf.meta.get("related", []),
            "body_markdown": cf.body,
            "body_html": render_markdown(cf.body),
            "source_text": cf.text,
            "content_hash": digest,
        },
    )
    transaction.on_commit(concepts_cache_clear)
    return True


def question_revision_publish(
    *, spec: QuestionSpec, source_text: str, meta: dict, source_path: str = ""
) -> tuple[str, bool]:
    """Publish a question's text as a new revision unless it equals the current one.

    `meta` is the file's validated front matter (stored as JSON, the revision's typed spec is
    built from it) and `spec` the same, typed. Returns ("slug rN", created).
    """
    slug = spec.slug
    digest = hashlib.sha256(source_text.encode("utf-8")).hexdigest()
    question, _ = Question.objects.select_for_update().get_or_create(slug=slug)
    current = question.current_revision
    if current is not None and current.content_hash == digest:
        return f"{slug} r{current.number}", False
    last = question.revisions.filter(is_published=True).order_by("-number").first()
    revision = QuestionRevision.objects.create(
        question=question,
        number=(last.number + 1) if last else 1,
        content_hash=digest,
        source_text=source_text,
        source_path=source_path,
        title=spec.title,
        summary=spec.summary,
        difficulty=spec.difficulty,
        tags=list(spec.tags),
        spec=meta,
        scenario_markdown=spec.scenario,
        rendered=render_question(spec),
    )
    question.current_revision = revision
    question.save(update_fields=["current_revision"])
    return f"{slug} r{revision.number}", True
