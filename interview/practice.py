"""Reads for the practice flow: what each step page, feedback panel and scorecard shows."""

from __future__ import annotations

import html
import re
from collections import defaultdict

from django.db.models import F, Prefetch
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from interview import selectors
from interview.content import STEP_KEYS
from interview.flow import FlowError
from interview.models import Attempt, Grade, StepAnswer, Submission
from interview.slo import SLO_FIELDS, TEXT_FIELDS, review_card

CARD_FIELDS = [f for f, *_ in SLO_FIELDS] + [f for f, _ in TEXT_FIELDS] + ["qps_kind"]
CREDIT = {"hit": 1.0, "partial": 0.5, "miss": 0.0}


# --- forms ------------------------------------------------------------------------------


def fields_from_post(step: str, post) -> dict:
    """The structured part of an answer form: the SLO card, or the napkin worksheet."""
    if step == "clarify":
        fields = {name: str(post.get(name, ""))[:200].strip() for name in CARD_FIELDS}
        if fields["qps_kind"] not in ("peak", "mean"):
            fields["qps_kind"] = "peak"
        return fields
    if step == "estimate":
        return {"worksheet": str(post.get("worksheet", ""))}
    return {}


# --- navigation -------------------------------------------------------------------------


def step_url(attempt: Attempt, step: str, follow_up: str = "") -> str:
    if follow_up:
        return reverse(
            "attempt_follow_up",
            kwargs={"attempt_id": attempt.pk, "step": step, "follow_up": follow_up},
        )
    return reverse("attempt_step", kwargs={"attempt_id": attempt.pk, "step": step})


def _submitted_keys(attempt: Attempt) -> set[tuple[str, str]]:
    return set(
        Submission.objects.filter(answer__attempt=attempt).values_list(
            "answer__step_key", "answer__follow_up_id"
        )
    )


def next_step(attempt: Attempt) -> str:
    """The first step without a submission (the last step when all are done)."""
    done = {key for key, _ in _submitted_keys(attempt)}
    return next((key for key in STEP_KEYS if key not in done), STEP_KEYS[-1])


def step_context(*, attempt: Attempt, answer: StepAnswer) -> dict:
    """Everything the step page shows: the prompt, the editor, feedback so far, navigation."""
    revision = attempt.revision
    steps = selectors.question_steps(revision)
    current = steps[STEP_KEYS.index(answer.step_key)]
    submitted = _submitted_keys(attempt)
    for s in steps:
        s["submitted"] = any(key == s["key"] for key, _ in submitted)
        s["url"] = step_url(attempt, s["key"])
    spec = revision.step(answer.step_key)
    context = {
        "attempt": attempt,
        "revision": revision,
        "answer": answer,
        "steps": steps,
        "step": current,
        "previous": steps[current["number"] - 2] if current["number"] > 1 else None,
        "next": steps[current["number"]] if current["number"] < len(steps) else None,
        "draft_url": _action_url("attempt_draft", attempt, answer),
        "submit_url": _action_url("attempt_submit", attempt, answer),
        "follow_up": None,
        "all_submitted": all(s["submitted"] for s in steps),
        "submitted_count": sum(1 for s in steps if s["submitted"]),
    }
    if answer.follow_up_id:
        fu = next(f for f in spec["follow_ups"] if f["id"] == answer.follow_up_id)
        context["follow_up"] = {
            "id": fu["id"],
            "prompt_html": revision.rendered["steps"]["tradeoffs"]["follow_ups"][fu["id"]][
                "prompt"
            ],
        }
    if answer.step_key == "tradeoffs":
        context["follow_ups"] = _follow_up_states(attempt, spec, submitted)
    if answer.step_key == "clarify":
        context["card"] = _card_form(answer.fields)
    if answer.step_key == "estimate":
        context["givens"] = spec.get("givens", [])
        context["quantities"] = [
            {**q, "check": (answer.fields.get("checks") or {}).get(q["id"])}
            for q in spec.get("quantities", [])
        ]
        context["worksheet_text"] = answer.fields.get("worksheet", "")
        context["predefined"] = _card_names(attempt)
        try:
            context["worksheet_lines"] = worksheet_lines(
                attempt=attempt, text=context["worksheet_text"]
            )
        except FlowError as exc:
            context["worksheet_error"] = str(exc)
    latest = answer.submissions.order_by("-number").first()
    context.update(feedback_context(attempt=attempt, answer=answer, submission=latest))
    return context


