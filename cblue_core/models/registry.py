"""Model discovery: built-in models shipped under ``<repo>/models/`` and user model folders.

A *model folder* holds either our ``model_card.json`` (see :class:`~cblue_core.models.base.ModelCard`)
beside its weights (``*.safetensors``) and tokenizer/vocabulary files, or a plain Hugging Face
checkpoint (``config.json`` + weights + tokenizer files), whose task is read from the
config's ``cblue_task`` key when present and otherwise left unknown.

The shared character encoder (kind ``mlm-encoder``, :mod:`cblue_core.models.encoder`) is a model
folder too, listed with ``role`` "encoder": no task, nothing to predict with, but the folder the
built-in task models of kinds ``encoder-*`` name in their ``config.json`` (``"encoder"``: a path
relative to the folder holding the task model, e.g. ``encoder`` beside ``models/kuake-qic``, with the
sha1 of its weights). A task model whose encoder is missing or has other weights has a problem.

User folders come from the ``CBLUE_STUDIO_MODELS`` environment variable (``os.pathsep``-separated;
each entry is a model folder or a folder of model folders) and from extra folders passed by the
caller (the app's sidebar). Folders that are incomplete or unreadable are listed with a
``problem`` saying why, rather than breaking the listing.

Nothing here imports torch or transformers: listing models is cheap.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ..io.bounded_json import read_json
from ..tasks import REGISTRY
from .base import ModelCard, folder_size

MAX_CONFIG_BYTES = 16 << 20     # a model card or config.json is a few kilobytes

ENV_VAR = "CBLUE_STUDIO_MODELS"
CARD_FILE = "model_card.json"
BUILTIN_DIR = Path(__file__).resolve().parents[2] / "models"

# Hugging Face kinds this package loads itself (cblue_core.models.hf); the other kinds are the
# built-in models' (cblue_core.models.builtin.BUILTIN_LOADERS).
HF_TOKEN_CLASSIFICATION = "hf-token-classification"
HF_SEQUENCE_CLASSIFICATION = "hf-sequence-classification"
HF_CAUSAL_LM = "hf-causal-lm"
HF_KINDS = (HF_TOKEN_CLASSIFICATION, HF_SEQUENCE_CLASSIFICATION, HF_CAUSAL_LM)
# The shared pretrained encoder: a plain BertForMaskedLM folder with our card (task "").
ENCODER_KIND = "mlm-encoder"
# config.json keys of a task model built on the shared encoder.
ENCODER_REF, ENCODER_SHA1 = "encoder", "encoder_sha1"

SAFE_WEIGHTS = ("model.safetensors", "model.safetensors.index.json")
PICKLE_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json")
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model", "spiece.model",
                   "sentencepiece.bpe.model", "vocab.model")


class ModelLoadError(Exception):
    """A model that cannot be found or loaded; the message names the folder and what is wrong."""


class ModelNotFoundError(ModelLoadError, LookupError):
    """No model of that name, or no folder at that path."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else "model not found"


@dataclass
class ModelInfo:
    """One model folder as discovered (loading it is :func:`cblue_core.models.loading.load_predictor`)."""

    name: str
    task: str | None            # task name, None when the folder does not say
    kind: str | None            # ModelCard.kind, or an hf-* kind inferred from config.json
    path: Path
    source: str                 # "built-in" or "user"
    size_bytes: int = 0
    card: ModelCard | None = None
    problem: str | None = None  # why the folder cannot be loaded as is; None when it looks sound

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def role(self) -> str:
        """"encoder" for the shared encoder (no task, not a predictor), else "model"."""
        return "encoder" if self.kind == ENCODER_KIND else "model"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "task": self.task, "path": str(self.path), "kind": self.kind,
                "role": self.role, "source": self.source, "size_bytes": self.size_bytes,
                "problem": self.problem}


# ---- reading one folder ----------------------------------------------------------------------

