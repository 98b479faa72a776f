"""The question-file keys for mock interviews: `interviewer_notes` (Markdown, rendered and
sanitised on load) and `probe` (one plain question), validated with file:line problems."""

from pathlib import Path

from django.conf import settings

from questionbank.files import parse_file, validate_question
from questions.models import Question

Q1 = Path(settings.CONTENT_DIR) / "questions" / "chat-api-50qps.md"


def problems_of(text: str) -> list[str]:
    cf = parse_file(Q1, text)
    return [str(p) for p in validate_question(cf, concept_slugs=None)]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), start=1) if needle in line)


def test_every_shipped_step_has_notes_and_every_written_point_a_probe():
    assert problems_of(Q1.read_text()) == []


def test_a_probe_that_is_not_a_question_is_reported_at_its_line():
    text = Q1.read_text()
    old = (
        'probe: "What sits in front of your router, and what does it check before a request '
        'gets anywhere near a GPU?"'
    )
    assert old in text
    bad = text.replace(old, "probe: Tell me about the gateway.")
    line = line_of(bad, "probe: Tell me about the gateway.")
    assert problems_of(bad) == [f"{Q1}:{line}: 'probe' must be a question (end it with '?')"]
    empty = text.replace(old, 'probe: ""')
    assert problems_of(empty) == [
        f"{Q1}:{line}: 'probe' must be non-empty text: the question to ask"
    ]
    long = text.replace(old, f"probe: {'why ' * 80}?")
    assert "at most 300 characters" in problems_of(long)[0]


def test_empty_interviewer_notes_are_reported_at_their_line():
    text = Q1.read_text()
    start = text.index("    interviewer_notes: |")
    end = text.index("    rubric:", start)
    bad = text[:start] + "    interviewer_notes: 3\n" + text[end:]
    line = line_of(bad, "interviewer_notes: 3")
    assert problems_of(bad) == [f"{Q1}:{line}: 'interviewer_notes' must be non-empty text"]


def test_notes_are_rendered_and_sanitised_on_load(content_loaded):
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    notes = revision.rendered["steps"]["clarify"]["interviewer_notes"]
    assert "<li>" in notes and "daily average" in notes

    from questionbank.rendering import render_question
    from questionbank.spec import QuestionSpec

    spec = revision.question_spec
    meta = dict(revision.spec)
    meta["steps"] = {**meta["steps"]}
    meta["steps"]["clarify"] = {
        **meta["steps"]["clarify"],
        "interviewer_notes": (
            'Hint <script>alert(1)</script> <a href="javascript:x" hx-get="/">x</a>'
        ),
    }
    rendered = render_question(QuestionSpec.from_meta(meta, scenario=spec.scenario))
    html = rendered["steps"]["clarify"]["interviewer_notes"]
    assert "<script" not in html and "javascript:" not in html and "hx-get" not in html
