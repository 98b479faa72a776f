"""The tests inside a question file (its `tests:` key), run against the graders.

    question_tests_run(cf, spec, grader="rubric" | "llm", config=None) -> QuestionTestReport
    content_tests_run(root, grader=..., config=None) -> ContentTestReport  (a file or a tree)

Three kinds of test (content/README.md, "Tests"):
- answer tests, per step or tradeoffs follow-up: an answer and the verdict a human expert
  gives on each rubric point (`expect`), with `offline` naming the verdicts the offline grader
  is known to give instead (a paraphrase its phrase lists cannot see: the model grader's job),
  and `flags` the step's misconceptions the answer states (the offline grader must flag each
  and hit no point it contradicts; a test of flags alone is not sent to the model);
- napkin tests, under `estimate`: an expression for a quantity and the checker's verdict, the
  known mistake's kind and words of its hint, exactly as the worksheet's Check button judges it;
- built in, for every step and follow-up with no authoring: the reference answer (with its
  reference diagram) scores at least 0.8 offline, an empty answer and an off-topic one at
  most 0.2; where the step has a reference diagram and diagram rules, the reference
  diagram alone (no prose) earns a hit on every point with a diagram rule; and every
  misconception of a step is stated by one of its answer tests (`flags`).

With grader "rubric" answer tests expect the offline verdicts (`expect` overlaid with
`offline`); with "llm" they go through the model grader and expect the human verdicts. Every
result keeps the grader, model and prompt version that produced it, so a caller can store it.
Each failure points at its test in the file (file:line). No Django imports.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from grading.config import GraderConfig
from grading.inflight import each_inflight
from grading.offline import RUBRIC_GRADER_VERSION, grade_offline
from grading.types import GradeResult, step_misconceptions
from questionbank.files import ContentFile, parse_file, question_spec, read_tree
from questionbank.spec import FollowUp, QuestionSpec, StepSpec

TestGrader = Literal["rubric", "llm"]

REFERENCE_MIN_SCORE = 0.8
JUNK_MAX_SCORE = 0.2
# Nothing of LLM serving in it: no rubric of a design question should find anything here.
OFF_TOPIC_ANSWER = (
    "Sourdough wants a long, cool proof overnight. Fold the dough gently a few times, shape "
    "it into a tight ball, and bake it in a very hot oven until the crust turns dark brown."
)
CHECKER_VERSION = "napkin-checker"
# The `test` of a failure that is a validation problem of the file, not a test that ran.
VALIDATION = "validation"


class GraderUnavailable(Exception):
    """The model grader was asked for, but none is configured (no GRADER_BASE_URL)."""


@dataclass(frozen=True)
class QuestionTestFailure:
    """One failed test: where it is written, what it expected and what the grader said."""

    file: str
    line: int
    test: str
    expected: str
    got: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        if self.test == VALIDATION:
            return f"{self.file}:{self.line}: {self.got}"
        return f"{self.file}:{self.line}: {self.test}: expected {self.expected}, got {self.got}"


@dataclass(frozen=True)
class QuestionTestResult:
    """One test, passed or not, with what produced its verdicts.

    `kind` is "answer", "napkin" or "builtin"; `part` the step key or follow-up id;
    `grader` "rubric", "llm" or "checker" (napkin tests); `verdicts` point id -> verdict for
    graded answers, or {"verdict", "mistake", "hint"} for a napkin test. `fallback_reason` is
    set when the model grader was asked for and the offline grade stood in.
    """

    test: str
    part: str
    kind: str
    file: str
    line: int
    grader: str
    model: str | None
    prompt_version: str
    score: float | None = None
    verdicts: dict[str, str] = field(default_factory=dict)
    fallback_reason: str | None = None
    failure: QuestionTestFailure | None = None

    @property
    def passed(self) -> bool:
        return self.failure is None

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}


@dataclass(frozen=True)
class QuestionTestReport:
    """Every test of one question file, in the file's order (built-ins first per part)."""

    file: str
    slug: str
    grader: str
    results: tuple[QuestionTestResult, ...]

    @property
    def tests(self) -> int:
        return len(self.results)

    @property
    def failures(self) -> tuple[QuestionTestFailure, ...]:
        return tuple(r.failure for r in self.results if r.failure is not None)

    @property
    def passed(self) -> bool:
        return not self.failures

    def parts_tested(self) -> set[str]:
        """Steps and follow-ups with at least one authored test (built-ins not counted)."""
        return {r.part for r in self.results if r.kind != "builtin"}