def _action_url(name: str, attempt: Attempt, answer: StepAnswer) -> str:
    kwargs = {"attempt_id": attempt.pk, "step": answer.step_key}
    if answer.follow_up_id:
        kwargs["follow_up"] = answer.follow_up_id
        name += "_follow_up"
    return reverse(name, kwargs=kwargs)


def _follow_up_states(attempt: Attempt, spec: dict, submitted: set) -> list[dict]:
    """Follow-ups arrive one at a time: each opens once the one before it is submitted."""
    states, open_next = [], True
    for number, fu in enumerate(spec.get("follow_ups", []), start=1):
        done = ("tradeoffs", fu["id"]) in submitted
        states.append(
            {
                "id": fu["id"],
                "number": number,
                "submitted": done,
                "open": done or open_next,
                "url": step_url(attempt, "tradeoffs", fu["id"]),
            }
        )
        open_next = done
    return states


def _card_form(fields: dict) -> dict:
    rows = [
        {"name": f, "label": label, "unit": unit, "value": fields.get(f, "")}
        for f, label, _, unit, _ in SLO_FIELDS
    ]
    text_rows = [
        {"name": f, "label": label, "value": fields.get(f, "")} for f, label in TEXT_FIELDS
    ]
    return {"numbers": rows, "texts": text_rows, "qps_kind": fields.get("qps_kind") or "peak"}


def _card_names(attempt: Attempt) -> dict[str, str]:
    """Numbers from the candidate's SLO card, as names for their worksheet."""
    fields = (
        StepAnswer.objects.filter(attempt_id=attempt.pk, step_key="clarify", follow_up_id="")
        .values_list("fields", flat=True)
        .first()
    )
    if fields is None:
        return {}
    return review_card(fields, attempt.revision.brief).names


# --- napkin math ------------------------------------------------------------------------


def _givens(attempt: Attempt) -> dict[str, str]:
    spec = attempt.revision.step("estimate")
    givens = {g["name"]: str(g["value"]) for g in spec.get("givens", [])}
    # The card's names come first so a question's own given of the same name wins.
    return {**{k: v for k, v in _card_names(attempt).items() if k not in givens}, **givens}


def _evaluated(attempt: Attempt, text: str) -> list:
    """The candidate's worksheet evaluated line by line with the question's givens predefined.
    Raises FlowError when the givens themselves do not evaluate (an authoring error, not the
    candidate's)."""
    from planner.engine import NapkinError, evaluate_worksheet

    lines = text.replace("\r\n", "\n").split("\n")[:200]
    try:
        return evaluate_worksheet(lines, _givens(attempt))
    except NapkinError as exc:
        raise FlowError(f"This question's givens do not evaluate: {exc.message}") from None


def worksheet_lines(*, attempt: Attempt, text: str) -> list:
    """The evaluated worksheet's lines that are not blank, as the worksheet template shows
    them (line_no, input, error, position, name, display, mathml)."""
    return [r for r in _evaluated(attempt, text) if r.kind != "blank"]


def quantity_check(
    *, attempt: Attempt, answer: StepAnswer, quantity_id: str, expression: str, worksheet: str
) -> dict:
    """Check one required quantity against the candidate's expression; store the verdict."""
    from planner.engine import NapkinError, check_quantity, givens_from_estimate

    spec = attempt.revision.step("estimate")
    quantity = next((q for q in spec.get("quantities", []) if q["id"] == quantity_id), None)
    if quantity is None:
        raise FlowError("There is no such quantity in this question.")
    if not expression.strip():
        raise FlowError("Type a name from your worksheet or an expression to check.")
    givens = givens_from_estimate(spec, upto=quantity_id)
    labels = {g["name"]: g.get("label", "") for g in spec.get("givens", [])}
    env = {}
    for line in _evaluated(attempt, worksheet):
        if line.name and line.quantity is not None:
            env[line.name] = line.quantity
    try:
        result = check_quantity(
            quantity, expression, givens, worksheet_env=env, given_labels=labels
        )
    except NapkinError as exc:
        raise FlowError(str(exc)) from None
    check = {
        "answer": expression,
        "verdict": result.verdict,
        "value": result.value,
        "unit": result.unit,
        "hint": result.hint or "",
    }
    _store_check(answer, quantity_id, check)
    return check


