"""Misconceptions through the model grader, against the loopback fake server.

The step's misconception ids join the reply schema; the prompt lists them with the rubric,
before the answer, so the prefix stays identical across candidates; a flagged misconception
stands only with a verbatim quote; a sentence stating one backs no point it contradicts; a
contradicted point is at best partial.
"""

from __future__ import annotations

import json

import pytest

from grading import grade
from grading.fake_server import ScriptedReply, answer_message, response_ids
from questionbank import load_question_spec

WRONG = "We autoscale whenever GPU utilisation passes 80 percent, adding a replica each time."
RIGHT = "We autoscale on the queue of waiting requests, vllm:num_requests_waiting."
ANSWER = (
    f"Clients reach an API gateway that terminates TLS and applies rate limits.\n{RIGHT}\n{WRONG}"
)


@pytest.fixture
def step():
    return load_question_spec("chat-api-50qps").step("architecture")


def reply(points: list[dict], flags: list[dict]) -> ScriptedReply:
    return ScriptedReply(
        content=json.dumps(
            {
                "misconceptions": flags,
                "points": points,
                "feedback": "Scripted.",
                "injection_suspected": False,
            }
        )
    )


def all_miss(request: dict) -> list[dict]:
    return [
        {"id": i, "evidence": "", "verdict": "miss", "comment": ""} for i in response_ids(request)
    ]


def test_the_schema_asks_for_the_steps_misconceptions_before_the_points(
    fake_server, llm_config, step
):
    fake_server.responder = lambda request: reply(all_miss(request), [])
    grade(step, ANSWER, mode="llm", config=llm_config)
    schema = fake_server.requests[-1]["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"])[0] == "misconceptions"
    assert "misconceptions" in schema["required"]
    item = schema["properties"]["misconceptions"]["items"]
    assert item["properties"]["id"]["enum"] == [m.id for m in step.misconceptions]
    assert item["required"] == ["id", "quote"]


def test_a_follow_up_keeps_the_schema_without_misconceptions(fake_server, llm_config, step):
    fake_server.responder = lambda request: reply(all_miss(request), [])
    follow_up = load_question_spec("chat-api-50qps").follow_up("fu-traffic-10x")
    grade(follow_up, "We would need about 100 instances.", mode="llm", config=llm_config)
    schema = fake_server.requests[-1]["response_format"]["json_schema"]["schema"]
    assert "misconceptions" not in schema["properties"]


def test_the_prompt_lists_them_with_the_rubric_ahead_of_the_answer(fake_server, llm_config, step):
    fake_server.responder = lambda request: reply(all_miss(request), [])
    grade(step, ANSWER, mode="llm", config=llm_config)
    grade(step, "Something else entirely about routers.", mode="llm", config=llm_config)
    first, second = fake_server.requests
    context = first["messages"][1]["content"]
    assert context.index("Rubric points:") < context.index("Misconceptions to flag")
    assert "- id: a1-autoscale-gpu-util (contradicts arch-autoscale-queue)" in context
    assert "a1-autoscale-gpu-util" not in answer_message(first)
    # Everything before the answer is byte-identical for every candidate (prefix cache).
    assert first["messages"][:-1] == second["messages"][:-1]


def test_a_flag_whose_quote_is_not_in_the_answer_is_dropped(fake_server, llm_config, step):
    fake_server.responder = lambda request: reply(
        all_miss(request),
        [{"id": "a1-round-robin", "quote": "Round robin in front of the replicas is fine."}],
    )
    result = grade(step, ANSWER, mode="llm", config=llm_config)
    assert result.grader == "llm" and result.misconceptions == []
    assert any("dropped misconception a1-round-robin" in w for w in result.warnings)


def test_a_flag_with_a_verbatim_quote_is_kept_and_caps_its_point(fake_server, llm_config, step):
    def responder(request):
        points = all_miss(request)
        for p in points:
            if p["id"] == "arch-autoscale-queue":
                p.update(verdict="hit", evidence=RIGHT)
        flags = [
            {"id": "a1-autoscale-gpu-util", "quote": WRONG},
            {"id": "not-a-misconception", "quote": WRONG},
        ]
        return reply(points, flags)

    fake_server.responder = responder
    result = grade(step, ANSWER, mode="llm", config=llm_config)
    # The quote as the model gave it, less the full stop models add or drop at will.
    kept = [(m.id, m.evidence) for m in result.misconceptions]
    assert kept == [("a1-autoscale-gpu-util", WRONG.rstrip("."))]
    verdict = next(p for p in result.points if p.id == "arch-autoscale-queue")
    # Right in one sentence, contradicted in another: partial while the contradiction stands.
    assert verdict.verdict == "partial"
    assert any("unknown misconception" in w for w in result.warnings)


def test_the_sentence_stating_a_misconception_backs_no_point_it_contradicts(
    fake_server, llm_config, step
):
    def responder(request):
        points = all_miss(request)
        for p in points:
            if p["id"] == "arch-autoscale-queue":
                p.update(verdict="hit", evidence=WRONG)
        return reply(points, [{"id": "a1-autoscale-gpu-util", "quote": WRONG}])

    fake_server.responder = responder
    result = grade(step, ANSWER, mode="llm", config=llm_config)
    verdict = next(p for p in result.points if p.id == "arch-autoscale-queue")
    assert verdict.verdict == "miss"
    assert any("states a misconception that contradicts" in w for w in result.warnings)