@dataclass(frozen=True)
class ContentTestReport:
    """The tests of every question under a path, plus the validation problems that kept a
    file from being tested (each one a failure at its file:line)."""

    questions: int
    reports: tuple[QuestionTestReport, ...]
    problems: tuple[QuestionTestFailure, ...]

    @property
    def tests(self) -> int:
        return sum(r.tests for r in self.reports) + len(self.problems)

    @property
    def failures(self) -> tuple[QuestionTestFailure, ...]:
        return self.problems + tuple(f for r in self.reports for f in r.failures)

    def as_dict(self) -> dict[str, Any]:
        """The `test_content --json` object."""
        failures = self.failures
        graded_by = Counter(
            (r.grader, r.model or "", r.prompt_version) for rep in self.reports for r in rep.results
        )
        return {
            "questions": self.questions,
            "tests": self.tests,
            "failed": len(failures),
            "failures": [f.as_dict() for f in failures],
            # What produced the verdicts (a model's name and prompt version with --grader llm),
            # so a stored run says which grader it measured.
            "graded_by": [
                {"grader": g, "model": m, "prompt_version": v, "tests": n}
                for (g, m, v), n in sorted(graded_by.items())
            ],
        }


# --- running ----------------------------------------------------------------------------------


def _parts(spec: QuestionSpec) -> list[tuple[str, StepSpec | FollowUp, tuple]]:
    """Every gradable part: (step key or follow-up id, the part, its path in the file)."""
    out: list[tuple[str, StepSpec | FollowUp, tuple]] = []
    for step in spec.steps:
        out.append((step.key, step, ("steps", step.key)))
        for i, follow_up in enumerate(step.follow_ups):
            out.append((follow_up.id, follow_up, ("steps", step.key, "follow_ups", i)))
    return out


def _context(spec: QuestionSpec, part_key: str, part: StepSpec | FollowUp) -> dict[str, Any]:
    """What the model grader is told about the question (as the `grade` command does)."""
    context: dict[str, Any] = {
        "slug": spec.slug,
        "title": spec.title,
        "brief": spec.brief.as_dict(),
        "step_key": part_key if isinstance(part, StepSpec) else "tradeoffs",
    }
    if isinstance(part, FollowUp):
        context["follow_up"] = part.id
    return context


def _builtins(cf: ContentFile, key: str, part: StepSpec | FollowUp, path: tuple) -> list:
    results = []
    checks = (
        ("reference", part.reference, (*path, "reference"), "at least", REFERENCE_MIN_SCORE),
        ("empty answer", "", (*path, "rubric"), "at most", JUNK_MAX_SCORE),
        ("off-topic answer", OFF_TOPIC_ANSWER, (*path, "rubric"), "at most", JUNK_MAX_SCORE),
    )
    reference_diagram = getattr(part, "reference_diagram", "")
    for what, answer, line_path, bound, limit in checks:
        grade = grade_offline(
            part, answer, diagram=reference_diagram if what == "reference" else ""
        )
        ok = grade.score >= limit if bound == "at least" else grade.score <= limit
        name = f"{key}: built-in, the {what} scores {bound} {limit:g} offline"
        line = cf.line_of(*line_path)
        failure = None
        if not ok:
            if bound == "at least":
                # With the grader's reason, its comment less the point's own words ("Missing
                # (named only in a bare list of terms, …)"): the author sees what to change in
                # the reference, not just which point it misses.
                says = {point.id: point.says for point in part.rubric}
                detail = "not hit: " + "; ".join(
                    f"{p.id} ({p.comment.removesuffix(': ' + says.get(p.id, ''))})"
                    if p.comment
                    else p.id
                    for p in grade.points
                    if p.verdict != "hit"
                )
            else:
                earned = (f"{p.id} {p.verdict}" for p in grade.points if p.verdict != "miss")
                detail = "earned: " + ", ".join(earned)
            failure = QuestionTestFailure(
                cf.path, line, name, f"score {bound} {limit:g}", f"{grade.score:g} ({detail})"
            )
        results.append(_builtin_result(cf, key, name, line, grade, failure))
    ruled = [p.id for p in part.rubric if p.diagram is not None]
    if reference_diagram and ruled:
        results.append(_reference_diagram_builtin(cf, key, part, path, ruled))
    return results