def _store_check(answer: StepAnswer, quantity_id: str, check: dict) -> None:
    from django.db import transaction

    with transaction.atomic():
        locked = StepAnswer.objects.select_for_update().get(pk=answer.pk)
        fields = dict(locked.fields)
        fields["checks"] = {**(fields.get("checks") or {}), quantity_id: check}
        StepAnswer.objects.filter(pk=locked.pk).update(
            fields=fields, row_version=F("row_version") + 1
        )


# --- feedback ---------------------------------------------------------------------------


def primary_grade(grades: list[Grade]) -> Grade | None:
    """The grade that counts: the model's when it graded, else the offline rubric grader's."""
    by = {g.grader: g for g in grades}
    return by.get("llm") or by.get("rubric")


def submission_score(step_key: str, grades: list[Grade]) -> float | None:
    """A submission's step score in [0, 1]: the rubric grade, blended with the checked numbers
    for napkin math and with the SLO card for clarify."""
    main = primary_grade(grades)
    if main is None:
        return None
    by = {g.grader: g for g in grades}
    if step_key == "estimate" and "checker" in by:
        return round(0.6 * by["checker"].score + 0.4 * main.score, 3)
    if step_key == "clarify" and "slo" in by:
        return round(0.5 * by["slo"].score + 0.5 * main.score, 3)
    return round(main.score, 3)


def feedback_context(
    *, attempt: Attempt, answer: StepAnswer, submission: Submission | None
) -> dict:
    """The feedback panel for a submission: status, per-point verdicts, reference, history."""
    if submission is None:
        return {"submission": None}
    feedback_url = reverse(
        "submission_feedback", kwargs={"attempt_id": attempt.pk, "submission_id": submission.pk}
    )
    if submission.grade_status in (Submission.GradeStatus.QUEUED, Submission.GradeStatus.GRADING):
        # Polled every second until graded: answer with the status alone, cheaply.
        return {"submission": submission, "graded": False, "feedback_url": feedback_url}
    # One query for every version of this step with its grades: the history needs them all.
    versions = list(answer.submissions.prefetch_related("grades").order_by("number"))
    current = next((s for s in versions if s.pk == submission.pk), None)
    grades = list(current.grades.all()) if current else list(submission.grades.all())
    main = primary_grade(grades)
    step = attempt.revision.step(answer.step_key)
    spec = step
    rendered = attempt.revision.rendered["steps"][answer.step_key]
    if answer.follow_up_id:
        spec = next(f for f in step["follow_ups"] if f["id"] == answer.follow_up_id)
        rendered = rendered["follow_ups"][answer.follow_up_id]
    points_by_id = {p["id"]: p for p in spec.get("rubric", [])}
    concept_slugs = {c for p in spec.get("rubric", []) for c in p.get("concepts", [])}
    concepts = selectors.concepts_by_slug(concept_slugs)
    done = submission.grade_status in (Submission.GradeStatus.DONE, Submission.GradeStatus.OFFLINE)
    points = []
    if main is not None:
        for verdict in main.points:
            rubric = points_by_id.get(verdict.get("id"), {})
            says = rubric.get("says", "")
            comment = verdict.get("comment") or ""
            # Graders restate the point in their comment; the panel already shows it above.
            if says and comment.endswith(f": {says}"):
                comment = comment[: -len(says) - 2]
            points.append(
                {
                    **verdict,
                    "comment": comment,
                    "says": says,
                    "concepts": [concepts[c] for c in rubric.get("concepts", []) if c in concepts],
                }
            )
    by = {g.grader: g for g in grades}
    history = []
    for sub in versions:
        history.append(
            {
                "number": sub.number,
                "submitted_at": sub.submitted_at,
                "status": sub.get_grade_status_display(),
                "score": submission_score(answer.step_key, list(sub.grades.all())),
                "current": sub.pk == submission.pk,
            }
        )
    scored = [h["score"] for h in history if h["score"] is not None]
    return {
        "submission": submission,
        "graded": done and main is not None,
        "grade": main,
        "grades": by,
        "points": points,
        "score": submission_score(answer.step_key, grades),
        "best_score": max(scored) if scored else None,
        "highlighted": highlight_evidence(
            submission.text,
            [p.get("evidence", "") for p in points if p.get("verdict") in ("hit", "partial")],
        ),
        "reference_html": rendered["reference"] if done else "",
        "history": history,
        "disagreement": (
            abs(by["llm"].score - by["rubric"].score) > 0.4
            if "llm" in by and "rubric" in by
            else False
        ),
        "slo_review": (by["slo"].usage.get("review") if "slo" in by else None),
        "checks": by["checker"].points if "checker" in by else [],
        "feedback_url": feedback_url,
    }


