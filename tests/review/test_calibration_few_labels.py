"""The calibration page over a handful of labels: a kappa measured on fewer answers than the
rough-guide count (grading.calibration.MIN_LABELLED) is not flagged red against the 0.6 bar,
per point or in the headline, but said to rest on too few labels to judge; its figures stay.
Its notes name rubric points by their text, as the tables do, never by id."""

from __future__ import annotations

import re
from html import unescape

from django.urls import reverse

from grading.calibration import MIN_LABELLED, LabelledAnswer, step_agreement
from questions.models import Question
from review.calibration_sets import current_version, labels_import, page_warnings
from review.models import CalibrationRun

SLUG = "chat-api-50qps"
# Nothing of the rubric: the offline grader misses every point.
OFF_TOPIC = "Pasta is best finished in the pan, off the heat, with a splash of its water."


def _says(step_key: str) -> dict[str, str]:
    step = Question.objects.get(slug=SLUG).current_revision.question_spec.step(step_key)
    return {p.id: p.says for p in step.rubric}


def _text(response) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", unescape(response.content.decode())).split())


def _section(page: str, grader: str) -> str:
    return page.split(f'id="run-{grader}"')[1].split("</section>")[0]


def _store_llm_run(question, figures, *, n: int) -> None:
    """The model's calibration run of the bottlenecks step, as `calibrate` stores one."""
    model, prompt_version = current_version(question=question, step_key="bottlenecks", grader="llm")
    CalibrationRun.objects.create(
        question=question,
        step_key="bottlenecks",
        grader="llm",
        model=model,
        prompt_version=prompt_version,
        n=n,
        kappa=figures.kappa,
        agreement=figures.agreement,
        points=[{**p.to_dict(), "warnings": p.warnings} for p in figures.points],
        warnings=figures.warnings,
    )


def test_one_label_is_too_few_to_judge_kappa_against_the_bar(content_loaded, client, instructor):
    """One answer labelled all hit that the offline grader misses: kappa 0.00 everywhere,
    shown, but neither red nor "below 0.6"."""
    question = Question.objects.get(slug=SLUG)
    labels = dict.fromkeys(_says("architecture"), "hit")
    labels_import(
        question=question, entries=[LabelledAnswer(SLUG, "architecture", OFF_TOPIC, labels)]
    )
    client.force_login(instructor)
    page = client.get(reverse("review:calibration_step", args=[SLUG, "architecture"]))
    section = _section(page.content.decode(), "rubric")
    assert "0.00" in section  # the figures stay
    assert "below 0.6" not in section and "verdict-wrong" not in section
    assert "below the 0.6 bar" not in section
    text = _text(page)
    assert f"too few labels to judge (1 of {MIN_LABELLED} needed)" in text
    assert text.count(f"too few labels to judge (1 of {MIN_LABELLED} needed)") >= len(labels)


def test_enough_labels_are_still_flagged_below_the_bar(content_loaded, client, instructor):
    question = Question.objects.get(slug=SLUG)
    n = MIN_LABELLED
    # Half the answers agree, the grader says hit to all: kappa 0, over enough labels.
    pairs = [({"bn-queue-wall": v}, {"bn-queue-wall": "hit"}) for v in ("hit", "miss") * (n // 2)]
    figures = step_agreement(["bn-queue-wall"], pairs)
    assert figures.kappa is not None and figures.kappa < 0.6
    _store_llm_run(question, figures, n=n)
    client.force_login(instructor)
    page = client.get(reverse("review:calibration_step", args=[SLUG, "bottlenecks"]))
    section = _section(page.content.decode(), "llm")
    assert "(below 0.6)" in section and "verdict-wrong" in section
    assert "is below the 0.6 bar to trust a grader" in section
    assert "too few labels" not in section


def test_a_stored_run_over_two_labels_is_worded_as_too_few_in_the_headline(
    content_loaded, client, instructor
):
    """A model run stored with the old notes ("kappa 0.00 is below the 0.6 bar") is shown
    with the page's: too few to judge, no bar."""
    question = Question.objects.get(slug=SLUG)
    pairs = [({"bn-queue-wall": "hit"}, {"bn-queue-wall": "miss"})] * 2
    figures = step_agreement(["bn-queue-wall"], pairs)
    assert any("below the 0.6 bar" in w for w in figures.warnings)
    _store_llm_run(question, figures, n=2)
    client.force_login(instructor)
    page = client.get(reverse("review:calibration_step", args=[SLUG, "bottlenecks"]))
    section = _text_of(_section(page.content.decode(), "llm"))
    assert "below the 0.6 bar to trust" not in section and "(below 0.6)" not in section
    assert f"too few labels to judge (2 of {MIN_LABELLED} needed)" in section
    assert "rough guide" in section and "only 2 labelled answers" not in section


def _text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", unescape(html)).split())


def test_the_points_kappa_is_undefined_for_are_named_by_their_text(content_loaded):
    says = _says("bottlenecks")
    ids = ["bn-queue-wall", "bn-cold-start", "bn-double-load"]
    # Both agree on every answer for two points: kappa is undefined for them.
    pairs = [
        ({"bn-queue-wall": "hit", "bn-cold-start": "miss", "bn-double-load": v}, {
            "bn-queue-wall": "hit", "bn-cold-start": "miss", "bn-double-load": "hit"})
        for v in ("hit", "miss") * MIN_LABELLED
    ]  # fmt: skip
    figures = step_agreement(ids, pairs)
    assert any("bn-queue-wall, bn-cold-start" in w for w in figures.warnings)
    [note] = [w for w in page_warnings(figures.warnings, figures.n, says) if "undefined" in w]
    assert "bn-" not in note, note
    assert note.startswith(f"kappa is undefined for “{says['bn-queue-wall'][:30]}")
    assert f"“{says['bn-cold-start'][:30]}" in note
    assert note.endswith("label answers that differ on them to measure it")


def test_the_calibration_page_names_undefined_points_by_text(content_loaded, client, instructor):
    """One answer labelled all miss, which the offline grader misses too: kappa is undefined
    for every point, each named as the table names it."""
    question = Question.objects.get(slug=SLUG)
    says = _says("bottlenecks")
    labels_import(
        question=question,
        entries=[LabelledAnswer(SLUG, "bottlenecks", OFF_TOPIC, dict.fromkeys(says, "miss"))],
    )
    client.force_login(instructor)
    page = client.get(reverse("review:calibration_step", args=[SLUG, "bottlenecks"]))
    section = _text_of(_section(page.content.decode(), "rubric"))
    assert "kappa is undefined for “" in section
    assert "undefined for bn-" not in section and ", bn-" not in section
