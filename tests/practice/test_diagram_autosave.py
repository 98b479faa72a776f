"""The diagram saves with the answer: autosave round trip, the version guard against a stale
tab, the submission's snapshot, and the picture drawn on page load (no JavaScript needed)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from practice import services as flow
from practice.models import StepAnswer, Submission
from questions.models import Question

DIAGRAM = """flowchart LR
    gw[API gateway] --> router[Router: least-loaded]
    router --> vllm[vLLM x10]
"""
NEWER = DIAGRAM + "    vllm --> metrics[(Metrics)]\n"


@pytest.fixture
def attempt(content_loaded):
    user = User.objects.create_user("drawer", password="a-long-Passphrase-42")
    revision = Question.objects.get(slug="chat-api-50qps").current_revision
    return flow.attempt_start(user=user, revision=revision)


@pytest.fixture
def client_in(attempt):
    client = Client()
    client.force_login(attempt.user)
    return client


def _url(attempt, step: str, action: str = "") -> str:
    return f"/attempts/{attempt.pk}/steps/{step}/" + (f"{action}/" if action else "")


def _save(client, attempt, *, version: int, text: str = "prose", diagram: str = DIAGRAM):
    return client.post(
        _url(attempt, "architecture", "draft"),
        {"base_version": version, "text": text, "diagram": diagram},
        headers={"HX-Request": "true"},
    )


def test_the_diagram_autosaves_with_the_answer_and_comes_back_on_reload(client_in, attempt):
    page = client_in.get(_url(attempt, "architecture")).content.decode()
    assert 'name="diagram"' in page and 'id="diagram-palette"' in page
    assert _save(client_in, attempt, version=0).status_code == 200
    answer = StepAnswer.objects.get(attempt=attempt, step_key="architecture")
    assert answer.fields == {"diagram": DIAGRAM}
    assert (answer.text, answer.version) == ("prose", 1)
    page = client_in.get(_url(attempt, "architecture")).content.decode()
    # The text back in its box, and the picture drawn on the server: no script needed.
    assert "gw[API gateway] --&gt; router[Router: least-loaded]" in page
    picture = page.split('id="diagram-picture"', 1)[1].split("</div>", 1)[0]
    assert "<svg" in picture and ">Router: least-loaded</text>" in picture


def test_a_stale_tab_cannot_overwrite_a_newer_diagram(client_in, attempt):
    _save(client_in, attempt, version=0)
    assert _save(client_in, attempt, version=1, diagram=NEWER).status_code == 200
    stale = _save(client_in, attempt, version=1, diagram=DIAGRAM + "    %% older tab\n")
    assert stale.status_code == 409
    body = stale.content.decode()
    assert "changed in another tab" in body
    # The newer diagram is shown beside the refusal, and it is what stays stored.
    assert "vllm --&gt; metrics[(Metrics)]" in body
    assert StepAnswer.objects.get(attempt=attempt, step_key="architecture").fields == {
        "diagram": NEWER
    }


def test_clearing_the_diagram_saves_an_answer_without_one(client_in, attempt):
    _save(client_in, attempt, version=0)
    assert _save(client_in, attempt, version=1, diagram="   \n").status_code == 200
    assert StepAnswer.objects.get(attempt=attempt, step_key="architecture").fields == {}


def test_a_submission_keeps_the_diagram_it_was_submitted_with(client_in, attempt):
    _save(client_in, attempt, version=0)
    response = client_in.post(
        _url(attempt, "architecture", "submit"),
        {"base_version": 1, "text": "prose", "diagram": NEWER},
    )
    assert response.status_code == 302
    submission = Submission.objects.get(answer__attempt=attempt)
    assert submission.fields == {"diagram": NEWER}
    # A later draft does not move what was submitted.
    _save(client_in, attempt, version=2, diagram=DIAGRAM)
    submission.refresh_from_db()
    assert submission.fields == {"diagram": NEWER}


def test_a_step_without_a_diagram_has_no_box(client_in, attempt):
    page = client_in.get(_url(attempt, "clarify")).content.decode()
    assert 'name="diagram"' not in page and "diagram.js" not in page


def test_a_diagram_past_its_limit_is_refused_by_name_with_its_own_limit(client_in, attempt):
    # The prose is empty: the refusal is the diagram's, and names the diagram's own limit.
    _save(client_in, attempt, version=0)
    huge = "flowchart LR\n" + "\n".join(f"  n{i}[Node {i}] --> n{i + 1}" for i in range(1000))
    refused = _save(client_in, attempt, version=1, text="", diagram=huge)
    assert refused.status_code == 422
    body = refused.content.decode()
    assert f"This diagram is {len(huge):,} characters; the limit is 20,000." in body
    assert "This answer is" not in body
    # Nothing was saved over the draft.
    assert StepAnswer.objects.get(attempt=attempt, step_key="architecture").fields == {
        "diagram": DIAGRAM
    }