def _normalise_ws(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def highlight_evidence(text: str, quotes: list[str]) -> SafeString:
    """The candidate's own text, escaped, with each evidence quote wrapped in <mark>.

    Quotes are matched ignoring case and runs of whitespace, as the graders matched them.
    """
    spans: list[tuple[int, int]] = []
    for quote in quotes:
        words = [re.escape(w) for w in _normalise_ws(quote).split(" ") if w]
        if not words:
            continue
        match = re.search(r"\s+".join(words), text, flags=re.IGNORECASE)
        if match:
            spans.append(match.span())
    spans.sort()
    out, cursor = [], 0
    for start, end in spans:
        if start < cursor:
            start = cursor
        if start >= end:
            continue
        out.append(html.escape(text[cursor:start]))
        out.append(f"<mark>{html.escape(text[start:end])}</mark>")
        cursor = end
    out.append(html.escape(text[cursor:]))
    return mark_safe("".join(out))  # every piece above is escaped


# --- scorecard and history --------------------------------------------------------------


def _best_per_answer(attempt: Attempt) -> dict[tuple[str, str], dict]:
    """For each step answer: its best-scoring submission, that score and its grades."""
    answers = StepAnswer.objects.filter(attempt=attempt).prefetch_related(
        Prefetch("submissions", queryset=Submission.objects.prefetch_related("grades"))
    )
    best: dict[tuple[str, str], dict] = {}
    for answer in answers:
        for sub in answer.submissions.all():
            grades = list(sub.grades.all())
            score = submission_score(answer.step_key, grades)
            key = (answer.step_key, answer.follow_up_id)
            current = best.get(key)
            if current is None or (score or 0) > (current["score"] or 0):
                best[key] = {"answer": answer, "submission": sub, "score": score, "grades": grades}
    return best


def scorecard(attempt: Attempt) -> dict:
    """Per-step scores, strongest and weakest points, napkin verdicts, pace, graders, concepts."""
    revision = attempt.revision
    best = _best_per_answer(attempt)
    seconds_by_step: dict[str, int] = defaultdict(int)
    for answer in StepAnswer.objects.filter(attempt=attempt).only("step_key", "seconds_spent"):
        seconds_by_step[answer.step_key] += answer.seconds_spent
    rows, all_points, graders, checks = [], [], [], []
    for number, key in enumerate(STEP_KEYS, start=1):
        spec = revision.step(key)
        entries = [v for (k, _), v in best.items() if k == key]
        scores = [e["score"] for e in entries if e["score"] is not None]
        rubric_specs = {p["id"]: p for p in spec.get("rubric", [])}
        for fu in spec.get("follow_ups", []):
            rubric_specs.update({p["id"]: p for p in fu.get("rubric", [])})
        for e in entries:
            main = primary_grade(e["grades"])
            for g in e["grades"]:
                graders.append(
                    {
                        "step": selectors.STEP_TITLES[key],
                        "part": e["answer"].follow_up_id or "main answer",
                        "grader": g.grader,
                        "model": g.model,
                        "score": g.score,
                        "fallback": g.fallback_reason,
                    }
                )
                if g.grader == "checker":
                    checks = g.points
            if main:
                for p in main.points:
                    rs = rubric_specs.get(p.get("id"), {})
                    all_points.append(
                        {
                            "id": p.get("id"),
                            "verdict": p.get("verdict"),
                            "says": rs.get("says", p.get("id")),
                            "weight": rs.get("weight", 1),
                            "concepts": rs.get("concepts", []),
                            "step": key,
                        }
                    )
        rows.append(
            {
                "number": number,
                "key": key,
                "title": selectors.STEP_TITLES[key],
                "score": round(sum(scores) / len(scores), 3) if scores else None,
                "parts": len(entries),
                "minutes_spent": round(seconds_by_step[key] / 60, 1),
                "minutes_suggested": spec.get("minutes"),
                "url": step_url(attempt, key),
            }
        )
    scored = [r["score"] for r in rows if r["score"] is not None]
    hits = sorted([p for p in all_points if p["verdict"] == "hit"], key=lambda p: -p["weight"])
    misses = sorted(
        [p for p in all_points if p["verdict"] != "hit"],
        key=lambda p: (CREDIT.get(p["verdict"], 0), -p["weight"]),
    )
    review = []
    for p in misses:
        for slug in p["concepts"]:
            if slug not in review:
                review.append(slug)
    concepts = selectors.concepts_by_slug(review)
    return {
        "attempt": attempt,
        "revision": revision,
        "rows": rows,
        "overall": round(sum(scored) / len(scored), 3) if scored else None,
        "strongest": hits[:5],
        "weakest": misses[:5],
        "checks": checks,
        "graders": graders,
        "review_concepts": [concepts[s] for s in review if s in concepts][:6],
    }


def history(user) -> dict:
    """Every attempt with its per-step scores; trends per step; the most-missed points."""
    attempts = list(
        Attempt.objects.filter(user=user)
        .select_related("revision__question")
        .order_by("started_at")
    )
    submissions = (
        Submission.objects.filter(answer__attempt__user=user)
        .select_related("answer")
        .prefetch_related("grades")
    )
    per_attempt: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    missed: dict[str, dict] = {}
    for sub in submissions:
        grades = list(sub.grades.all())
        score = submission_score(sub.answer.step_key, grades)
        if score is not None:
            per_attempt[sub.answer.attempt_id][sub.answer.step_key].append(score)
        main = primary_grade(grades)
        for p in main.points if main else []:
            if p.get("verdict") == "miss":
                entry = missed.setdefault(
                    p["id"], {"id": p["id"], "count": 0, "step": sub.answer.step_key}
                )
                entry["count"] += 1
    rows = []
    for attempt in attempts:
        scores = per_attempt.get(attempt.pk, {})
        steps = {key: (max(scores[key]) if scores.get(key) else None) for key in STEP_KEYS}
        values = [v for v in steps.values() if v is not None]
        rows.append(
            {
                "attempt": attempt,
                "steps": [steps[k] for k in STEP_KEYS],
                "overall": round(sum(values) / len(values), 3) if values else None,
            }
        )
    trends = []
    for i, key in enumerate(STEP_KEYS):
        series = [r["steps"][i] for r in rows if r["steps"][i] is not None]
        trends.append(
            {
                "key": key,
                "title": selectors.STEP_TITLES[key],
                "series": series,
                "points": _sparkline(series),
            }
        )
    says = _rubric_says(attempts)
    top_missed = sorted(missed.values(), key=lambda m: -m["count"])[:8]
    for m in top_missed:
        m["says"] = says.get(m["id"], m["id"])
    return {
        "rows": list(reversed(rows)),
        "trends": trends,
        "missed": top_missed,
        "step_titles": [selectors.STEP_TITLES[k] for k in STEP_KEYS],
    }


def _rubric_says(attempts: list[Attempt]) -> dict[str, str]:
    says: dict[str, str] = {}
    for revision in {a.revision for a in attempts}:
        for key in STEP_KEYS:
            step = revision.step(key)
            for p in step.get("rubric", []):
                says[p["id"]] = p.get("says", p["id"])
            for fu in step.get("follow_ups", []):
                for p in fu.get("rubric", []):
                    says[p["id"]] = p.get("says", p["id"])
    return says


def _sparkline(series: list[float], width: int = 120, height: int = 28) -> str:
    """SVG polyline points for scores in [0, 1] (drawn server-side; no chart script)."""
    if not series:
        return ""
    if len(series) == 1:
        series = series * 2
    step = width / (len(series) - 1)
    return " ".join(f"{i * step:.1f},{height - s * height:.1f}" for i, s in enumerate(series))
