"""The question bank: question files parsed into typed, immutable specs, and their Markdown
rendered to safe HTML. No Django imports; the interview app stores what this package reads, and
the planner's checker reads question files through it."""

from questionbank.files import (
    ContentError,
    ContentFile,
    ContentTree,
    Problem,
    load_question,
    load_question_spec,
    parse_file,
    question_file,
    read_tree,
)
from questionbank.spec import (
    SLUG_RE,
    STEP_KEYS,
    Brief,
    DiagramRule,
    FollowUp,
    Given,
    Mistake,
    Quantity,
    QuestionSpec,
    RubricPoint,
    StepSpec,
)

__all__ = [
    "SLUG_RE",
    "STEP_KEYS",
    "Brief",
    "ContentError",
    "ContentFile",
    "ContentTree",
    "DiagramRule",
    "FollowUp",
    "Given",
    "Mistake",
    "Problem",
    "Quantity",
    "QuestionSpec",
    "RubricPoint",
    "StepSpec",
    "load_question",
    "load_question_spec",
    "parse_file",
    "question_file",
    "read_tree",
]