def read_card(path: str | Path) -> ModelCard:
    """Parse ``model_card.json`` (a folder or the file itself); ValueError with the reason otherwise."""
    path = Path(path)
    file = path / CARD_FILE if path.is_dir() else path
    try:
        data = read_json(file, max_bytes=MAX_CONFIG_BYTES)
    except OSError as exc:
        raise ValueError(f"cannot read {file.name}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{file.name} is not valid UTF-8 JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{file.name} must hold a JSON object")
    required = ("name", "kind") if data.get("kind") == ENCODER_KIND else ("name", "task", "kind")
    missing = [k for k in required if not isinstance(data.get(k), str) or not data[k]]
    if missing:
        raise ValueError(f"{file.name} lacks {', '.join(missing)} (non-empty strings)")
    known = {f.name for f in fields(ModelCard)}
    kwargs = {k: v for k, v in data.items() if k in known}
    extra = dict(kwargs.pop("extra", {}) or {})
    extra.update({k: v for k, v in data.items() if k not in known})
    try:
        return ModelCard(**kwargs, extra=extra)
    except TypeError as exc:
        raise ValueError(f"{file.name}: {exc}") from None


def write_card(card: ModelCard, folder: str | Path) -> Path:
    """Write ``model_card.json`` into ``folder`` (used by trainers and tests)."""
    out = Path(folder) / CARD_FILE
    out.write_text(json.dumps(asdict(card), ensure_ascii=False, indent=2), encoding="utf-8")
    return out


