"""vLLM's default cap on the sequences an engine batches (--max-num-seqs: 1024 on a GPU of
70 GiB or more that is not an A100, else 256): a plan whose batch is past it says to raise
it, since otherwise the instance runs the cap, not the plan's batch."""

from planner.engine import plan
from planner.engine.catalog import load_catalog


def _cap_note(result) -> list[str]:
    return [n for n in result["notes"] if "--max-num-seqs" in n]


def test_the_default_cap_follows_the_gpus_memory_and_leaves_out_the_a100():
    gpus = load_catalog().gpus
    assert gpus["h100-sxm"].vllm_default_max_num_seqs == 1024
    assert gpus["h200"].vllm_default_max_num_seqs == 1024
    assert gpus["a100-80gb"].vllm_default_max_num_seqs == 256  # 80 GB, but an A100
    assert gpus["l40s"].vllm_default_max_num_seqs == 256
    assert gpus["rtx-4090"].vllm_default_max_num_seqs == 256


def test_a_batch_past_the_cap_is_told_to_raise_it():
    # A 7B model in BF16 on an H100 at a short context fits more than 1024 streams.
    result = plan(model="qwen2.5-7b-instruct", gpu="h100-sxm", weights="bf16", context=512)
    assert result["batch"] > 1024
    [note] = _cap_note(result)
    assert f"--max-num-seqs {result['batch']} or more" in note and "1024 sequences" in note
    # The same model on an A100 80GB is capped at 256.
    a100 = plan(model="qwen2.5-7b-instruct", gpu="a100-80gb", weights="bf16", context=2048)
    assert a100["batch"] > 256
    assert "256 sequences" in _cap_note(a100)[0]


def test_a_batch_within_the_cap_says_nothing_of_it():
    result = plan(model="qwen2.5-7b-instruct", gpu="rtx-4090", weights="bf16")
    assert result["batch"] <= 256
    assert _cap_note(result) == []
