"""Drill sets: five drills with fresh givens, answers checked by the napkin checker, each
kind's card scheduled by FSRS from the verdict, and nobody else's drills reachable."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from fsrs import Card as FsrsCard
from fsrs import Rating

from drills import engine, selectors, services
from drills.models import Card, DrillItem, DrillSet

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def candidate(db):
    return User.objects.create_user("drill-candidate", password="a-long-Passphrase-42")


def drill_of(item: DrillItem) -> engine.Drill:
    return engine.drill_generate(item.kind, item.seed)


def test_a_mixed_set_has_five_different_kinds_each_with_fresh_givens(candidate):
    drill_set = services.drill_set_start(user=candidate, now=NOW)
    items = list(drill_set.items.all())
    assert [i.position for i in items] == [1, 2, 3, 4, 5]
    assert len({i.kind for i in items}) == 5
    assert all(i.fingerprint == drill_of(i).fingerprint for i in items)


def test_the_same_givens_are_not_drawn_again_for_a_candidate(candidate):
    for _ in range(3):
        services.drill_set_start(user=candidate, kind="n_gpu", now=NOW)
    fingerprints = list(
        DrillItem.objects.filter(user=candidate).values_list("fingerprint", flat=True)
    )
    assert len(fingerprints) == 15
    assert len(set(fingerprints)) == 15


def test_a_seed_starts_the_set_with_that_seeds_drill(candidate):
    drill_set = services.drill_set_start(user=candidate, kind="weights", seed=3, now=NOW)
    first = drill_set.items.get(position=1)
    assert (first.kind, first.seed) == ("weights", 3)


def test_a_gb_for_gib_answer_is_a_known_mistake_and_the_card_follows_fsrs(candidate):
    drill_set = services.drill_set_start(user=candidate, kind="weights", now=NOW)
    item = drill_set.items.get(position=1)
    gib = drill_of(item).expected * 1e9 / 1024**3
    result = services.drill_item_answer(item=item, answer=f"{gib:.4f} GB", now=NOW)
    assert (result.verdict, result.mistake) == ("known_mistake", "gb-vs-gib")
    card = Card.objects.get(user=candidate, key="drill:weights")
    assert card.due == NOW + timedelta(minutes=1)  # a miss is due again at once
    assert (card.reviews, card.lapses) == (1, 1)


def test_a_right_answer_rates_good_and_the_next_review_follows_fsrs(candidate):
    scheduler = services.SCHEDULER
    state = FsrsCard(due=NOW)
    for days in (0, 2, 7):  # a set each time, each one a review of the kind's card
        when = NOW + timedelta(days=days)
        drill_set = services.drill_set_start(user=candidate, kind="kv_per_token", now=when)
        item = drill_set.items.get(position=1)
        services.drill_item_answer(item=item, answer=f"{drill_of(item).expected} KiB", now=when)
        state, _ = scheduler.review_card(state, Rating.Good, when)
    card = Card.objects.get(user=candidate, key="drill:kv_per_token")
    assert card.due == state.due
    assert card.reviews == 3
    assert card.due > NOW + timedelta(days=10)  # each review spaced further


def test_after_a_set_only_its_misses_are_due_today(candidate):
    """A kind answered right goes to days away, and a missed one is due again at once: FSRS's
    default second learning step (ten minutes) brought every kind of a set answered right back
    "due today" right after the set."""
    drill_set = services.drill_set_start(user=candidate, now=NOW)
    missed = set()
    for item in drill_set.items.order_by("position"):
        right = item.position % 2 == 1
        answer = f"{drill_of(item).expected} {drill_of(item).unit}" if right else "0"
        services.drill_item_answer(item=item, answer=answer, now=NOW)
        if not right:
            missed.add(f"drill:{item.kind}")
    assert missed and len(missed) < services.SET_SIZE
    due = selectors.cards_due(user=candidate, now=NOW + timedelta(hours=1))
    assert {d.card.key for d in due} == missed
    right = Card.objects.filter(user=candidate).exclude(key__in=missed)
    assert right and all(c.due >= NOW + timedelta(days=2) for c in right)


def test_an_unreadable_or_empty_answer_is_told_and_nothing_is_stored(candidate):
    item = services.drill_set_start(user=candidate, kind="n_inst", now=NOW).items.get(position=1)
    for answer, words in (("", "Write an answer"), ("2 *", "could not be read"),
                          ("x" * 501, "at most 500")):  # fmt: skip
        with pytest.raises(services.DrillAnswerError, match=words):
            services.drill_item_answer(item=item, answer=answer, now=NOW)
    item.refresh_from_db()
    assert not item.is_answered
    assert not Card.objects.filter(user=candidate).exists()


def test_a_drill_is_answered_once(candidate):
    item = services.drill_set_start(user=candidate, kind="n_inst", now=NOW).items.get(position=1)
    services.drill_item_answer(item=item, answer="1", now=NOW)
    with pytest.raises(services.DrillAnswerError, match="already answered") as error:
        services.drill_item_answer(item=item, answer="2", now=NOW)
    assert error.value.status == 409


def test_someone_elses_drill_set_and_answers_are_404(candidate, client):
    other = User.objects.create_user("someone-else", password="a-long-Passphrase-42")
    drill_set = services.drill_set_start(user=other, now=NOW)
    client.force_login(candidate)
    assert client.get(f"/drills/sets/{drill_set.pk}/").status_code == 404
    response = client.post(f"/drills/sets/{drill_set.pk}/drills/1/answer/", {"answer": "1"})
    assert response.status_code == 404
    assert not DrillItem.objects.filter(drill_set=drill_set, verdict__gt="").exists()
    # An id past the database's integers is no set either (SQLite raised OverflowError: a 500).
    huge = "/drills/sets/99999999999999999999/drills/1/answer/"
    assert client.post(huge, {"answer": "1"}).status_code == 404


def test_bad_kind_and_seed_on_the_page_get_a_clear_message(candidate, client):
    client.force_login(candidate)
    response = client.post("/drills/sets/", {"kind": "ttft-ish"})
    assert response.status_code == 422
    assert "Unknown drill kind" in response.content.decode()
    response = client.post("/drills/sets/", {"kind": "weights", "seed": "abc"})
    assert response.status_code == 422
    assert "A seed is a whole number" in response.content.decode()


@pytest.mark.parametrize("seed", ["٣٠", "３０", "1_0", "+5", "-1"])
def test_a_seed_is_read_in_the_digits_0_to_9_only(candidate, client, seed):
    # int() reads other scripts' digits, signs and underscores; the planner and the
    # worksheet refuse them, and so does the replay box.
    client.force_login(candidate)
    response = client.post("/drills/sets/", {"kind": "weights", "seed": seed})
    assert response.status_code == 422
    assert "A seed is a whole number" in response.content.decode()
    assert not DrillSet.objects.exists()


def test_the_answer_page_works_without_javascript_and_with_htmx(candidate):
    client = Client()
    client.force_login(candidate)
    response = client.post("/drills/sets/", {"kind": "n_gpu"})
    assert response.status_code == 302
    set_url = response["Location"]
    response = client.post(f"{set_url}drills/1/answer/", {"answer": "2 *"})
    assert response.status_code == 422
    assert "could not be read" in response.content.decode()
    response = client.post(f"{set_url}drills/1/answer/", {"answer": "3"})
    assert response.status_code == 302 and response["Location"].endswith("#drill-1")
    page = client.get(set_url).content.decode()
    assert "Worked solution" in page and "your answer <code>3</code>" in page
    response = client.post(f"{set_url}drills/2/answer/", {"answer": "4"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="drill-set"') and "<html" not in body


def test_signed_out_visitors_are_sent_to_log_in(client, db):
    assert client.get("/drills/").status_code == 302
    assert client.get("/drills/progress/").status_code == 302


def test_the_home_page_shows_the_next_step_to_a_candidate_and_nothing_to_a_visitor(
    content_loaded, client
):
    html = client.get("/").content.decode()
    assert "What to practise next" not in html
    user = User.objects.create_user("home-candidate", password="a-long-Passphrase-42")
    client.force_login(user)
    html = client.get("/").content.decode()
    assert "What to practise next" in html
    # A new candidate: a question not tried yet, opened from the recommendation.
    assert "You have not tried" in html
    assert 'href="/drills/progress/"' in html


def test_an_answer_from_a_second_tab_says_the_set_goes_on_and_shows_the_verdict(candidate):
    client = Client()
    client.force_login(candidate)
    set_url = client.post("/drills/sets/", {"kind": "n_gpu"})["Location"]
    client.post(f"{set_url}drills/1/answer/", {"answer": "3"}, HTTP_HX_REQUEST="true")
    # The second tab still shows drill 1's form: its answer comes in after the first.
    response = client.post(f"{set_url}drills/1/answer/", {"answer": "4"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 409
    body = response.content.decode()
    assert "already answered, perhaps in another tab; its verdict is shown below" in body
    assert "start a new set" not in body  # four drills of this set are still to answer
    assert "your answer <code>3</code>" in body and 'id="answer-2"' in body
    assert re.search(r'data-testid="verdict" tabindex="-1" autofocus>\s*<strong>[^<]*</strong>: '
                     r"your answer <code>3</code>", body)  # fmt: skip


def test_after_an_answer_by_htmx_focus_moves_to_its_verdict_then_to_set_done(candidate):
    """The answered input is swapped away; htmx focuses the [autofocus] element it brings."""
    client = Client()
    client.force_login(candidate)
    set_url = client.post("/drills/sets/", {"kind": "n_gpu"})["Location"]
    for position in range(1, 6):
        body = client.post(
            f"{set_url}drills/{position}/answer/", {"answer": "3"}, HTTP_HX_REQUEST="true"
        ).content.decode()
        assert body.count("autofocus") == 1
        focused = re.search(r"<p [^>]*autofocus[^>]*>(.{0,20})", body, re.S)
        if position < 5:  # the verdict of the drill just answered
            drill = body[: focused.start()].rsplit('id="drill-', 1)[1][0]
            assert 'data-testid="verdict"' in focused.group(0) and drill == str(position)
        else:
            assert focused.group(1).startswith("Set done")
    # An answer that is not taken brings focus back to its input, sent from the box or from
    # the Check button alike (htmx would restore it by id only from the box).
    set_url = client.post("/drills/sets/", {"kind": "n_gpu"})["Location"]
    body = client.post(
        f"{set_url}drills/1/answer/", {"answer": "2 *"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert body.count("autofocus") == 1
    assert re.search(r'<input [^>]*id="answer-1"[^>]*autofocus', body)


def test_a_bad_replay_seed_reopens_the_replay_form_with_what_was_typed(candidate):
    client = Client()
    client.force_login(candidate)
    response = client.post("/drills/sets/", {"kind": "ttft", "seed": "12abc"})
    assert response.status_code == 422
    body = response.content.decode()
    assert "<details open>" in body
    assert '<option value="ttft" selected>' in body
    seed_input = re.search(r'<input [^>]*id="replay-seed"[^>]*>', body).group(0)
    assert 'value="12abc"' in seed_input and 'aria-invalid="true"' in seed_input
    assert 'id="replay-error">A seed is a whole number' in body
    # A set started without a seed opens no replay form on an error.
    body = client.post("/drills/sets/", {"kind": "ttft-ish"}).content.decode()
    assert "<details open>" not in body and 'id="replay-error"' not in body


def _answered(user, kind: str, mistakes: list[str | None], now: datetime) -> None:
    """Answers of `kind` with these mistakes (None: right), oldest first, and the card they
    leave due now."""
    drill_set = services.drill_set_start(user=user, kind=kind, now=now)
    for item, mistake in zip(drill_set.items.all(), mistakes, strict=False):
        item.verdict = "correct" if mistake is None else "known_mistake"
        item.mistake = mistake or ""
        item.answered_at = now
        item.save()
    services.card_review(user=user, key=f"drill:{kind}", source=Card.Source.DRILL,
                         rating=Rating.Again, now=now)  # fmt: skip


def test_the_recommendation_counts_the_answers_that_made_the_mistake_it_names(candidate):
    # Four answered so far: one off by 1000, two GB for GiB, one right.
    _answered(candidate, "weights", ["factor-1000", "gb-vs-gib", "gb-vs-gib", None], NOW)
    sentence = selectors.recommendation(user=candidate, now=NOW).sentence
    assert "2 of your 4 answers in your last set mixed up GB and GiB" in sentence


def test_the_recommendation_counts_every_answer_of_the_last_set(candidate):
    # A set of five whose first answer mixed up GB and GiB: the miss is in the count, and the
    # count names the five answers it is out of.
    _answered(candidate, "weights", ["gb-vs-gib", None, None, None, None], NOW)
    recommended = selectors.recommendation(user=candidate, now=NOW)
    assert recommended.kind == "weights"
    assert "Weight sizing: 1 of your 5 answers in your last set mixed up GB and GiB;" in (
        recommended.sentence
    )


def test_the_recommendation_leaves_out_the_sets_before_the_last(candidate):
    # Every answer of the earlier set was off; the last set has one miss in five.
    _answered(candidate, "weights", ["factor-1000"] * 5, NOW)
    _answered(candidate, "weights", [None, None, "gb-vs-gib", None, None],
              NOW + timedelta(minutes=1))  # fmt: skip
    sentence = selectors.recommendation(user=candidate, now=NOW).sentence
    assert "Weight sizing: 1 of your 5 answers in your last set mixed up GB and GiB;" in sentence


def test_every_mistake_phrase_reads_after_one_answer_and_after_several(candidate):
    for phrase in engine.MISTAKE_PHRASES.values():
        assert phrase.split()[0] not in {"was", "were", "is", "are"}, phrase
    _answered(candidate, "weights", ["factor-1000"], NOW)
    sentence = selectors.recommendation(user=candidate, now=NOW).sentence
    assert "Weight sizing: your last answer missed by a factor of 1000;" in sentence


def test_the_set_page_is_fetched_again_on_back_not_taken_from_the_browser_cache(candidate):
    # Answers arrive by htmx at the same address: Forward (or Back from the progress page)
    # showed the set as first loaded, an answered drill's box still open, its answer a 409.
    client = Client()
    client.force_login(candidate)
    set_url = client.post("/drills/sets/", {"kind": "n_gpu"})["Location"]
    client.post(f"{set_url}drills/1/answer/", {"answer": "3"}, HTTP_HX_REQUEST="true")
    response = client.get(set_url)
    assert "no-store" in response["Cache-Control"]
    assert 'id="answer-1"' not in response.content.decode()


def test_a_new_candidate_is_sent_to_the_easiest_question_first(bank_loaded):
    # The bank lists its questions easiest first; the recommendation took the first by slug,
    # an advanced one, before the bank's intro question.
    from questions import selectors as question_selectors

    user = User.objects.create_user("brand-new", password="a-long-Passphrase-42")
    order = {"intro": 0, "core": 1, "advanced": 2}
    easiest = min(
        question_selectors.question_list(), key=lambda r: (order[r.difficulty], r.title.lower())
    )
    assert easiest.difficulty == "intro"
    recommendation = selectors.recommendation(user=user, now=NOW)
    assert recommendation.url == f"/questions/{easiest.question.slug}/"
    assert f"“{easiest.title}”" in recommendation.sentence


def test_an_answer_after_the_session_expired_goes_to_log_in_and_back_to_the_set(candidate):
    client = Client()
    client.force_login(candidate)
    set_url = client.post("/drills/sets/", {"kind": "n_gpu"})["Location"]
    client.logout()  # the session expired while the drill was open
    # With htmx or without, the log-in page, going on to the set (the answer's address takes
    # posts). htmx follows it; requests.js says so at the answer box, with the link
    # (test_requests_browser.py).
    for headers in ({"HX-Request": "true"}, {}):
        response = client.post(f"{set_url}drills/1/answer/", {"answer": "3"}, headers=headers)
        assert response.status_code == 302
        assert response["Location"] == f"/accounts/login/?next={set_url}"
    assert not DrillItem.objects.filter(user=candidate, verdict__gt="").exists()


def test_opening_an_answer_address_goes_to_its_set(candidate):
    # The log-in page's old `next`, a reload or a bookmark: a GET was Django's blank 405.
    client = Client()
    client.force_login(candidate)
    set_url = client.post("/drills/sets/", {"kind": "n_gpu"})["Location"]
    response = client.get(f"{set_url}drills/2/answer/")
    assert response.status_code == 302 and response["Location"] == f"{set_url}#drill-2"
    other = User.objects.create_user("someone-else", password="a-long-Passphrase-42")
    theirs = services.drill_set_start(user=other, now=NOW)
    assert client.get(f"/drills/sets/{theirs.pk}/drills/1/answer/").status_code == 404


def test_each_kinds_start_button_is_named_for_its_kind(candidate, client):
    # Nine buttons all named "5 drills": a screen reader's list of buttons could not tell
    # which kind each one starts.
    client.force_login(candidate)
    html = client.get("/drills/").content.decode()
    for kind in engine.AVAILABLE:
        title = engine.KINDS[kind].title
        button = re.search(
            rf'name="kind" value="{kind}">\s*<button[^>]*>(.*?)</button>', html, re.S
        ).group(1)
        assert re.sub(r"<[^>]+>", "", button) == f"5 drills: {title}"


def test_the_drills_page_shows_no_command_line_flag(candidate, client):
    """Each kind's card showed `--kind kv_per_token`, an option of the `drill` command, to
    people who use the site in a browser."""
    client.force_login(candidate)
    html = client.get("/drills/").content.decode()
    assert "--kind" not in html


def test_the_drills_page_does_not_link_to_itself_and_home_links_to_it(content_loaded, client):
    user = User.objects.create_user("linked", password="a-long-Passphrase-42")
    client.force_login(user)
    assert '<a href="/drills/">All drills</a>' not in client.get("/drills/").content.decode()
    assert '<a href="/drills/">All drills</a>' in client.get("/").content.decode()


def test_new_drill_sets_per_day_are_capped_per_user(candidate, settings):
    """Each set is six rows and a read of the candidate's whole drill history: like attempts
    (ATTEMPTS_PER_DAY), a script posting "start a set" in a loop is stopped for the day, with
    the sets already started untouched, and another candidate is not."""
    settings.DRILL_SETS_PER_DAY = 2
    client = Client()
    client.force_login(candidate)
    assert [client.post("/drills/sets/").status_code for _ in range(2)] == [302, 302]
    refused = client.post("/drills/sets/")
    assert refused.status_code == 429
    assert "used today&#x27;s 2 new drill sets" in refused.content.decode()
    assert DrillItem.objects.filter(user=candidate).count() == 10
    other = Client()
    other.force_login(User.objects.create_user("other-drills", password="a-long-Passphrase-43"))
    assert other.post("/drills/sets/").status_code == 302


def test_a_start_refused_for_its_kind_or_seed_uses_none_of_the_days_sets(candidate, settings):
    """A mistyped seed or an unknown kind is refused with its reason, and the candidate still
    has every one of the day's sets: the cap counts sets started, not forms sent."""
    settings.DRILL_SETS_PER_DAY = 1
    client = Client()
    client.force_login(candidate)
    bad_kind = client.post("/drills/sets/", {"kind": "no-such-kind"})
    assert bad_kind.status_code == 422
    assert "Unknown drill kind" in bad_kind.content.decode()
    bad_seed = client.post("/drills/sets/", {"seed": str(engine.MAX_SEED + 1)})
    assert bad_seed.status_code == 422
    assert "A seed is a whole number" in bad_seed.content.decode()
    assert client.post("/drills/sets/").status_code == 302
    assert client.post("/drills/sets/").status_code == 429


