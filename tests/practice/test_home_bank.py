"""Finding a question on the home page: filters by topic, difficulty, model and GPU, a search
that folds case and accents and wants every word, the candidate's own status on each question,
hostile input, and a query count that does not grow with the bank.

The expected lists come from the published questions themselves, so the tests hold for the
shipped bank whatever its size."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from practice.bank import estimated_minutes, fold, hardware_option
from practice.models import Attempt, Grade, StepAnswer, Submission
from questionbank.files import DIFFICULTIES
from questions.models import Question, QuestionRevision

pytestmark = pytest.mark.django_db
SEEDS = ("chat-api-50qps", "long-context-rag", "multi-tenant-lora")
CARD_SLUG = re.compile(r'<li class="card question-card" data-slug="([^"]+)"')


def listed(client, **params) -> list[str]:
    """The slugs of the cards the home page lists for these GET parameters."""
    response = client.get(reverse("home"), params)
    assert response.status_code == 200
    return CARD_SLUG.findall(response.content.decode())


def published() -> list[QuestionRevision]:
    return list(
        QuestionRevision.objects.filter(
            pk__in=Question.objects.values("current_revision")
        ).select_related("question")
    )


def cards(client, **params) -> dict[str, str]:
    """Each card's markup by its slug, from one request of the home page."""
    html = client.get(reverse("home"), params).content.decode()
    found = {}
    for match in CARD_SLUG.finditer(html):
        found[match.group(1)] = html[match.start() : html.index("</li>\n", match.start())]
    return found


def card(client, slug: str, **params) -> str:
    return cards(client, **params)[slug]


@pytest.fixture
def candidate(client, bank_loaded) -> User:
    user = User.objects.create_user("finder", password="a-long-Passphrase-42")
    client.force_login(user)
    return user


def test_every_published_question_is_listed_with_model_gpu_time_and_topics(client, bank_loaded):
    revisions = published()
    assert sorted(listed(client)) == sorted(r.question.slug for r in revisions)
    html = client.get(reverse("home")).content.decode()
    assert f"All {len(revisions)} questions." in html
    shown = cards(client)
    for revision in revisions:
        text = shown[revision.question.slug]
        spec = revision.question_spec
        assert f'href="/questions/{revision.question.slug}/"' in text
        for needle in (
            revision.title,
            revision.summary,
            spec.brief.model,
            spec.brief.gpu,
            *spec.tags,
        ):
            assert escape(needle) in text, needle
        minutes = estimated_minutes(revision)
        assert (f"about {minutes:g} min" if minutes else "not stated") in text
        assert f"badge-{revision.difficulty}" in text


def test_the_estimated_time_is_the_questions_minutes_else_the_sum_of_its_steps(bank_loaded):
    seed = Question.objects.get(slug="chat-api-50qps").current_revision
    assert estimated_minutes(seed) == 45
    spec = {k: v for k, v in seed.spec.items() if k != "minutes"}
    question = Question.objects.create(slug="no-minutes")
    revision = QuestionRevision.objects.create(
        question=question,
        number=1,
        content_hash="no-minutes",
        source_text="",
        title=seed.title,
        summary=seed.summary,
        difficulty=seed.difficulty,
        tags=seed.tags,
        spec=spec,
        rendered=seed.rendered,
    )
    assert estimated_minutes(revision) == sum(s.get("minutes") or 0 for s in spec["steps"].values())


@pytest.mark.parametrize("facet", ["topic", "difficulty", "model", "gpu"])
def test_each_filter_lists_exactly_the_questions_it_names(client, bank_loaded, facet):
    revisions = published()

    def values(revision) -> set[str]:
        spec = revision.question_spec
        if facet == "topic":
            return set(spec.tags)
        if facet == "difficulty":
            return {revision.difficulty}
        option = hardware_option(facet, getattr(spec.brief, facet))
        return {option.value} if option else set()

    offered = {v for r in revisions for v in values(r)}
    assert offered, facet
    for value in sorted(offered):
        expected = sorted(r.question.slug for r in revisions if value in values(r))
        assert sorted(listed(client, **{facet: value})) == expected, value


