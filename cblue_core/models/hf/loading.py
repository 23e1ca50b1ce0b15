"""A local checkpoint folder checked (weights, tokenizer, config), its task resolved and its
labels mapped onto the task's, then loaded as the predictor of its head."""
from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...tasks import Kind, TaskSpec, UnknownTaskError, get_task
from ..base import ModelCard, folder_size
from ..devices import half_precision
from ..registry import (
    CARD_FILE,
    HF_CAUSAL_LM,
    HF_KINDS,
    HF_SEQUENCE_CLASSIFICATION,
    HF_TOKEN_CLASSIFICATION,
    ModelLoadError,
    hf_kind_from_config,
    read_card,
    read_config,
    tokenizer_problem,
    weights_problem,
)
from .predictors import GenerationParams, HFCausalLM, HFPredictor, HFSequenceClassifier, HFTokenClassifier
from .tags import parse_tag

# Which task kinds each head can serve.
TASK_KINDS: dict[str, tuple[Kind, ...]] = {
    HF_TOKEN_CLASSIFICATION: (Kind.SPANS,),
    HF_SEQUENCE_CLASSIFICATION: (Kind.CLASSIFICATION, Kind.PAIR),
    HF_CAUSAL_LM: (Kind.PROMPT, Kind.MULTIPLE_CHOICE),
}
DEFAULT_TASK = {HF_CAUSAL_LM: "PromptCBLUE"}  # a causal LM that does not say its task


def _map_to_task(names: Sequence[str], task: TaskSpec, what: str, folder: Path) -> dict[str, str]:
    """Model label/type names -> task label codes (exact, else case-insensitive)."""
    codes = task.label_codes
    lower = {c.lower(): c for c in codes}
    out, unknown = {}, []
    for n in names:
        if n in codes:
            out[n] = n
        elif n.lower() in lower:
            out[n] = lower[n.lower()]
        else:
            unknown.append(n)
    if unknown:
        raise ModelLoadError(
            f"model at {folder} does not fit task {task.name}: its {what} "
            f"{', '.join(map(repr, unknown[:8]))}{' ...' if len(unknown) > 8 else ''} are not "
            f"{task.name} labels (expected {', '.join(codes[:12])}{' ...' if len(codes) > 12 else ''})")
    return out



