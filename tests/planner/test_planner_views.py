"""The planner's views: worksheet evaluation (htmx fragment or full page), its size bound and
rate limit, and the capacity planner page."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

import planner.views
from planner.forms import DEFAULTS, CapacityForm
from questionbank import load_question, load_question_spec, parse_file
from questions.services import question_revision_publish

# The planner's figures and pages read a published revision and nothing the databases differ on.
pytestmark = pytest.mark.one_database

EVALUATE = "/planner/evaluate/"
DEFAULTS_QUERY = {name: value for name, value in DEFAULTS.items() if value not in (None, False)}


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()


class HtmxClient(Client):
    """A test client whose requests say `htmx=True` the way htmx does: an HX-Request header."""

    def get(self, *args, htmx: bool = False, **extra):
        return super().get(*args, **({"HTTP_HX_REQUEST": "true"} if htmx else {}), **extra)

    def post(self, *args, htmx: bool = False, **extra):
        return super().post(*args, **({"HTTP_HX_REQUEST": "true"} if htmx else {}), **extra)


@pytest.fixture
def htmx() -> HtmxClient:
    return HtmxClient()


def test_worksheet_page_shows_the_example_evaluated(client: Client) -> None:
    response = client.get("/planner/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "= 21.54 ms" in html and "<math" in html
    assert response.headers["Vary"].count("HX-Request") == 1


def test_worksheet_with_a_question_lists_its_givens(client: Client, content_loaded) -> None:
    html = client.get("/planner/?question=chat-api-50qps").content.decode()
    assert "Givens of this question" in html and "<code>qps_peak</code>" in html
    response = client.post(
        EVALUATE, {"lines": "W / (eta * bw) in ms", "question": "chat-api-50qps"}
    )
    assert "= 21.54 ms" in response.content.decode()


def _publish_edited(slug: str, old: str, new: str) -> None:
    """Publish the shipped question with one piece of its text replaced, as the editor does."""
    path = Path(settings.CONTENT_DIR) / "questions" / f"{slug}.md"
    text = path.read_text()
    assert old in text
    text = text.replace(old, new, 1)
    spec, problems = load_question(path, text)
    assert spec is not None, problems
    question_revision_publish(spec=spec, source_text=text, meta=parse_file(path, text).meta)


def test_worksheet_shows_the_givens_of_the_published_revision(
    client: Client, content_loaded
) -> None:
    # The file on disk still says 15.2 GB; the planner follows what candidates practise.
    _publish_edited("chat-api-50qps", "value: 15.2 GB", "value: 16.4 GB")
    html = client.get("/planner/?question=chat-api-50qps").content.decode()
    assert "<code>16.4 GB</code>" in html and "<code>15.2 GB</code>" not in html
    response = client.post(EVALUATE, {"lines": "W in GB", "question": "chat-api-50qps"})
    assert "= 16.4 GB" in response.content.decode()


def test_unknown_question_says_so(client: Client, db) -> None:
    html = client.get("/planner/?question=no-such-thing").content.decode()
    assert "There is no question" in html


def test_evaluate_returns_the_fragment_for_htmx(htmx: HtmxClient) -> None:
    response = htmx.post(EVALUATE, {"lines": "a = 2 GB\nb = a + 3 ms\na * 2"}, htmx=True)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert 'id="ws-line-2"' in html and "Cannot add bytes and time" in html
    assert "      ^</pre>" in html  # caret under column 7
    assert "= 4 GB" in html


def test_evaluate_without_javascript_renders_the_page(client: Client) -> None:
    html = client.post(EVALUATE, {"lines": "50 QPS * 2 s in req"}).content.decode()
    assert "<html" in html and "= 100 req" in html and "50 QPS * 2 s in req</textarea>" in html


def test_evaluate_is_post_only(client: Client) -> None:
    assert client.get(EVALUATE).status_code == 405


def test_evaluate_escapes_what_was_typed(htmx: HtmxClient) -> None:
    html = htmx.post(EVALUATE, {"lines": "<script>alert(1)</script>"}, htmx=True).content
    assert b"<script>alert" not in html and b"&lt;script&gt;" in html


def test_evaluate_bounds_the_request_size(htmx: HtmxClient) -> None:
    response = htmx.post(EVALUATE, {"lines": "1\n" * 20000}, htmx=True)
    assert response.status_code == 422
    assert "larger than 32 KB" in response.content.decode()


def test_evaluate_bounds_the_line_count(htmx: HtmxClient) -> None:
    response = htmx.post(EVALUATE, {"lines": "1\n" * 300}, htmx=True)
    assert "at most 200 lines" in response.content.decode()


def test_evaluate_is_rate_limited_per_client(
    htmx: HtmxClient, monkeypatch, one_rate_window
) -> None:
    monkeypatch.setattr(planner.views, "RATE_LIMIT_PER_MINUTE", 3)
    codes = [htmx.post(EVALUATE, {"lines": "1"}, htmx=True).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    response = htmx.post(EVALUATE, {"lines": "1"}, htmx=True)
    assert "Too many evaluations in the last minute" in response.content.decode()
    other = HtmxClient(REMOTE_ADDR="10.0.0.9")
    assert other.post(EVALUATE, {"lines": "1"}, htmx=True).status_code == 200


Q3 = {
    "model": "qwen2.5-7b-instruct", "gpu": "rtx-4090", "weights": "awq-int4", "kv": "fp8",
    "context": 32768, "mem_util": 0.9, "bw_eff": 0.7, "tp": 1, "knee_tok_s": 2000,
    "out_len": 128, "qps": 10, "rho": 0.7, "overhead_gib": 1.5,
}  # fmt: skip


def test_capacity_page_defaults_to_the_seed_q1(client: Client) -> None:
    response = client.get("/planner/capacity/")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="plan-n-gpu">10<' in html
    assert html.count('<svg viewBox="0 0 640 320"') == 3
    assert 'id="step-N_seq"' in html and "<math" in html


def test_capacity_page_shows_the_bounds_side_by_side_and_which_binds(client: Client) -> None:
    html = client.get("/planner/capacity/").content.decode()
    assert 'id="bound-speed"' in html and 'id="bound-memory"' in html
    assert 'id="bound-prefill"' in html  # no measured knee: prefill shares the GPU
    assert "derived" in html and 'id="plan-ttft"' in html and 'id="plan-monthly"' in html
    assert 'class="pl-bound pl-speed"' in html and 'class="pl-bound pl-mem"' in html
    measured = client.get("/planner/capacity/", {"knee_tok_s": 2000, "prompt_len": 512})
    html = measured.content.decode()
    assert "7.81 req/s" in html  # 2000 tok/s over 256 tokens
    assert "Requests per instance: speed bound and memory bound (the speed bound binds)" in html
    assert 'id="bound-prefill"' not in html


def test_a_binding_bound_too_small_for_two_decimals_is_not_shown_as_zero(client: Client) -> None:
    # A hold of a million seconds leaves 3.21e-4 req/s an instance: 0.00 would read as none.
    html = client.get("/planner/capacity/", {**DEFAULTS_QUERY, "hold_s": 10**6}).content.decode()
    memory = re.search(r'id="bound-memory">.*?</li>', html, re.S).group(0)
    assert "3.21e-4 req/s" in memory and "binds" in memory
    r_inst = re.search(r'id="bound-r-inst">.*?</li>', html, re.S).group(0)
    assert "3.21e-4 req/s" in r_inst
    assert "1,000,000 s each" in memory
    assert "0.00 req/s" not in html


def test_capacity_page_says_the_memory_bound_binds_for_long_context_rag(client: Client) -> None:
    query = {**Q3, "hold_s": 4}
    html = client.get("/planner/capacity/", query).content.decode()
    assert 'id="plan-n-gpu">4<' in html
    assert "(the memory bound binds)" in html
    assert '<li class="pl-binds" id="bound-memory">' in html


def test_capacity_page_gives_no_fleet_and_a_reason_when_nothing_fits(client: Client) -> None:
    html = client.get("/planner/capacity/", {**Q3, "weights": "bf16", "kv": "bf16",
                                             "context": 131072}).content.decode()  # fmt: skip
    assert 'id="plan-n-gpu">no<' in html
    assert "Not even one sequence of 131072 tokens fits" in html
    assert "Fleet size against peak QPS" not in html


def test_capacity_htmx_returns_the_result_fragment(htmx: HtmxClient) -> None:
    response = htmx.get(
        "/planner/capacity/",
        {
            "model": "qwen2.5-7b-instruct",
            "gpu": "rtx-4090",
            "weights": "bf16",
            "kv": "bf16",
            "context": 32768,
            "mem_util": 0.9,
            "bw_eff": 0.7,
            "tp": 1,
            "knee_tok_s": 2000,
            "out_len": 256,
            "qps": 50,
            "rho": 0.7,
            "overhead_gib": 1.5,
        },
        htmx=True,
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "1.75 GiB" in html


def test_capacity_invalid_input_is_explained(htmx: HtmxClient) -> None:
    response = htmx.get(
        "/planner/capacity/", {"model": "qwen2.5-7b-instruct", "rho": "5"}, htmx=True
    )
    assert response.status_code == 422
    assert "Check these inputs" in response.content.decode()


def test_capacity_prefills_from_a_question_brief(client: Client, content_loaded) -> None:
    html = client.get("/planner/capacity/?question=long-context-rag").content.decode()
    assert 'name="context" value="32768"' in html


def test_capacity_prefills_from_the_published_brief(client: Client, content_loaded) -> None:
    _publish_edited("chat-api-50qps", "peak_qps: 50", "peak_qps: 80")
    html = client.get("/planner/capacity/?question=chat-api-50qps").content.decode()
    assert 'name="qps" value="80"' in html


def test_capacity_form_fills_the_new_inputs_with_their_defaults(client: Client) -> None:
    html = client.get("/planner/capacity/").content.decode()
    for name, value in (("prompt_len", "512"), ("prefill_eff", "0.5"), ("prefix_hit", "0"),
                        ("spec_accept", "0.7"), ("spec_tokens", "4")):  # fmt: skip
        assert f'name="{name}" value="{value}"' in html, name
    assert 'name="spec_decode"' in html and 'name="pd_disagg"' in html


def test_capacity_form_explains_a_prompt_that_does_not_fit_beside_the_field(
    htmx: HtmxClient,
) -> None:
    response = htmx.get("/planner/capacity/", {**Q3, "prompt_len": 40000}, htmx=True)
    html = response.content.decode()
    assert response.status_code == 422
    assert "Mean prompt length" in html and "do not fit in a context of 32,768" in html


def test_capacity_form_prints_a_refused_prompt_as_the_planner_prints_figures(
    htmx: HtmxClient,
) -> None:
    response = htmx.get("/planner/capacity/", {"prompt_len": "10000000"}, htmx=True)
    html = response.content.decode()
    assert response.status_code == 422
    assert (
        "A mean prompt of 10,000,000 tokens and a mean output of 256 tokens do not fit in a "
        "context of 8,192 tokens."
    ) in html


def test_capacity_form_refuses_a_number_past_a_doubles_range_as_too_large(
    htmx: HtmxClient,
) -> None:
    # float("1e400") is infinity: still a number, only far above the field's bound.
    response = htmx.get("/planner/capacity/", {"qps": "1e400"}, htmx=True)
    html = response.content.decode()
    assert response.status_code == 422
    assert "Ensure this value is less than or equal to 1,000,000,000." in html
    assert "Enter a number" not in html


@pytest.mark.parametrize(
    ("name", "typed"), [("qps", "٥٠"), ("qps", "５０"), ("context", "٨١٩٢"), ("tp", "١")]
)
def test_capacity_form_reads_only_the_digits_0_to_9(name: str, typed: str) -> None:
    """Python reads any script's digits as numbers; the worksheet refuses them, and so does
    the planner, rather than planning 50 QPS from a field that shows "٥٠"."""
    form = CapacityForm({**DEFAULTS, name: typed})
    assert not form.is_valid()
    assert form.errors[name] == ["Use the digits 0–9."]


def test_capacity_form_runs_the_what_ifs(client: Client) -> None:
    query = {**Q3, "prompt_len": 30000, "prefix_hit": 0.9, "prefix_len": 28000,
             "spec_decode": "on", "pd_disagg": "on", "mean_qps": 4}  # fmt: skip
    html = client.get("/planner/capacity/", query).content.decode()
    assert "Speculative decoding (what-if)" in html and "PD disaggregation (what-if)" in html
    assert 'id="step-N_pre"' in html and 'id="step-ttft_hit"' in html
    # The mean QPS given is not costed for the split pools, and the page says so.
    assert "The mean of 4 QPS is not costed for the disaggregated what-if" in html


LONG_PROMPTS_PD = {
    "model": "llama-3.1-70b-instruct", "gpu": "h200", "weights": "fp8", "kv": "fp8",
    "context": 32768, "prompt_len": 16000, "out_len": 300, "qps": 4, "tpot_slo_ms": 50,
    "pd_disagg": "on",
}  # fmt: skip


def _text(html: str, pattern: str) -> str:
    match = re.search(pattern, html, re.S)
    assert match, pattern
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", match.group(0)))


@pytest.mark.parametrize(("hold_s", "decode", "bound"), [(None, 4, "speed"), (60, 17, "memory")])
def test_a_split_plan_says_its_pools_size_the_fleet(
    client: Client, hold_s: int | None, decode: int, bound: str
) -> None:
    """With PD the pools size the fleet: the Binding line and the bounds panel name the decode
    pool's r_dec and the prefill pool's rate, and the shared-GPU figures say they are the plan
    without the split."""
    query = LONG_PROMPTS_PD if hold_s is None else {**LONG_PROMPTS_PD, "hold_s": hold_s}
    html = client.get("/planner/capacity/", query).content.decode()
    binding = _text(html, r'<p class="muted" id="plan-binding">.*?</p>')
    r_dec = _text(html, r'<li class="pl-binds" id="bound-r-dec">.*?</li>')
    prefill = _text(html, r'<li class="pl-binds" id="bound-prefill-pool">.*?</li>')
    r_inst = _text(html, r'<li id="bound-r-inst">.*?</li>')
    rate = re.search(r"([0-9.]+) req/s", r_dec).group(1)
    assert f"{decode} decode instances at rdec {rate} req/s each (its {bound} bound" in binding
    assert "15 prefill instances at 0.39 req/s each" in binding
    assert "Binding without the split: ttft" in binding
    assert f"its {bound} bound binds and sizes {decode} decode instances" in r_dec
    assert "0.39 req/s" in prefill and "sizes 15 prefill instances" in prefill
    assert "without the split" in r_inst and "the ttft bound binds" not in r_inst
    # No shared-GPU bound is marked as the one that binds this fleet: only the two pools are.
    assert html.count("<strong>binds</strong>") == 0
    assert re.findall(r'class="pl-binds" id="([a-z-]+)"', html) == [
        "bound-r-dec",
        "bound-prefill-pool",
    ]
    # The bounds chart is the shared GPU's, and says so; htmx's announcement names the pools.
    assert "Requests per shared-GPU instance, without the split" in html
    assert "the prefill and decode pools size this fleet" in html
    announced = client.get("/planner/capacity/", query, HTTP_HX_REQUEST="true").content.decode()
    assert "sized by its prefill and decode pools." in announced
    assert "binding: ttft" not in announced


BANK_SLUGS = sorted(p.stem for p in (settings.BASE_DIR / "content" / "questions").glob("*.md"))


@pytest.mark.parametrize("slug", BANK_SLUGS)
def test_the_planner_opened_from_a_question_plans_the_fleet_the_simulator_tests(
    client: Client, bank_loaded, slug: str
) -> None:
    # The estimate step's feedback offers the planner "prefilled from the brief", and the
    # bottlenecks step load-tests the question's design: both must be the same fleet, with
    # the dtypes and parallelism the question's design settles on (not the page's defaults).
    from simulator.services import design_from_brief

    page = client.get("/planner/capacity/", {"question": slug}).context
    design = design_from_brief(load_question_spec(slug).brief, slug=slug)
    if design.pooled is not None:
        # Prefill only (the embedding question): the planner sizes generating fleets and
        # says so; the simulator sizes this one itself.
        assert "is a prefill-only service" in page["question_problem"]
        return
    assert page["result"] is not None, slug
    planned = {key: page["form"].cleaned_data[key] for key in ("model", "gpu", "weights", "kv")}
    assert planned == {key: design.plan_kwargs[key] for key in planned}
    assert page["form"].cleaned_data["tp"] == design.plan_kwargs["tp"]
    # The planner's sizing; the panel may run the reference answer's own fleet beside it
    # (planner.briefs.REFERENCE_FLEETS) and names both.
    assert page["result"]["n_inst"] == design.planned_replicas


def test_the_planners_wide_tables_scroll_with_the_keyboard(client: Client, content_loaded) -> None:
    """A table wider than its card scrolls in its own box (.pl-table-wrap .scroll-x): a box a
    keyboard cannot reach is one whose right-hand columns a keyboard user never sees (axe-core's
    scrollable-region-focusable), and one a screen reader lands on needs a name. scroll.js
    makes a box with a data-scroll-label a named stop while it overflows (the browser tests)."""
    for url in ("/planner/capacity/", "/simulator/"):
        page = client.get(url).content.decode()
        wraps = re.findall(r'<div class="pl-table-wrap[^"]*"[^>]*>', page)
        assert wraps, url
        for wrap in wraps:
            assert "scroll-x" in wrap and re.search(r'data-scroll-label="[^"]+"', wrap), (url, wrap)


def test_a_shared_prefix_longer_than_the_prompt_is_refused_at_its_field(htmx: HtmxClient) -> None:
    # A prefix is the start of a prompt: one longer than it planned a fleet with no prefill
    # at all (0 ms TTFT), from the prompt clipped to its last token.
    query = {"prefix_hit": "1", "prefix_len": "100000", "prompt_len": "512"}
    response = htmx.get("/planner/capacity/", query, htmx=True)
    html = " ".join(response.content.decode().split())
    assert response.status_code == 422
    assert (
        "A shared prefix of 100,000 tokens is longer than the mean prompt of 512 tokens: "
        "the prefix is the start of a prompt."
    ) in html
    errors = html[html.index('id="id_prefix_len_errors"') :]
    assert errors.index("A shared prefix of 100,000") < errors.index("</div>")
    whole = htmx.get("/planner/capacity/", query | {"prefix_len": "512"}, htmx=True)
    assert whole.status_code == 200
