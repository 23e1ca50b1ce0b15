"""Load a model (by name or folder) as a :class:`~cblue_core.models.base.Predictor`.

``load_predictor`` resolves the model (:func:`cblue_core.models.registry.resolve`), refuses
folders with a problem, and dispatches on the card's ``kind`` through :func:`loader_table`: the
built-in kinds from ``cblue_core.models.builtin.BUILTIN_LOADERS`` (imported lazily; its absence
is reported clearly) plus the Hugging Face kinds of :mod:`cblue_core.models.hf`.

``get_predictor`` adds a small process-level LRU cache (``CBLUE_STUDIO_MODEL_CACHE`` models,
default 2), keyed on the folder, its modification times, task, device and options, so the app
(which wraps it in ``st.cache_resource`` or calls it directly) keeps few models in memory.
Streamlit stays out of this module.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..tasks import TaskSpec, UnknownTaskError, get_task
from .base import Predictor
from .devices import DeviceError, empty_cache, resolve_device
from .provenance import read_training_records
from .registry import HF_KINDS, ModelInfo, ModelLoadError, ModelNotFoundError, inspect_folder, resolve

__all__ = [
    "DeviceError",
    "ModelLoadError",
    "ModelNotFoundError",
    "cache_info",
    "clear_cache",
    "get_predictor",
    "load_predictor",
    "loader_table",
    "predictor_params",
]

Loader = Callable[..., Predictor]
CACHE_SIZE = max(1, int(os.environ.get("CBLUE_STUDIO_MODEL_CACHE", "2") or 2))


def _hf_loader(kind: str) -> Loader:
    def load(info: ModelInfo, *, task, device, allow_pickle, generation, batch_size):
        from .hf import load_hf  # torch/transformers only when an HF model is loaded

        return load_hf(info.path, task=task, kind=kind, device=device, allow_pickle=allow_pickle,
                       card=info.card, generation=generation, batch_size=batch_size)
    return load


def _builtin_loaders() -> tuple[dict[str, Callable[[Path, str], Predictor]], str | None]:
    """``BUILTIN_LOADERS`` and None, or {} and why it could not be imported."""
    try:
        from .builtin import BUILTIN_LOADERS  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - absent or broken: HF models must still load, and the reason is shown
        return {}, f"{type(exc).__name__}: {exc}"
    return dict(BUILTIN_LOADERS), None


def loader_table() -> dict[str, Loader]:
    """kind -> loader(info, *, task, device, allow_pickle, generation, batch_size)."""
    table: dict[str, Loader] = {}
    builtin, _ = _builtin_loaders()
    for kind, fn in builtin.items():
        def load(info, *, task, device, allow_pickle, generation, batch_size, _fn=fn):
            return _fn(info.path, device)
        table[kind] = load
    for kind in HF_KINDS:
        table[kind] = _hf_loader(kind)
    return table


def _task_name(task: str | TaskSpec | None) -> str | None:
    if task is None or task == "":
        return None
    if isinstance(task, TaskSpec):
        return task.name
    try:
        return get_task(task).name
    except UnknownTaskError as exc:
        raise ModelLoadError(str(exc)) from None


def load_predictor(name_or_dir: str | Path | ModelInfo, *, task: str | TaskSpec | None = None,
                   device: str | None = "cpu", allow_pickle: bool = False,
                   generation: dict | None = None, batch_size: int | None = None,
                   extra_dirs: Sequence[str | Path] = ()) -> Predictor:
    """A ready predictor for the model called ``name_or_dir`` (or the model folder there).

    ``task`` must agree with the model's task when it names one; ``device`` is resolved with
    :func:`~cblue_core.models.devices.resolve_device` (DeviceError when CUDA is unavailable);
    ``allow_pickle`` lets HF folders load ``pytorch_model.bin``; ``generation`` holds decoding
    parameters for causal LMs (see :class:`cblue_core.models.hf.GenerationParams`).
    Raises :class:`ModelNotFoundError`, :class:`ModelLoadError` or :class:`DeviceError`.
    """
    dev = resolve_device(device)
    info = name_or_dir if isinstance(name_or_dir, ModelInfo) else resolve(name_or_dir, extra_dirs)
    want = _task_name(task)
    if info.problem is not None and allow_pickle:
        info = inspect_folder(info.path, info.source, allow_pickle=True)  # pickle-only may pass now
    if info.problem is not None:
        raise ModelLoadError(f"model {info.name!r} at {info.path} cannot be loaded: {info.problem}")
    if info.role == "encoder":
        raise ModelLoadError(f"{info.name!r} at {info.path} is the shared encoder the built-in task "
                             "models are built on, not a task model: load one of those")
    if want and info.task and want != info.task:
        raise ModelLoadError(f"model {info.name!r} at {info.path} is for task {info.task}, not {want}")
    table = loader_table()
    kind = info.kind
    if kind not in table:
        _, why = _builtin_loaders()
        if why is not None and kind not in HF_KINDS:
            raise ModelLoadError(
                f"model {info.name!r} at {info.path} has kind {kind!r}, a built-in model kind, but "
                f"the built-in models package cblue_core.models.builtin is not available ({why})")
        raise ModelLoadError(f"model {info.name!r} at {info.path} has unknown kind {kind!r}; "
                             f"known kinds: {', '.join(sorted(table))}")
    try:
        predictor = table[kind](info, task=want or info.task, device=dev, allow_pickle=allow_pickle,
                                generation=generation, batch_size=batch_size or 32)
    except (ModelLoadError, DeviceError):
        raise
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise ModelLoadError(f"model {info.name!r} at {info.path} ({kind}) failed to load: "
                             f"{type(exc).__name__}: {exc}") from exc
    predictor.training_records = read_training_records(info.path)
    got = getattr(getattr(predictor, "task", None), "name", None)
    if want and got and got != want:
        raise ModelLoadError(f"model {info.name!r} at {info.path} predicts {got}, not {want}")
    if batch_size:
        predictor.batch_size = batch_size
    if getattr(predictor, "device", dev) != dev:
        predictor = predictor.to(dev)
    return predictor


def predictor_params(predictor: Predictor) -> dict[str, Any]:
    """What to record with a run (``record_run(params=...)``): the predictor's own ``params``
    when it has them, plus model name, kind and device."""
    out = dict(getattr(predictor, "params", None) or {})
    card = getattr(predictor, "card", None)
    if card is not None:
        out.setdefault("model", card.name)
        out.setdefault("kind", card.kind)
    out.setdefault("device", getattr(predictor, "device", "cpu"))
    return out


# ---- process-level LRU cache -----------------------------------------------------------------

_cache: OrderedDict[tuple, Predictor] = OrderedDict()
_lock = threading.RLock()
_stats = {"hits": 0, "misses": 0, "evictions": 0}


def _folder_stamp(path: Path) -> tuple:
    """Modification times of the folder's top-level files: a retrained model reloads."""
    try:
        return tuple(sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size)
                            for p in path.iterdir() if p.is_file()))
    except OSError:
        return ()


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def get_predictor(name_or_dir: str | Path, *, task: str | TaskSpec | None = None,
                  device: str | None = "cpu", allow_pickle: bool = False,
                  generation: dict | None = None, batch_size: int | None = None,
                  extra_dirs: Sequence[str | Path] = (), max_models: int | None = None) -> Predictor:
    """:func:`load_predictor` through an LRU cache of at most ``max_models`` (default
    ``CACHE_SIZE``) loaded models; thread-safe (one load at a time)."""
    dev = resolve_device(device)
    info = resolve(name_or_dir, extra_dirs)
    key = (str(Path(info.path).resolve()), _folder_stamp(Path(info.path)), _task_name(task), dev,
           bool(allow_pickle), _freeze(generation or {}), batch_size)
    limit = max(1, max_models or CACHE_SIZE)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            _stats["hits"] += 1
            return _cache[key]
        _stats["misses"] += 1
        predictor = load_predictor(info, task=task, device=dev, allow_pickle=allow_pickle,
                                   generation=generation, batch_size=batch_size)
        _cache[key] = predictor
        evicted = False
        while len(_cache) > limit:
            _cache.popitem(last=False)
            _stats["evictions"] += 1
            evicted = True
        if evicted:
            empty_cache()
        return predictor


def clear_cache() -> None:
    with _lock:
        _cache.clear()
        for k in _stats:
            _stats[k] = 0
    empty_cache()


def cache_info() -> dict[str, Any]:
    with _lock:
        return {"size": len(_cache), "max": CACHE_SIZE, **_stats,
                "models": [k[0] for k in _cache]}
