"""The napkin-math engine: a safe, unit-aware calculator, its answer checker, and the capacity
formulas. No Django imports here, so the same code serves the pages, the commands and the bench.
"""

from .errors import FormulaError, NapkinError
from .evaluator import Quantity
from .worksheet import (
    LineResult,
    Result,
    build_env,
    evaluate,
    evaluate_expression,
    evaluate_worksheet,
    format_number,
)

__all__ = [
    "FormulaError",
    "LineResult",
    "NapkinError",
    "Quantity",
    "Result",
    "build_env",
    "evaluate",
    "evaluate_expression",
    "evaluate_worksheet",
    "format_number",
]
