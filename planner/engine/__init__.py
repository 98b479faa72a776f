"""The napkin-math engine: a safe, unit-aware calculator, its answer checker, and the capacity
formulas. No Django imports here, so the same code serves the pages, the commands and the bench.

Public API:
    evaluate_expression(text, env=None, to_unit=None) -> Result
    evaluate_worksheet(lines, givens=None, env=None) -> list[LineResult]
    evaluate_text(text, givens=None, *, clip=False) -> list[LineResult]: a worksheet as typed
    build_env(givens) -> dict[str, Quantity]
    check_quantity(quantity_spec, answer_text, givens, *, reveal=False, worksheet_env=None,
                   given_labels=None) -> CheckResult
    givens_from_estimate(estimate, upto=None) -> dict[str, str]
    solve_for(formula, unknown, target, givens, to_unit=None) -> Result
    plan(model=..., gpu=..., ...) -> dict: TTFT from prefill FLOPs, TPOT at the planned batch,
        the binding constraint, fleet and cost (see its docstring), and the named capacity
        formulas (r_inst takes optional max_seqs and hold_s for the memory bound;
        capacity.overhead_bytes, prefill_flops, ttft_s)
    fleet_curve, kv_curve, memory_bound_curve: the planner charts' series
    render.latex_to_mathml(latex, *, display=False) -> str: sanitised MathML
"""

from .capacity import (
    FORMULAS,
    PlanError,
    fleet_curve,
    kv_bytes_per_token,
    kv_curve,
    kv_pool_bytes,
    max_concurrent_seqs,
    memory_bound_curve,
    n_gpu,
    n_inst,
    plan,
    r_inst,
    tpot_floor,
    weights_bytes,
)
from .catalog import load_catalog
from .checker import VERDICTS, CheckResult, check_quantity, givens_from_estimate
from .errors import FormulaError, NapkinError
from .evaluator import Quantity
from .numbers import foreign_digit, format_figure
from .solve import solve_for
from .worksheet import (
    LineResult,
    Result,
    build_env,
    evaluate,
    evaluate_expression,
    evaluate_text,
    evaluate_worksheet,
    format_number,
)

__all__ = [
    "FORMULAS",
    "VERDICTS",
    "CheckResult",
    "FormulaError",
    "LineResult",
    "NapkinError",
    "PlanError",
    "Quantity",
    "Result",
    "build_env",
    "check_quantity",
    "evaluate",
    "evaluate_expression",
    "evaluate_text",
    "evaluate_worksheet",
    "fleet_curve",
    "foreign_digit",
    "format_figure",
    "format_number",
    "givens_from_estimate",
    "kv_bytes_per_token",
    "kv_curve",
    "kv_pool_bytes",
    "load_catalog",
    "max_concurrent_seqs",
    "memory_bound_curve",
    "n_gpu",
    "n_inst",
    "plan",
    "r_inst",
    "solve_for",
    "tpot_floor",
    "weights_bytes",
]
