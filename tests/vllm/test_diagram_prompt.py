"""The candidate's architecture diagram reaches the real vLLM server (CPU build, tiny random
model) as an edge list in the grading prompt, ahead of the prose, and what comes back is held
to the same rule as any reply: a point stands only on a verbatim quote of the prose or on
lines the diagram really has.

The request is recorded on its way: the grader talks to a small forwarding proxy in this test
that keeps each request body and passes it, byte for byte, to the server, so the test reads
what vLLM received and the server's own status for it. The model's weights are random, so
its verdicts mean nothing; the test asserts the plumbing, never the verdicts.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from diagrams import parse_diagram
from grading import GraderConfig, grade
from grading.diagram import diagram_lines
from grading.fake_server import answer_message, diagram_message
from grading.text import quote_span
from questionbank import load_question_spec

pytestmark = pytest.mark.vllm

PROSE = "A prefix-aware router sends chats that share the system prompt to the same replica."
DIAGRAM = """flowchart LR
  client([Clients]) --> gw[API gateway: API keys, rate limits]
  gw --> router{Router}
  router -->|prefix-aware| vllm[vLLM x10]
  vllm -->|queue depth| autoscaler[Autoscaler]
"""
CONTEXT = {"slug": "chat-api-50qps", "title": "Chat API", "step_key": "architecture"}


class RecordingProxy:
    """Forwards POSTs to `upstream` (an OpenAI base URL) and keeps each JSON body and the
    upstream's status."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/").removesuffix("/v1")
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002 - stdlib name
                pass

            def do_POST(self):  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                proxy.requests.append(json.loads(body))
                reply = httpx.post(
                    proxy.upstream + self.path,
                    content=body,
                    headers={"Content-Type": "application/json"},
                    timeout=300,
                )
                proxy.statuses.append(reply.status_code)
                self.send_response(reply.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> RecordingProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def graded(vllm_server, vllm_model_name, vllm_report):
    """One architecture answer with a diagram graded by the real model through the proxy."""
    step = load_question_spec("chat-api-50qps").step("architecture")
    with RecordingProxy(vllm_server) as proxy:
        config = GraderConfig(
            base_url=proxy.base_url, model=vllm_model_name, timeout_s=300, max_retries=0
        )
        result = grade(step, PROSE, mode="llm", context=CONTEXT, config=config, diagram=DIAGRAM)
    sources = [p.evidence_source for p in result.points if p.verdict != "miss"]
    vllm_report.append(
        f"diagram {result.grader} score={result.score} fallback={result.fallback_reason!r} "
        f"evidence from {sources or 'nothing'}"
    )
    return result, proxy


def test_the_prompt_vllm_received_carries_the_edge_list_ahead_of_the_prose(graded):
    result, proxy = graded
    [request] = proxy.requests
    assert proxy.statuses == [200], "the real server refused the grading request"
    lines = diagram_message(request)
    assert lines[lines.index("Edges:") + 1 :] == [
        "- Clients -> API gateway: API keys, rate limits",
        "- API gateway: API keys, rate limits -> Router",
        "- Router -> vLLM x10 [prefix-aware]",
        "- vLLM x10 -> Autoscaler [queue depth]",
    ]
    last = request["messages"][-1]["content"]
    assert last.index("<<<DIAGRAM ") < last.index("<<<ANSWER ")
    assert PROSE in last and PROSE not in "\n".join(lines)


def test_the_reply_is_held_to_the_diagram_and_the_prose(graded):
    result, proxy = graded
    assert result.grader == "llm" or result.fallback_reason, result
    drawn = diagram_lines(parse_diagram(DIAGRAM))
    for point in result.points:
        if point.verdict == "miss":
            assert point.evidence_source == "" and not point.diagram_evidence
        elif point.evidence_source == "diagram":
            assert point.diagram_evidence and set(point.diagram_evidence) <= set(drawn), point
        else:
            assert point.evidence_source == "prose"
            assert quote_span(PROSE, point.evidence) is not None, point
    assert answer_message(proxy.requests[0]).endswith(PROSE)