def test_the_seed_hardware_is_one_choice_each_whatever_the_briefs_wording(client, bank_loaded):
    assert set(SEEDS) <= set(listed(client, gpu="rtx-4090"))
    assert set(SEEDS) <= set(listed(client, model="qwen2.5-7b-instruct"))  # the LoRA brief too
    html = client.get(reverse("home")).content.decode()
    assert '<option value="rtx-4090">RTX 4090</option>' in html
    assert html.count('<option value="qwen2.5-7b-instruct">') == 1


def test_filters_combine(client, bank_loaded):
    both = listed(client, topic="prefix-caching", difficulty="advanced")
    assert "long-context-rag" in both
    assert "chat-api-50qps" not in both  # prefix caching, but a core question
    assert "multi-tenant-lora" not in both  # advanced, but no prefix-caching topic


def test_search_folds_case_and_accents(client, bank_loaded):
    plain = listed(client, q="rag")
    assert "long-context-rag" in plain
    assert listed(client, q="RÀG") == plain
    assert listed(client, q="  Rag  ") == plain


def test_search_wants_every_word(client, bank_loaded):
    rag, lora = set(listed(client, q="rag")), set(listed(client, q="lora"))
    both = set(listed(client, q="rag lora"))
    assert both <= rag & lora
    assert "long-context-rag" not in both and "multi-tenant-lora" not in both
    assert "multi-tenant-lora" in listed(client, q="lora 4090")
    assert "multi-tenant-lora" not in listed(client, q="lora zzzz")


def test_search_reads_tags_model_and_gpu_too(client, bank_loaded):
    assert "long-context-rag" in listed(client, q="kv-cache")  # a tag
    assert set(SEEDS) <= set(listed(client, q="qwen2.5-7b 4090"))  # model and GPU
    assert "multi-tenant-lora" in listed(client, q="rank-16 adapters")  # the brief's model text


def test_no_match_says_so_with_a_link_that_clears_the_filters(client, bank_loaded):
    html = client.get(reverse("home"), {"q": "zzzz-no-such-question"}).content.decode()
    assert "No question matches" in html
    assert f'<a href="{reverse("home")}">Clear the filters</a>' in html
    assert 'value="zzzz-no-such-question"' in html  # the search stays in its box


def test_unknown_filter_values_are_ignored(client, bank_loaded):
    everything = listed(client)
    assert listed(client, topic="no-such-topic") == everything
    assert listed(client, difficulty="impossible", model="gpt-9", gpu="abacus") == everything
    assert 'value="no-such-topic"' not in client.get("/?topic=no-such-topic").content.decode()


@pytest.mark.parametrize(
    "query",
    [
        "q=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        "q=" + "a" * 100_000,
        "q=" + "%20".join(["kv"] * 5_000),
        "q=%00%00&topic=%00",
        "q=%27%20OR%201%3D1--&gpu=%27%3B%20DROP%20TABLE%20x",
        "topic=a&topic=b&topic=" + "x" * 5_000,
        "difficulty[]=core&model=%F0%9F%98%80&gpu=%C3%A9",
        "q=%E2%80%AE%CC%81%CC%81%CC%81",
        "page=-1&minutes=1e999&q=%25%25%25",
    ],
)
def test_hostile_parameters_never_break_the_page(client, candidate, query):
    response = client.get("/?" + query)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<script>alert" not in html
    assert "question-card" in html or "No question matches" in html


def test_a_long_search_is_cut_not_refused(client, bank_loaded):
    assert "long-context-rag" in listed(client, q="rag" + " " * 300 + "zzzz-after-the-cut")