def _builtin_result(
    cf: ContentFile,
    key: str,
    name: str,
    line: int,
    grade: GradeResult | None,
    failure: QuestionTestFailure | None,
    verdicts: dict[str, str] | None = None,
) -> QuestionTestResult:
    """A built-in test's result, offline: a graded answer's score and the verdict of every
    point, or (no `grade`) what a static check found, in `verdicts`."""
    return QuestionTestResult(
        test=name,
        part=key,
        kind="builtin",
        file=cf.path,
        line=line,
        grader="rubric",
        model=None,
        prompt_version=RUBRIC_GRADER_VERSION,
        score=grade.score if grade else None,
        verdicts={p.id: p.verdict for p in grade.points} if grade else verdicts or {},
        failure=failure,
    )


def _reference_diagram_builtin(
    cf: ContentFile, key: str, part: StepSpec | FollowUp, path: tuple, ruled: list[str]
) -> QuestionTestResult:
    """The reference diagram alone earns a hit on every point that has a diagram rule: the
    rules and the diagram an author wrote agree."""
    grade = grade_offline(part, "", diagram=part.reference_diagram)
    got = {p.id: p.verdict for p in grade.points}
    short = [pid for pid in ruled if got[pid] != "hit"]
    name = f"{key}: built-in, the reference diagram alone hits every diagram point offline"
    line = cf.line_of(*path, "reference_diagram")
    failure = None
    if short:
        reasons = {p.id: p.comment for p in grade.points}
        failure = QuestionTestFailure(
            cf.path,
            line,
            name,
            ", ".join(f"{pid}: hit" for pid in short),
            "; ".join(f"{pid}: {got[pid]} ({reasons[pid]})" for pid in short)
            + "".join(f"; {w}" for w in grade.warnings),
        )
    return _builtin_result(cf, key, name, line, grade, failure)


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _test_name(key: str, index: int, entry: dict[str, Any]) -> str:
    name = str(entry.get("name") or "").strip()
    return f"{key} test {index + 1}" + (f" ({name})" if name else "")


def _answer_test(
    cf: ContentFile,
    spec: QuestionSpec,
    key: str,
    part: StepSpec | FollowUp,
    index: int,
    entry: dict[str, Any],
    grader: TestGrader,
    config: GraderConfig | None,
) -> QuestionTestResult:
    tpath = ("tests", key, index)
    answer = str(entry.get("answer") or "")
    diagram = str(entry.get("diagram") or "")
    expect = {str(k): str(v) for k, v in _mapping(entry.get("expect")).items()}
    if grader == "llm":
        from grading import grade

        context = _context(spec, key, part)
        result = grade(part, answer, mode="llm", context=context, config=config, diagram=diagram)
        wanted = expect
    else:
        result = grade_offline(part, answer, diagram=diagram)
        offline = _mapping(entry.get("offline"))
        wanted = {**expect, **{str(k): str(v) for k, v in offline.items()}}
    got = {p.id: p.verdict for p in result.points}
    wrong = [pid for pid in wanted if got.get(pid, "miss") != wanted[pid]]
    name = _test_name(key, index, entry)
    failure = None
    unflagged = _unflagged(part, result, entry) if grader != "llm" else None
    if result.fallback_reason and grader == "llm":
        failure = QuestionTestFailure(
            cf.path,
            cf.line_of(*tpath),
            name,
            "verdicts from the model grader",
            f"the offline grade stood in: {result.fallback_reason}",
        )
    elif wrong:
        # The line of the first verdict that did not hold (in `offline` when it overrides).
        first = wrong[0]
        overridden = grader != "llm" and first in _mapping(entry.get("offline"))
        where = "offline" if overridden else "expect"
        failure = QuestionTestFailure(
            cf.path,
            cf.line_of(*tpath, where, first),
            name,
            ", ".join(f"{pid}: {wanted[pid]}" for pid in wrong),
            ", ".join(f"{pid}: {got.get(pid, 'miss')}" for pid in wrong),
        )
    elif unflagged:
        failure = QuestionTestFailure(cf.path, cf.line_of(*tpath, "flags"), name, *unflagged)
    return QuestionTestResult(
        test=name,
        part=key,
        kind="answer",
        file=cf.path,
        line=cf.line_of(*tpath),
        grader=result.grader,
        model=result.model,
        prompt_version=result.prompt_version,
        score=result.score,
        verdicts=got,
        fallback_reason=result.fallback_reason,
        failure=failure,
    )


