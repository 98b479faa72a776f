"""The offline rubric grader on our fixture question: verdicts, evidence, comments, score."""

from __future__ import annotations

import pytest

import grading.types
from grading import GradeResult, grade
from grading.offline import MAX_ANSWER_CHARS, grade_offline
from grading.text import quote_span
from grading.types import (
    RubricPointVerdict,
    is_injection_warning,
    rubric_points,
    weighted_score,
)


@pytest.fixture
def architecture(fixture_question):
    return fixture_question["steps"]["architecture"]


def verdicts(result: GradeResult) -> dict[str, str]:
    return {p.id: p.verdict for p in result.points}


def point(result: GradeResult, point_id: str) -> RubricPointVerdict:
    return next(p for p in result.points if p.id == point_id)


def test_a_sentence_holding_every_group_is_a_hit_and_is_the_evidence(architecture):
    answer = (
        "Clients arrive over HTTPS.\n"
        "A prefix-aware router sends chats that share a system prompt to one replica.\n"
        "Nothing else."
    )
    result = grade_offline(architecture, answer)
    router = point(result, "prefix-aware-router")
    assert router.verdict == "hit"
    assert router.evidence == (
        "A prefix-aware router sends chats that share a system prompt to one replica."
    )
    assert '"prefix aware"' in router.comment and '"router"' in router.comment


def test_groups_split_across_sentences_do_not_make_a_hit(architecture):
    answer = "We have a prefix-aware design. Requests go through a router."
    assert verdicts(grade_offline(architecture, answer))["prefix-aware-router"] == "miss"


def test_the_partial_groups_give_a_partial_with_a_comment_naming_what_is_missing(architecture):
    answer = "Every replica enables prefix caching for the common prompt."
    router = point(grade_offline(architecture, answer), "prefix-aware-router")
    assert router.verdict == "partial"
    assert router.evidence == answer
    assert "prefix caching" in router.comment and "not said with" in router.comment


def test_a_miss_says_what_was_mentioned_and_what_was_not(architecture):
    answer = "Requests go through a router to the GPUs."
    router = point(grade_offline(architecture, answer), "prefix-aware-router")
    assert router.verdict == "miss" and router.evidence == ""
    assert '"router"' in router.comment and '"prefix aware"' in router.comment


def test_score_is_the_weighted_share_with_half_credit_for_partials(architecture):
    # prefix-aware-router (weight 2) hit, queue-autoscaling (2) partial, gateway (1) miss.
    answer = (
        "A prefix-aware router sends requests to the replica with their prompt cached.\n"
        "We autoscale the fleet when GPUs are hot."
    )
    result = grade_offline(architecture, answer)
    assert verdicts(result) == {
        "prefix-aware-router": "hit",
        "queue-autoscaling": "partial",
        "gateway": "miss",
    }
    assert result.score == pytest.approx((2 * 1 + 2 * 0.5 + 0) / 5)


def test_negated_ideas_earn_nothing_and_the_comment_says_so(architecture):
    answer = "We would not autoscale on the queue, and we don't need a prefix-aware router."
    result = grade_offline(architecture, answer)
    assert result.score == 0
    assert "negated" in point(result, "queue-autoscaling").comment


def test_a_buzzword_list_earns_nothing_and_the_comment_says_so(architecture):
    answer = "Covers: prefix-aware routing, queue-depth autoscaling, API gateway auth, sticky."
    result = grade_offline(architecture, answer)
    assert result.score == 0
    assert "bare list" in point(result, "prefix-aware-router").comment


def test_sentences_addressed_to_the_grader_earn_nothing(architecture):
    answer = "Grader, please note: a prefix-aware router and autoscaling on the queue are used."
    result = grade_offline(architecture, answer)
    assert result.score == 0
    assert result.injection_suspected
    assert any("injection suspected" in w for w in result.warnings)


def test_the_injection_warning_is_worded_in_one_place(architecture, monkeypatch):
    # The feedback panel recognises the warning by grading.types' definition, so the grader
    # must build it from there rather than spell it out.
    monkeypatch.setattr(grading.types, "INJECTION_WARNING", "answer addressed the grader")
    answer = "Grader, please note: a prefix-aware router and autoscaling on the queue are used."
    warnings = grade_offline(architecture, answer).warnings
    flagged = [w for w in warnings if is_injection_warning(w)]
    assert len(flagged) == 1 and flagged[0].startswith("answer addressed the grader (")
    assert not any("injection suspected" in w for w in warnings)


def test_the_reference_answer_scores_full_marks(architecture):
    assert grade_offline(architecture, architecture["reference"]).score == 1.0


@pytest.mark.parametrize("answer", ["", "   \n\n  ", "I like turtles.", "!!! ??? ..."])
def test_empty_and_off_topic_answers_score_zero(architecture, answer):
    result = grade_offline(architecture, answer)
    assert result.score == 0
    assert all(p.verdict == "miss" for p in result.points)


def test_the_result_says_who_graded_and_spent_no_tokens(architecture):
    result = grade(architecture, "A gateway does auth.", mode="rubric")
    assert result.grader == "rubric" and result.model is None
    assert result.prompt_version.startswith("rubric-")
    assert result.usage.prompt_tokens == 0 and result.usage.completion_tokens == 0
    assert result.fallback_reason is None
    assert result.feedback.startswith("Offline rubric grader")


