"""How a Ray job asks for resources, and how it fails to join a cluster: no Ray is started."""
from __future__ import annotations

import socket

import pytest

from cblue_core.scale.ray_engine import (
    ACTOR_CPUS,
    RayJobError,
    RaySession,
    WorkerSpec,
    _pool_options,
    check_reachable,
)

pytest.importorskip("ray.data", reason="Ray is not installed (pip install -r requirements-ray.txt)")


def _spec(device: str, workers: int) -> WorkerSpec:
    return WorkerSpec(model_path="m", task="KUAKE-QIC", device=device, mode="records", batch_size=8,
                      workers=workers)


def test_cpu_actors_take_a_fraction_of_a_core():
    opts = _pool_options(_spec("cpu", 2), RaySession(True, None, cpus=2, gpus=0))
    assert opts["num_cpus"] == ACTOR_CPUS < 1 and "num_gpus" not in opts
    assert opts["compute"].min_size == opts["compute"].max_size == 2


def test_cuda_actors_share_the_gpus():
    assert _pool_options(_spec("cuda", 1), RaySession(False, "h:1", cpus=16, gpus=1))["num_gpus"] == 1.0
    assert _pool_options(_spec("cuda", 2), RaySession(False, "h:1", cpus=16, gpus=1))["num_gpus"] == 0.5
    assert _pool_options(_spec("cuda", 2), RaySession(False, "h:1", cpus=16, gpus=4))["num_gpus"] == 1.0
    with pytest.raises(RayJobError, match="no GPU"):
        _pool_options(_spec("cuda", 1), RaySession(True, None, cpus=2, gpus=0))


def test_an_address_nobody_answers_is_refused_at_once():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # closed again when the block ends: nothing listens
    with pytest.raises(RayJobError, match=f"no Ray cluster answers at 127.0.0.1:{port}.*ray start --head"):
        check_reachable(f"127.0.0.1:{port}", timeout_s=2)
    check_reachable("auto")                # left to Ray
    check_reachable("127.0.0.1:²")         # not a port: left to Ray (old: int() raised ValueError)
    check_reachable("ray://head:10001")
