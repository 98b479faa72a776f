"""A loopback server that speaks OpenAI chat completions the way vLLM does, for tests and benches.

It is a real HTTP server (`http.server` on 127.0.0.1, port 0, in a thread), so the `openai`
client, its timeouts and its retries run exactly as against vLLM. Each test scripts the reply
with a `responder` (request JSON in, `ScriptedReply` out) and reads back the requests the
server received. The response and error bodies follow vLLM's shapes:

- success: `{"id", "object": "chat.completion", "created", "model", "choices": [{"index",
  "message": {"role", "content", ...}, "finish_reason", "stop_reason", ...}], "usage"}`;
- error (current vLLM): `{"error": {"message", "type", "param", "code"}}`;
- error (older vLLM): `{"object": "error", "message", "type", "param", "code"}`.

`/v1/models`, `/health`, `/version` and a `/metrics` page with emulated prefix-cache counters
are served too.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from grading.config import DEFAULT_MODEL


@dataclass
class ScriptedReply:
    """What the fake server answers to one chat request.

    With `status` 200 it sends a chat completion holding `content` and `finish_reason`;
    otherwise it sends `error_body` (see `vllm_error`). `raw_body`, when set, is sent as is.
    `delay_s` is slept before answering (to be slower than a client's timeout). `cut_at`, when
    set, sends only that many bytes of the body (the headers still announce all of it) and
    closes the connection, as a proxy or a crashing server does.
    """

    content: str | None = None
    finish_reason: str = "stop"
    status: int = 200
    error_body: dict[str, Any] | None = None
    raw_body: str | None = None
    delay_s: float = 0.0
    cut_at: int | None = None
    prompt_tokens: int = 420
    completion_tokens: int = 96


def vllm_error(status: int, message: str, error_type: str, param: str | None = None) -> dict:
    """An error body in current vLLM's nested shape."""
    return {"error": {"message": message, "type": error_type, "param": param, "code": status}}


def vllm_legacy_error(status: int, message: str, error_type: str) -> dict:
    """An error body in older vLLM's top-level shape."""
    return {
        "object": "error",
        "message": message,
        "type": error_type,
        "param": None,
        "code": status,
    }


def error_reply(status: int, message: str = "", *, legacy: bool = False) -> ScriptedReply:
    """A scripted error with vLLM's type names for the usual statuses."""
    error_type = {
        400: "BadRequestError", 404: "NotFoundError", 500: "InternalServerError",
        503: "ServiceUnavailableError",
    }.get(status, "APIError")  # fmt: skip
    message = message or f"{error_type} (scripted)"
    body = (vllm_legacy_error if legacy else vllm_error)(status, message, error_type)
    return ScriptedReply(status=status, error_body=body)


def grade_content(
    verdicts: list[dict[str, str]],
    *,
    feedback: str = "Scripted feedback.",
    injection_suspected: bool = False,
) -> str:
    """The JSON text a well-behaved model would return for these verdicts."""
    return json.dumps(
        {"points": verdicts, "feedback": feedback, "injection_suspected": injection_suspected}
    )


def answer_message(request: dict[str, Any]) -> str:
    """The candidate's answer as the server received it (the last message, markers removed)."""
    content = request["messages"][-1]["content"]
    lines = content.split("\n")
    return "\n".join(lines[1:-1])


def diagram_message(request: dict[str, Any]) -> list[str]:
    """The lines of the candidate's diagram as the server received them (between the diagram
    markers of the last message; empty when the request carried no diagram)."""
    lines = request["messages"][-1]["content"].split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("<<<DIAGRAM ")), None)
    if start is None:
        return []
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("<<<END DIAGRAM "))
    return lines[start + 1 : end]


def response_ids(request: dict[str, Any]) -> list[str]:
    """The rubric ids the request's JSON schema allows."""
    schema = request["response_format"]["json_schema"]["schema"]
    return schema["properties"]["points"]["items"]["properties"]["id"]["enum"]


