"""The offline keyword matcher points, it does not decide.

Where no model grades, the candidate self-checks each rubric point and the matcher helps: for a
point whose verdict is hit or partial with evidence the UI shows "may cover this" and the
quote. So when it points it must be right, its quotes must be the candidate's own typed words,
and a sentence stating a wrong idea never covers the point it contradicts.
"""

from __future__ import annotations

import pytest

from bench.pointing import measure_pointing, shipped_labels
from grading import GraderConfig, grade
from grading.fake_server import FakeChatServer, ScriptedReply, grade_content, response_ids
from grading.offline import grade_offline
from grading.text import (
    FORM_BLOCK_START,
    contradicting_figure,
    figures,
    normalise_for_quote,
    split_form_block,
    typed_text,
)
from practice.slo import NUMBER_FIELDS, TEXT_FIELDS, card_as_text
from questionbank import load_question_spec
from questionbank.files import CONTENT_DIR, parse_file, question_file
from tests.conftest import CORE_SLUGS

# Measured when written: 0.956 precision over 182 pointings, recall 0.62 (before: 0.901 over
# 191, recall 0.61). The self-check, not the matcher, is where recall comes from.
MIN_PRECISION = 0.90


def point(result, point_id):
    return next(p for p in result.points if p.id == point_id)


def shown(result) -> list[str]:
    """Every quote the UI would show: "may cover this" evidence and wrong ideas."""
    quotes = [p.evidence for p in result.points if p.verdict in ("hit", "partial")]
    return [q for q in quotes + [m.evidence for m in result.misconceptions] if q]


# --- precision on the labelled set ---------------------------------------------------------------


# One worker runs the module, so its module-scoped fixture (the labelled set graded) is built
# once, not once per worker.
pytestmark = pytest.mark.xdist_group(__name__)


@pytest.fixture(scope="module")
def pointing():
    return measure_pointing(shipped_labels())


def test_the_labelled_set_is_the_shipped_one(pointing):
    assert pointing.answers >= 144
    assert pointing.human_covered > 200


def test_when_the_matcher_points_a_human_agrees_nine_times_in_ten(pointing):
    assert pointing.spoke >= 150, "it must still point, not fall silent"
    assert pointing.precision >= MIN_PRECISION, pointing.wrong


def test_no_pointing_comes_from_a_sentence_stating_a_contradicting_wrong_idea(pointing):
    assert pointing.contradicted == 0


# --- only what the candidate typed ---------------------------------------------------------------


def brief_card(slug: str, **overrides: str) -> dict:
    """An SLO card holding the brief's own values, as a careful candidate fills it."""
    brief = load_question_spec(slug).brief
    card = {}
    for f in NUMBER_FIELDS + TEXT_FIELDS:
        value = brief.value_of(f.name) if f.in_brief else None
        if value is not None:
            card[f.name] = str(value)
    return {**card, **overrides}


def test_the_card_is_never_quoted_back_as_the_candidates_words():
    step = load_question_spec("long-context-rag").step("clarify")
    text = card_as_text(brief_card("long-context-rag", ttft_p99_ms="5000", notes=""))
    assert text.startswith(FORM_BLOCK_START)
    result = grade_offline(step, text)
    assert shown(result) == []
    assert point(result, "c3-ttft-binding").verdict == "miss"


def test_a_typed_figure_that_contradicts_the_points_is_not_evidence_for_it():
    step = load_question_spec("long-context-rag").step("clarify")
    wrong = point(grade_offline(step, "The hard SLO is p99 TTFT 5000 ms."), "c3-ttft-binding")
    assert wrong.verdict == "miss" and wrong.evidence == ""
    assert '"5000 ms"' in wrong.comment
    right = point(grade_offline(step, "The hard SLO is p99 TTFT 2000 ms."), "c3-ttft-binding")
    assert right.verdict == "hit"


def test_the_notes_under_a_card_are_still_read_and_quoted():
    step = load_question_spec("long-context-rag").step("clarify")
    notes = "The binding SLO is p99 TTFT of at most 2 s, since prefill dominates."
    result = grade_offline(step, card_as_text(brief_card("long-context-rag", notes=notes)))
    assert point(result, "c3-ttft-binding").evidence == notes


