"""Writes for authoring: drafts, checks, publishing, preview attempts, files and problem reports.

A question's text goes one way to the database: `question_revision_publish` (interview), the
same function `load_content` calls, so a file loaded and the same text published from the
editor make the same revision.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from django.db import IntegrityError, transaction
from django.utils import timezone

from authoring.models import Draft, ProblemReport
from authoring.selectors import concept_source_text
from grading.offline import grade_offline
from grading.question_tests import (
    QuestionTestFailure,
    QuestionTestReport,
    question_tests_run,
)
from practice import services as flow
from practice.autosave import versioned_save
from practice.diagram import diagram_text, step_has_diagram
from practice.errors import FlowError
from practice.models import Attempt
from questionbank import STEP_KEYS, Problem, QuestionSpec
from questionbank.answer_test_writer import with_answer_test
from questionbank.files import (
    MAX_FILE_BYTES,
    ContentFile,
    parse_file,
    question_spec,
    validate_concept,
    validate_question,
)
from questionbank.rendering import render_markdown, render_question
from questionbank.spec import SLUG_MAX_CHARS, SLUG_RE
from questions.models import Concept, Question, QuestionRevision
from questions.services import concept_publish, question_revision_publish
from rate_limits import check_daily_quota, check_rate, user_client

QUESTION_TEMPLATE = Path(__file__).resolve().parent / "question_template.md"
TEMPLATE_SLUG_LINE = "slug: your-question-slug"
CONCEPT_TEMPLATE = Path(__file__).resolve().parent / "concept_template.md"
CONCEPT_TEMPLATE_SLUG_LINE = "slug: your-concept-slug"
PROBLEM_REPORTS_PER_MINUTE = 3
PROBLEM_REPORTS_PER_DAY = 30
REPORT_MESSAGE_MAX = 4000


# What happened, not what to do: the page says that, as it is reached (edit.html). A reload
# is the way on where the autosave is refused, but sends the text again where a Save was.
STALE_DRAFT = (
    "This draft was saved from another tab or by another instructor since you loaded it; "
    "your text here was not saved over it."
)
STALE_UPLOAD = (
    "This draft was saved from another tab or by another instructor since you loaded it; "
    "your file was not uploaded over it. The newer draft is below: upload the file again "
    "to replace it."
)


class AuthoringError(FlowError):
    """Something an instructor asked for that cannot be done; the message says why. A kind
    of the practice flow's refusal, as a save refused for a stale tab (StaleDraft) is, so a
    view catches every refused save one way."""


class PublishRefused(AuthoringError):
    """Publishing was refused: the text has problems or a question test fails (each at its
    line, for the editor to list)."""

    newer: int | None = None  # see NewerRevision

    def __init__(
        self, message: str, *, problems: list[Problem], failures: list[QuestionTestFailure]
    ):
        super().__init__(message)
        self.problems = problems
        self.failures = failures


class TryRefused(AuthoringError):
    """A preview attempt of the draft was refused: the text has problems (each at its line,
    for the editor to list)."""

    def __init__(self, message: str, *, problems: list[Problem]):
        super().__init__(message)
        self.problems = problems


class NewerRevision(PublishRefused):
    """Publishing the draft would replace a revision published after the draft began (by
    `load_content` from a release of the files, or another instructor): refused until the
    instructor has seen it and confirms, naming that revision (`newer`)."""

    def __init__(self, *, newer: int, base: int):
        super().__init__(
            f"Not published: revision {newer} was published after this draft began from "
            f"revision {base}, and publishing the draft would undo its changes. Compare them, "
            "copy into the draft what you want to keep, then publish again and confirm.",
            problems=[],
            failures=[],
        )
        self.newer = newer
        self.base = base


# --- checking a question's text --------------------------------------------------------


@dataclass
class QuestionCheck:
    """A question's text parsed and validated: its problems (file:line) and, when there are
    none, its typed spec and rendered HTML."""

    cf: ContentFile
    problems: list[Problem]
    spec: QuestionSpec | None = None
    rendered: dict = field(default_factory=dict)


def question_check(*, slug: str, text: str, render: bool = False) -> QuestionCheck:
    """Validate `text` as content/questions/<slug>.md (so a slug that differs from the
    question's is a problem), against the concept notes in the database."""
    cf = parse_file(f"{slug}.md", text)
    known = set(Concept.objects.values_list("slug", flat=True))
    problems = list(validate_question(cf, concept_slugs=known))
    check = QuestionCheck(cf, problems)
    if not problems:
        check.spec = question_spec(cf)
        if render:
            check.rendered = render_question(check.spec)
    return check


def question_tests(check: QuestionCheck) -> QuestionTestReport:
    """The question's own tests (its `tests:` key and the built-in ones) run offline, as
    `manage.py test_content` runs them. `check` must have no problems."""
    return question_tests_run(check.cf, check.spec, grader="rubric")


def test_failure_sentence(failure: QuestionTestFailure) -> str:
    return f"line {failure.line}: {failure.test}: expected {failure.expected}, got {failure.got}"


# --- drafts ------------------------------------------------------------------------------


def draft_text_normalise(text: str) -> str:
    """A textarea posts its lines with CRLF (the HTML spec says so): store LF, as files do.
    A leading byte order mark (pasted from a file a Windows editor saved) is not text: the
    published file drops it, so a draft keeping it would never match what was published."""
    return text.replace("\r\n", "\n").removeprefix("\ufeff")


@dataclass(frozen=True)
class NewFile:
    """How a new file of a kind starts: its shipped template (which validates), the template's
    slug line, the model a published one lives in, and an example slug for the refusal."""

    template: Path
    slug_line: str
    published: type[Question] | type[Concept]
    example: str


NEW_FILES = {
    Draft.Kind.QUESTION: NewFile(
        QUESTION_TEMPLATE, TEMPLATE_SLUG_LINE, Question, "rag-search-200qps"
    ),
    Draft.Kind.CONCEPT: NewFile(CONCEPT_TEMPLATE, CONCEPT_TEMPLATE_SLUG_LINE, Concept, "kv-wall"),
}


def draft_new(*, kind: str, slug: str, user) -> Draft:
    """A draft for a new file `slug` of `kind`, from its shipped template; AuthoringError for
    a bad slug or one already taken."""
    new = NEW_FILES[kind]
    slug = (slug or "").strip()
    if len(slug) > SLUG_MAX_CHARS:
        raise AuthoringError(
            f"This slug is {len(slug):,} characters; the limit is {SLUG_MAX_CHARS}, so nothing "
            "was created. Shorten it and create it again."
        )
    if not SLUG_RE.match(slug):
        raise AuthoringError(
            f"A slug is up to {SLUG_MAX_CHARS} lowercase letters, digits and hyphens, "
            f"e.g. '{new.example}'."
        )
    noun = Draft.Kind(kind).label.lower()
    taken = f"There is already a {noun} '{slug}': open it from the list."
    if (
        new.published.objects.filter(slug=slug).exists()
        or Draft.objects.filter(kind=kind, slug=slug).exists()
    ):
        raise AuthoringError(taken)
    text = new.template.read_text(encoding="utf-8").replace(new.slug_line, f"slug: {slug}", 1)
    try:
        with transaction.atomic():
            return Draft.objects.create(kind=kind, slug=slug, text=text, updated_by=user)
    except IntegrityError:  # another instructor created it since the check above
        raise AuthoringError(taken) from None


def question_new(*, slug: str, user) -> Draft:
    """A draft for a new question `slug` (`draft_new`)."""
    return draft_new(kind=Draft.Kind.QUESTION, slug=slug, user=user)


def _published_text(kind: str, slug: str) -> str | None:
    """The published file's text (a question's current revision, a stored concept note), or
    None when there is none."""
    if kind == Draft.Kind.CONCEPT:
        concept = Concept.objects.filter(slug=slug).first()
        return concept_source_text(concept) if concept else None
    question = Question.objects.select_related("current_revision").filter(slug=slug).first()
    revision = question.current_revision if question else None
    return revision.source_text if revision else None


def draft_open(kind: str, slug: str) -> Draft:
    """The file's draft; unsaved (version 0, the published text) when nobody edited it since
    it was published. AuthoringError for a slug with neither."""
    draft = Draft.objects.filter(kind=kind, slug=slug).first()
    if draft is not None:
        return draft
    text = _published_text(kind, slug)
    if text is None:
        raise AuthoringError(f"No {Draft.Kind(kind).label.lower()} '{slug}'.")
    return Draft(kind=kind, slug=slug, text=text)


def question_draft(slug: str) -> Draft:
    """The question's draft, as `draft_open` finds it."""
    return draft_open(Draft.Kind.QUESTION, slug)


def draft_save(
    *,
    kind: str,
    slug: str,
    text: str,
    base_version: int,
    user,
    base_revision: int | None = None,
    stale_message: str = STALE_DRAFT,
) -> Draft:
    """Save the draft if nobody saved a newer one since `base_version`; returns it.

    Raises StaleDraft when someone did (nothing is overwritten) and AuthoringError for a text
    larger than a content file may be. The first save of a file's draft creates it, its base
    the published revision the page loaded (`base_revision`, when the page says), else the
    current one: a revision published between the page's load and its first save is newer
    than the text.
    """
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        raise AuthoringError(f"This text is larger than {MAX_FILE_BYTES // 1024} KiB.")
    draft = Draft.objects.filter(kind=kind, slug=slug).first()
    if draft is None:  # the first save: the text began from the published revision
        current = _current_number(kind, slug)
        if base_revision is not None and current is not None:
            current = min(base_revision, current)
        draft = Draft(kind=kind, slug=slug, base_revision=current)
    draft, _written = versioned_save(
        draft,
        key={"kind": kind, "slug": slug},
        base_version=base_version,
        values={"text": text, "updated_by": user},
        same=lambda stored: stored.text == text,
        stale_message=stale_message,
    )
    return draft


def unpublished_refusal(*, refused: str, replacing: str, again: str) -> str:
    """The refusal of a text that would replace unpublished edits (`draft_unpublished`):
    `refused` ("Not uploaded"), what would replace them ("the file") and what to do again
    with the box ticked ("upload the file again")."""
    return (
        f"{refused}: this draft holds edits that are not published, and {replacing} would "
        'replace them, with no way back. Download the draft to keep a copy, or tick "Replace '
        f'my unpublished draft" and {again}. This draft is unchanged.'
    )


UNPUBLISHED_DRAFT = unpublished_refusal(
    refused="Not uploaded", replacing="the file", again="upload the file again"
)
UNPUBLISHED_RESTORE = unpublished_refusal(
    refused="Not restored", replacing="the revision", again="make it the draft again"
)


def draft_unpublished(*, kind: str, slug: str, draft: Draft | None = None) -> bool:
    """Whether the saved draft holds text that nothing else keeps: it differs from the
    published text or, with nothing published, it is neither empty nor the untouched template
    it began from. An upload replaces the one draft row the server keeps, so it asks first."""
    if draft is None:
        draft = Draft.objects.filter(kind=kind, slug=slug).first()
    if draft is None or not draft.pk:  # the published text itself, never saved as a draft
        return False
    published = _published_text(kind, slug)
    if published is not None:
        return draft.text != published
    new = NEW_FILES[kind]
    template = new.template.read_text(encoding="utf-8").replace(new.slug_line, f"slug: {slug}", 1)
    return bool(draft.text.strip()) and draft.text != template


def _refuse_over_unpublished(
    *, kind: str, slug: str, text: str, base_version: int, replace_unpublished: bool, message: str
) -> None:
    """AuthoringError(`message`) where saving `text` over the draft would replace edits not
    yet published (`draft_unpublished`) and the author did not tick that they mean it
    (`replace_unpublished`). A stale page's save is left to `draft_save`, which refuses it as
    stale (the newer draft is shown); one from a page that shows the draft asks first."""
    draft = Draft.objects.filter(kind=kind, slug=slug).first()
    if (
        not replace_unpublished
        and draft is not None
        and draft.version == base_version
        and draft.text != text
        and draft_unpublished(kind=kind, slug=slug, draft=draft)
    ):
        raise AuthoringError(message)


def draft_upload(
    *,
    kind: str,
    slug: str,
    name: str,
    data: bytes,
    base_version: int,
    user,
    replace_unpublished: bool = False,
) -> Draft:
    """An uploaded .md file (`name`, as the browser sent it) becomes the draft, byte for byte
    but for a leading byte order mark, which the published file would drop (its text is
    checked on the editor page like any other). AuthoringError for a file that is not a .md
    file, too large, not UTF-8 or no question (or concept note) file at all, and for one
    that would replace unpublished edits (`draft_unpublished`) unless `replace_unpublished`
    (the author ticked that they mean it): each says the draft is unchanged."""
    noun = Draft.Kind(kind).label.lower()
    if not name.lower().endswith(".md"):
        raise AuthoringError(
            f"{name[:80] or 'The file'} is not a .md file: choose the {noun}'s .md file. "
            "This draft is unchanged."
        )
    if len(data) > MAX_FILE_BYTES:
        raise AuthoringError(f"The file is larger than {MAX_FILE_BYTES // 1024} KiB.")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise AuthoringError(
            f"The file is not UTF-8 text (line {line}): save it as UTF-8 and upload it again. "
            "This draft is unchanged."
        ) from exc
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise AuthoringError(f"The file holds a NUL character (line {line}): is it text?")
    # An empty file is never a question or a note: taken as the draft, it would wipe the text.
    if not text.strip():
        raise AuthoringError(
            "The file is empty: choose the .md file with your text. This draft is unchanged."
        )
    cf = parse_file(f"{slug}.md", text)
    # A file that does not open a front-matter block is no content file at all (a note, a
    # README): taken as the draft, it would replace the whole text. One that opens a block
    # is the author's, mid-edit (a closing '---' lost, say): it goes in, and the editor says
    # what is wrong at its line. parse_file's problem says what is missing.
    opens = text.split("\n", 1)[0].strip() == "---"  # as parse_file reads a first line
    if cf.body_line == 1 and cf.problems and not opens:
        first = cf.problems[0]
        raise AuthoringError(
            f"The file is not a {noun} file: line {first.line}: {first.message}. "
            "This draft is unchanged."
        )
    # A file for another question or note would replace this draft with no way back; one
    # whose front matter is not valid YAML goes in, and the editor says what is wrong with it.
    named = cf.meta.get("slug")
    if not cf.meta:
        # A block the parser could not read (unclosed, not YAML) still names its question
        # in a slug line near its top.
        line = re.search(r"^slug:\s*['\"]?([\w-]+)", "\n".join(text.split("\n")[:40]), re.M)
        named = line.group(1) if line else None
    if isinstance(named, str) and named != slug:
        raise AuthoringError(
            f"This file is for '{named[:80]}', not '{slug}': open that one's editor to upload "
            "it, or change the file's slug line. This draft is unchanged."
        )
    _refuse_over_unpublished(
        kind=kind,
        slug=slug,
        text=text,
        base_version=base_version,
        replace_unpublished=replace_unpublished,
        message=UNPUBLISHED_DRAFT,
    )
    return draft_save(
        kind=kind,
        slug=slug,
        text=text,
        base_version=base_version,
        user=user,
        stale_message=STALE_UPLOAD,
    )


STALE_RESTORE = (
    "This draft was saved from another tab or by another instructor since you loaded this "
    "page; the revision was not made the draft over it. Open the editor to see the newer "
    "draft; to replace it with this revision, make the revision the draft again here."
)


def draft_restore(
    *, slug: str, number: int, base_version: int, user, replace_unpublished: bool = False
) -> tuple[Draft, QuestionRevision]:
    """The question's published revision `number` becomes its draft: a new draft version, saved
    as any other (`draft_save`, guarded by the `base_version` the page loaded). Refused, as an
    upload is, where it would replace unpublished edits unless `replace_unpublished`
    (`_refuse_over_unpublished`), and for a number that is no published revision; each
    refusal leaves the draft as it was. Returns (the draft, the revision)."""
    revision = QuestionRevision.objects.filter(
        question__slug=slug, number=number, is_published=True
    ).first()
    if revision is None:
        raise AuthoringError(f"There is no published revision {number} of this question.")
    kind = Draft.Kind.QUESTION
    _refuse_over_unpublished(
        kind=kind,
        slug=slug,
        text=revision.source_text,
        base_version=base_version,
        replace_unpublished=replace_unpublished,
        message=UNPUBLISHED_RESTORE,
    )
    draft = draft_save(
        kind=kind,
        slug=slug,
        text=revision.source_text,
        base_version=base_version,
        user=user,
        stale_message=STALE_RESTORE,
    )
    return draft, revision


def draft_same_as_published(*, kind: str, slug: str, text: str) -> str:
    """What `text` is the same as, byte for byte: "published revision 3" (a question's
    current revision), "the published note"; "" when it differs or nothing is published."""
    if kind == Draft.Kind.CONCEPT:
        return "the published note" if _published_text(kind, slug) == text else ""
    current = (
        Question.objects.filter(slug=slug, current_revision__isnull=False)
        .values_list("current_revision__number", "current_revision__source_text")
        .first()
    )
    return f"published revision {current[0]}" if current and current[1] == text else ""


def answer_test_verdicts(
    *, slug: str, step_key: str, answer: str, diagram: str = ""
) -> list[tuple[str, str, str]]:
    """(point id, what it says, the offline grader's verdict) for each rubric point of the
    draft's step, the answer graded with its `diagram`: the form that turns an answer into
    a test starts from these."""
    step = _draft_step(slug, step_key)
    offline = {p.id: p.verdict for p in _offline_points(step, answer, diagram)}
    return [(point.id, point.says, offline.get(point.id, "miss")) for point in step.rubric]


def _test_diagram(step, diagram: str) -> str:
    """The diagram an answer test of `step` carries: the candidate's, when the draft's step
    has a diagram box (a test of a step without one cannot carry a diagram)."""
    return diagram if diagram.strip() and step_has_diagram(step) else ""


def _offline_points(step, answer: str, diagram: str):
    """The offline grader's verdicts on an answer and its diagram, as a question test
    grades them."""
    return grade_offline(step, answer, diagram=_test_diagram(step, diagram)).points


def _draft_step(slug: str, step_key: str):
    draft = question_draft(slug)
    check = question_check(slug=slug, text=draft.text)
    if check.problems:
        raise AuthoringError(
            "Fix the draft's problems first: a test is added to the draft, which must validate."
        )
    try:
        return check.spec.step(step_key)
    except LookupError:
        raise AuthoringError(f"The draft has no step '{step_key}'.") from None


def draft_add_answer_test(
    *,
    slug: str,
    step_key: str,
    answer: str,
    expect: dict[str, str],
    name: str,
    user,
    diagram: str = "",
) -> Draft:
    """Add an answer test to the question's draft ("add a test from this attempt"): `expect`
    holds the human verdicts; where the offline grader gives another, the test records it as
    an expected offline verdict (what the model grader is for). The candidate's `diagram`
    goes with the answer (`diagram:`) when the step has a diagram box. Only the test's lines
    change in the file (questionbank.answer_test_writer)."""
    step = _draft_step(slug, step_key)
    ids = {point.id for point in step.rubric}
    if not expect or set(expect) - ids or set(expect.values()) - {"hit", "partial", "miss"}:
        raise AuthoringError("Give each rubric point of the step hit, partial or miss.")
    offline = {p.id: p.verdict for p in _offline_points(step, answer, diagram)}
    differs = {k: offline.get(k, "miss") for k, v in expect.items() if offline.get(k, "miss") != v}
    draft = question_draft(slug)
    # A form sent twice (a double click, a resubmit from history) would write the test twice.
    tests = parse_file(f"{slug}.md", draft.text).meta.get("tests") or {}
    if any(isinstance(t, dict) and t.get("name") == name for t in tests.get(step_key) or ()):
        raise AuthoringError(
            f"The draft already has the test '{name}' under tests: {step_key}: "
            "edit it there, and publish to keep it."
        )
    try:
        text = with_answer_test(
            draft.text,
            step_key,
            answer=answer,
            expect=expect,
            name=name,
            offline=differs or None,
            diagram=_test_diagram(step, diagram),
        )
    except ValueError as exc:
        raise AuthoringError(f"The test cannot be added to this file: {exc}.") from None
    return draft_save(
        kind=Draft.Kind.QUESTION, slug=slug, text=text, base_version=draft.version, user=user
    )


# --- publishing --------------------------------------------------------------------------


# The new-question template's lines that only say what to write: a valid file, so a draft may
# be previewed and tested as it stands, but no question for candidates.
TEMPLATE_PLACEHOLDERS = {
    "Write the scenario here:": "the scenario is still the template's; write your own",
    "Replace this line with what the business cares about.": (
        "this constraint is still the template's; write what the business cares about"
    ),
}
# The new concept note's, likewise: a valid note, but none for candidates to read.
CONCEPT_TEMPLATE_PLACEHOLDERS = {
    "title: Name the idea in a few words": "the title is still the template's; name the idea",
    "One sentence that says what the idea is and why a candidate needs it.": (
        "the summary is still the template's; say what the idea is in one sentence"
    ),
    "Explain the idea in your own words:": (
        "the explanation is still the template's; explain the idea in your own words"
    ),
}


def template_placeholders(
    slug: str, text: str, placeholders: dict[str, str] = TEMPLATE_PLACEHOLDERS
) -> list[Problem]:
    """A problem at each line of `text` that still holds one of the template's
    `placeholders` (the question template's unless told)."""
    return [
        Problem(f"{slug}.md", number, message)
        for number, line in enumerate(text.splitlines(), start=1)
        for placeholder, message in placeholders.items()
        if placeholder in line
    ]


def refusal_head(*, problems: int, failures: int = 0) -> str:
    """The line a refusal opens with: how many problems and failing tests it lists below."""
    counts = [f"{problems} problem{'s' if problems != 1 else ''}"] if problems else []
    if failures:
        counts.append(f"{failures} failing test{'s' if failures != 1 else ''}")
    return f"Not published: {' and '.join(counts)}."


def question_publish_check(*, slug: str, text: str, render: bool = False) -> QuestionCheck:
    """`question_check`, and once the text is valid, each placeholder of the template it still
    holds as a problem: every problem Publish refuses for. The live preview shows these, so
    it never calls publishable a text that Publish refuses. A text whose only problems are
    placeholders keeps its spec (and rendering): its tests run and it may be previewed."""
    check = question_check(slug=slug, text=text, render=render)
    if not check.problems:
        check.problems = template_placeholders(slug, text)
    return check


def question_publish(*, slug: str, text: str) -> tuple[QuestionRevision, bool]:
    """Publish `text` as the question's next revision: refused (PublishRefused, naming every
    problem and failing test) while the text has a problem (`question_publish_check`) or one
    of the question's tests fails. Returns (revision, created); the same text as the current
    revision publishes nothing new."""
    check = question_publish_check(slug=slug, text=text)
    # A text whose only problems are the template's placeholders is valid: its tests run, and
    # the refusal names their failures too, as the live preview does.
    failures = list(question_tests(check).failures) if check.spec is not None else []
    if check.problems or failures:
        # The head line counts them; the editor lists each one below it, once.
        raise PublishRefused(
            refusal_head(problems=len(check.problems), failures=len(failures)),
            problems=check.problems,
            failures=failures,
        )
    with transaction.atomic():
        _label, created = question_revision_publish(
            spec=check.spec,
            source_text=check.cf.text,
            meta=check.cf.meta,
            source_path=f"questions/{slug}.md",
        )
        question = Question.objects.select_related("current_revision").get(slug=slug)
    return question.current_revision, created


def _current_number(kind: str, slug: str) -> int | None:
    if kind != Draft.Kind.QUESTION:
        return None
    return (
        Question.objects.filter(slug=slug, current_revision__isnull=False)
        .values_list("current_revision__number", flat=True)
        .first()
    )


def question_draft_publish(
    *, draft: Draft, replace_newer: int | None = None
) -> tuple[QuestionRevision, bool]:
    """Publish the saved draft as `question_publish` does, unless a revision was published
    after the draft began from its base: NewerRevision, until `replace_newer` names that very
    revision (the instructor saw it; a third one published meanwhile is refused again).
    Returns (the current revision, whether it is new); the draft's base moves on to it."""
    current = _current_number(draft.kind, draft.slug)
    if (
        draft.base_revision is not None
        and current is not None
        and current > draft.base_revision
        and replace_newer != current
    ):
        newer = QuestionRevision.objects.get(
            question__slug=draft.slug, number=current, is_published=True
        )
        if newer.source_text != draft.text:
            raise NewerRevision(newer=current, base=draft.base_revision)
    revision, created = question_publish(slug=draft.slug, text=draft.text)
    Draft.objects.filter(pk=draft.pk).update(base_revision=revision.number)
    return revision, created


# --- concept notes ---------------------------------------------------------------------


@dataclass
class ConceptCheck:
    """A concept note's text validated: its problems and, when none, its rendered body."""

    cf: ContentFile
    problems: list[Problem]
    body_html: str = ""


def concept_check(*, slug: str, text: str, render: bool = False) -> ConceptCheck:
    """Validate `text` as content/concepts/<slug>.md against the notes in the database (and
    itself, so a note may be new); once it is valid, each placeholder of the template it still
    holds is a problem too: every problem Publish refuses for, so the live preview never calls
    publishable a note Publish refuses. A note whose only problems are placeholders is still
    rendered (`body_html`), for the preview."""
    cf = parse_file(f"{slug}.md", text)
    known = set(Concept.objects.values_list("slug", flat=True)) | {slug}
    check = ConceptCheck(cf, list(validate_concept(cf, concept_slugs=known)))
    if not check.problems:
        if render:
            check.body_html = render_markdown(cf.body)
        check.problems = template_placeholders(slug, text, CONCEPT_TEMPLATE_PLACEHOLDERS)
    return check


def concept_publish_text(*, slug: str, text: str) -> bool:
    """Publish a concept note (notes have no revisions: it is updated in place, the way
    `load_content` stores it). PublishRefused while it has a problem (`concept_check`, the
    template's placeholders included); False when unchanged."""
    check = concept_check(slug=slug, text=text)
    if check.problems:
        raise PublishRefused(
            refusal_head(problems=len(check.problems)), problems=check.problems, failures=[]
        )
    with transaction.atomic():
        return concept_publish(cf=check.cf)


# --- preview attempts --------------------------------------------------------------------


def preview_start(*, user, slug: str, text: str | None) -> Attempt:
    """A preview attempt for the instructor: of the published question when `text` is None,
    else of that draft text, stored as an unpublished revision no candidate can reach.
    No history, scorecard trend or statistic counts a preview attempt."""
    if text is None:
        question = Question.objects.select_related("current_revision").filter(slug=slug).first()
        if question is None or question.current_revision is None:
            raise AuthoringError("This question is not published yet: preview the draft.")
        return flow.attempt_start(user=user, revision=question.current_revision, is_preview=True)
    check = question_check(slug=slug, text=text)
    if check.problems:
        count = len(check.problems)
        them = "them" if count != 1 else "it"
        raise TryRefused(
            f"Not tried: the draft has {count} problem{'s' if count != 1 else ''}; "
            f"fix {them} first.",
            problems=check.problems,
        )
    digest = hashlib.sha256(check.cf.text.encode("utf-8")).hexdigest()
    with transaction.atomic():
        question, _ = Question.objects.get_or_create(slug=slug)
        revision = QuestionRevision.objects.filter(
            question=question, is_published=False, content_hash=digest
        ).first()
        if revision is None:
            spec = check.spec
            revision = QuestionRevision.objects.create(
                question=question,
                number=0,
                is_published=False,
                content_hash=digest,
                source_text=check.cf.text,
                source_path=f"questions/{slug}.md",
                title=spec.title,
                summary=spec.summary,
                difficulty=spec.difficulty,
                tags=list(spec.tags),
                spec=check.cf.meta,
                scenario_markdown=spec.scenario,
                rendered=render_question(spec),
            )
        return flow.attempt_start(user=user, revision=revision, is_preview=True)


# --- files -------------------------------------------------------------------------------


def content_export(*, root: Path) -> list[Path]:
    """Write every published question (its current revision's text, byte for byte) to
    root/questions/<slug>.md and every concept note to root/concepts/<slug>.md; the files
    written. `load_content root` afterwards finds nothing new."""
    written = []
    (root / "questions").mkdir(parents=True, exist_ok=True)
    (root / "concepts").mkdir(parents=True, exist_ok=True)
    for question in Question.objects.select_related("current_revision").exclude(
        current_revision=None
    ):
        path = root / "questions" / f"{question.slug}.md"
        path.write_bytes(question.current_revision.source_text.encode("utf-8"))
        written.append(path)
    for concept in Concept.objects.all():
        path = root / "concepts" / f"{concept.slug}.md"
        path.write_bytes(concept_source_text(concept).encode("utf-8"))
        written.append(path)
    return written


# --- problem reports ---------------------------------------------------------------------


def problem_report_create(
    *, user, attempt: Attempt, step_key: str, message: str, share_answer: bool
) -> ProblemReport:
    """A candidate's report on one step of the revision they are answering. Their answer to
    the step (its text and its diagram) goes with it only when `share_answer` (they ticked
    that they agree).

    Raises LimitExceeded past PROBLEM_REPORTS_PER_MINUTE or PROBLEM_REPORTS_PER_DAY, and
    AuthoringError for an empty or over-long message or an unknown step.
    """
    if step_key not in STEP_KEYS:
        raise AuthoringError("No such step.")
    # A form sends a line break as CRLF; the browser's maxlength counts it as one character.
    message = draft_text_normalise(message or "").strip()
    if not message:
        raise AuthoringError("Say what is wrong with this step, in a sentence or two.")
    if len(message) > REPORT_MESSAGE_MAX:
        raise AuthoringError(f"Keep the report under {REPORT_MESSAGE_MAX} characters.")
    client = user_client(user.pk)
    check_rate(client=client, action="problem report", per_minute=PROBLEM_REPORTS_PER_MINUTE)
    # Each report lands in the instructors' queue: a day's cap as well as a minute's.
    check_daily_quota(
        client=client,
        action="problem report",
        per_day=PROBLEM_REPORTS_PER_DAY,
        advice="Your instructors have them; send more tomorrow (UTC).",
    )
    answer_text = answer_diagram = ""
    if share_answer:
        text, fields = (
            attempt.answers.filter(step_key=step_key, follow_up_id="")
            .values_list("text", "fields")
            .first()
        ) or ("", {})
        answer_text, answer_diagram = text or "", diagram_text(fields)
    return ProblemReport.objects.create(
        question_id=attempt.revision.question_id,
        revision=attempt.revision,
        step_key=step_key,
        message=message,
        answer_text=answer_text,
        answer_diagram=answer_diagram,
        reporter=user,
    )


def problem_report_close(
    *, report: ProblemReport, user, fixed_in: QuestionRevision | None = None
) -> ProblemReport:
    """Close an open report, citing the published revision of its question that fixed it (if
    any). AuthoringError for a report already closed (another tab's Close, or another
    instructor's): who closed it, and with which revision, stays as they said."""
    if fixed_in is not None and (
        fixed_in.question_id != report.question_id or not fixed_in.is_published
    ):
        raise AuthoringError("The fixing revision must be a published revision of this question.")
    values = {
        "status": ProblemReport.Status.CLOSED,
        "closed_at": timezone.now(),
        "closed_by": user,
        "fixed_in": fixed_in,
    }
    # The UPDATE's own WHERE clause decides: of two Closes at once, only one matches.
    closed = ProblemReport.objects.filter(pk=report.pk, status=ProblemReport.Status.OPEN).update(
        **values
    )
    if not closed:
        report.refresh_from_db()
        who = report.closed_by.get_username() if report.closed_by else "someone"
        when = f" on {report.closed_at:%b %-d, %H:%M} UTC" if report.closed_at else ""
        raise AuthoringError(f"This report was already closed by {who}{when}; it is unchanged.")
    for name, value in values.items():
        setattr(report, name, value)
    return report