def test_one_miss_among_several_answers_reads_in_the_singular(candidate):
    # A wrong answer with no named mistake: "1 of your 2 answers … were off" reads wrong.
    _answered(candidate, "weights", ["", None], NOW)
    sentence = selectors.recommendation(user=candidate, now=NOW).sentence
    assert "Weight sizing: 1 of your 2 answers in your last set was off;" in sentence
    _answered(candidate, "weights", ["", "", None], NOW + timedelta(minutes=1))
    sentence = selectors.recommendation(user=candidate, now=NOW).sentence
    assert "Weight sizing: 2 of your 3 answers in your last set were off;" in sentence


def _withdraw(monkeypatch, key: str, *, removed: bool) -> None:
    """Take the kind `key` out of the catalogue (removed) or mark it unavailable."""
    import dataclasses

    kinds = dict(engine.KINDS)
    if removed:
        del kinds[key]
    else:
        kinds[key] = dataclasses.replace(kinds[key], available=False, why_unavailable="is gone")
    monkeypatch.setattr(engine, "KINDS", kinds)
    monkeypatch.setattr(engine, "AVAILABLE", tuple(k for k, v in kinds.items() if v.available))


@pytest.mark.parametrize("removed", [True, False], ids=["removed", "unavailable"])
def test_a_set_with_a_kind_no_longer_offered_still_opens_and_goes_on(
    candidate, monkeypatch, removed
):
    """A kind taken out of the catalogue after a candidate drilled it: their old set's page,
    and an answer to its drill, were server errors."""
    drill_set = services.drill_set_start(user=candidate, now=NOW)
    first, second = drill_set.items.get(position=1), drill_set.items.get(position=2)
    services.drill_item_answer(item=first, answer="1", now=NOW)
    first.refresh_from_db()
    _withdraw(monkeypatch, first.kind, removed=removed)
    _withdraw(monkeypatch, second.kind, removed=removed)
    client = Client()
    client.force_login(candidate)
    page = client.get(f"/drills/sets/{drill_set.pk}/")
    assert page.status_code == 200
    body = page.content.decode()
    assert body.count('data-testid="withdrawn"') == 2
    assert f"Your answer <code>1</code> was judged: {first.verdict_label}." in body
    assert 'id="answer-3"' in body  # the set goes on at the next drill that can be answered
    refused = client.post(f"/drills/sets/{drill_set.pk}/drills/2/answer/", {"answer": "1"},
                          headers={"HX-Request": "true"})  # fmt: skip
    assert refused.status_code == 410
    assert "no longer offered" in refused.content.decode()
    second.refresh_from_db()
    assert not second.is_answered
    assert {d.kind for d in selectors.cards_due(user=candidate, now=NOW)} == set()


