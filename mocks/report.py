"""Reads of a mock session: the candidate's panel, the interviewer's live view, the report
(with its Markdown export) and the replay. Everything is computed from the attempt's rows
and the session's event log; nothing here writes."""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import datetime

from django.db.models import Count
from django.template.loader import render_to_string
from django.urls import reverse

from grading.text import split_form_block
from grading.types import VERDICT_CREDIT
from mocks.log import (
    CANDIDATE_KINDS,
    MOCK_PREFIX,
    PROBE_PREFIX,
    FollowUpPending,
    Kind,
    pending_follow_up,
)
from mocks.models import MockEvent, MockSession
from mocks.services import (
    OVERALL,
    OVERALL_SLUG,
    Clock,
    interviewer_feedback,
    interviewer_scores,
    latest_main_submissions,
    session_clock,
    session_submission_ids,
)
from practice.diagram import (
    diagram_evidence,
    diagram_picture,
    diagram_text,
    mermaid_block,
    step_has_diagram,
)
from practice.extensions import scorecard_fragments
from practice.misconceptions import misconceptions_found
from practice.models import Grade, SelfCheck, StepAnswer, Submission
from practice.scoring import (
    attempt_scored_submissions,
    best_per_part,
    mean_score,
    primary_grade,
    step_scores,
    step_verdict_labels,
)
from practice.slo import card_as_text
from practice.step_page import step_url
from practice.templatetags.napkin_verdicts import napkin_verdict
from questionbank import STEP_KEYS
from questions import selectors
from questions.models import QuestionRevision

# The four dimensions interviewers score on, and the steps each is read from; communication
# is only a person's to score.
DIMENSIONS = (
    ("Problem navigation", ("clarify",)),
    ("Solution design", ("estimate", "architecture")),
    ("Technical excellence", ("bottlenecks", "tradeoffs")),
)
TRANSCRIPT_KINDS = (
    Kind.JOINED,
    Kind.STARTED,
    Kind.NUDGE,
    Kind.TIME_WARNING,
    Kind.FOLLOW_UP_ASKED,
    Kind.FOLLOW_UP_ANSWERED,
    # Only the answers to the question's own follow-ups: the steps' answers are no entries.
    Kind.SUBMITTED,
    Kind.ENDED,
)


def offset(session: MockSession, at: datetime) -> str:
    """Time since the session started, as m:ss (what the transcript shows); 0:00 for what
    happened before the start, or in a session that never started."""
    if session.started_at is None:
        return "0:00"
    seconds = max(0, int((at - session.started_at).total_seconds()))
    return f"{seconds // 60}:{seconds % 60:02d}"