@contextlib.contextmanager
def _quiet_loading():
    """No weight-loading progress bars from transformers while we load."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover
        yield
        return
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


def check_folder(path: str | Path, allow_pickle: bool = False) -> dict[str, Any]:
    """Raise :class:`ModelLoadError` naming what the folder lacks; return its config."""
    path = Path(path)
    if not path.exists():
        raise ModelLoadError(f"model folder not found: {path}")
    if not path.is_dir():
        raise ModelLoadError(f"not a folder: {path} (a model is a folder with config.json, weights "
                             f"and tokenizer files)")
    if not (path / "config.json").is_file():
        raise ModelLoadError(f"model folder {path} has no config.json (not a Hugging Face checkpoint)")
    try:
        config = read_config(path)
    except ValueError as exc:
        raise ModelLoadError(f"model folder {path}: {exc}") from None
    problem = weights_problem(path, allow_pickle) or tokenizer_problem(path)
    if problem:
        raise ModelLoadError(f"model folder {path}: {problem}")
    explicit = config.get("transformers_weights")
    if explicit and not allow_pickle and not str(explicit).endswith((".safetensors", ".safetensors.index.json")):
        raise ModelLoadError(f"model folder {path}: config.json points at {explicit!r}, not safetensors "
                             f"(pass allow_pickle=True to load it)")
    return config


def resolve_task(path: Path, kind: str, task: str | TaskSpec | None, model_task: str | None) -> TaskSpec:
    """The task to predict: the requested one, checked against what the model says it does."""
    want = task.name if isinstance(task, TaskSpec) else task
    if want and model_task and want != model_task:
        raise ModelLoadError(f"model at {path} is for task {model_task}, not {want}")
    name = want or model_task or DEFAULT_TASK.get(kind)
    if not name:
        raise ModelLoadError(f"model at {path} does not say its task (no {CARD_FILE}, no 'cblue_task' "
                             f"in config.json): pass the task (--task NAME)")
    try:
        spec = task if isinstance(task, TaskSpec) else get_task(name)
    except UnknownTaskError as exc:
        raise ModelLoadError(f"model at {path}: {exc}") from None
    allowed = TASK_KINDS[kind]
    if spec.kind not in allowed:
        raise ModelLoadError(
            f"model at {path} is a {kind} model; it cannot predict {spec.name} "
            f"({spec.kind.value}); it serves {' / '.join(k.value for k in allowed)} tasks")
    return spec


def _classification_labels(config, spec: TaskSpec, path: Path) -> list[str]:
    n = int(getattr(config, "num_labels", 0) or len(config.id2label))
    names = [str(config.id2label.get(i, f"LABEL_{i}")) for i in range(n)]
    if all(re.fullmatch(r"LABEL_\d+", x) for x in names):
        codes = spec.label_codes
        if len(codes) == n and all(c == str(i) for i, c in enumerate(codes)):
            return list(codes)  # numbered classes (STS, QQR, QTR): class i is label "i"
        raise ModelLoadError(
            f"model at {path} has no label names (config.id2label is LABEL_0..LABEL_{n - 1}); "
            f"set id2label to {spec.name} labels ({', '.join(codes[:8])}...)")
    mapping = _map_to_task(names, spec, "labels", path)
    return [mapping[x] for x in names]


def _token_types(config, path: Path) -> list[str]:
    types, bad = [], []
    for i, tag in sorted(config.id2label.items(), key=lambda kv: int(kv[0])):
        try:
            _, t = parse_tag(tag)
        except ValueError:
            bad.append(str(tag))
            continue
        if t is not None and t not in types:
            types.append(t)
    if bad:
        raise ModelLoadError(f"model at {path}: tags {', '.join(map(repr, bad[:8]))} in config.id2label "
                             f"follow no BIO/BIOES scheme (expected O, B-type, I-type, E-type, S-type)")
    return types


def load_hf(path: str | Path, *, task: str | TaskSpec | None = None, kind: str | None = None,
            device: str = "cpu", allow_pickle: bool = False, card: ModelCard | None = None,
            generation: GenerationParams | dict | None = None, batch_size: int = 32) -> HFPredictor:
    """Load the checkpoint at ``path`` as a predictor on ``device`` (already resolved).

    ``kind`` defaults to the model card's, else the one ``config.json``'s architecture implies;
    ``task`` defaults to the card's, else ``config.json``'s ``cblue_task`` (PromptCBLUE for causal
    LMs). Raises :class:`ModelLoadError` with the folder and the reason.
    """
    path = Path(path).expanduser()
    raw_config = check_folder(path, allow_pickle)
    if card is None and (path / CARD_FILE).is_file():
        try:
            card = read_card(path)
        except ValueError as exc:
            raise ModelLoadError(f"model folder {path}: {exc}") from None
    arch_kind = hf_kind_from_config(raw_config)
    kind = kind or (card.kind if card else None) or arch_kind
    if kind not in HF_KINDS:
        archs = ", ".join(map(str, raw_config.get("architectures") or [])) or "none"
        raise ModelLoadError(f"model at {path}: unsupported model (kind {kind!r}, architectures {archs}); "
                             f"supported: {', '.join(HF_KINDS)}")
    if arch_kind is not None and arch_kind != kind:
        raise ModelLoadError(f"model at {path}: the card says {kind} but config.json's architecture "
                             f"is a {arch_kind} model")
    model_task = card.task if card else (str(raw_config["cblue_task"]) if raw_config.get("cblue_task") else None)
    spec = resolve_task(path, kind, task, model_task)
    gen = GenerationParams.from_any(generation) if kind == HF_CAUSAL_LM else None

    import transformers  # heavy imports only once the folder passed the checks
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForSequenceClassification,
        AutoModelForTokenClassification,
        AutoTokenizer,
    )

    common = {"local_files_only": True, "trust_remote_code": False}
    try:
        config = AutoConfig.from_pretrained(str(path), **common)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelLoadError(f"model at {path}: cannot read config.json ({exc}); custom model code is "
                             f"never run (trust_remote_code=False)") from None

    # Check labels against the task before reading any weights.
    extra: dict[str, Any] = {}
    if kind == HF_TOKEN_CLASSIFICATION:
        extra["type_map"] = _map_to_task(_token_types(config, path), spec, "entity types", path)
    elif kind == HF_SEQUENCE_CLASSIFICATION:
        extra["labels"] = _classification_labels(config, spec, path)

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), **common)
    except (OSError, ValueError, KeyError, TypeError, ImportError) as exc:
        raise ModelLoadError(f"model at {path}: cannot load the tokenizer ({exc})") from None
    if kind == HF_TOKEN_CLASSIFICATION and not getattr(tokenizer, "is_fast", False):
        raise ModelLoadError(f"model at {path}: token classification needs a fast tokenizer "
                             f"(tokenizer.json) for character offsets")

    pickle_only = weights_problem(path, allow_pickle=False) is not None
    if pickle_only:
        warnings.warn(f"loading pickle weights from {path} (allow_pickle=True): only load "
                      f"checkpoints you trust; convert them to safetensors", stacklevel=2)
    dtype = half_precision(device)
    auto = {HF_TOKEN_CLASSIFICATION: AutoModelForTokenClassification,
            HF_SEQUENCE_CLASSIFICATION: AutoModelForSequenceClassification,
            HF_CAUSAL_LM: AutoModelForCausalLM}[kind]
    load_kw: dict[str, Any] = {"config": config, "dtype": dtype, "weights_only": True,
                               "use_safetensors": None if allow_pickle else True, **common}
    try:
        with _quiet_loading():
            try:   # PyTorch's fused attention where the architecture has it
                model = auto.from_pretrained(str(path), attn_implementation="sdpa", **load_kw)
            except (ValueError, ImportError) as exc:
                if "sdpa" not in str(exc).lower() and "attn" not in str(exc).lower():
                    raise
                model = auto.from_pretrained(str(path), **load_kw)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise ModelLoadError(f"model at {path}: cannot load the weights ({exc})") from None
    model.to(device)
    model.eval()

    if card is None:
        card = ModelCard(name=path.name, task=spec.name, kind=kind,
                         labels=[str(config.id2label[i]) for i in sorted(config.id2label)]
                         if kind != HF_CAUSAL_LM else [],
                         description=f"Hugging Face checkpoint ({', '.join(config.architectures or [])})",
                         size_bytes=folder_size(path),
                         extra={"model_type": getattr(config, "model_type", ""), "source": "hf"})
    params: dict[str, Any] = {"model_path": str(path), "kind": kind, "device": device,
                              "dtype": str(dtype).replace("torch.", ""),
                              "weights": "pickle" if pickle_only else "safetensors",
                              "transformers": transformers.__version__}
    cls = {HF_TOKEN_CLASSIFICATION: HFTokenClassifier, HF_SEQUENCE_CLASSIFICATION: HFSequenceClassifier,
           HF_CAUSAL_LM: HFCausalLM}[kind]
    if gen is not None:
        extra["generation"] = gen
        batch_size = min(batch_size, 8)
    return cls(model, tokenizer, spec, card, device, path, params, batch_size=batch_size, **extra)