def _unflagged(
    part: StepSpec | FollowUp, result: GradeResult, entry: dict[str, Any]
) -> tuple[str, str] | None:
    """(expected, got) where the offline grade misses a wrong idea the test's answer states
    (its `flags`), or still hits a point that idea contradicts; None when it holds."""
    flags = [str(f) for f in entry.get("flags") or () if isinstance(f, str)]
    if not flags:
        return None
    found = {m.id for m in result.misconceptions}
    missed = [f for f in flags if f not in found]
    if missed:
        return (
            "flags " + ", ".join(missed),
            "flagged " + (", ".join(sorted(found)) or "nothing"),
        )
    contradicted = {
        point for m in step_misconceptions(part) if m.id in flags for point in m.contradicts
    }
    hit = sorted(p.id for p in result.points if p.id in contradicted and p.verdict == "hit")
    if hit:
        return ("no hit on a point a flagged idea contradicts", ", ".join(f"{p}: hit" for p in hit))
    return None


def _wrong_ideas_builtin(
    cf: ContentFile, key: str, step: StepSpec, entries: list, path: tuple
) -> QuestionTestResult:
    """Every wrong idea a step ships is stated by at least one of its answer tests (`flags`),
    so each recogniser is seen to fire on a candidate's own words."""
    stated = {
        str(f)
        for entry in entries
        if isinstance(entry, dict)
        for f in entry.get("flags") or ()
        if isinstance(f, str)
    }
    unstated = [m.id for m in step.misconceptions if m.id not in stated]
    name = f"{key}: built-in, every misconception is stated by a test's flags"
    line = cf.line_of(*path, "misconceptions")
    failure = None
    if unstated:
        failure = QuestionTestFailure(
            cf.path,
            line,
            name,
            "an answer test flagging each misconception",
            "none flags " + ", ".join(unstated),
        )
    verdicts = {m.id: "stated" if m.id in stated else "unstated" for m in step.misconceptions}
    return _builtin_result(cf, key, name, line, None, failure, verdicts)


def napkin_check(step: StepSpec, quantity_id: str, expression: str, worksheet: str = "") -> dict:
    """The Check button's judgement of one quantity (practice.napkin.quantity_verdict,
    without an attempt or an SLO card): {verdict, mistake, hint, value, unit}. Raises
    LookupError for an unknown quantity and NapkinError for an input that does not evaluate."""
    from planner.engine import check_quantity, evaluate_worksheet, givens_from_estimate

    quantity = step.quantity(quantity_id)
    givens = {g.name: g.value for g in step.givens}
    env = {}
    if worksheet.strip():
        for line in evaluate_worksheet(worksheet.split("\n"), givens):
            if line.name and line.quantity is not None:
                env[line.name] = line.quantity
    result = check_quantity(
        quantity.as_dict(),
        expression,
        givens_from_estimate(step.estimate_dict(), upto=quantity_id),
        worksheet_env=env,
        given_labels={g.name: g.label for g in step.givens},
        worksheet_lines=worksheet.split("\n") if worksheet else None,
    )
    return {
        "verdict": result.verdict,
        "mistake": result.mistake or "",
        "hint": result.hint or "",
        "value": result.value,
        "unit": result.unit,
    }


def _napkin_test(
    cf: ContentFile, step: StepSpec, index: int, entry: dict[str, Any]
) -> QuestionTestResult:
    from planner.engine import NapkinError

    tpath = ("tests", "estimate", index)
    name = _test_name("estimate", index, entry) + f": {entry.get('quantity')}"
    try:
        check = napkin_check(
            step,
            str(entry.get("quantity")),
            str(entry.get("answer") or ""),
            str(entry.get("worksheet") or ""),
        )
    except (LookupError, NapkinError) as exc:
        check = {"verdict": f"an error ({exc})", "mistake": "", "hint": ""}
    wanted_mistake = str(entry.get("mistake") or "")
    wanted_hint = str(entry.get("hint") or "")
    failure = None
    if check["verdict"] != str(entry.get("verdict")):
        failure = ("verdict", f"verdict {entry.get('verdict')}", f"verdict {check['verdict']}")
    elif wanted_mistake and check["mistake"] != wanted_mistake:
        failure = (
            "mistake",
            f"mistake {wanted_mistake}",
            f"mistake {check['mistake'] or '(none)'}",
        )
    elif wanted_hint and wanted_hint.casefold() not in check["hint"].casefold():
        failure = ("hint", f"a hint saying {wanted_hint!r}", f"hint {check['hint']!r}")
    got = {k: str(check.get(k) or "") for k in ("verdict", "mistake", "hint")}
    return QuestionTestResult(
        test=name,
        part="estimate",
        kind="napkin",
        file=cf.path,
        line=cf.line_of(*tpath),
        grader="checker",
        model=None,
        prompt_version=CHECKER_VERSION,
        verdicts=got,
        failure=QuestionTestFailure(
            cf.path, cf.line_of(*tpath, failure[0]), name, failure[1], failure[2]
        )
        if failure
        else None,
    )