def test_a_sets_time_is_said_in_utc(candidate):
    """The site keeps UTC and says so everywhere else; "Set of Mar 2, 09:00" did not."""
    drill_set = services.drill_set_start(user=candidate, now=NOW)
    client = Client()
    client.force_login(candidate)
    assert "Set of Mar 2, 09:00 UTC</a>" in client.get("/drills/").content.decode()
    page = client.get(f"/drills/sets/{drill_set.pk}/").content.decode()
    assert '<span aria-current="page">Set of Mar 2, 09:00 UTC</span>' in page


def test_recent_sets_say_their_kind_and_how_far_they_got(candidate):
    # Two sets started in one minute read the same by their time alone.
    mixed = services.drill_set_start(user=candidate, now=NOW)
    focused = services.drill_set_start(user=candidate, kind="weights", now=NOW)
    first = mixed.items.order_by("position").first()
    services.drill_item_answer(item=first, answer=drill_of(first).expected_text, now=NOW)
    client = Client()
    client.force_login(candidate)
    page = " ".join(client.get("/drills/").content.decode().split())
    weights = engine.KINDS["weights"].title
    link = '">Set of Mar 2, 09:00 UTC</a> <span class="muted">· '
    assert f'href="/drills/sets/{focused.pk}/{link}{weights} · 0 of 5 answered</span>' in page
    assert f'href="/drills/sets/{mixed.pk}/{link}Mixed drills · 1 of 5 answered, 1 correct' in page
