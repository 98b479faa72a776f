"""A vision-language model's vision tower in the planner's memory: its weights sit on the GPUs
beside the language model's, so the KV pool is smaller by exactly their bytes, and the
derivation shows them as their own line."""

import shutil
from pathlib import Path

import pytest
import yaml
from django.test import Client

from planner.engine import load_catalog, plan
from planner.engine.catalog import DEFAULT_DIR

pytestmark = pytest.mark.one_database

VLM = "qwen2.5-vl-7b-instruct"
TOWER_PARAMS = 676_550_144  # the catalogue's vision_params for Qwen2.5-VL-7B
TOWER_BF16 = TOWER_PARAMS * 2  # 1,353,100,288 B


@pytest.fixture(scope="module")
def without_tower(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The catalogue with the VLM's vision_params taken out: the same model, no tower."""
    folder = tmp_path_factory.mktemp("catalog")
    for path in DEFAULT_DIR.glob("*.yaml"):
        shutil.copy(path, folder / path.name)
    models = yaml.safe_load((folder / "models.yaml").read_text())
    del models["models"][VLM]["vision_params"]
    (folder / "models.yaml").write_text(yaml.safe_dump(models))
    return folder


def _pair(without_tower: Path, **inputs) -> tuple[dict, dict]:
    args = {"model": VLM, "gpu": "l40s", "context": 4096, "prompt_len": 1400, "out_len": 40}
    args |= inputs
    return plan(**args), plan(**args, catalog_dir=without_tower)


def test_the_catalogue_vlm_has_its_tower() -> None:
    assert load_catalog().model(VLM).vision_params == TOWER_PARAMS


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_the_kv_pool_drops_by_exactly_the_towers_bytes(without_tower: Path, tp: int) -> None:
    # Split over the TP GPUs (vLLM's default mm_encoder_tp_mode, "weights"): the instance
    # holds one copy, whatever its TP.
    with_tower, without = _pair(without_tower, tp=tp)
    assert without["kv_pool_bytes"] - with_tower["kv_pool_bytes"] == pytest.approx(
        TOWER_BF16, abs=1e-3
    )
    assert with_tower["vision_weights_bytes"] == TOWER_BF16
    assert without["vision_weights_bytes"] is None
    # The language model's own weights and the overhead are unchanged.
    assert with_tower["weights_bytes"] == without["weights_bytes"]
    assert with_tower["overhead_bytes"] == without["overhead_bytes"]


def test_fewer_streams_fit_with_the_tower(without_tower: Path) -> None:
    with_tower, without = _pair(without_tower, gpu="rtx-4090", context=8192, prompt_len=None)
    assert with_tower["max_seqs"] < without["max_seqs"]


@pytest.mark.parametrize("weights", ["fp8", "awq-int4"])
def test_a_quantised_checkpoint_keeps_the_tower_in_16_bits(
    without_tower: Path, weights: str
) -> None:
    with_tower, without = _pair(without_tower, weights=weights)
    assert with_tower["vision_weights_bytes"] == TOWER_BF16
    assert without["kv_pool_bytes"] - with_tower["kv_pool_bytes"] == pytest.approx(
        TOWER_BF16, abs=1e-3
    )


def test_the_derivation_has_the_towers_line_before_the_pool(without_tower: Path) -> None:
    with_tower, without = _pair(without_tower)
    names = [step["name"] for step in with_tower["steps"]]
    assert names.index("W") < names.index("W_vis") < names.index("pool")
    step = next(s for s in with_tower["steps"] if s["name"] == "W_vis")
    assert step["unit"] == "GB" and step["value"] == pytest.approx(1.3531, abs=1e-4)
    assert "Vision tower" in step["label"]
    pool = next(s for s in with_tower["steps"] if s["name"] == "pool")
    assert "W_{vis}" in pool["formula_latex"] or "W_{\\mathrm{vis}}" in pool["formula_latex"]
    assert "W_vis" not in [s["name"] for s in without["steps"]]


def test_a_note_says_what_the_tower_adds_and_what_it_does_not(without_tower: Path) -> None:
    with_tower, without = _pair(without_tower, tp=2)
    said = [n for n in with_tower["notes"] if "vision tower" in n]
    assert len(said) == 1 and "1.353 GB" in said[0] and "split over the 2 GPUs" in said[0]
    assert not any("vision tower" in n for n in without["notes"])


def test_a_text_model_has_no_tower_line() -> None:
    result = plan(model="qwen2.5-7b-instruct", gpu="l40s", context=4096)
    assert result["vision_weights_bytes"] is None
    assert "W_vis" not in [step["name"] for step in result["steps"]]


def test_the_weights_that_do_not_fit_count_the_tower() -> None:
    # 15.23 GB of language model and 1.35 GB of tower on an RTX 4090 (23.65 GiB) at u = 0.7
    # with a 1.5 GiB overhead: 16.58 GB per GPU against 15.05 GiB (16.16 GB) usable, so only
    # the tower puts it over.
    inputs = {"gpu": "rtx-4090", "context": 4096, "mem_util": 0.7, "overhead_gib": 1.5}
    assert plan(model="qwen2.5-7b-instruct", **inputs)["fits"]
    result = plan(model=VLM, **inputs)
    assert not result["fits"]
    assert "16.58 GB per GPU" in result["reason"]


def test_the_capacity_page_shows_the_towers_line(client: Client) -> None:
    html = client.get(
        "/planner/capacity/", {"model": VLM, "gpu": "l40s", "context": 4096}
    ).content.decode()
    assert 'id="step-W_vis"' in html
    row = html[html.index('id="step-W_vis"') :]
    row = row[: row.index("</tr>")]
    assert "Vision tower" in row and "<output>1.353 GB</output>" in row
