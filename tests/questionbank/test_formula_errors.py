"""A question file's formula that does not evaluate is reported as the author wrote it: the
message names what is in the formula, at a column inside it, never the `in UNIT` the validator
adds to check the quantity's unit."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from accounts.instructors import instructor_grant
from authoring import services
from questionbank.files import formula_error, parse_file, validate_question

GIVENS = {"W": "15.2 GB", "bw": "1008 GB/s"}
UNCLOSED = "ceil((W + W) / bw"


def _columns(message: str) -> list[int]:
    import re

    return [int(n) for n in re.findall(r"column (\d+)", message)]


@pytest.mark.parametrize("formula", [UNCLOSED, "W / (bw", "W / bw)", "W / bw *", "(W / bw", "W bw"])
def test_a_formula_error_points_inside_the_formula_not_at_the_appended_unit(formula: str):
    message = formula_error(formula, GIVENS, to_unit="ms")
    assert message is not None
    assert "'in'" not in message and " in ms" not in message
    assert all(1 <= column <= len(formula) for column in _columns(message)), message


def test_an_unclosed_parenthesis_is_named_as_never_closed() -> None:
    message = formula_error(UNCLOSED, GIVENS, to_unit="ms")
    assert message == "The '(' of ceil at column 5 is never closed."


def test_a_formula_in_the_wrong_unit_still_says_so() -> None:
    message = formula_error("W / bw", GIVENS, to_unit="GB")
    assert message is not None and message.startswith("Cannot convert time to GB")


def test_a_unit_that_is_no_unit_is_named_as_the_unit() -> None:
    message = formula_error("W / bw", GIVENS, to_unit="fortnights")
    assert message is not None and "'fortnights'" in message and "unit" in message


def test_a_good_formula_has_no_error() -> None:
    assert formula_error("W / bw", GIVENS, to_unit="ms") is None


def _template_with_formula(slug: str, formula: str) -> str:
    text = services.QUESTION_TEMPLATE.read_text(encoding="utf-8")
    text = text.replace(services.TEMPLATE_SLUG_LINE, f"slug: {slug}", 1)
    assert "        formula: W / bw\n" in text
    return text.replace("        formula: W / bw\n", f"        formula: {formula}\n", 1)


def test_validation_reports_the_formula_as_written_at_its_line() -> None:
    text = _template_with_formula("unclosed", UNCLOSED)
    problems = validate_question(parse_file("unclosed.md", text), concept_slugs=None)
    formula_line = text.split("\n").index(f"        formula: {UNCLOSED}") + 1
    [problem] = [p for p in problems if "step_floor" in p.message]
    assert problem.line == formula_line
    assert problem.message == "quantity 'step_floor': The '(' of ceil at column 5 is never closed."


@pytest.mark.django_db
def test_the_editor_problem_list_shows_the_formula_error_as_written() -> None:
    user = User.objects.create_user("ines", password="an-Instructor-passphrase-7")
    instructor_grant(user)
    client = Client()
    client.force_login(user)
    services.question_new(slug="unclosed", user=user)
    text = _template_with_formula("unclosed", UNCLOSED)
    body = client.post(
        reverse("authoring:question_preview", args=["unclosed"]), {"text": text}
    ).content.decode()
    assert (
        "quantity &#x27;step_floor&#x27;: The &#x27;(&#x27; of ceil at column 5 is never closed."
        in body
    )
    assert "&#x27;in&#x27;" not in body


def test_a_files_problems_are_listed_in_the_order_of_their_lines():
    """The checks run key by key (unknown keys first, whatever their line): the editor lists
    the problems, and a refused publish names the first, top to bottom."""
    from django.conf import settings

    path = settings.CONTENT_DIR / "questions" / "chat-api-50qps.md"
    text = path.read_text(encoding="utf-8")
    head, fence, body = text.partition("\n---\n")  # the front matter's closing fence
    broken = head.replace("difficulty: core", "difficulty: legendary", 1) + "\nextra_key: 1"
    problems = validate_question(parse_file(path, broken + fence + body), concept_slugs=None)
    messages = [p.message for p in problems]
    assert any("difficulty" in m for m in messages) and any("extra_key" in m for m in messages)
    assert [p.line for p in problems] == sorted(p.line for p in problems)


@pytest.mark.parametrize("name", ["T", "k"])
def test_a_given_the_worksheet_cannot_name_is_told_as_the_cause(name):
    # The formula's "Unknown name 'T'" beside "Names it may use: N, out, T" hid the cause:
    # T and k are number suffixes, which no worksheet name may be.
    givens = {"N": "100", "out": "50 tok", name: "6 h"}
    message = formula_error(f"N * out / {name}", givens)
    assert message == (
        f"the given {name!r} cannot be used: {name!r} is a number suffix; choose another name."
    )
    assert formula_error("N * out / X", givens).startswith("Unknown name 'X'")
