"""Load the model, GPU and dtype catalogues from content/catalog/*.yaml."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from .errors import FormulaError
from .evaluator import Quantity
from .units import INFORMATION, TIME, dim_div
from .worksheet import evaluate

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "content" / "catalog"

_MODEL_KEYS = {
    "name", "aliases", "params", "layers", "attention_heads", "kv_heads", "head_dim",
    "hidden_size", "intermediate_size", "vocab_size", "tie_word_embeddings", "max_context",
    "max_context_yarn", "active_params", "experts", "experts_per_token", "moe_intermediate_size",
    "vision_params",
}  # fmt: skip
_GPU_KEYS = {
    "name", "aliases", "memory", "memory_datasheet", "bandwidth", "bf16_tflops", "fp8_tflops",
    "usd_per_hour", "usd_per_hour_date", "interconnect", "allreduce_bandwidth", "allreduce_latency",
}  # fmt: skip
_GPU_REQUIRED = {
    "name", "memory", "memory_datasheet", "bandwidth", "interconnect", "allreduce_bandwidth",
    "allreduce_latency",
}  # fmt: skip
_WEIGHT_KEYS = {"name", "aliases", "bytes_per_param", "embedding_bytes_per_param"}
_KV_KEYS = {"name", "aliases", "bytes"}


@dataclass(frozen=True)
class Model:
    key: str
    name: str
    params: int
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    hidden_size: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool
    max_context: int  # tokens (max_position_embeddings)
    max_context_yarn: int | None = None  # tokens with YaRN rope scaling, when that is longer
    # Mixture of experts: parameters one token passes through (shared layers plus its
    # experts_per_token routed experts), the routed experts per layer, and each expert's
    # SwiGLU width. None for a dense model.
    active_params: int | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    moe_intermediate_size: int | None = None
    # A vision-language model's image encoder, which `params` leaves out: the planner holds its
    # weights in memory beside the language model's (capacity's W_vis) and plans every other
    # figure on the language model, and whoever states such a figure says it is that model's.
    vision_params: int | None = None

    @property
    def is_moe(self) -> bool:
        return bool(self.experts)

    @property
    def params_per_token(self) -> int:
        """Parameters one token's forward pass uses: all of a dense model, the active ones of
        an MoE."""
        return self.active_params or self.params

    @property
    def attention_width(self) -> int:
        """Query heads x head dim: the width of QK^T and AV. It is the hidden size where the
        config's head_dim is hidden_size / heads (Qwen2.5, Llama, Mixtral), and wider in the
        Qwen3 configs, dense and MoE, which set head_dim to 128 (Qwen3-32B: 64 x 128 = 8192
        against a hidden size of 5120)."""
        return self.attention_heads * self.head_dim

    @property
    def context_limit(self) -> int:
        """The longest context the model serves at all, rope scaling included."""
        return max(self.max_context, self.max_context_yarn or 0)

    @property
    def embedding_params(self) -> int:
        """Parameters of the embedding table and lm_head (counted once when tied)."""
        return self.vocab_size * self.hidden_size * (1 if self.tie_word_embeddings else 2)

    @property
    def unread_embedding_params(self) -> int:
        """Parameters a decode step does not read: the input embedding table, of which a step
        gathers one row per sequence. When it is tied to the LM head it is read in full."""
        return 0 if self.tie_word_embeddings else self.vocab_size * self.hidden_size


@dataclass(frozen=True)
class GPU:
    key: str
    name: str
    memory: Quantity  # bytes the driver reports (what vLLM multiplies by mem_util)
    memory_datasheet: Quantity  # bytes as the datasheet prints them
    bandwidth: Quantity  # B/s
    bf16_tflops: float | None
    fp8_tflops: float | None
    usd_per_hour: float | None = None  # on-demand list price of one GPU, USD/h
    usd_per_hour_date: str | None = None  # when that price was read (YYYY-MM)
    # What carries tensor parallelism's all-reduces: the link in words, each GPU's one-way
    # bandwidth to the others in a ring (B/s) and one small all-reduce's fixed time (s).
    interconnect: str = ""
    allreduce_bandwidth: Quantity | None = None
    allreduce_latency: Quantity | None = None

    @property
    def vllm_default_max_num_seqs(self) -> int:
        """The sequences one vLLM engine on this GPU batches at most unless told otherwise
        (`--max-num-seqs`), as its OpenAI server defaults it: 1024 on a GPU that reports 70 GiB
        or more and is not an A100, else 256 (vllm/engine/arg_utils.py,
        EngineArgs.get_batch_defaults)."""
        large = float(self.memory.magnitude) >= 70 * 2**30 and "a100" not in self.name.lower()
        return 1024 if large else 256

    @property
    def memory_marketed(self) -> str:
        """The datasheet capacity as text, e.g. '24 GB'."""
        return self.memory_datasheet_text

    @property
    def memory_datasheet_text(self) -> str:
        gb = float(self.memory_datasheet.magnitude) / 1e9
        return f"{gb:g} GB"


@dataclass(frozen=True)
class WeightDtype:
    key: str
    name: str
    bytes_per_param: float  # B per linear-layer parameter
    embedding_bytes_per_param: float  # B per embedding / lm_head parameter


@dataclass(frozen=True)
class KVDtype:
    key: str
    name: str
    bytes: float  # B per cached K or V element


@dataclass(frozen=True)
class Catalog:
    models: dict[str, Model]
    gpus: dict[str, GPU]
    weight_dtypes: dict[str, WeightDtype]
    kv_dtypes: dict[str, KVDtype]
    aliases: dict[str, dict[str, str]]
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # GPU names of 2+ cards

    def _find(self, kind: str, table: dict[str, Any], key: str) -> Any:
        wanted = key.strip().lower()
        if kind == "GPU" and wanted in self.ambiguous:
            choices = " or ".join(f"{k} ({table[k].name})" for k in self.ambiguous[wanted])
            raise KeyError(f"{key!r} names more than one GPU; choose {choices}.")
        found = self.aliases[kind].get(wanted)
        if found is None:
            known = ", ".join(table)
            raise KeyError(f"Unknown {kind} {key!r}; known: {known}.")
        return table[found]

    def model(self, key: str) -> Model:
        return self._find("model", self.models, key)

    def gpu(self, key: str) -> GPU:
        return self._find("GPU", self.gpus, key)

    def in_brief(self, kind: str, text: str) -> Model | GPU | None:
        """The model or GPU (`kind` "model" or "gpu") a question brief names in prose ("RTX
        4090 (24 GB)", "2 × A100 80GB SXM", "Qwen2.5-7B (one base) + LoRA adapters"): the text
        itself, else its head (`brief_head`), as written or hyphenated; None when none of them
        is a catalogue name or alias (or the name is one more than one GPU answers to)."""
        lookup = self.model if kind == "model" else self.gpu
        head = brief_head(text)
        for candidate in dict.fromkeys((text, head, head.replace(" ", "-"))):
            if not candidate.strip():
                continue
            try:
                return lookup(candidate)
            except KeyError:
                continue
        return None

    def weight_dtype(self, key: str) -> WeightDtype:
        return self._find("weight dtype", self.weight_dtypes, key)

    def kv_dtype(self, key: str) -> KVDtype:
        return self._find("KV dtype", self.kv_dtypes, key)


# A brief's hardware in prose: the name is the part before a bracket, plus sign, comma or
# semicolon, without a leading count ("2 × A100 80GB SXM").
_BRIEF_COUNT = re.compile(r"^\s*\d+\s*(?:x|×|\*)\s*", re.IGNORECASE)
_BRIEF_TAIL = re.compile(r"[(+,;]")


def brief_head(text: str) -> str:
    """The name part of a brief's model or GPU wording (see above); "" when there is none."""
    return _BRIEF_COUNT.sub("", _BRIEF_TAIL.split(text, maxsplit=1)[0]).strip()


def _read(path: Path) -> dict:
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle) or {}


