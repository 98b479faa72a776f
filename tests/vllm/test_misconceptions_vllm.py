"""Flagged misconceptions through the real vLLM server.

The tiny random model writes whatever the reply schema allows, so each test steers it the way
vLLM's guided decoding lets any client: the schema sent for this request narrows the
misconception flag to one id and one quote (an `enum` of one string) and every verdict to a
miss. The model's reply then comes back over HTTP and through the app's own parsing and
checks, as any grade does: a quote that is not in the answer must be dropped, one that is
must be kept and shown.
"""

from __future__ import annotations

import pytest

from grading import GraderConfig, grade
from grading import llm as llm_grader
from questionbank import load_question_spec

pytestmark = pytest.mark.vllm

STATED = "The autoscaler adds a replica whenever average GPU utilization goes above 80 percent."
ANSWER = (
    "Clients reach an API gateway that terminates TLS and applies per-key rate limits. "
    f"{STATED} Ten vLLM replicas serve the OpenAI-compatible API behind a router."
)
NOT_IN_ANSWER = "We scale out on GPU utilisation alone, nothing else."
MISCON_ID = "a1-autoscale-gpu-util"


def steered_schema(quote: str):
    """A `response_schema` stand-in that leaves the model one reply: the flag with `quote`."""

    def schema(points, misconceptions=()):
        ids = [p.id for p in points]
        return {
            "type": "object",
            "properties": {
                "misconceptions": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "enum": [MISCON_ID]},
                            "quote": {"type": "string", "enum": [quote]},
                        },
                        "required": ["id", "quote"],
                        "additionalProperties": False,
                    },
                },
                "points": {
                    "type": "array",
                    "minItems": len(ids),
                    "maxItems": len(ids),
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "enum": ids},
                            "evidence": {"type": "string", "enum": [""]},
                            "verdict": {"type": "string", "enum": ["miss"]},
                            "comment": {"type": "string", "enum": ["steered"]},
                        },
                        "required": ["id", "evidence", "verdict", "comment"],
                        "additionalProperties": False,
                    },
                },
                "feedback": {"type": "string", "enum": ["steered"]},
                "injection_suspected": {"type": "boolean"},
            },
            "required": ["misconceptions", "points", "feedback", "injection_suspected"],
            "additionalProperties": False,
        }

    return schema


@pytest.fixture
def graded(vllm_server, vllm_model_name, vllm_report, monkeypatch):
    step = load_question_spec("chat-api-50qps").step("architecture")
    config = GraderConfig(base_url=vllm_server, model=vllm_model_name)

    def run(quote: str):
        monkeypatch.setattr(llm_grader, "response_schema", steered_schema(quote))
        result = grade(step, ANSWER, mode="llm", context="chat-api-50qps", config=config)
        vllm_report.append(
            f"misconception flag quoting {quote[:30]!r}...: grader={result.grader} "
            f"kept={[m.id for m in result.misconceptions]}"
        )
        assert result.grader == "llm", (result.fallback_reason, result.warnings)
        return result

    return run


def test_a_flag_quoting_the_answer_is_kept_and_shown(graded):
    result = graded(STATED)
    assert [m.id for m in result.misconceptions] == [MISCON_ID]
    assert result.misconceptions[0].evidence in ANSWER


def test_a_flag_quoting_text_not_in_the_answer_is_dropped(graded):
    result = graded(NOT_IN_ANSWER)
    assert result.misconceptions == []
    assert any(f"dropped misconception {MISCON_ID}" in w for w in result.warnings)