def question_tests_run(
    cf: ContentFile,
    spec: QuestionSpec,
    *,
    grader: TestGrader = "rubric",
    config: GraderConfig | None = None,
) -> QuestionTestReport:
    """Run every test of a validated question file: built-ins, answer tests, napkin tests.

    `cf` is the parsed file (for its `tests:` and its lines), `spec` its typed question.
    grader "llm" sends the answer tests to the model grader of `config` and raises
    GraderUnavailable when no model is configured; built-in and napkin tests never need one.
    """
    if grader not in ("rubric", "llm"):
        raise ValueError(f"unknown grader {grader!r} (rubric or llm)")
    if grader == "llm" and (config is None or not config.configured):
        raise GraderUnavailable(
            "the model grader is not configured (set GRADER_BASE_URL to an OpenAI-compatible "
            "endpoint); run the tests with the rubric grader instead"
        )
    # Meant for a validated file; anything else is skipped rather than crashing the run.
    tests = _mapping(cf.meta.get("tests"))
    results: list[QuestionTestResult | None] = []
    answer_tests: list[tuple[int, tuple]] = []  # (place in results, _answer_test's arguments)
    for key, part, path in _parts(spec):
        results += _builtins(cf, key, part, path)
        entries = tests.get(key)
        if isinstance(part, StepSpec) and part.misconceptions:
            stated_in = entries if isinstance(entries, list) else []
            results.append(_wrong_ideas_builtin(cf, key, part, stated_in, path))
        for index, entry in enumerate(entries if isinstance(entries, list) else ()):
            if not isinstance(entry, dict):
                continue
            if "quantity" in entry and isinstance(part, StepSpec):
                results.append(_napkin_test(cf, part, index, entry))
            elif grader == "llm" and not entry.get("expect"):
                continue  # flags alone: checked offline; the model would grade for nothing
            else:
                answer_tests.append((len(results), (key, part, index, entry)))
                results.append(None)
    # The model grades several answer tests at once; the offline grader is plain CPU work.
    limit = config.max_inflight if grader == "llm" else 1
    graded = each_inflight(
        lambda args: _answer_test(cf, spec, *args, grader, config),
        (args for _, args in answer_tests),
        limit,
    )
    for (place, _), result in zip(answer_tests, graded, strict=True):
        results[place] = result
    return QuestionTestReport(cf.path, spec.slug, grader, tuple(results))


def content_tests_run(
    root: Path | str,
    *,
    grader: TestGrader = "rubric",
    config: GraderConfig | None = None,
    known_concepts: set[str] | None = None,
) -> ContentTestReport:
    """Validate and test every question under `root` (a content directory, its questions
    folder, or one question file). A file with validation problems is not run; its problems
    are failures at their file:line. GraderUnavailable as for `question_tests_run`."""
    root = Path(root)
    if root.is_dir() and not (root / "questions").is_dir() and root.name == "questions":
        root = root.parent
    tree = read_tree(root, known_concepts=known_concepts)
    problems = tuple(
        QuestionTestFailure(p.path, p.line, VALIDATION, "a valid file", p.message)
        for p in tree.problems
    )
    broken = {p.path for p in tree.problems}
    reports = []
    for cf in tree.questions:
        if cf.path in broken:
            continue
        reports.append(question_tests_run(cf, question_spec(cf), grader=grader, config=config))
    return ContentTestReport(len(tree.questions), tuple(reports), problems)


def question_file_tests_run(
    path: Path | str,
    text: str | None = None,
    *,
    grader: TestGrader = "rubric",
    config: GraderConfig | None = None,
) -> QuestionTestReport:
    """Parse one question file (from `path`, or `text` when given) and run its tests. Raises
    ValueError with the first problem when the file does not validate."""
    from questionbank.files import validate_question

    cf = parse_file(path, text)
    problems = validate_question(cf, concept_slugs=None)
    if problems:
        raise ValueError(str(problems[0]))
    return question_tests_run(cf, question_spec(cf), grader=grader, config=config)