def _graded_attempt(user, slug: str, scores: dict[str, float], *, finished: bool) -> Attempt:
    """An attempt at `slug` with one self-checked submission per step in `scores`."""
    revision = Question.objects.get(slug=slug).current_revision
    attempt = Attempt.objects.create(
        user=user, revision=revision, status="finished" if finished else "active"
    )
    for step, score in scores.items():
        answer = StepAnswer.objects.create(attempt=attempt, step_key=step, text="x")
        submission = Submission.objects.create(
            answer=answer, number=1, text="x", draft_version=1, grade_status="done"
        )
        Grade.objects.create(submission=submission, grader="self", score=score, points=[])
        # The offline matcher's pointer is never a score, however high.
        Grade.objects.create(submission=submission, grader="rubric", score=1.0, points=[])
    return attempt


def test_the_status_is_the_candidates_own(client, candidate):
    _graded_attempt(
        candidate, "chat-api-50qps", {"architecture": 0.5, "bottlenecks": 0.7}, finished=True
    )
    _graded_attempt(candidate, "chat-api-50qps", {"architecture": 0.3}, finished=True)
    _graded_attempt(candidate, "long-context-rag", {}, finished=False)
    _graded_attempt(candidate, "multi-tenant-lora", {"tradeoffs": 0.4}, finished=False)

    shown = cards(client)
    assert "Best score 60%" in shown["chat-api-50qps"]  # the better attempt's mean
    assert "In progress" in shown["long-context-rag"]
    assert "In progress · best 40%" in shown["multi-tenant-lora"]
    others = [r.question.slug for r in published() if r.question.slug not in SEEDS]
    for slug in others:
        assert "Not started" in shown[slug]

    someone = User.objects.create_user("someone", password="a-long-Passphrase-42")
    client.force_login(someone)
    theirs = cards(client)
    for slug in SEEDS:
        assert "Not started" in theirs[slug]
    client.logout()
    assert "Not started" not in client.get(reverse("home")).content.decode()


def test_a_finished_attempt_with_no_score_yet_says_so(client, candidate):
    attempt = _graded_attempt(candidate, "chat-api-50qps", {}, finished=True)
    answer = StepAnswer.objects.create(attempt=attempt, step_key="clarify", text="x")
    submission = Submission.objects.create(answer=answer, number=1, text="x", draft_version=1)
    Grade.objects.create(submission=submission, grader="rubric", score=0.9, points=[])
    assert "Attempted · not scored yet" in card(client, "chat-api-50qps")


def test_a_preview_attempt_is_not_a_start(client, candidate):
    attempt = _graded_attempt(candidate, "chat-api-50qps", {"clarify": 0.9}, finished=True)
    Attempt.objects.filter(pk=attempt.pk).update(is_preview=True)
    assert "Not started" in card(client, "chat-api-50qps")


def test_the_status_filters_and_search_work_together(client, candidate):
    _graded_attempt(candidate, "long-context-rag", {"clarify": 0.8}, finished=True)
    text = card(client, "long-context-rag", q="rag", topic="kv-cache")
    assert "Best score 80%" in text


def _rank(slug_revisions: dict[str, QuestionRevision], slugs: list[str]) -> list[int]:
    return [DIFFICULTIES.index(slug_revisions[s].difficulty) for s in slugs]


def test_each_order_lists_every_question_in_that_order(client, bank_loaded):
    revisions = {r.question.slug: r for r in published()}
    easiest = listed(client)
    assert listed(client, sort="") == easiest
    assert _rank(revisions, easiest) == sorted(_rank(revisions, easiest))
    hardest = listed(client, sort="hardest")
    assert _rank(revisions, hardest) == sorted(_rank(revisions, hardest), reverse=True)
    assert sorted(hardest) == sorted(easiest)
    by_title = listed(client, sort="title")
    assert [fold(revisions[s].title) for s in by_title] == sorted(
        fold(r.title) for r in revisions.values()
    )
    shortest = listed(client, sort="shortest")
    minutes = [estimated_minutes(revisions[s]) for s in shortest]
    timed = [m for m in minutes if m is not None]
    assert timed == sorted(timed) and minutes[: len(timed)] == timed  # the untimed ones last
    # The chosen order is kept in its box, and choosing one is not a filter.
    html = client.get(reverse("home"), {"sort": "hardest"}).content.decode()
    assert '<option value="hardest" selected>Hardest first</option>' in html
    # The count, a live region, says the new order: a screen reader hears that it changed.
    assert f"All {len(revisions)} questions, hardest first." in html
    narrowed = client.get(reverse("home"), {"q": "rag", "sort": "title"}).content.decode()
    assert re.search(r"\d+ of \d+ questions match(es)?, by title\.", narrowed)