def _check_keys(where: str, entry: dict, allowed: set[str]) -> None:
    unknown = set(entry) - allowed
    if unknown:
        raise FormulaError(f"{where}: unknown keys {sorted(unknown)}.")


def _quantity(where: str, text: str, dim: tuple) -> Quantity:
    value = evaluate(str(text))
    if value.dim != dim:
        raise FormulaError(f"{where}: {text!r} has the wrong unit.")
    return value


@lru_cache(maxsize=4)
def load_catalog(directory: Path = DEFAULT_DIR) -> Catalog:
    """Read models.yaml, gpus.yaml and dtypes.yaml from `directory` (content/catalog)."""
    aliases: dict[str, dict[str, str]] = {
        "model": {}, "GPU": {}, "weight dtype": {}, "KV dtype": {}
    }  # fmt: skip

    def register(kind: str, key: str, entry: dict) -> None:
        for alias in [key, entry.get("name", key), *entry.get("aliases", [])]:
            aliases[kind][str(alias).lower()] = key

    models = {}
    for key, entry in _read(directory / "models.yaml")["models"].items():
        _check_keys(f"models.yaml {key}", entry, _MODEL_KEYS)
        fields = {k: v for k, v in entry.items() if k != "aliases"}
        models[key] = Model(key=key, **fields)
        register("model", key, entry)
    gpus = {}
    gpu_file = _read(directory / "gpus.yaml")
    for key, entry in gpu_file["gpus"].items():
        _check_keys(f"gpus.yaml {key}", entry, _GPU_KEYS)
        missing = _GPU_REQUIRED - set(entry)
        if missing:
            raise FormulaError(f"gpus.yaml {key}: missing {sorted(missing)}.")
        gpus[key] = GPU(
            key=key,
            name=entry["name"],
            memory=_quantity(f"gpus.yaml {key} memory", entry["memory"], INFORMATION),
            memory_datasheet=_quantity(
                f"gpus.yaml {key} memory_datasheet", entry["memory_datasheet"], INFORMATION
            ),
            bandwidth=_quantity(
                f"gpus.yaml {key} bandwidth", entry["bandwidth"], dim_div(INFORMATION, TIME)
            ),
            bf16_tflops=entry.get("bf16_tflops"),
            fp8_tflops=entry.get("fp8_tflops"),
            usd_per_hour=entry.get("usd_per_hour"),
            usd_per_hour_date=str(entry["usd_per_hour_date"])
            if entry.get("usd_per_hour_date")
            else None,
            interconnect=str(entry["interconnect"]),
            allreduce_bandwidth=_quantity(
                f"gpus.yaml {key} allreduce_bandwidth",
                entry["allreduce_bandwidth"],
                dim_div(INFORMATION, TIME),
            ),
            allreduce_latency=_quantity(
                f"gpus.yaml {key} allreduce_latency", entry["allreduce_latency"], TIME
            ),
        )
        register("GPU", key, entry)
    dtypes = _read(directory / "dtypes.yaml")
    weight_dtypes, kv_dtypes = {}, {}
    for key, entry in dtypes["weights"].items():
        _check_keys(f"dtypes.yaml weights {key}", entry, _WEIGHT_KEYS)
        weight_dtypes[key] = WeightDtype(
            key=key,
            name=entry["name"],
            bytes_per_param=float(entry["bytes_per_param"]),
            embedding_bytes_per_param=float(entry["embedding_bytes_per_param"]),
        )
        register("weight dtype", key, entry)
    for key, entry in dtypes["kv"].items():
        _check_keys(f"dtypes.yaml kv {key}", entry, _KV_KEYS)
        kv_dtypes[key] = KVDtype(key=key, name=entry["name"], bytes=float(entry["bytes"]))
        register("KV dtype", key, entry)
    ambiguous = {
        str(name).lower(): [str(k) for k in keys]
        for name, keys in (gpu_file.get("ambiguous") or {}).items()
    }
    for name, keys in ambiguous.items():
        if name in aliases["GPU"] or not set(keys) <= set(gpus):
            raise FormulaError(f"gpus.yaml ambiguous {name!r}: not a choice of listed GPUs.")
    return Catalog(models, gpus, weight_dtypes, kv_dtypes, aliases, ambiguous)