def read_config(path: str | Path) -> dict[str, Any]:
    """``config.json`` of a HF folder as a dict; ValueError with the reason otherwise."""
    file = Path(path) / "config.json"
    try:
        data = read_json(file, max_bytes=MAX_CONFIG_BYTES)
    except OSError as exc:
        raise ValueError(f"cannot read config.json: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"config.json is not valid UTF-8 JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("config.json must hold a JSON object")
    return data


def hf_kind_from_config(config: dict[str, Any]) -> str | None:
    """The hf-* kind an ``architectures`` entry implies (None when unsupported or absent)."""
    for arch in config.get("architectures") or []:
        arch = str(arch)
        if arch.endswith("ForTokenClassification"):
            return HF_TOKEN_CLASSIFICATION
        if arch.endswith("ForSequenceClassification"):
            return HF_SEQUENCE_CLASSIFICATION
        if arch.endswith(("ForCausalLM", "LMHeadModel")):
            return HF_CAUSAL_LM
    return None


def weights_problem(path: str | Path, allow_pickle: bool = False) -> str | None:
    """Why the folder's weights cannot be loaded (None when safetensors, or allowed pickle, exist)."""
    path = Path(path)
    safe = sorted(p.name for p in path.glob("*.safetensors"))
    index = path / "model.safetensors.index.json"
    if index.is_file():
        try:
            shards = set(json.loads(index.read_text(encoding="utf-8")).get("weight_map", {}).values())
        except (OSError, ValueError, AttributeError):
            return f"{index.name} is unreadable"
        missing = sorted(s for s in shards if not (path / s).is_file())
        if missing:
            return f"missing weight shard(s) listed in {index.name}: {', '.join(missing[:5])}"
        return None
    if safe:
        return None
    pickles = sorted(p.name for p in path.iterdir() if p.is_file() and p.suffix in PICKLE_SUFFIXES)
    if pickles:
        if allow_pickle and any(p in PICKLE_WEIGHTS for p in pickles):
            return None
        return (f"only pickle weights ({', '.join(pickles[:3])}); safetensors (*.safetensors) are "
                f"required unless you opt in with allow_pickle=True / --allow-pickle")
    return "no weights (expected model.safetensors or another *.safetensors file)"


def tokenizer_problem(path: str | Path) -> str | None:
    path = Path(path)
    if any((path / f).is_file() for f in TOKENIZER_FILES):
        return None
    return f"no tokenizer files (expected one of {', '.join(TOKENIZER_FILES[:4])}...)"


def hf_folder_problem(path: str | Path, allow_pickle: bool = False) -> str | None:
    """What a Hugging Face checkpoint folder lacks (config, weights, tokenizer), or None."""
    path = Path(path)
    if not (path / "config.json").is_file():
        return "no config.json"
    try:
        config = read_config(path)
    except ValueError as exc:
        return str(exc)
    if hf_kind_from_config(config) is None:
        archs = ", ".join(map(str, config.get("architectures") or [])) or "none declared"
        return (f"unsupported architecture ({archs}); supported: *ForTokenClassification, "
                f"*ForSequenceClassification, *ForCausalLM / *LMHeadModel")
    return weights_problem(path, allow_pickle) or tokenizer_problem(path)


def encoder_folder_problem(path: str | Path) -> str | None:
    """What the shared encoder's folder lacks (config, safetensors weights, tokenizer), or None."""
    path = Path(path)
    if not (path / "config.json").is_file():
        return "no config.json"
    return weights_problem(path) or tokenizer_problem(path)


def find_encoder(model_dir: str | Path, ref: str) -> Path:
    """The encoder folder ``ref`` names for the task model in ``model_dir``: an absolute path, or
    one relative to the folder holding the model (``models/``), else to the built-in models folder
    (a task model copied elsewhere still finds the shipped encoder). The first candidate when
    none exists."""
    p = Path(ref).expanduser()
    if p.is_absolute():
        return p
    candidates = [Path(model_dir).parent / p, BUILTIN_DIR / p]
    return next((c for c in candidates if c.is_dir()), candidates[0])


_sha1_cache: dict[tuple[str, int, int], str] = {}


def weights_sha1(folder: str | Path) -> str:
    """sha1 of a folder's ``model.safetensors`` (cached by path, size and modification time)."""
    import hashlib

    file = Path(folder) / "model.safetensors"
    st = file.stat()
    key = (str(file.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _sha1_cache:
        h = hashlib.sha1()
        with file.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _sha1_cache[key] = h.hexdigest()
    return _sha1_cache[key]


def shared_encoder_problem(path: str | Path) -> str | None:
    """For a task model on the shared encoder (its ``config.json`` names one): why that encoder
    cannot serve it (missing, broken, other weights than it was trained on), else None. None too
    for a model that names no encoder."""
    path = Path(path)
    try:
        config = read_config(path) if (path / "config.json").is_file() else {}
    except ValueError as exc:
        return str(exc)
    ref = config.get(ENCODER_REF)
    if not ref:
        return None
    enc = find_encoder(path, str(ref))
    if not enc.is_dir():
        return f"its shared encoder {ref!r} is not there (looked for {enc})"
    problem = encoder_folder_problem(enc)
    if problem is not None:
        return f"its shared encoder at {enc} cannot be loaded: {problem}"
    want = config.get(ENCODER_SHA1)
    try:
        got = weights_sha1(enc) if want else None
    except OSError as exc:
        return f"its shared encoder at {enc} is unreadable: {exc}"
    if want and got != want:
        return (f"its shared encoder at {enc} has other weights than the ones it was trained on "
                f"(sha1 {got[:12] if got else '?'}, expected {str(want)[:12]}): retrain the model on it")
    return None


def is_model_folder(path: Path) -> bool:
    return (path / CARD_FILE).is_file() or (path / "config.json").is_file()


def inspect_folder(path: str | Path, source: str = "user", allow_pickle: bool = False) -> ModelInfo:
    """Describe one model folder; never raises (problems go in ``problem``). ``allow_pickle``
    accepts HF folders whose only weights are ``pytorch_model.bin``."""
    path = Path(path).expanduser()
    name = path.name or str(path)
    if not path.exists():
        return ModelInfo(name, None, None, path, source, problem=f"folder not found: {path}")
    if not path.is_dir():
        return ModelInfo(name, None, None, path, source, problem=f"not a folder: {path}")
    try:
        size = folder_size(path)
    except OSError as exc:
        return ModelInfo(name, None, None, path, source, problem=f"unreadable folder: {exc}")
    info = ModelInfo(name, None, None, path, source, size)
    if (path / CARD_FILE).is_file():
        try:
            card = read_card(path)
        except ValueError as exc:
            info.problem = str(exc)
            return info
        info.card, info.name, info.task, info.kind = card, card.name, card.task or None, card.kind
        if card.kind == ENCODER_KIND:
            info.problem = encoder_folder_problem(path)
        elif card.task not in REGISTRY:
            info.problem = f"model card names an unknown task {card.task!r}"
        elif card.kind in HF_KINDS:
            info.problem = hf_folder_problem(path, allow_pickle)
        else:
            info.problem = weights_problem(path) or shared_encoder_problem(path)
        return info
    if (path / "config.json").is_file():
        try:
            config = read_config(path)
        except ValueError as exc:
            info.problem = str(exc)
            return info
        info.kind = hf_kind_from_config(config)
        task = config.get("cblue_task")
        if task is not None:
            info.task = str(task)
            if info.task not in REGISTRY:
                info.problem = f"config.json names an unknown cblue_task {task!r}"
                return info
        info.problem = hf_folder_problem(path, allow_pickle)
        return info
    info.problem = f"not a model folder: no {CARD_FILE} or config.json"
    return info


def _looks_model_like(path: Path) -> bool:
    """A subfolder worth reporting even without a card/config (it holds weights or a vocabulary)."""
    try:
        return any(p.is_file() and (p.suffix in PICKLE_SUFFIXES + (".safetensors",)
                                    or p.name in TOKENIZER_FILES) for p in path.iterdir())
    except OSError:
        return True


def scan(root: str | Path, source: str) -> list[ModelInfo]:
    """Model folders at ``root``: the folder itself when it is one, else its subfolders."""
    root = Path(root).expanduser()
    if not root.is_dir() or is_model_folder(root):
        return [inspect_folder(root, source)]
    out = []
    try:
        children = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError as exc:
        return [ModelInfo(root.name, None, None, root, source, problem=f"unreadable folder: {exc}")]
    for child in children:
        if child.name.startswith((".", "__")):
            continue
        if is_model_folder(child) or _looks_model_like(child):
            out.append(inspect_folder(child, source))
    return out


def user_dirs(extra_dirs: Iterable[str | Path] = ()) -> list[Path]:
    """Folders from ``$CBLUE_STUDIO_MODELS`` then ``extra_dirs``, without duplicates."""
    entries = [e for e in os.environ.get(ENV_VAR, "").split(os.pathsep) if e.strip()]
    entries += [str(d) for d in extra_dirs if str(d).strip()]
    out: list[Path] = []
    seen: set[str] = set()
    for e in entries:
        p = Path(e.strip()).expanduser()
        key = os.path.normcase(os.path.abspath(p))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def list_models(extra_dirs: Sequence[str | Path] = ()) -> list[ModelInfo]:
    """Built-in models first (sorted by name), then user folders in the order given."""
    found: list[ModelInfo] = []
    if BUILTIN_DIR.is_dir():
        found += sorted(scan(BUILTIN_DIR, "built-in"), key=lambda m: m.name)
    seen = {os.path.abspath(m.path) for m in found}
    for d in user_dirs(extra_dirs):
        for m in scan(d, "user"):
            key = os.path.abspath(m.path)
            if key not in seen:
                seen.add(key)
                found.append(m)
    return found


def _looks_like_path(s: str) -> bool:
    return os.sep in s or (os.altsep is not None and os.altsep in s) or s.startswith(("~", "."))


def resolve(name_or_dir: str | Path, extra_dirs: Sequence[str | Path] = ()) -> ModelInfo:
    """The model called ``name_or_dir`` (built-in first), or the model folder at that path.

    Raises :class:`ModelNotFoundError` naming the available models. The returned info may carry
    a ``problem`` (the loader refuses it with that reason).
    """
    s = str(name_or_dir).strip()
    if not s:
        raise ModelNotFoundError("no model given" + _available(list_models(extra_dirs)))
    path = Path(s).expanduser()
    if path.is_dir():
        known = {os.path.abspath(m.path): m for m in list_models(extra_dirs)}
        return known.get(os.path.abspath(path)) or inspect_folder(path, "user")
    models = list_models(extra_dirs)
    for m in models:
        if m.name == s:
            return m
    for m in models:  # folder name when the card's name differs
        if m.path.name == s:
            return m
    if isinstance(name_or_dir, Path) or _looks_like_path(s) or path.exists():
        raise ModelNotFoundError(f"no model folder at {path}" + _available(models))
    raise ModelNotFoundError(f"unknown model {s!r}" + _available(models))


def _available(models: list[ModelInfo]) -> str:
    names = [m.name for m in models if m.ok and m.role == "model"]
    if not names:
        return (f"; no models available (built-in folder {BUILTIN_DIR}; add folders with "
                f"${ENV_VAR} or pass a model folder path)")
    return "; available: " + ", ".join(names)