def test_the_model_reads_the_card_as_context_and_may_not_quote_it():
    step = load_question_spec("long-context-rag").step("clarify")
    notes = "Prompts share a knowledge-base prefix, and answers are short."
    text = card_as_text(brief_card("long-context-rag", ttft_p99_ms="5000", notes=notes))
    card_quote = "p99 TTFT: 5000 ms"
    with FakeChatServer(every_point_hit_with(card_quote)) as server:
        config = GraderConfig(base_url=server.base_url, timeout_s=5, max_retries=0)
        result = grade(step, text, mode="llm", config=config)
        sent = server.requests[0]["messages"][-1]["content"]
    assert result.grader == "llm"
    # The card is in the prompt, labelled, ahead of the answer's markers; the notes alone
    # are the answer.
    before, _, marked = sent.partition("<<<ANSWER ")
    assert card_quote in before and "never quote" in before
    assert card_quote not in marked and notes in marked
    assert all(p.verdict == "miss" for p in result.points)


def every_point_hit_with(quote: str):
    def respond(request: dict) -> ScriptedReply:
        return ScriptedReply(
            content=grade_content(
                [{"id": i, "evidence": quote, "verdict": "hit", "comment": "Covered."}
                 for i in response_ids(request)]
            )
        )  # fmt: skip

    return respond


BANK = tuple(sorted(path.stem for path in (CONTENT_DIR / "questions").glob("*.md")))


def question_test_answers():
    """(slug, part, answer) for every answer test in the bank's `tests:`."""
    out = []
    for slug in BANK:
        spec = load_question_spec(slug)
        parts = {s.key: s for s in spec.steps}
        parts |= {f.id: f for s in spec.steps for f in s.follow_ups}
        tests = parse_file(question_file(slug, CONTENT_DIR)).meta.get("tests") or {}
        for key, entries in tests.items():
            for entry in entries or ():
                if isinstance(entry, dict) and entry.get("answer"):
                    out.append((slug, key, parts[key], str(entry["answer"])))
    return out


QUESTION_TEST_ANSWERS = question_test_answers()


def test_every_question_has_answer_tests():
    assert {slug for slug, *_ in QUESTION_TEST_ANSWERS} == set(BANK) >= set(CORE_SLUGS)


@pytest.mark.parametrize(("slug", "key", "part", "answer"), QUESTION_TEST_ANSWERS)
def test_every_quote_shown_is_what_the_candidate_typed(slug, key, part, answer):
    # Clarify answers come with a card filled from the brief, as the app grades them.
    text = card_as_text(brief_card(slug, notes=answer)) if key == "clarify" else answer
    typed = normalise_for_quote(answer)
    for quote in shown(grade_offline(part, text)):
        assert normalise_for_quote(quote) in typed, (key, quote)
        assert normalise_for_quote(quote) in normalise_for_quote(typed_text(text))


# --- negation, requirements and wrong ideas ------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "One customer must never reach another's adapter.",
        "Tenant isolation is non-negotiable: prompts and adapters stay private.",
        "Isolation is a hard requirement: a tenant's data must not leak to another tenant.",
    ],
)
def test_a_prohibition_states_a_requirement_rather_than_negating_it(answer):
    step = load_question_spec("multi-tenant-lora").step("clarify")
    isolation = point(grade_offline(step, answer), "c2-isolation")
    assert isolation.verdict == "hit"
    assert isolation.evidence == answer


def test_a_prohibition_still_negates_a_point_that_is_a_design_choice():
    step = load_question_spec("chat-api-50qps").step("architecture")
    answer = "The router must never be prefix-aware, requests should spread evenly."
    router = point(grade_offline(step, answer), "arch-prefix-router")
    assert router.verdict == "miss"
    assert "mentioned only in a negated sentence" in router.comment


def test_negated_is_said_only_when_the_points_words_are_there_negated():
    step = load_question_spec("multi-tenant-lora").step("clarify")
    # "tenant" alone is negated here, but no word of isolation is there at all.
    isolation = point(grade_offline(step, "We do not need a GPU per tenant."), "c2-isolation")
    assert isolation.verdict == "miss"
    assert "negated" not in isolation.comment
    assert '"tenant"' in isolation.comment  # the reason names only what the answer holds


