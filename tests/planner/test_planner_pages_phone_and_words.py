"""The planner's pages as a QA walk read them: the worksheet's link keeps its question, the
simulate page says it does not split prefill from decode, counts and prices read as English,
and on a phone the derivation's values and the charts' text are in reach."""

import html
import re

import pytest
from django.core.cache import cache

pytestmark = pytest.mark.one_database

ONE_STREAM = "prompt_len=125000&out_len=3000&context=131072"
# The planner's first plan, as its form submits it (the TTFT SLO left out).
DEFAULTS = (
    "model=qwen2.5-7b-instruct&gpu=rtx-4090&weights=awq-int4&kv=bf16&context=8192"
    "&mem_util=0.9&bw_eff=0.7&tp=1&knee_tok_s=&prompt_len=512&prompt_spread=0.5&out_len=256"
    "&qps=50&mean_qps=&rho=0.7&tpot_slo_ms=50&overhead_gib=&prefill_eff=0.5&prefix_hit=0"
    "&prefix_len=&usd_per_gpu_hour=&spec_accept=0.7&spec_tokens=4&spec_draft_cost=0.05"
    "&hold_s="
)


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()


def _text(response) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", response.content.decode())).split())


@pytest.mark.django_db
def test_the_worksheet_links_to_the_planner_for_its_question(client, content_loaded) -> None:
    page = client.get("/planner/?question=chat-api-50qps").content.decode()
    assert 'href="/planner/capacity/?question=chat-api-50qps"' in page
    # Without a question the link is the plain planner.
    assert (
        'href="/planner/capacity/">Open the capacity planner'
        in client.get("/planner/").content.decode()
    )


@pytest.mark.django_db
def test_counts_and_prices_read_as_english(client) -> None:
    one = _text(client.get(f"/planner/capacity/?{ONE_STREAM}"))
    assert "1 concurrent stream each" in one
    assert re.search(r"(?<![\d.])1 stream ÷ [\d.]+ s each", one), one
    assert "1 streams" not in one
    many = _text(client.get("/planner/capacity/"))
    assert re.search(r"\b\d{2,} concurrent streams each", many)
    assert "GPU $0.60 an hour" in _text(client.get("/planner/capacity/?usd_per_gpu_hour=0.6"))
    assert "GPU $0.00 an hour" in _text(client.get("/planner/capacity/?usd_per_gpu_hour=0"))
    # Under a cent an hour the digits the costs use stay.
    assert "GPU $0.004 an hour" in _text(client.get("/planner/capacity/?usd_per_gpu_hour=0.004"))


@pytest.mark.django_db
def test_the_simulate_page_says_it_does_not_split_prefill_from_decode(client) -> None:
    plan = client.get("/planner/capacity/?pd_disagg=on&qps=4").content.decode()
    link = html.unescape(re.search(r'id="plan-simulate" href="([^"]+)"', plan).group(1))
    assert "pd_disagg=on" in link
    split = client.get(link)
    assert split.status_code == 200
    note = _text(split)
    assert "does not model that split" in note
    assert re.search(r"runs the same \d+ instances as one pool", note), note
    plain = client.get(link.replace("&pd_disagg=on", ""))
    assert plain.status_code == 200 and "does not model that split" not in _text(plain)


@pytest.mark.browser
def test_on_a_phone_the_derivations_values_and_the_charts_text_are_in_reach(
    page, live_server_url
) -> None:
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(f"{live_server_url}/planner/capacity/")
    first = page.locator("#plan-steps tbody tr").first
    first.scroll_into_view_if_needed()
    label = first.locator("th").bounding_box()
    value = first.locator("output").bounding_box()
    # The value stands beside its label, inside the screen, before any sideways scroll.
    assert value["x"] + value["width"] <= 360, value
    assert abs(value["y"] - label["y"]) < label["height"], (label, value)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    # Every step's value is inside the screen, not only the first.
    rights = page.locator("#plan-steps td.pl-num output").evaluate_all(
        "os => os.map(o => o.getBoundingClientRect().right)"
    )
    assert len(rights) >= 30 and max(rights) <= 360, max(rights)
    # The charts' text renders at 10 px or more: the font size times the chart's scale.
    sizes = page.locator(".pl-charts svg text").evaluate_all(
        "ts => ts.map(t => t.getScreenCTM().a * parseFloat(getComputedStyle(t).fontSize))"
    )
    assert sizes and min(sizes) >= 10, min(sizes)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert page.js_errors == []


@pytest.mark.django_db
def test_a_plan_over_the_ttft_slo_at_the_peak_is_not_called_simply_feasible(client) -> None:
    # The fleet holds the TPOT SLO, but the p99 TTFT with queueing misses a 100 ms SLO: the
    # badge beside it said "feasible" next to "over the TTFT SLO".
    tight = client.get(f"/planner/capacity/?{DEFAULTS}&ttft_slo_ms=100").content.decode()
    assert 'id="plan-ttft-peak-over"' in tight
    assert 'id="plan-feasible-unqueued">feasible without queueing<' in tight
    assert ">feasible<" not in tight
    easy = client.get(f"/planner/capacity/?{DEFAULTS}&ttft_slo_ms=2000").content.decode()
    assert ">feasible<" in easy and "plan-feasible-unqueued" not in easy


@pytest.mark.django_db
def test_a_plan_whose_queue_grows_without_end_is_not_called_simply_feasible(client) -> None:
    # A measured hold of 60 s fills every batch slot at the peak: the note says the queue
    # grows without end, and the badge beside the TPOT said "feasible".
    url = f"/planner/capacity/?{DEFAULTS}&rho=0.9&tpot_slo_ms=20&ttft_slo_ms=1000&hold_s=60"
    page = client.get(url).content.decode()
    assert "its queue grows without end" in page
    assert 'id="plan-feasible-unqueued">feasible without queueing<' in page


@pytest.mark.django_db
def test_the_binding_and_knee_say_only_what_the_plan_has(client) -> None:
    # Prefill binds the default plan, which sets no TTFT SLO: no SLO is named as the cause.
    plan = _text(client.get(f"/planner/capacity/?{DEFAULTS}"))
    assert "Binding: ttft (prefill compute)." in plan
    assert "or the TTFT SLO" not in plan
    # Its chart does not say an instance sustains the lower bound "so prefill binds".
    assert "sustains the lower, so prefill binds" not in plan
    assert "sustains less than the lower of the two: prefill binds" in plan
    with_slo = _text(client.get(f"/planner/capacity/?{DEFAULTS}&ttft_slo_ms=100"))
    assert "(prefill compute or the TTFT SLO)" in with_slo
    # Where nothing fits there is no knee to speak of.
    nothing = _text(
        client.get(f"/planner/capacity/?{DEFAULTS}&context=131072&prompt_len=&weights=bf16")
    )
    assert "No knee: no stream fits." in nothing and "tok/s, derived." not in nothing
