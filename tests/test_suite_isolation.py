"""The suite stays strict while it shares work: a test that changes content works on its own
copy, and the next test sees the shipped files again, freshly loaded.

The tests below share an xdist group, so they run in one worker and in file order: the second
of each pair would fail if the first one's content leaked through the database, the files, a
cache of parsed or rendered content, or the in-process copy of the concept notes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.conf import settings

from questions.models import Question
from questions.services import content_load

EDITED_TITLE = "Edited by one test only"
EDITED_PROMPT = "A prompt that only the first test ever wrote."
pytestmark = pytest.mark.xdist_group("content-isolation")


def _shipped() -> Path:
    return Path(settings.CONTENT_DIR) / "questions" / "chat-api-50qps.md"


def test_a_test_that_changes_a_question_file_changes_its_own_copy(db, tmp_path):
    copy = tmp_path / "content"
    shutil.copytree(Path(settings.CONTENT_DIR) / "concepts", copy / "concepts")
    (copy / "questions").mkdir()
    text = _shipped().read_text(encoding="utf-8")
    first_prompt = text.split("    prompt: |\n", 1)[1].split("\n", 1)[0].strip()
    edited = text.replace("title: Design a chat completion API at 50 QPS", f"title: {EDITED_TITLE}")
    edited = edited.replace(first_prompt, EDITED_PROMPT, 1)
    assert edited.count(EDITED_TITLE) == 1 and edited.count(EDITED_PROMPT) == 1
    (copy / "questions" / "chat-api-50qps.md").write_text(edited, encoding="utf-8")

    report = content_load(root=copy)

    assert report.problems == [] and report.created == ["chat-api-50qps r1"]
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    assert revision.title == EDITED_TITLE
    assert EDITED_PROMPT in revision.rendered["steps"]["clarify"]["prompt"]
    assert EDITED_TITLE not in _shipped().read_text(encoding="utf-8")


def test_the_next_test_gets_the_shipped_content_freshly_loaded(bank_loaded):
    bank = sorted(p.stem for p in (Path(settings.CONTENT_DIR) / "questions").glob("*.md"))
    assert sorted(bank_loaded.created) == [f"{slug} r1" for slug in bank]
    assert bank_loaded.unchanged == []
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    assert revision.title == "Design a chat completion API at 50 QPS"
    assert EDITED_PROMPT not in revision.rendered["steps"]["clarify"]["prompt"]
    assert not Question.objects.filter(revisions__title=EDITED_TITLE).exists()


def test_a_test_with_content_reads_its_concept_notes(content_loaded):
    from questions.selectors import concepts_by_slug

    assert set(concepts_by_slug(["tpot-floor"])) == {"tpot-floor"}


def test_the_next_test_without_content_reads_no_concept_notes(db):
    """The in-process copy of the concept notes (refreshed every 30 s in production) does not
    carry the last test's rolled-back rows over."""
    from questions.selectors import concepts_by_slug

    assert concepts_by_slug(["tpot-floor"]) == {}


def _worker_record(tmp_path_factory) -> Path:
    # Each worker's base temp is <run's temp>/popen-gwN: the parent is the run's, shared.
    return tmp_path_factory.getbasetemp().parent / "content-isolation-worker"


def test_a_group_runs_in_one_worker_first_of_two(tmp_path_factory):
    """The pair below is in this module's xdist group, so xdist runs it in one worker, this
    one first. Without a working group (as under pytest 9.2 with pytest-xdist 3.8) the second
    can run first or in the other worker."""
    import os

    _worker_record(tmp_path_factory).write_text(os.environ.get("PYTEST_XDIST_WORKER", "main"))


def test_a_group_runs_in_one_worker_second_of_two(request, tmp_path_factory):
    import os

    first = test_a_group_runs_in_one_worker_first_of_two.__name__
    if not any(item.name == first for item in request.session.items):
        pytest.skip("the group's first test is not in this run (-k or a rerun left it out)")
    record = _worker_record(tmp_path_factory)
    assert record.exists(), "the group's first test has not run before this one"
    assert record.read_text() == os.environ.get("PYTEST_XDIST_WORKER", "main")


def test_a_page_a_live_server_renders_meanwhile_stays_out_of_the_clients_response(client, db):
    """A render in a live server's request thread while the test client's request runs (a
    browser test's last poll, say) is not recorded as the client's."""
    import threading

    from django.core.signals import request_started
    from django.template import Context, Template
    from django.urls import reverse

    def render_in_a_server_thread(**kwargs):
        render = lambda: Template("{{ elsewhere }}").render(Context({"elsewhere": 1}))  # noqa: E731
        thread = threading.Thread(target=render, name="Thread-9 (process_request_thread)")
        thread.start()
        thread.join()

    request_started.connect(render_in_a_server_thread, dispatch_uid="render-elsewhere")
    try:
        response = client.get(reverse("login"))
    finally:
        request_started.disconnect(dispatch_uid="render-elsewhere")
    assert "form" in response.context
    assert "elsewhere" not in response.context


def test_content_loaded_holds_the_core_questions_and_every_concept_note(content_loaded):
    from questions.models import Concept
    from tests.conftest import CORE_SLUGS

    assert set(Question.objects.values_list("slug", flat=True)) == set(CORE_SLUGS)
    concepts = {p.stem for p in (Path(settings.CONTENT_DIR) / "concepts").glob("*.md")}
    assert set(Concept.objects.values_list("slug", flat=True)) == concepts