def test_an_order_by_the_candidates_own_record_puts_the_weakest_first(client, candidate):
    _graded_attempt(candidate, "chat-api-50qps", {"architecture": 0.9}, finished=True)
    _graded_attempt(candidate, "long-context-rag", {"architecture": 0.2}, finished=True)
    _graded_attempt(candidate, "multi-tenant-lora", {}, finished=False)
    lowest = listed(client, sort="lowest-score")
    assert lowest[:2] == ["long-context-rag", "chat-api-50qps"]
    not_started = listed(client, sort="not-started")
    started = {"chat-api-50qps", "long-context-rag", "multi-tenant-lora"}
    assert not started & set(not_started[: -len(started)])
    # An attempt still open comes before the finished ones: it is the one to go back to.
    assert not_started[-3:][0] == "multi-tenant-lora"


def test_a_visitor_is_not_offered_an_order_by_a_record_they_do_not_have(client, bank_loaded):
    html = client.get(reverse("home"), {"sort": "lowest-score"}).content.decode()
    assert "Lowest best score first" not in html and "Not started first" not in html
    assert listed(client, sort="lowest-score") == listed(client)
    assert listed(client, sort="no-such-order" * 50) == listed(client)


def test_clearing_the_filters_keeps_the_order(client, bank_loaded):
    html = client.get(reverse("home"), {"q": "zzzz-no-such", "sort": "title"}).content.decode()
    assert f'<a href="{reverse("home")}?sort=title">Clear the filters</a>' in html


def test_htmx_gets_the_list_alone_with_its_count_and_the_url_varies_on_it(client, bank_loaded):
    response = client.get(
        reverse("home"),
        {"topic": "lora"},
        headers={"HX-Request": "true", "HX-Target": "question-results"},
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and '<div id="question-results">' in html
    assert '<p id="bank-count" hx-swap-oob="innerHTML">' in html
    assert CARD_SLUG.findall(html) == listed(client, topic="lora")
    assert "HX-Request" in response["Vary"] and "private" in response["Cache-Control"]
    # Going back in the browser asks for the whole page.
    restore = client.get(
        reverse("home"),
        {"topic": "lora"},
        headers={
            "HX-Request": "true",
            "HX-Target": "question-results",
            "HX-History-Restore-Request": "true",
        },
    )
    assert "<html" in restore.content.decode()


def test_the_form_works_without_javascript(client, bank_loaded):
    html = client.get(reverse("home")).content.decode()
    form = html[html.index('<form class="bank-filters"') : html.index("</form>")]
    assert 'method="get"' in form and f'action="{reverse("home")}"' in form
    assert 'hx-push-url="true"' in form
    for name, label in [("q", "Search"), ("topic", "Topic"), ("difficulty", "Difficulty"),
                        ("model", "Model"), ("gpu", "GPU")]:  # fmt: skip
        assert f'name="{name}"' in form
        assert f'<label for="bank-{name}">{label}</label>' in form
        assert f'id="bank-{name}"' in form
    assert '<button type="submit"' in form


def _clone_questions(n: int) -> None:
    """n more published questions, copies of a shipped one under new slugs."""
    seed = Question.objects.get(slug="long-context-rag").current_revision
    for i in range(n):
        question = Question.objects.create(slug=f"clone-{i}")
        revision = QuestionRevision.objects.create(
            question=question,
            number=1,
            content_hash=seed.content_hash,
            source_text=seed.source_text,
            title=f"{seed.title} {i}",
            summary=seed.summary,
            difficulty=seed.difficulty,
            tags=seed.tags,
            spec=seed.spec,
            scenario_markdown=seed.scenario_markdown,
            rendered=seed.rendered,
        )
        question.current_revision = revision
        question.save(update_fields=["current_revision"])


def _home_queries(client, **params) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("home"), params).status_code == 200
    return len(queries)


