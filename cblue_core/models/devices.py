"""Device choice and the GPU out-of-memory policy.

``resolve_device`` turns what a user typed ("cpu", "cuda", "cuda:1", "gpu", "auto", None) into a
torch device string, refusing CUDA with a clear :class:`DeviceError` when torch sees no GPU.
``half_precision`` is the dtype models run in on a device (bf16 or fp16 on CUDA, fp32 on CPU).
``predict_with_oom_retry`` runs a predictor over examples in length-sorted chunks of one batch
each; a CUDA out-of-memory error halves the batch size (after emptying the cache) and retries
that chunk, down to batch size 1, keeping what was already predicted.
"""
from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Callable, Sequence

from ..records import Example
from .base import Predictor, Timing

log = logging.getLogger(__name__)

_CUDA_RE = re.compile(r"^cuda(?::(\d+))?$")


class DeviceError(RuntimeError):
    """A device that cannot be used, or a prediction that does not fit on it."""


def _torch():
    import torch
    return torch


# Traces of a GPU driver (NVIDIA, including Jetson's nvgpu and a module loaded on demand; AMD
# ROCm; WSL): torch can see no GPU without one of them.
_GPU_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia", "/sys/module/nvidia",
              "/dev/nvhost-ctrl-gpu", "/dev/kfd", "/dev/dxg")


def gpu_hardware_absent() -> bool:
    """True when this machine certainly has no GPU for torch: Linux without any GPU driver's
    device node. Lets the app offer "cpu" only without importing torch (~2 s) to find out."""
    return sys.platform.startswith("linux") and not any(os.path.exists(p) for p in _GPU_NODES)


def cuda_available() -> bool:
    try:
        return bool(_torch().cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken CUDA install, whatever it raises, reads as "no GPU"
        return False


def resolve_device(requested: str | None) -> str:
    """"cpu" (default), "cuda"/"cuda:N"/"gpu" when torch sees that GPU, or "auto" (GPU if any)."""
    req = (requested or "cpu").strip().lower()
    if req == "cpu":
        return "cpu"
    if req == "auto":
        return "cuda" if cuda_available() else "cpu"
    if req == "gpu":
        req = "cuda"
    m = _CUDA_RE.match(req)
    if not m:
        raise DeviceError(f"unknown device {requested!r}; use cpu, cuda, cuda:N or auto")
    if not cuda_available():
        torch = _torch()
        build = getattr(torch.version, "cuda", None)
        why = ("this torch build has no CUDA support (CPU-only wheel)" if not build
               else f"torch (CUDA {build}) sees no GPU: check the driver and CUDA_VISIBLE_DEVICES")
        raise DeviceError(f"device {requested!r} requested but CUDA is not available: {why}; "
                          f"use --device cpu (or auto)")
    if m.group(1) is not None:
        n = _torch().cuda.device_count()
        if int(m.group(1)) >= n:
            raise DeviceError(f"device {requested!r} requested but only {n} GPU(s) are visible "
                              f"(cuda:0..cuda:{n - 1})")
    return req


def half_precision(device: str):
    """The dtype to run models in on ``device``: bf16 where the GPU supports it, else fp16, on
    CUDA; fp32 on CPU (half precision on CPU is slow and lossy)."""
    torch = _torch()
    if not str(device).startswith("cuda"):
        return torch.float32
    try:
        if torch.cuda.is_bf16_supported():
            return torch.bfloat16
    except Exception:  # noqa: BLE001, S110 - a driver that cannot answer gets float16, which every GPU has
        pass
    return torch.float16


def is_oom(exc: BaseException) -> bool:
    torch = _torch()
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None) or getattr(torch, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(exc, oom_type):
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower()


def empty_cache() -> None:
    """Release cached CUDA memory (a no-op when torch was never imported or sees no GPU)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001, S110 - freeing the cache is best effort after an out-of-memory error
        pass


def predict_with_oom_retry(predictor: Predictor, examples: Sequence[Example], batch_size: int,
                           progress: Callable[[int], None] | None = None,
                           on_retry: Callable[[int, int], None] | None = None) -> list[Example]:
    """Predict ``examples`` in input order, shrinking the batch on CUDA out-of-memory errors.

    Examples are sorted by ``predictor.length_of`` and predicted one batch-sized chunk at a
    time, so a retry repeats only the chunk that failed and the smaller size is kept for the
    (longer) chunks that follow. ``progress(n)`` is called with the number of examples done in
    each chunk; ``on_retry(old, new)`` when the batch size is halved. Raises
    :class:`DeviceError` when even a batch of one does not fit. Sets ``predictor.last_timing``
    for the whole call.
    """
    size = max(1, int(batch_size))
    order = sorted(range(len(examples)), key=lambda i: predictor.length_of(examples[i]))
    out: list[Example | None] = [None] * len(examples)
    start = time.perf_counter()
    batches = retries = 0
    pos = 0
    while pos < len(order):
        idx = order[pos:pos + size]
        try:
            preds = predictor.predict([examples[i] for i in idx], batch_size=size)
        except Exception as exc:
            if not is_oom(exc):
                raise
            empty_cache()
            if size == 1:
                raise DeviceError(
                    f"out of memory on {predictor.device} even with batch size 1 (example "
                    f"{examples[idx[0]].key[:40]!r}, length {predictor.length_of(examples[idx[0]])}) "
                    f"after {retries} halving(s) from {batch_size}; use a smaller model, shorter "
                    f"inputs or --device cpu") from exc
            new = max(1, size // 2)
            retries += 1
            log.warning("out of memory on %s with batch size %d; retrying with %d",
                        predictor.device, size, new)
            if on_retry is not None:
                on_retry(size, new)
            size = new
            continue
        batches += 1
        for i, p in zip(idx, preds):
            out[i] = p
        pos += len(idx)
        if progress is not None:
            progress(len(idx))
    predictor.last_timing = Timing(len(examples), time.perf_counter() - start, batches,
                                   getattr(predictor, "device", "cpu"))
    return [p for p in out if p is not None]