@dataclass
class PrefixCacheEmulation:
    """Counts prompt 'tokens' (4 characters each) and how many a prefix cache would reuse.

    Like vLLM, it caches whole blocks keyed by the hash of everything up to the block's end,
    so a block is reused only when the entire prefix before it matches.
    """

    block_chars: int = 64
    queries: int = 0
    hits: int = 0
    blocks: set[int] = field(default_factory=set)

    def record(self, prompt: str) -> None:
        tokens = len(prompt) // 4
        hit_chars = 0
        reusing = True
        for end in range(self.block_chars, len(prompt) + 1, self.block_chars):
            key = hash(prompt[:end])
            if reusing and key in self.blocks:
                hit_chars = end
            else:
                reusing = False
                self.blocks.add(key)
        self.queries += tokens
        self.hits += min(hit_chars // 4, tokens)


class FakeChatServer:
    """A scripted OpenAI-compatible server on a free loopback port.

    Use as a context manager; `base_url` ends in `/v1`. `requests` holds the JSON bodies of
    the chat requests received, `get_paths` the GET paths, `max_concurrent` the most chat
    requests handled at once.
    """

    def __init__(
        self,
        responder: Callable[[dict[str, Any]], ScriptedReply] | None = None,
        *,
        model: str = DEFAULT_MODEL,
        latency_s: float = 0.0,
    ) -> None:
        self.responder = responder or (lambda request: ScriptedReply(content="{}"))
        self.model = model
        self.latency_s = latency_s
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.get_paths: list[str] = []
        self.prefix_cache = PrefixCacheEmulation()
        self.model_list_status = 200
        self._lock = threading.Lock()
        self._active = 0
        self.max_concurrent = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- life cycle --

    def start(self) -> FakeChatServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, daemon=True, kwargs={"poll_interval": 0.05}
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def root_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    # -- what the handler calls --

    def _enter(self) -> None:
        with self._lock:
            self._active += 1
            self.max_concurrent = max(self.max_concurrent, self._active)

    def _leave(self) -> None:
        with self._lock:
            self._active -= 1

    def _chat(
        self, request: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, str, ScriptedReply]:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            prompt = "".join(str(m.get("content", "")) for m in request.get("messages", []))
            self.prefix_cache.record(prompt)
        reply = self.responder(request)
        if reply.raw_body is not None:
            return reply.status, reply.raw_body, reply
        if reply.status != 200:
            return reply.status, json.dumps(reply.error_body or {}), reply
        body = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": reply.content,
                        "refusal": None,
                        "annotations": None,
                        "audio": None,
                        "function_call": None,
                        "tool_calls": [],
                        "reasoning_content": None,
                    },
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                    "stop_reason": None,
                }
            ],
            "service_tier": None,
            "system_fingerprint": None,
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                "completion_tokens": reply.completion_tokens,
                "prompt_tokens_details": None,
            },
            "prompt_logprobs": None,
            "kv_transfer_params": None,
        }
        return 200, json.dumps(body), reply

    def metrics_text(self) -> str:
        labels = f'{{engine="0",model_name="{self.model}"}}'
        return (
            "# TYPE vllm:prefix_cache_queries_total counter\n"
            f"vllm:prefix_cache_queries_total{labels} {float(self.prefix_cache.queries)}\n"
            "# TYPE vllm:prefix_cache_hits_total counter\n"
            f"vllm:prefix_cache_hits_total{labels} {float(self.prefix_cache.hits)}\n"
            f"vllm:num_requests_waiting{labels} 0.0\n"
            f"vllm:num_requests_running{labels} {float(self._active)}\n"
        )


def _handler_for(fake: FakeChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes; without this, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every response, as no real server would.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            pass  # keep test output clean

        def _send(
            self,
            status: int,
            body: str,
            content_type: str = "application/json",
            *,
            cut_at: int | None = None,
        ) -> None:
            data = body.encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if cut_at is None:
                    self.wfile.write(data)
                else:
                    self.wfile.write(data[:cut_at])
                    self.wfile.flush()
                    self.close_connection = True
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout); nothing to do

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            with fake._lock:
                fake.get_paths.append(self.path)
            if self.path == "/v1/models":
                if fake.model_list_status != 200:
                    self._send(
                        fake.model_list_status,
                        json.dumps(vllm_error(fake.model_list_status, "unavailable", "APIError")),
                    )
                    return
                models = {"object": "list", "data": [
                    {"id": fake.model, "object": "model", "created": 0, "owned_by": "vllm",
                     "root": fake.model, "parent": None, "max_model_len": 2048},
                ]}  # fmt: skip
                self._send(200, json.dumps(models))
            elif self.path == "/health":
                self._send(200, "")
            elif self.path == "/version":
                self._send(200, json.dumps({"version": "0.32.0"}))
            elif self.path == "/metrics":
                self._send(200, fake.metrics_text(), "text/plain; version=0.0.4")
            else:
                self._send(404, json.dumps(vllm_error(404, "Not Found", "NotFoundError")))

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path != "/v1/chat/completions":
                self._send(404, json.dumps(vllm_error(404, "Not Found", "NotFoundError")))
                return
            try:
                request = json.loads(raw)
            except ValueError:
                self._send(400, json.dumps(vllm_error(400, "invalid JSON", "BadRequestError")))
                return
            fake._enter()
            try:
                status, body, reply = fake._chat(request, dict(self.headers.items()))
                delay = fake.latency_s + reply.delay_s
                if delay:
                    time.sleep(delay)
                self._send(status, body, cut_at=reply.cut_at)
            finally:
                fake._leave()

    return Handler
