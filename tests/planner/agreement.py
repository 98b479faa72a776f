"""What the test_plan_bank_* modules share: a question's estimate step, read as numbers.

Each of those modules runs the capacity planner's `plan()` on one question's own givens and
compares its figures with the figures the question itself expects. `QuestionFigures(slug)`
loads the question (from content/questions/<slug>.md, no database) and gives:

- `question(id)`: the question's expected figure for a quantity, in the quantity's unit, as the
  checker reveals it from the step's givens and formulas;
- `given(name)`: a given of the step as a number in base units (bytes, seconds, req/s, ...);
- `tolerance(id)` and `quantity_ids` (in the step's order);
- `assert_covers(compared, not_modelled)`: every quantity of the step is either compared or
  listed as not modelled, and none is both;
- `assert_agrees(figures, id)`: the planner's figure agrees with the question's within the
  quantity's tolerance (an exact match where the tolerance is zero);
- `agreement_tests(planner_figures, not_modelled)`: the two tests every module runs, built
  from those two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import pytest

from planner.engine import check_quantity, evaluate, givens_from_estimate
from questionbank import load_question_spec

GiB = 1024**3


class QuestionFigures:
    """One question's estimate step: its givens, expected figures and tolerances."""

    def __init__(self, slug: str) -> None:
        self.slug = slug
        self.spec = load_question_spec(slug)
        self.brief = self.spec.brief
        self.estimate = self.spec.step("estimate")

    @property
    def quantity_ids(self) -> list[str]:
        """The ids of the step's quantities, in the step's order."""
        return [q.id for q in self.estimate.quantities]

    def question(self, quantity_id: str) -> float:
        """The question's own figure for a quantity, in the quantity's unit."""
        quantity = self.estimate.quantity(quantity_id)
        givens = givens_from_estimate(self.estimate.estimate_dict(), upto=quantity_id)
        return check_quantity(quantity.as_dict(), "0", givens, reveal=True).expected

    def given(self, name: str) -> float:
        """A given of the step as a number in base units (bytes, seconds, req/s, FLOP/s, USD/s)."""
        value = next(g.value for g in self.estimate.givens if g.name == name)
        return float(evaluate(value).magnitude)

    def tolerance(self, quantity_id: str) -> float:
        """The relative tolerance the question allows on a quantity."""
        return self.estimate.quantity(quantity_id).tolerance

    def assert_covers(self, compared: Iterable[str], not_modelled: Iterable[str] = ()) -> None:
        """Every quantity of the step is compared or listed as not modelled, and none is both."""
        compared, not_modelled = set(compared), set(not_modelled)
        both = compared & not_modelled
        assert not both, f"{self.slug}: compared and listed as not modelled: {sorted(both)}"
        ids = set(self.quantity_ids)
        assert ids == compared | not_modelled, (
            f"{self.slug}: quantities neither compared nor listed: "
            f"{sorted(ids - compared - not_modelled)}; compared or listed but not in the step: "
            f"{sorted((compared | not_modelled) - ids)}"
        )

    def assert_agrees(self, figures: Mapping[str, float], quantity_id: str) -> None:
        """The planner's figure for a quantity agrees with the question's within its tolerance."""
        planner, expected = figures[quantity_id], self.question(quantity_id)
        tolerance = self.tolerance(quantity_id)
        assert planner == pytest.approx(expected, rel=max(tolerance, 1e-9)), (
            f"{self.slug}: {quantity_id}: the planner's {planner!r} against the question's "
            f"{expected!r} (tolerance {tolerance})"
        )

    def agreement_tests(
        self,
        planner_figures: Callable[[], Mapping[str, float]],
        not_modelled: Iterable[str] = (),
    ) -> tuple[Callable[[], None], Callable[[str], None]]:
        """The two tests of a module, to assign to test_* names: every quantity is compared or
        listed as not modelled, and each compared one agrees (one test per quantity)."""
        not_modelled = tuple(not_modelled)

        def test_every_quantity_is_compared_or_listed_as_not_modelled() -> None:
            self.assert_covers(planner_figures(), not_modelled)

        @pytest.mark.parametrize("quantity_id", sorted(planner_figures()))
        def test_the_planner_agrees_with_the_question(quantity_id: str) -> None:
            self.assert_agrees(planner_figures(), quantity_id)

        return (
            test_every_quantity_is_compared_or_listed_as_not_modelled,
            test_the_planner_agrees_with_the_question,
        )