def minutes_seconds(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def graded_count(session: MockSession) -> int:
    """How many of the attempt's submissions have their grades (the live view's poll asks
    again when this moves, so the graders' verdicts appear without a new event)."""
    return Submission.objects.filter(
        answer__attempt_id=session.attempt_id,
        grade_status__in=[Submission.GradeStatus.DONE, Submission.GradeStatus.OFFLINE],
    ).count()


def _candidate_message(
    event: MockEvent, session: MockSession, asked: dict[str, MockEvent] | None = None
) -> dict:
    """One line of the candidate's panel: `who` says whose words they are (the interviewer's
    nudge, the app's time check), `cue` what the notice at the foot of the screen says of it
    while the panel is out of view (empty: no notice), `announce` whether a screen reader is
    told it when it arrives. A follow-up answered keeps its question (`answered`: who asked,
    the question, the answer given), found in `asked` by its follow-up id."""
    title = selectors.STEP_TITLES.get(event.step_key, "")
    who, cue = "", ""
    answered = None
    if event.kind == Kind.TIME_WARNING:
        who = "The app says:"
        text = (
            f"Time check: you are past the {event.payload.get('minutes'):g} minutes planned "
            f"for {title}. Wrap it up and move on."
        )
    elif event.kind == Kind.NUDGE:
        who, cue = "Your interviewer says:", "Your interviewer sent you a note"
        text = event.payload.get("text", "")
    elif event.kind == Kind.FOLLOW_UP_ASKED:
        text = f"Follow-up on {title}: {event.payload.get('prompt', '')}"
    elif event.kind == Kind.FOLLOW_UP_ANSWERED:
        text = "You answered the follow-up."
        question = (asked or {}).get(event.payload.get("follow_up_id", ""))
        if question is not None:
            answered = {
                "by_app": question.payload.get("by") == "app",
                "step_title": selectors.STEP_TITLES.get(question.step_key, ""),
                "prompt": question.payload.get("prompt", ""),
                "text": event.payload.get("text", ""),
            }
    else:
        text = "The session has ended."
    return {
        "kind": event.kind,
        "who": who,
        "cue": cue,
        "text": text,
        "answered": answered,
        "announce": event.kind in (Kind.TIME_WARNING, Kind.NUDGE),
        "at": offset(session, event.at),
        "seq": event.seq,
    }


def next_for_candidate(session: MockSession, *, clock: Clock) -> dict:
    """Where the session page sends the candidate: to the follow-up that waits for an answer
    (on its step's page, whose panel holds it), else to the first step not submitted in the
    session, else (every step in) to the step the clock is on. `follow_up` says which."""
    pending = pending_follow_up(session)
    if pending is not None:
        step_key, follow_up = pending.step_key, True
    else:
        submitted = set(
            Submission.objects.filter(
                pk__in=session_submission_ids(session), answer__follow_up_id=""
            ).values_list("answer__step_key", flat=True)
        )
        step_key = next((k for k in STEP_KEYS if k not in submitted), "")
        follow_up = False
    all_submitted = not step_key
    # Every step in, the question's own follow-ups may still wait: the page says so, and
    # leads to the first step that has one (ending stays the candidate's choice).
    remaining = authored_follow_ups_left(session) if all_submitted else {}
    step_key = step_key or next(iter(remaining), "") or clock.step_key
    return {
        "url": step_url(session.attempt, step_key),
        "title": selectors.STEP_TITLES.get(step_key, ""),
        "follow_up": follow_up,
        "by_app": follow_up and pending.payload.get("by") == "app",
        "all_submitted": all_submitted,
        "follow_ups_left": sum(remaining.values()),
        "follow_up_steps": [selectors.STEP_TITLES[k] for k in remaining],
    }


def authored_follow_ups_left(session: MockSession) -> dict[str, int]:
    """How many of each step's authored follow-ups have no submitted answer, by step key in
    the steps' order (a step with none left out)."""
    spec = session.attempt.revision.question_spec
    answered = set(
        Submission.objects.filter(answer__attempt_id=session.attempt_id)
        .exclude(answer__follow_up_id="")
        .values_list("answer__step_key", "answer__follow_up_id")
    )
    left = {}
    for key in STEP_KEYS:
        count = sum((key, fu.id) not in answered for fu in spec.step(key).follow_ups)
        if count:
            left[key] = count
    return left


def clock_context(clock: Clock) -> dict:
    return {
        "clock": clock,
        "step_left": minutes_seconds(clock.step_left_s),
        "total_left": minutes_seconds(clock.total_left_s),
        "step_left_s": int(max(0, clock.step_left_s)),
        "total_left_s": int(clock.total_left_s),
        "step_title": selectors.STEP_TITLES.get(clock.step_key, ""),
        "started": clock.started,
    }


def candidate_panel_context(session: MockSession, *, step_key: str, clock: Clock) -> dict:
    """What the candidate's panel shows: the clock, the messages (nudges, time warnings),
    the follow-up to answer, the end. Never the rubric or the interviewer's notes."""
    events = list(session.events.filter(kind__in=CANDIDATE_KINDS).order_by("seq"))
    pending = pending_follow_up(session)
    follow_up = None
    if pending is not None and session.ended_at is None:
        answer = StepAnswer.objects.filter(
            attempt_id=session.attempt_id, follow_up_id=pending.payload["follow_up_id"]
        ).first()
        follow_up = {
            "event": pending,
            "id": pending.payload["follow_up_id"],
            "prompt": pending.payload.get("prompt", ""),
            "step_title": selectors.STEP_TITLES.get(pending.step_key, ""),
            "text": answer.text if answer else "",
            "by_app": pending.payload.get("by") == "app",
            "draft_url": reverse(
                "mock_follow_up_draft",
                kwargs={"session_id": session.pk, "follow_up": pending.payload["follow_up_id"]},
            ),
            "submit_url": reverse(
                "mock_follow_up_submit",
                kwargs={"session_id": session.pk, "follow_up": pending.payload["follow_up_id"]},
            ),
        }
    asked = {e.payload.get("follow_up_id", ""): e for e in events if e.kind == Kind.FOLLOW_UP_ASKED}
    messages = [
        _candidate_message(e, session, asked) for e in events if e.kind != Kind.FOLLOW_UP_ASKED
    ]
    return {
        "session": session,
        "after": session.last_seq,
        "step_key": step_key,
        "messages": messages[-6:],
        "follow_up": follow_up,
        "ended": session.ended_at is not None,
        "ended_grading": ended_grading(session, step_key) if session.ended_at else "",
        "self_check_url": step_url(session.attempt, step_key) + "#self-check"
        if step_key in STEP_KEYS
        else "",
        "report_url": reverse("mock_report", kwargs={"session_id": session.pk}),
        # The step's Submit refused while a follow-up was open, in the words the page shows:
        # a panel with none open says which refusal on the page no longer holds (mock.js).
        "follow_up_refusal": FollowUpPending.message,
        **clock_context(clock),
    }


def ended_grading(session: MockSession, step_key: str) -> str:
    """Where the step's answer stands once the session has ended, as its panel says it:
    "grading" while a grader has it, "self_check" when only the keyword matcher read it (no
    model: it waits for the candidate's ratings), "scored", or "" when it was never
    submitted (or no grader could read it)."""
    if step_key not in STEP_KEYS:
        return ""
    submission = latest_main_submissions(session).get(step_key)
    if submission is None:
        return ""
    if submission.grade_status in (Submission.GradeStatus.QUEUED, Submission.GradeStatus.GRADING):
        return "grading"
    grades = list(submission.grades.all())
    if primary_grade(grades) is not None:
        return "scored"
    return "self_check" if _awaits_self_check(grades) else ""


def _answer_shown(answer: StepAnswer | None, revision: QuestionRevision) -> str:
    """A draft as the interviewer reads it: the SLO card or worksheet written out, then the
    text."""
    if answer is None:
        return ""
    if answer.step_key == "estimate" and not answer.follow_up_id:
        quantities = quantities_shown(revision, (answer.fields or {}).get("answers") or {})
        boxes = "\n".join(f"{q['label']}: {q['expression']}" for q in quantities)
        parts = ((answer.fields or {}).get("worksheet", ""), boxes, answer.text)
        return "\n\n".join(p.strip() for p in parts if p.strip())
    return answer_for_person(answer.step_key, answer.text, answer.fields)


def quantities_shown(revision: QuestionRevision, typed: dict) -> list[dict]:
    """The quantity boxes of the napkin step as typed, in the question's order, each with its
    label; a box the question no longer has keeps its id as its label."""
    order = revision.question_spec.step("estimate").quantities
    known = {q.id for q in order}
    shown = [
        {"id": q.id, "label": q.short_label, "expression": str(typed[q.id])}
        for q in order
        if str(typed.get(q.id) or "")
    ]
    return shown + [
        {"id": k, "label": k, "expression": str(v)}
        for k, v in typed.items()
        if k not in known and str(v)
    ]


def card_shown(card: dict | None) -> str:
    """The SLO card's values as a person reads them, one "Label: value" a line: the lines the
    graders read (`card_as_text`), without the markers that fence them off for the graders;
    empty for a card with nothing filled."""
    values = {k: v for k, v in (card or {}).items() if k != "notes"}
    body, _ = split_form_block(card_as_text(values))
    return body


def answer_for_person(step_key: str, text: str, fields: dict | None) -> str:
    """A step's answer as a person reads it: on clarify the SLO card's values, then the
    notes typed under it; elsewhere the text."""
    if step_key != "clarify" or not fields:
        return text
    return "\n\n".join(part for part in (card_shown(fields), text.strip()) if part)


def _points_compared(
    session: MockSession,
    step_key: str,
    submission: Submission | None,
    *,
    show_matcher: bool = False,
    scores: dict[str, dict] | None = None,
):
    """Each rubric point of a step with the model's verdict and quote, the candidate's own
    self-check, the interviewer's, and (`show_matcher`, for those who judge the candidate)
    the offline matcher's, advisory; `disagree` when the verdicts of the model, the
    self-check and the interviewer differ (the matcher's decides nothing). `scores`: the
    session's `interviewer_scores`, when the caller has them already."""
    rubric = session.attempt.revision.question_spec.step(step_key).rubric
    grades = {g.grader: g for g in submission.grades.all()} if submission else {}
    if scores is None:
        scores = interviewer_scores(session)
    human = scores.get(step_key, {}).get("verdicts", {})
    ratings = _self_ratings(submission)
    rows = []
    for point in rubric:
        row = {"id": point.id, "says": point.says, "weight": point.weight}
        for name, key in (("llm", "model"), ("self", "self"), ("rubric", "matcher")):
            found = next(
                (p for p in (grades[name].points if name in grades else []) if p["id"] == point.id),
                None,
            )
            if key == "matcher" and not show_matcher:
                found = None
            row[key] = found["verdict"] if found else ""
            row[f"{key}_quote"] = (found or {}).get("evidence", "")
            # The nodes and edges of the diagram that grader found ("gateway -> router").
            row[f"{key}_diagram"] = diagram_evidence(found or {})
        row["self_words"] = _self_words(row["self"], ratings.get(point.id, ""))
        row["human"] = human.get(point.id, "")
        given = {v for v in (row["model"], row["self"], row["human"]) if v}
        row["disagree"] = len(given) > 1
        rows.append(row)
    return rows


def _human_score(
    session: MockSession, step_key: str, scores: dict[str, dict] | None = None
) -> float | None:
    if scores is None:
        scores = interviewer_scores(session)
    verdicts = scores.get(step_key, {}).get("verdicts")
    if not verdicts:
        return None
    rubric = session.attempt.revision.question_spec.step(step_key).rubric
    total = sum(p.weight for p in rubric)
    got = sum(p.weight * VERDICT_CREDIT.get(verdicts.get(p.id, ""), 0.0) for p in rubric)
    return round(got / total, 3) if total else None


def live_context(session: MockSession, *, clock: Clock) -> dict:
    """The interviewer's live view: the step the candidate is on and their answer as it
    saves, that step's prompt, rubric, reference and notes, the follow-up waiting for an
    answer, the transcript, and each step's blind score or the form to give it."""
    revision = session.attempt.revision
    step_key = clock.step_key
    spec = revision.question_spec.step(step_key)
    html = revision.rendered["steps"][step_key]
    answers = {
        (a.step_key, a.follow_up_id): a for a in StepAnswer.objects.filter(attempt=session.attempt)
    }
    # The step's follow-ups with a submission, read once (the live view polls).
    sent = set(
        Submission.objects.filter(answer__attempt=session.attempt, answer__step_key=step_key)
        .exclude(answer__follow_up_id="")
        .values_list("answer__follow_up_id", flat=True)
    )
    pending = pending_follow_up(session)
    pending_answer = (
        answers.get((pending.step_key, pending.payload["follow_up_id"])) if pending else None
    )
    scores = interviewer_scores(session)
    feedback = interviewer_feedback(session)
    mains = latest_main_submissions(session)
    steps = []
    for key in STEP_KEYS:
        submission = mains.get(key)
        scored = key in scores
        graded = submission is not None and submission.grade_status in ("done", "offline")
        steps.append(
            {
                "key": key,
                "title": selectors.STEP_TITLES[key],
                "submission": submission,
                "scored": scored,
                "graded": graded,
                "rubric": revision.question_spec.step(key).rubric,
                # The graders' verdicts only once the interviewer has scored (blind scoring);
                # the interviewer judges the candidate, so the matcher's are shown, advisory.
                "points": (
                    _points_compared(session, key, submission, show_matcher=True, scores=scores)
                    if scored
                    else []
                ),
                "score_url": reverse("mock_score", kwargs={"session_id": session.pk, "step": key}),
                "feedback": feedback.get(key, ""),
                "feedback_url": _feedback_url(session, key),
            }
        )
    return {
        "session": session,
        "after": session.last_seq,
        "graded_count": graded_count(session),
        "ended": session.ended_at is not None,
        "step": {
            "key": step_key,
            "title": selectors.STEP_TITLES[step_key],
            "prompt_html": html["prompt"],
            "reference_html": html["reference"],
            "notes_html": html.get("interviewer_notes", ""),
            "rubric": spec.rubric,
            "reference_diagram": _picture(spec.reference_diagram),
        },
        "answer_text": _answer_shown(answers.get((step_key, "")), revision),
        # The candidate's diagram as it saves, laid out (None on a step without one).
        "answer_diagram": (
            _picture(diagram_text(answers[(step_key, "")].fields))
            if step_has_diagram(spec) and (step_key, "") in answers
            else None
        ),
        # The question's own follow-ups on this step the candidate has opened, each with
        # their answer as it saves (they are written under the step, after its answer).
        "follow_ups": [
            {
                "id": fu.id,
                "number": number,
                "prompt": fu.prompt,
                "text": answers[(step_key, fu.id)].text,
                "submitted": fu.id in sent,
            }
            for number, fu in enumerate(spec.follow_ups, 1)
            if (step_key, fu.id) in answers
        ],
        "pending": pending,
        "pending_text": _answer_shown(pending_answer, revision),
        "transcript": transcript(session, grades_for=set(scores)),
        "steps": steps,
        "communication": scores.get("", {}).get("communication", ""),
        "overall_feedback": feedback.get(OVERALL, ""),
        "overall_feedback_url": _feedback_url(session, OVERALL),
        "report_url": reverse("mock_report", kwargs={"session_id": session.pk}),
        **clock_context(clock),
    }


def _picture(text: str):
    """A diagram laid out (practice.diagram); None when there is none."""
    return diagram_picture(text) if text.strip() else None


def _feedback_url(session: MockSession, step_key: str) -> str:
    return reverse(
        "mock_feedback", kwargs={"session_id": session.pk, "step": step_key or OVERALL_SLUG}
    )


RATING_WORDS = dict(SelfCheck.Rating.choices)


def _self_ratings(submission: Submission | None) -> dict[str, str]:
    """The candidate's rating of each rubric point ({id: "covered" | "partly" | "not"})."""
    self_check = getattr(submission, "self_check", None) if submission else None
    return dict(getattr(self_check, "ratings", None) or {})


def _self_words(verdict: str, rating: str) -> str:
    """The self-check's verdict on a point in the words the candidate picked ("Covered"),
    not the graders' ("hit"): their rating's own label, since a wrong idea they confirmed
    may hold the stored verdict below it; "" where there is no self-check verdict."""
    if not verdict:
        return ""
    return RATING_WORDS.get(rating) or SELF_CHECK_WORDS.get(verdict, verdict)


def _self_checked_ideas(submission: Submission) -> dict[str, str]:
    """The candidate's word on each wrong idea the matcher flagged ({id: "confirmed" |
    "dismissed"}), from their self-check; empty before one (or where there is none)."""
    self_check = getattr(submission, "self_check", None)
    return dict(getattr(self_check, "wrong_ideas", None) or {})


def _wrong_ideas(session: MockSession, step_key: str, submission: Submission | None) -> list:
    """The wrong ideas found in the answer the report shows, each once (the grade that
    counts first), with the candidate's words and why it breaks: as HTML for the page and as
    the question file's Markdown for the export. One only the matcher flagged is `advisory`
    (a possible wrong idea) until the candidate confirms it, and left out once they dismiss
    it."""
    if submission is None:
        return []
    grades = list(submission.grades.all())
    main = primary_grade(grades)
    said = _self_checked_ideas(submission)
    revision = session.attempt.revision
    explained = {m.id: m.explanation for m in revision.question_spec.step(step_key).misconceptions}
    found: dict[str, dict] = {}
    for grade in sorted(grades, key=lambda g: (g is not main, g.grader == "rubric")):
        for idea in misconceptions_found(revision=revision, step_key=step_key, grade=grade):
            if grade.grader == "rubric" and said.get(idea["id"]) == "dismissed":
                continue
            idea["explanation_list_md"] = _indented(explained.get(idea["id"], "").strip())
            idea["advisory"] = grade.grader == "rubric" and said.get(idea["id"]) != "confirmed"
            found.setdefault(idea["id"], idea)
    return list(found.values())


def _authored_follow_ups_answered(
    session: MockSession, during: Collection[int]
) -> dict[str, list[dict]]:
    """Each step's authored follow-ups answered during the session, in the question's order:
    the question, the last answer submitted to it in the session and how it was scored (one
    read for every step)."""
    rows = (
        Submission.objects.filter(pk__in=during)
        .exclude(answer__follow_up_id="")
        .exclude(answer__follow_up_id__startswith=MOCK_PREFIX)
        .select_related("answer")
        .prefetch_related("grades")
        .order_by("pk")
    )
    latest = {(s.answer.step_key, s.answer.follow_up_id): s for s in rows}
    found: dict[str, list[dict]] = {}
    if not latest:
        return found
    for step in session.attempt.revision.question_spec.steps:
        for number, fu in enumerate(step.follow_ups, 1):
            submission = latest.get((step.key, fu.id))
            if submission is None:
                continue
            found.setdefault(step.key, []).append(
                {
                    "number": number,
                    "prompt": fu.prompt,
                    "prompt_md": _cell(fu.prompt),
                    "answer": submission.text,
                    "answer_md": _quoted(submission.text),
                    "scored": scored_words(submission),
                }
            )
    return found


# How a follow-up's answer was scored, by whom (the one verdict order of practice.scoring).
SCORED_AS = {"instructor": "reviewed", "llm": "graded", "self": "self-checked"}


def _graded_as(event: MockEvent, submissions: dict[int, Submission]) -> str:
    """How a follow-up's answer was scored, in brackets after it (`scored_words`)."""
    submission = submissions.get(event.payload.get("submission_id"))
    follow_up_id = event.payload.get("follow_up_id", "")
    words = scored_words(
        submission,
        probe=follow_up_id.startswith(PROBE_PREFIX),
        asked_live=follow_up_id.startswith(MOCK_PREFIX),
    )
    return f" ({words})"


# A question asked in the session (the interviewer's own, the app's probe) has no page of its
# own to self-check it on once the panel that took its answer is gone, and the step's own
# self-check rates the step's answer, not it: offline it stays unscored, and says so.
NO_SELF_CHECK = (
    "not scored: no model graded it, and a question asked in the session has no self-check"
)


def scored_words(
    submission: Submission | None, *, probe: bool = False, asked_live: bool = False
) -> str:
    """How a follow-up's answer was scored: the probed point's verdict (`probe`), or the
    score, with who gave it. The matcher's verdict alone is no score: an authored follow-up's
    answer waits for the candidate's self-check, a question asked in the session
    (`asked_live`) has none (NO_SELF_CHECK)."""
    grades = list(submission.grades.all()) if submission else []
    grade = primary_grade(grades)
    if grade is None:
        if any(g.grader == "rubric" for g in grades):
            if asked_live:
                return NO_SELF_CHECK
            return "not scored yet: awaiting the candidate's self-check"
        return "not graded yet"
    verb = SCORED_AS.get(grade.grader, "graded")
    if probe and grade.points:
        return f"{verb} {grade.points[0]['verdict']}"
    return f"{verb} {round(grade.score * 100)}%"


def is_authored_follow_up(follow_up_id: str) -> bool:
    """A follow-up written in the question file (not one asked in the session)."""
    return bool(follow_up_id) and not follow_up_id.startswith(MOCK_PREFIX)


def transcript(session: MockSession, *, grades_for: Collection[str] | None = None) -> list[dict]:
    """Nudges, time warnings, follow-ups asked and answered, in order, with the time since
    the start. A follow-up answer says how it was graded only for the steps in `grades_for`
    (every step when None): an interviewer who has not scored a step yet must not see the
    graders' view of it."""
    rows = []
    events = [
        e
        for e in session.events.filter(kind__in=TRANSCRIPT_KINDS).order_by("seq")
        if e.kind != Kind.SUBMITTED or is_authored_follow_up(e.payload.get("follow_up_id", ""))
    ]
    answered = [
        e.payload.get("submission_id")
        for e in events
        if e.kind in (Kind.FOLLOW_UP_ANSWERED, Kind.SUBMITTED)
    ]
    submissions = Submission.objects.prefetch_related("grades").in_bulk(
        [pk for pk in answered if isinstance(pk, int)]
    )
    # The app's probe names the rubric point it aims at by id; the reader gets what it says.
    spec = session.attempt.revision.question_spec
    points = {(s.key, p.id): p for s in spec.steps for p in s.rubric}
    authored = {
        (s.key, fu.id): (number, fu.prompt)
        for s in spec.steps
        for number, fu in enumerate(s.follow_ups, 1)
    }
    told: set[tuple[str, str]] = set()  # the authored follow-ups whose question is logged
    for e in events:
        if e.kind == Kind.SUBMITTED:
            # The question's own follow-up is asked by the question: its words open the
            # first answer to it, then the answer (each later one as an answer again).
            key = (e.step_key, e.payload.get("follow_up_id", ""))
            number, prompt = authored.get(key, (0, ""))
            title = selectors.STEP_TITLES.get(e.step_key, "")
            if key not in told and prompt:
                told.add(key)
                lead = f"The question's follow-up {number} ({title})"
                rows.append(
                    {
                        "at": offset(session, e.at),
                        "kind": Kind.FOLLOW_UP_ASKED,
                        "text": f"{lead}: {prompt}",
                        "md": _said_md(lead, prompt, ""),
                    }
                )
        title = selectors.STEP_TITLES.get(e.step_key, "")
        # Someone's own words (a nudge, a question, an answer): `lead`, then the words, then
        # `tail`. The export quotes words of several lines under the entry (`_said_md`).
        lead, words, tail = "", "", ""
        if e.kind == Kind.JOINED:
            text = f"{e.payload.get('interviewer', 'The interviewer')} joined as interviewer."
        elif e.kind == Kind.STARTED:
            text = "The candidate started without the interviewer."
        elif e.kind == Kind.NUDGE:
            lead, words = f"Nudge ({title})", e.payload.get("text", "")
        elif e.kind == Kind.TIME_WARNING:
            text = f"Time warning: past the {e.payload.get('minutes'):g} minutes for {title}."
        elif e.kind == Kind.FOLLOW_UP_ASKED:
            who = "The app" if e.payload.get("by") == "app" else "The interviewer"
            point = points.get((e.step_key, e.payload.get("point", "")))
            aim = f" (aimed at: {point.says.rstrip('.')})" if point else ""
            lead, words = f"{who} asked ({title}){aim}", e.payload.get("prompt", "")
        elif e.kind in (Kind.FOLLOW_UP_ANSWERED, Kind.SUBMITTED):
            tail = (
                _graded_as(e, submissions) if grades_for is None or e.step_key in grades_for else ""
            )
            lead, words = f"Answer ({title})", e.payload.get("text", "")
            if e.kind == Kind.SUBMITTED:
                number, _ = authored.get((e.step_key, e.payload.get("follow_up_id", "")), (0, ""))
                lead = f"Answer to the question's follow-up {number} ({title})"
        else:
            text = "The session ended" + (
                " when its time was up." if e.payload.get("reason") == "time" else "."
            )
        if lead:
            text = f"{lead}: {words}{tail}"
            md = _said_md(lead, words, tail)
        else:
            md = text
        rows.append({"at": offset(session, e.at), "kind": e.kind, "text": text, "md": md})
    return rows


def _said_md(lead: str, words: str, tail: str) -> str:
    """A transcript entry of the export (a Markdown list item) with someone's words: on the
    entry's line when they are one line, else quoted under it, indented into the item, so
    that nothing they typed (a heading, a list, a table) leaves the entry."""
    words = _no_html(str(words))
    lines = words.splitlines()
    if len(lines) <= 1:
        return f"{lead}: {words}{tail}"
    quoted = "\n".join(f"  > {line}".rstrip() for line in lines)
    return f"{lead}{tail}:\n\n{quoted}\n"


def steps_awaiting_score(session: MockSession) -> set[str]:
    """The submitted steps a human interviewer has not scored yet: shown to that interviewer
    without the graders' verdicts, so their score stays blind whenever they give it."""
    if session.interviewer_id is None:
        return set()
    scored = interviewer_scores(session)
    submitted = latest_main_submissions(session)
    return {k for k in STEP_KEYS if k not in scored and k in submitted}


# The checker's words are for a candidate still working ("Not right yet"); the report reads
# answers submitted, which are what they are.
SUBMITTED_VERDICT_LABELS = {"wrong": "Wrong"}

# The candidate's self-check in the words they picked (practice's SelfCheck.Rating labels),
# by the verdict each rating is stored as.
SELF_CHECK_WORDS = {"hit": "Covered", "partial": "Partly", "miss": "Not covered"}


def _numbers(grades: list[Grade]) -> list[dict]:
    """The napkin checker's verdict on each quantity of the step (none on other steps): what
    the candidate wrote, the verdict, the expected value and any hint, as the practice
    feedback lists them; `line_md` is the export's line."""
    checker = next((g for g in grades if g.grader == "checker"), None)
    rows = []
    for point in (checker.points or []) if checker else []:
        row = {
            "label": point.get("label", ""),
            "verdict": point.get("verdict") or "unchecked",
            "answer": point.get("answer", ""),
            "expected": point.get("expected", ""),
            "hint": point.get("hint", ""),
        }
        row["verdict_label"] = SUBMITTED_VERDICT_LABELS.get(
            row["verdict"], napkin_verdict(row["verdict"])
        )
        line = f"{row['label']}: {row['verdict_label']}"
        if row["answer"]:
            line += f" ({_code_cell(row['answer'])})"
        if row["expected"]:
            line += f", expected {row['expected']}"
        if row["hint"]:
            line += f"; {row['hint']}"
        row["line_md"] = _cell(line)
        rows.append(row)
    return rows


def _awaits_self_check(grades: list[Grade]) -> bool:
    """Graded by the matcher alone: no score until the candidate self-checks it."""
    return primary_grade(grades) is None and any(g.grader == "rubric" for g in grades)


def report_context(
    session: MockSession,
    *,
    hide_graders_for: Collection[str] = (),
    show_matcher: bool = False,
) -> dict:
    """The report: per step and rubric point every grader's verdict beside the
    interviewer's, with quotes and disagreements; the wrong ideas the graders found; each
    step's reference answer; the interviewer's written feedback; the four-dimension roll-up;
    time used against each step's budget; the transcript; the follow-ups with their grades.

    `hide_graders_for`: steps whose graders' verdicts, scores and findings (wrong ideas) are
    left out (the interviewer's own view of steps they have not scored,
    `steps_awaiting_score`). Each step's score is the one verdict order's (instructor, model,
    self-check), labelled with who gave it; the offline matcher's verdicts are shown only
    with `show_matcher` (the session's interviewer), as advisory, and its
    score never."""
    attempt = session.attempt
    revision = attempt.revision
    clock = session_clock(session, now=session.ended_at or None)
    during = session_submission_ids(session)
    scored = attempt_scored_submissions(attempt.pk, only=during)
    best = best_per_part(scored)
    per_step = step_scores(best)
    labels = step_verdict_labels(best)
    for key in hide_graders_for:
        per_step[key] = None
    scores = interviewer_scores(session)
    feedback = interviewer_feedback(session)
    rendered = revision.rendered.get("steps", {})
    spec = revision.question_spec
    # Every step's submission read at once, grades and self-check with it (not per step).
    mains = latest_main_submissions(session)
    follow_ups = _authored_follow_ups_answered(session, during)
    scored_rows = (
        Submission.objects.select_related("self_check")
        .prefetch_related("grades")
        .in_bulk([s["submission_id"] for s in scores.values() if s.get("submission_id")])
    )
    steps = []
    for key in STEP_KEYS:
        # The interviewer's verdicts sit beside the submission they scored, not a later one.
        scored_id = scores.get(key, {}).get("submission_id")
        submission = (scored_rows.get(scored_id) if scored_id else None) or mains.get(key)
        hidden = key in hide_graders_for
        points = _points_compared(
            session, key, submission, show_matcher=show_matcher, scores=scores
        )
        if hidden:
            for row in points:
                row.update(
                    model="",
                    model_quote="",
                    self="",
                    self_quote="",
                    matcher="",
                    matcher_quote="",
                    disagree=False,
                )
        for row in points:  # the export's table cells: one line each, pipes escaped
            row["says_md"] = _cell(row["says"])
            for grader in ("model", "matcher"):
                row[f"{grader}_quote_md"] = _cell(row[f"{grader}_quote"])
                row[f"{grader}_diagram_md"] = ", ".join(map(_code_cell, row[f"{grader}_diagram"]))
        wrong_ideas = [] if hidden else _wrong_ideas(session, key, submission)
        for idea in wrong_ideas:
            idea["evidence_md"] = _cell(idea.get("evidence", ""))
        grades = list(submission.grades.all()) if submission else []
        budget = float(session.step_minutes.get(key, 0)) * 60
        used = clock.used_by_step.get(key, 0.0)
        diagram = diagram_text(submission.fields) if submission else ""
        answer = answer_for_person(key, submission.text, submission.fields) if submission else ""
        reference_diagram = spec.step(key).reference_diagram
        # The napkin checker's verdicts: withheld while the session ran, reported here.
        numbers = [] if hidden else _numbers(grades)
        worksheet = (
            (submission.fields.get("worksheet") or "").strip() if submission and numbers else ""
        )
        steps.append(
            {
                "key": key,
                "title": selectors.STEP_TITLES[key],
                "score": per_step[key],
                # As the scorecard says it: the graders, and the step's own check when it is
                # in the score ("Self-checked + SLO card check").
                "score_label": "" if hidden else labels[key],
                "awaits_self_check": not hidden
                and per_step[key] is None
                and _awaits_self_check(grades),
                # Why a step has no score: never submitted, or submitted and not graded yet
                # (the end submits every answer at once; the worker grades them after).
                "submitted": submission is not None,
                "grading": not hidden
                and per_step[key] is None
                and submission is not None
                and submission.grade_status
                in (Submission.GradeStatus.QUEUED, Submission.GradeStatus.GRADING),
                # Where the candidate rates it (the page links it for them alone).
                "self_check_url": step_url(attempt, key) + "#self-check",
                "human_score": _human_score(session, key, scores),
                "answer": answer,
                # The export keeps the answer too (the page has it): the candidate's own words,
                # quoted so that whatever they typed stays inside the quote.
                "answer_md": _quoted(answer),
                # The question's own follow-ups answered in the session: how each was scored
                # is a grader's view, left out where the graders' are.
                "follow_ups": [
                    {**f, "scored": "" if hidden else f["scored"]} for f in follow_ups.get(key, [])
                ],
                # The diagrams laid out on the page, ```mermaid blocks in the export.
                "diagram": _picture(diagram),
                "diagram_md": mermaid_block(diagram) if diagram.strip() else "",
                "reference_diagram": _picture(reference_diagram),
                "reference_diagram_md": (
                    mermaid_block(reference_diagram) if reference_diagram.strip() else ""
                ),
                "points": points,
                "numbers": numbers,
                "worksheet": worksheet,
                "worksheet_md": _quoted(worksheet),
                "hidden": hidden,
                "wrong_ideas": wrong_ideas,
                "reference_html": (rendered.get(key) or {}).get("reference", ""),
                "reference_md": spec.step(key).reference.strip(),
                "feedback": feedback.get(key, ""),
                "feedback_md": _quoted(feedback.get(key, "")),
                "used": minutes_seconds(used),
                "budget": minutes_seconds(budget),
                "over": used > budget,
            }
        )
    by_key = {s["key"]: s for s in steps}
    dimensions = [
        {
            "name": name,
            "score": mean_score(by_key[k]["score"] for k in keys),
            "human_score": mean_score(by_key[k]["human_score"] for k in keys),
            "steps": " + ".join(selectors.STEP_TITLES[k] for k in keys),
        }
        for name, keys in DIMENSIONS
    ]
    communication = scores.get("", {}).get("communication", "")
    return {
        "session": session,
        "attempt": attempt,
        "revision": revision,
        "title": revision.title,
        "mode": session.get_mode_display(),
        "interviewer": session.interviewer.get_username() if session.interviewer else "",
        "steps": steps,
        "dimensions": dimensions,
        "communication": communication,
        "communication_score": VERDICT_CREDIT[communication] if communication else None,
        # Only a person scores communication: without one, the report's row says so, where
        # "the interviewer" would read as if someone had been there to rate it.
        # An interviewer who scored it and then closed their account leaves the score.
        "no_human_interviewer": session.interviewer_id is None and not communication,
        "overall_feedback": feedback.get(OVERALL, ""),
        "overall_feedback_md": _quoted(feedback.get(OVERALL, "")),
        "started": session.started_at is not None,
        "overall": mean_score(per_step.values()),
        "transcript": transcript(
            session,
            grades_for=None if not hide_graders_for else set(STEP_KEYS) - set(hide_graders_for),
        ),
        "total_used": minutes_seconds(sum(clock.used_by_step.values())),
        "total_budget": minutes_seconds(session.total_minutes * 60),
        "ended": session.ended_at is not None,
        "grading": any(s["grading"] for s in steps),
        "show_matcher": show_matcher,
        # What features keep with the attempt, as its scorecard shows them (the load tests).
        "attempt_fragments": scorecard_fragments(attempt),
    }


# A "<" that opens raw HTML in Markdown (a tag, a closing tag, a comment, an autolink): one a
# Markdown viewer that renders HTML would obey. Escaped with a backslash it reads as itself;
# "p99 <= 300 ms" opens nothing and stays as typed.
_HTML_OPENER = re.compile(r"<(?=[A-Za-z/!?])")


def _no_html(text: str) -> str:
    """Someone's words with every raw-HTML opener escaped, so a viewer shows, not runs, them."""
    return _HTML_OPENER.sub(r"\\<", text)


def _one_line(text: str) -> str:
    """Text on one line, its pipes escaped, so whatever it holds stays in its table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _cell(text: str) -> str:
    """Text for one cell of a Markdown table (or one line of a list item): on one line, its
    pipes and raw-HTML openers escaped, so whatever a quote holds stays in its cell as text."""
    return _no_html(_one_line(text))


def _code_cell(text: str) -> str:
    """A code span in a table cell: on one line, pipes escaped (GitHub's tables split cells
    before reading code spans), fenced with more backticks than any run inside (a code span
    shows HTML as text and a backslash as itself, so nothing else is escaped)."""
    text = _one_line(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _quoted(text: str) -> str:
    """Someone's words as a Markdown block quote: whatever they typed stays inside it, as text."""
    return "\n".join(f"> {line}".rstrip() for line in _no_html(text).splitlines())


def _indented(text: str) -> str:
    """Markdown continued inside a list item: every line after the first indented."""
    return "\n".join(
        line if i == 0 or not line else f"  {line}" for i, line in enumerate(text.splitlines())
    )


def report_markdown(
    session: MockSession,
    *,
    hide_graders_for: Collection[str] = (),
    show_matcher: bool = False,
    is_candidate: bool = True,
) -> str:
    """The report as Markdown (the export): the same figures as the page, no absolute dates
    or ids, so a session's export reads the same whenever it is made; its words speak to the
    candidate, or of them (`is_candidate` False: the interviewer's download)."""
    context = report_context(session, hide_graders_for=hide_graders_for, show_matcher=show_matcher)
    return render_to_string("mock/report.md", {**context, "is_candidate": is_candidate})


def replay_context(session: MockSession, *, step_key: str, version: int | None) -> dict:
    """The saved versions of one step, from the log's "draft saved" events, for a scrubber:
    each with its time since the start; `version` picks the one shown (default the last).

    A version is the step as it stood after one save: its own answer (on clarify the SLO
    card's values written out) and the answers to the question's own follow-ups opened by
    then, each under its question; a save of either is a version. Each step's chip counts
    the versions its scrubber steps through (one query for both: the answers to follow-ups
    asked in the session, logged under their step too, are in neither)."""
    if step_key not in STEP_KEYS:
        step_key = STEP_KEYS[0]
    drafts = _step_drafts(session)
    authored = session.attempt.revision.question_spec.step(step_key).follow_ups
    main = {"text": "", "diagram": "", "card": "", "worksheet": "", "quantities": []}
    revision = session.attempt.revision
    follow_ups: dict[str, str] = {}  # follow-up id -> its answer as last saved
    versions = []
    for i, e in enumerate(drafts.filter(step_key=step_key).order_by("seq")):
        follow_up_id = e.payload.get("follow_up_id", "")
        if follow_up_id:
            follow_ups[follow_up_id] = e.payload.get("text", "")
        else:
            main = {
                "text": e.payload.get("text", ""),
                "diagram": e.payload.get("diagram", ""),
                "card": card_shown(e.payload.get("card")),
                "worksheet": e.payload.get("worksheet", ""),
                "quantities": quantities_shown(revision, e.payload.get("quantities") or {}),
            }
        versions.append(
            {
                "index": i,
                "at": offset(session, e.at),
                **main,
                "follow_up_id": follow_up_id,
                "follow_ups": [
                    {
                        "id": fu.id,
                        "number": number,
                        "prompt": fu.prompt,
                        "text": follow_ups[fu.id],
                        "saved_here": fu.id == follow_up_id,
                    }
                    for number, fu in enumerate(authored, 1)
                    if fu.id in follow_ups
                ],
            }
        )
    shown = len(versions) - 1 if version is None else max(0, min(version, len(versions) - 1))
    counts = dict(
        drafts.order_by()
        .values_list("step_key")
        .annotate(n=Count("pk"))
        .values_list("step_key", "n")
    )
    return {
        "session": session,
        "step_key": step_key,
        "step_title": selectors.STEP_TITLES[step_key],
        "versions": versions,
        "shown": shown,
        "steps": [
            {"key": k, "title": selectors.STEP_TITLES[k], "count": counts.get(k, 0)}
            for k in STEP_KEYS
        ],
    }


def _step_drafts(session: MockSession):
    """The log's saved versions of the steps' own answers and of their authored follow-ups:
    the answers to follow-ups asked in the session (an interviewer's question, the app's
    probe) are logged as drafts of their step too, and the transcript has them."""
    return session.events.filter(kind=Kind.DRAFT_SAVED).exclude(
        payload__follow_up_id__startswith=MOCK_PREFIX
    )