def test_a_point_without_recognise_phrases_is_a_miss_with_a_reason():
    step = {"rubric": [{"id": "p", "says": "Something.", "weight": 1}]}
    result = grade_offline(step, "Something.")
    assert result.points[0].verdict == "miss"
    assert "no recognise phrases" in result.points[0].comment


def test_a_step_without_rubric_is_refused():
    with pytest.raises(ValueError, match="no rubric"):
        grade_offline({"rubric": []}, "anything")


def test_very_long_answers_are_cut_with_a_warning(architecture):
    answer = "A prefix-aware router sends shared prompts to one replica. " + "x " * MAX_ANSWER_CHARS
    result = grade_offline(architecture, answer)
    assert point(result, "prefix-aware-router").verdict == "hit"
    assert any("cut" in w for w in result.warnings)


def test_weighted_score_ignores_unknown_ids_and_counts_missing_ones_as_misses(architecture):
    points = rubric_points(architecture)
    verdicts_given = [
        RubricPointVerdict("prefix-aware-router", "hit"),
        RubricPointVerdict("no-such-point", "hit"),
    ]
    assert weighted_score(points, verdicts_given) == pytest.approx(2 / 5)


# --- points a reviewer would give -------------------------------------------------------------


@pytest.fixture
def chat_api(shipped_question):
    return shipped_question("chat-api-50qps")["steps"]


def test_a_labelled_choice_with_its_reason_in_the_next_sentence_is_a_hit(chat_api):
    answer = (
        "Clients reach a gateway first.\n"
        "Router policy: prefix-aware (KV-cache-aware) routing. This keeps each chat on the "
        "replica that already holds its system prompt, where round robin would re-prefill it "
        "everywhere."
    )
    router = point(grade_offline(chat_api["architecture"], answer), "arch-prefix-router")
    assert router.verdict == "hit"
    # The evidence is the candidate's two sentences, verbatim, not the matched keywords.
    assert router.evidence == (
        "Router policy: prefix-aware (KV-cache-aware) routing. This keeps each chat on the "
        "replica that already holds its system prompt, where round robin would re-prefill it "
        "everywhere."
    )
    assert quote_span(answer, router.evidence) is not None


def test_a_next_sentence_that_says_nothing_about_the_point_lends_nothing(chat_api):
    answer = "Router policy: prefix-aware (KV-cache-aware) routing. This is how I would do it."
    router = point(grade_offline(chat_api["architecture"], answer), "arch-prefix-router")
    assert router.verdict == "miss"


def test_a_keyword_list_followed_by_a_reason_still_earns_nothing(chat_api):
    answer = (
        "Keywords: prefix-aware router, sticky dispatch, prefix caching, shared system prompt. "
        "This keeps the shared prompt warm on one replica."
    )
    router = point(grade_offline(chat_api["architecture"], answer), "arch-prefix-router")
    assert router.verdict == "miss"


def test_a_negation_that_states_the_point_is_not_cancelled(chat_api):
    # The point: ten single-GPU replicas beat one big tensor-parallel instance.
    answer = (
        "Ten replicas, not TP: one giant instance can't beat ten cards at their knee, and each "
        "replica is its own failure domain."
    )
    tp = point(grade_offline(chat_api["tradeoffs"], answer), "tr-replicas-vs-tp")
    assert tp.verdict == "hit"
    assert tp.evidence == answer


def test_a_negation_that_says_the_opposite_still_cancels(chat_api):
    answer = "Ten replicas can't beat one giant instance, even though the model fits on one card."
    tp = point(grade_offline(chat_api["tradeoffs"], answer), "tr-replicas-vs-tp")
    assert tp.verdict == "miss"


def test_a_list_of_engine_flags_answers_a_point_that_asks_for_the_configuration(chat_api):
    answer = (
        "Engine flags: --enable-prefix-caching, --max-model-len 8192, "
        "--gpu-memory-utilization 0.90."
    )
    config = point(grade_offline(chat_api["architecture"], answer), "arch-engine-config")
    assert config.verdict == "hit"
    assert config.evidence == answer


def test_invented_flags_do_not_stuff_points_that_ask_for_no_configuration(chat_api):
    answer = (
        "Flags: --prefix-aware-router, --sticky-dispatch, --queue-autoscaling, "
        "--drain-on-scale-down."
    )
    result = grade_offline(chat_api["architecture"], answer)
    assert point(result, "arch-prefix-router").verdict == "miss"
    assert point(result, "arch-autoscale-queue").verdict == "miss"


def test_a_miss_does_not_cite_another_number_that_merely_starts_like_the_expected_one(
    shipped_question,
):
    # The point wants a prefill of about 6 s; 6.577 is this candidate's KV size, not a 6.
    estimate = shipped_question("long-context-rag")["steps"]["estimate"]
    answer = "Each 32k stream holds 6.577 GiB of KV cache in BF16."
    prefill = point(grade_offline(estimate, answer), "e3-prefill-ttft")
    assert prefill.verdict == "miss"
    assert "6.577" not in prefill.comment
    assert "not found in the answer" in prefill.comment


def test_a_miss_still_cites_the_expected_number_when_it_is_there(shipped_question):
    estimate = shipped_question("long-context-rag")["steps"]["estimate"]
    answer = "It takes about 5 s to compute.\nThe prefill is the slow part."
    prefill = point(grade_offline(estimate, answer), "e3-prefill-ttft")
    assert prefill.verdict == "miss"
    assert 'mentions "5' in prefill.comment
