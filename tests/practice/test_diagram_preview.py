"""The diagram box's live preview: the candidate's Mermaid text in, their diagram laid out as
SVG out; a syntax error names its line and column and sends no picture (the page keeps its
last good one); hostile input is refused fast, and the endpoint is a signed-in POST only."""

from __future__ import annotations

import re
import time

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from rate_limits import LimitExceeded, cpu_budget

DIAGRAM = """flowchart LR
    gw[API gateway] --> router[Router: least-loaded]
    router -->|prefix-aware| vllm[vLLM x10]
"""


@pytest.fixture
def candidate_client(db):
    client = Client()
    client.force_login(User.objects.create_user("drawer", password="a-long-Passphrase-42"))
    return client


def _preview(client, text: str, *, picture_shown: bool = False):
    # The box's script says whether the page shows a picture of an earlier diagram.
    data = {"diagram": text} | ({"picture_shown": "1"} if picture_shown else {})
    return client.post(reverse("diagram_preview"), data, headers={"HX-Request": "true"})


def test_the_preview_is_the_candidates_diagram_laid_out(candidate_client):
    response = _preview(candidate_client, DIAGRAM)
    assert response.status_code == 200
    body = response.content.decode()
    picture = re.search(
        r'<div id="diagram-picture"[^>]*hx-swap-oob="true"[^>]*>(.*?)</div>', body, re.S
    )
    assert picture is not None
    svg = picture.group(1)
    assert svg.startswith("<svg")
    for label in ("API gateway", "Router: least-loaded", "vLLM x10", "prefix-aware"):
        assert f">{label}</text>" in svg
    # The error line is cleared out of band with it.
    assert re.search(r'<p id="diagram-error"[^>]*hx-swap-oob="true"[^>]*></p>', body)


def test_a_syntax_error_names_line_and_column_and_keeps_the_last_picture(candidate_client):
    response = _preview(
        candidate_client, "flowchart LR\n    gw[API gateway] --> \n", picture_shown=True
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "Line 2, column 25:" in body
    assert "expected a node id" in body
    # No picture in the answer: the one on the page stays.
    assert "diagram-picture" not in body and "<svg" not in body
    assert "last diagram that worked" in body


def test_with_no_picture_on_the_page_an_error_does_not_speak_of_one(candidate_client):
    # Nothing was drawn yet (the box shows its placeholder): there is no last picture to keep.
    body = _preview(candidate_client, "flowchart LR\n    as -.-> pool\n    a -->\n").content
    body = body.decode()
    assert "Line 3, column" in body
    assert "picture" not in body.split('id="diagram-error"', 1)[1]


def test_the_length_limit_names_no_line_or_column(candidate_client):
    text = "flowchart LR\n" + "\n".join(f"  n{i}[Node {i}] --> n{i + 1}" for i in range(1000))
    body = _preview(candidate_client, text).content.decode()
    error = body.split('id="diagram-error"', 1)[1].split(">", 1)[1].split("</p>", 1)[0]
    assert error == f"The diagram is {len(text):,} characters long; the limit is 20,000."


def test_a_label_with_markup_is_drawn_as_text(candidate_client):
    response = _preview(
        candidate_client, 'flowchart LR\n    x["<img src=x onerror=alert(1)>"] --> gw[Gateway]\n'
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "<img" not in body and "onerror=" not in body.replace("onerror=alert(1)&gt;", "")
    assert "&lt;img src=x onerror=alert(1)&gt;</text>" in body
    for forbidden in ("<script", "<style", "style=", "href", "<foreignObject"):
        assert forbidden not in body


@pytest.mark.parametrize(
    ("text", "says"),
    [
        # 5,000 nodes: past the diagram's length limit long before its node limit.
        ("flowchart LR\n" + "\n".join(f"n{i}" for i in range(5000)), "the limit is 20,000"),
        # A one-megabyte label.
        ("flowchart LR\n    a[" + "x" * 1_000_000 + "]\n", "the limit is 20,000"),
        # 200 nodes in few characters: the node limit itself.
        ("flowchart LR\n" + "\n".join(f"n{i}" for i in range(200)), "150"),
    ],
    ids=["5000-nodes", "1mb-label", "200-nodes"],
)
def test_hostile_diagrams_are_refused_fast_with_a_clear_message(candidate_client, text, says):
    started = time.perf_counter()
    response = _preview(candidate_client, text)
    elapsed = time.perf_counter() - started
    assert response.status_code == 200
    body = response.content.decode()
    assert says in body
    assert "<svg" not in body
    assert elapsed < 0.5, f"refusing took {elapsed:.2f} s"


def test_a_get_is_refused(candidate_client):
    response = candidate_client.get(reverse("diagram_preview"), {"diagram": DIAGRAM})
    assert response.status_code == 405


def test_a_signed_out_visitor_is_refused(db):
    response = _preview(Client(), DIAGRAM)
    assert response.status_code == 302
    assert response.url.startswith("/accounts/login/")


def test_the_preview_is_rate_limited_like_the_calculator(
    candidate_client, settings, one_rate_window
):
    settings.NAPKIN_RATE_PER_MINUTE = 3
    statuses = [_preview(candidate_client, DIAGRAM).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    assert "diagram previews a minute" in _preview(candidate_client, DIAGRAM).content.decode()


def test_layouts_are_charged_to_the_cpu_budget(candidate_client, settings):
    # A budget of a microsecond: the first layout spends it, the next preview is refused.
    settings.CPU_SECONDS_PER_MINUTE = 0.000001
    assert _preview(candidate_client, DIAGRAM).status_code == 200
    refused = _preview(candidate_client, DIAGRAM.replace("x10", "x12"))
    assert refused.status_code == 429
    assert "Wait a minute" in refused.content.decode()


def test_a_layout_past_its_time_is_stopped_and_said_so(candidate_client, monkeypatch, tmp_path):
    # A layout engine that never finishes: the preview answers within the time limit.
    slow_dot = tmp_path / "dot"
    slow_dot.write_text("#!/bin/sh\nexec sleep 30\n")
    slow_dot.chmod(0o755)
    monkeypatch.setattr("diagrams.layout.DOT_PROGRAM", str(slow_dot))
    monkeypatch.setattr("practice.diagram.LAYOUT_TIMEOUT_S", 0.5)
    started = time.perf_counter()
    response = _preview(candidate_client, DIAGRAM)
    assert time.perf_counter() - started < 3
    body = response.content.decode()
    assert "took longer than 0.5 s" in body and "<svg" not in body
    # Remembered: the next page that shows this diagram does not wait for it again.
    started = time.perf_counter()
    assert "took longer than 0.5 s" in _preview(candidate_client, DIAGRAM).content.decode()
    assert time.perf_counter() - started < 0.4


def test_waiting_on_the_layout_subprocess_is_charged_like_cpu_time(settings):
    # Graphviz's CPU time is a child process's, which the thread's clock does not see: the
    # preview charges the wall-clock time it waited instead.
    settings.CPU_SECONDS_PER_MINUTE = 0.2
    with cpu_budget(client="user:7"):
        time.sleep(0.25)  # a thread that waits spends no CPU time of its own...
    with cpu_budget(client="user:7", subprocess=True):
        time.sleep(0.25)  # ...but a wait on a subprocess is charged
    with pytest.raises(LimitExceeded), cpu_budget(client="user:7", subprocess=True):
        pass