def test_a_point_whose_words_are_all_there_but_denied_is_missing_as_negated(shipped_question):
    tradeoffs = shipped_question("chat-api-50qps")["steps"]["tradeoffs"]
    answer = "Ten replicas can't beat one giant instance, even though the model fits on one card."
    replicas = point(grade_offline(tradeoffs, answer), "tr-replicas-vs-tp")
    assert replicas.verdict == "miss" and replicas.evidence == ""
    assert "mentioned only in a negated sentence" in replicas.comment


def test_a_denial_of_ideas_joined_by_or_covers_neither():
    step = load_question_spec("chat-api-50qps").step("tradeoffs")
    answer = "Prefix-aware routing never causes imbalance or hot spots, so no fallback is needed."
    affinity = point(grade_offline(step, answer), "tr-affinity-balance")
    assert affinity.verdict != "hit", affinity.comment


def test_a_sentence_stating_a_wrong_idea_never_covers_the_point_it_contradicts():
    step = load_question_spec("multi-tenant-lora").step("bottlenecks")
    answer = "--max-loras can be raised as high as you like, because the KV pool is untouched."
    result = grade_offline(step, answer)
    assert [m.id for m in result.misconceptions] == ["b2-max-loras-free"]
    slots = point(result, "b2-slots-vs-kv")
    assert slots.verdict == "miss" and slots.evidence == ""


# --- known misses that now point ----------------------------------------------------------------


def test_a_canary_with_rollback_points_at_the_safe_rollout():
    step = load_question_spec("chat-api-50qps").step("bottlenecks")
    answer = (
        "A bad build goes out as a canary to one replica, with automatic rollback if TTFT, "
        "TPOT or error rate regress."
    )
    deploy = point(grade_offline(step, answer), "bn-bad-deploy")
    assert deploy.verdict == "hit" and deploy.evidence == answer


def test_minutes_of_weight_loading_points_at_the_cold_start():
    step = load_question_spec("chat-api-50qps").step("bottlenecks")
    answer = "A replica takes minutes to load weights, so new capacity lags the spike."
    cold = point(grade_offline(step, answer), "bn-cold-start")
    assert cold.verdict == "hit" and cold.evidence == answer


# --- the reading underneath ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "figures_found"),
    [
        ("p99 TTFT 5000 ms", [("time", 5.0)]),
        (
            "under two seconds, at 50 QPS on 24 GB cards",
            [("time", 2.0), ("rate", 50), ("memory", 24)],
        ),
        ("it takes 1.5 minutes", [("time", 90.0)]),
        # Cards, counts and words that only end like a unit are no figures.
        ("ten 4090s serve hundreds of tenants, 100s of them cold ones", []),
    ],
)
def test_figures_are_read_with_their_units(text, figures_found):
    assert [(f.kind, pytest.approx(f.value)) for f in figures(text)] == figures_found


def test_a_figure_contradicts_only_when_no_figure_of_its_kind_agrees():
    expected = figures("Names p99 TTFT at most 2 s as the hard SLO.")
    assert contradicting_figure("p99 TTFT 5000 ms", expected).written == "5000 ms"
    assert contradicting_figure("p99 TTFT 2000 ms, TPOT 50 ms", expected) is None
    assert contradicting_figure("at 50 QPS", expected) is None  # another kind says nothing


def test_only_a_form_block_that_opens_the_text_is_set_aside():
    text = card_as_text({"ttft_p99_ms": "300", "notes": "We size for the peak."})
    values, start = split_form_block(text)
    assert values == "p99 TTFT: 300 ms" and text[start:].strip() == "We size for the peak."
    quoted = f"We size for the peak.\n{text}"
    assert split_form_block(quoted) == ("", 0)


# --- flag lists and keyword salads ---------------------------------------------------------------


def test_a_buzzword_list_with_flags_among_it_points_at_nothing():
    step = load_question_spec("multi-tenant-lora").step("bottlenecks")
    answer = (
        "Bottlenecks: thrash, --max-loras, eviction, noisy neighbour, fair queuing, "
        "cold adapter TTFT, pre-warm, KV pool."
    )
    assert shown(grade_offline(step, answer)) == []


def test_a_flag_sentence_that_says_why_still_points():
    step = load_question_spec("multi-tenant-lora").step("bottlenecks")
    answer = (
        "When more adapters are active at once than there are --max-loras slots, replicas load "
        "and evict adapters continuously and latency jumps."
    )
    assert point(grade_offline(step, answer), "b2-thrash").verdict == "hit"