def test_the_query_count_does_not_grow_with_the_bank(client, candidate):
    keep = set(SEEDS)
    hidden = {q.pk: q.current_revision_id for q in Question.objects.exclude(slug__in=keep)}
    Question.objects.exclude(slug__in=keep).update(current_revision=None)
    # Two started (one open, one scored); one left unstarted, as most of a grown bank is.
    _graded_attempt(candidate, "chat-api-50qps", {"clarify": 0.5}, finished=False)
    _graded_attempt(candidate, "long-context-rag", {"clarify": 0.5}, finished=True)
    assert len(listed(client)) == 3
    three = _home_queries(client)
    three_filtered = _home_queries(client, q="rag", topic="kv-cache")

    for pk, revision_id in hidden.items():
        Question.objects.filter(pk=pk).update(current_revision_id=revision_id)
    _clone_questions(20)
    for slug in ("clone-0", "clone-7", "clone-19"):
        _graded_attempt(candidate, slug, {"architecture": 0.9}, finished=True)
    assert len(listed(client)) == 3 + len(hidden) + 20
    assert _home_queries(client) == three
    assert _home_queries(client, q="rag", topic="kv-cache") == three_filtered
    assert "Best score 90%" in card(client, "clone-7")


def test_fold_drops_accents_and_case_and_width():
    assert fold("Qwen2.5 RÉSUMÉ Ｈ１００") == "qwen2.5 resume h100"


def test_the_status_is_fresh_on_the_next_request(client, candidate):
    """Nothing of the page is kept between requests: a new attempt and its grade show at once."""
    assert "Not started" in card(client, "multi-tenant-lora")
    attempt = _graded_attempt(candidate, "multi-tenant-lora", {}, finished=False)
    assert "In progress" in card(client, "multi-tenant-lora")
    answer = StepAnswer.objects.create(attempt=attempt, step_key="clarify", text="x")
    submission = Submission.objects.create(answer=answer, number=1, text="x", draft_version=1)
    Grade.objects.create(submission=submission, grader="llm", score=0.75, points=[])
    assert "In progress · best 75%" in card(client, "multi-tenant-lora")


def test_the_address_bar_gets_the_choices_made_without_the_empty_fields(client, bank_loaded):
    """The form sends every field; the link put in the address bar (the one to share) holds
    the choices as applied: an empty field or an unknown value is left out."""
    form = {"q": " mixtral ", "topic": "", "difficulty": "", "model": "", "gpu": "nope"}
    response = client.get(
        reverse("home"),
        {**form, "sort": ""},
        headers={"HX-Request": "true", "HX-Target": "question-results"},
    )
    assert response["HX-Push-Url"] == reverse("home") + "?q=mixtral"
    cleared = client.get(
        reverse("home"),
        {"q": "", "sort": ""},
        headers={"HX-Request": "true", "HX-Target": "question-results"},
    )
    assert cleared["HX-Push-Url"] == reverse("home")


def test_the_search_box_shows_back_what_was_searched(client, bank_loaded):
    """A pasted direction override or zero-width space is dropped from the search and from
    the box it is shown back in; a control character separates words."""
    html = client.get("/?q=mix\u200btral\u202e").content.decode()
    box = html[html.index('id="bank-q"') :].split(">", 1)[0]
    assert 'value="mixtral"' in box
    assert "moe-mixtral-serving" in listed(client, q="mix\u200btral\u202e")
    assert listed(client, q="kv\x1bcache") == listed(client, q="kv cache")
