"""The notes under a step's agreement figures: how few answers it rests on, in plain words."""

from __future__ import annotations

from grading.calibration import MIN_LABELLED, step_agreement


def _note_on_size(n: int) -> str:
    answers = [({"a": "hit"}, {"a": "hit"}), ({"a": "miss"}, {"a": "miss"})][:n]
    notes = step_agreement(["a"], answers).warnings
    return next(note for note in notes if note.startswith("only "))


def test_one_labelled_answer_is_counted_in_the_singular() -> None:
    assert _note_on_size(1).startswith(f"only 1 labelled answer (fewer than {MIN_LABELLED})")


def test_several_labelled_answers_are_counted_in_the_plural() -> None:
    assert _note_on_size(2).startswith(f"only 2 labelled answers (fewer than {MIN_LABELLED})")
