"""Device resolution, precision policy and the out-of-memory retry (a fake predictor that runs
out of memory above a batch size; CUDA availability monkeypatched)."""
from __future__ import annotations

from collections.abc import Sequence

import pytest
import torch

from cblue_core.models import devices
from cblue_core.models.base import ModelCard, Predictor
from cblue_core.models.devices import (
    DeviceError,
    half_precision,
    is_oom,
    predict_with_oom_retry,
    resolve_device,
)
from cblue_core.records import Example
from cblue_core.tasks import get_task


@pytest.fixture
def gpus(monkeypatch):
    def set_gpus(n: int, bf16: bool = True):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: n > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: n)
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
        monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    return set_gpus


def test_cpu_default_and_auto_without_gpu(gpus):
    gpus(0)
    assert resolve_device(None) == "cpu"
    assert resolve_device("") == "cpu"
    assert resolve_device("CPU") == "cpu"
    assert resolve_device("auto") == "cpu"


def test_cuda_refused_without_gpu(gpus):
    gpus(0)
    for req in ("cuda", "cuda:0", "gpu"):
        with pytest.raises(DeviceError, match="CUDA is not available") as err:
            resolve_device(req)
        assert "--device cpu" in str(err.value)


def test_cuda_with_gpus(gpus):
    gpus(2)
    assert resolve_device("cuda") == "cuda"
    assert resolve_device("gpu") == "cuda"
    assert resolve_device("cuda:1") == "cuda:1"
    assert resolve_device("auto") == "cuda"
    with pytest.raises(DeviceError, match="only 2 GPU"):
        resolve_device("cuda:2")


def test_unknown_device():
    with pytest.raises(DeviceError, match="unknown device 'tpu'"):
        resolve_device("tpu")


def test_broken_cuda_reads_as_no_gpu(monkeypatch):
    def boom():
        raise RuntimeError("driver too old")
    monkeypatch.setattr(torch.cuda, "is_available", boom)
    assert resolve_device("auto") == "cpu"


def test_half_precision_policy(gpus):
    assert half_precision("cpu") == torch.float32
    gpus(1, bf16=True)
    assert half_precision("cuda") == torch.bfloat16
    gpus(1, bf16=False)
    assert half_precision("cuda:0") == torch.float16


def test_is_oom():
    assert is_oom(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB"))
    assert is_oom(RuntimeError("CUDA error: out of memory"))
    assert not is_oom(RuntimeError("shape mismatch"))
    assert not is_oom(ValueError("out of memory"))


class FakePredictor(Predictor):
    """Labels each example with its text; raises CUDA OOM for batches larger than ``limit``."""

    def __init__(self, limit: int, error: Exception | None = None):
        self.task = get_task("KUAKE-QIC")
        self.card = ModelCard("fake", "KUAKE-QIC", "fake")
        self.device = "cuda"
        self.limit = limit
        self.error = error
        self.calls: list[int] = []

    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        self.calls.append(len(batch))
        if self.error is not None:
            raise self.error
        if len(batch) > self.limit:
            raise torch.cuda.OutOfMemoryError(f"CUDA out of memory (batch {len(batch)})")
        return [Example(key="", index=-1, text=ex.text, label=ex.text[:1]) for ex in batch]


def _examples(n: int) -> list[Example]:
    # lengths not in input order, so the length sort matters
    return [Example(key=f"k{i}", index=i, text="x" * ((i * 7) % 11 + 1)) for i in range(n)]


def test_oom_halves_batch_and_keeps_order(gpus):
    gpus(1)
    pred = FakePredictor(limit=5)
    exs = _examples(23)
    retries, done = [], []
    out = predict_with_oom_retry(pred, exs, 16, progress=done.append,
                                 on_retry=lambda old, new: retries.append((old, new)))
    assert [p.key for p in out] == [e.key for e in exs]
    assert [p.index for p in out] == list(range(23))
    assert all(p.text == e.text for p, e in zip(out, exs))
    assert retries == [(16, 8), (8, 4)]
    assert pred.calls[:3] == [16, 8, 4] and max(pred.calls[3:]) <= 4  # smaller size is kept
    assert sum(done) == 23
    assert pred.last_timing.examples == 23 and pred.last_timing.batches == 6
    assert pred.last_timing.device == "cuda"


def test_oom_down_to_one_then_device_error(gpus):
    gpus(1)
    pred = FakePredictor(limit=0)
    with pytest.raises(DeviceError, match="even with batch size 1") as err:
        predict_with_oom_retry(pred, _examples(3), 4)
    assert "2 halving(s) from 4" in str(err.value)
    assert pred.calls == [3, 2, 1]  # 3 examples: first chunk of 3, then 2, then 1


def test_no_retry_needed_and_other_errors_propagate():
    pred = FakePredictor(limit=100)
    out = predict_with_oom_retry(pred, _examples(10), 4)
    assert len(out) == 10 and pred.calls == [4, 4, 2]
    bad = FakePredictor(limit=100, error=ValueError("bad input"))
    with pytest.raises(ValueError, match="bad input"):
        predict_with_oom_retry(bad, _examples(3), 4)
    assert predict_with_oom_retry(FakePredictor(limit=1), [], 8) == []


def test_empty_cache_without_torch_is_noop(monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "torch")
    devices.empty_cache()


def test_gpu_hardware_absent_reads_driver_nodes(monkeypatch):
    present: set[str] = set()
    monkeypatch.setattr(devices.os.path, "exists", lambda p: p in present)
    monkeypatch.setattr(devices.sys, "platform", "linux")
    assert devices.gpu_hardware_absent()
    for node in ("/dev/nvidiactl", "/sys/module/nvidia", "/dev/nvhost-ctrl-gpu", "/dev/kfd", "/dev/dxg"):
        present.clear()
        present.add(node)
        assert not devices.gpu_hardware_absent(), node
    present.clear()
    monkeypatch.setattr(devices.sys, "platform", "win32")   # no cheap probe there: ask torch
    assert not devices.gpu_hardware_absent()
