"""Our endpoint runner against a bare asyncio loop on the same ``transformers serve``.

Both use the same ``openai.AsyncOpenAI`` settings and the same number of requests in flight
(1 and 8); ours also commits every answer to a fresh workspace file's response cache, as a
real run does. Goal: our requests/s within 10% of the bare loop's (``ratio`` >= 0.9), so
the runner is never the bottleneck. Each trial sends prompts never sent before (a numbered
suffix), the two sides alternate, and the median of ``--repeats`` trials is reported.

    python bench/endpoints.py [--prompts N] [--repeats R] [--max-tokens T] [--model FOLDER]

The model is the tests' tiny Llama (built in a temporary folder; no download) unless
``--model`` names a causal-LM folder; the server runs on a free loopback port, offline, on CPU.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from cblue_core.io.validate import load
from cblue_core.models.endpoints.client import client_kwargs, request_kwargs
from cblue_core.models.endpoints.config import EndpointConfig
from cblue_core.models.endpoints.runner import run_prompts_async
from cblue_core.store.workspace import connect


def tiny_model(folder: Path) -> Path:
    from tests.models.conftest import TinyModels

    return TinyModels(folder).lm_chat


def serve(model: Path, log: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = Path(sys.executable).with_name("transformers")
    with log.open("wb") as out:
        proc = subprocess.Popen([str(exe) if exe.exists() else "transformers", "serve", str(model), "--host",
                                 "127.0.0.1", "--port", str(port), "--device", "cpu"],
                                stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"transformers serve exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.5)
    proc.kill()
    sys.exit("transformers serve did not start within 300 s")


async def bare(cfg: EndpointConfig, prompts: list[str]) -> float:
    """The plainest correct loop: a semaphore of ``max_concurrency`` around the ``openai``
    client's own ``create``, with the same client settings and requests as ours (none of our
    checks, caps, deadlines or cache)."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(**client_kwargs(cfg))
    gate = asyncio.Semaphore(cfg.max_concurrency)
    api = client.chat.completions if cfg.mode == "chat" else client.completions

    async def one(p: str) -> None:
        async with gate:
            await api.create(**request_kwargs(cfg, p))

    start = time.perf_counter()
    await asyncio.gather(*(one(p) for p in prompts))
    seconds = time.perf_counter() - start
    await client.close()
    return len(prompts) / seconds


async def ours(cfg: EndpointConfig, prompts: list[str], folder: Path) -> float:
    ws = connect(folder / f"bench-{time.monotonic_ns()}.duckdb")   # a file: commits wait on the disk
    start = time.perf_counter()
    out = await run_prompts_async(cfg, prompts, cache=ws.responses)
    seconds = time.perf_counter() - start
    assert out.stats.sent == len(prompts) and out.stats.failed == 0, out.stats
    ws.close()
    return len(prompts) / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=32, help="requests per trial (default 32)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--model", type=Path, help="a causal-LM folder (default: the tests' tiny Llama)")
    args = ap.parse_args()
    texts = [e.text for e in load(ROOT / "sample_data/promptcblue/dev.json", "PromptCBLUE").examples]
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or tiny_model(Path(tmp) / "tiny")
        proc, url = serve(model, Path(tmp) / "serve.log")
        try:
            result: dict[str, dict[str, float]] = {}
            trial = 0
            for concurrency in (1, 8):
                cfg = EndpointConfig(name="bench", base_url=url, model=str(model), max_concurrency=concurrency,
                                     max_tokens=args.max_tokens, timeout_s=120, max_retries=2)
                asyncio.run(bare(cfg, [f"{texts[0]}#warm-{concurrency}-{i}" for i in range(concurrency)]))
                rates: dict[str, list[float]] = {"ours": [], "bare": []}
                for r in range(args.repeats):
                    order = ("ours", "bare") if r % 2 == 0 else ("bare", "ours")
                    for side in order:
                        trial += 1
                        prompts = [f"{texts[i % len(texts)]}#{trial}-{i}" for i in range(args.prompts)]
                        run = ours(cfg, prompts, Path(tmp)) if side == "ours" else bare(cfg, prompts)
                        rates[side].append(asyncio.run(run))
                o, b = statistics.median(rates["ours"]), statistics.median(rates["bare"])
                result[f"concurrency_{concurrency}"] = {"ours_rps": round(o, 2), "bare_rps": round(b, 2),
                                                        "ratio": round(o / b, 3)}
        finally:
            proc.terminate()
            proc.wait(30)
    for k, v in result.items():
        print(f"{k:>15}: ours {v['ours_rps']:.2f} req/s, bare loop {v['bare_rps']:.2f} req/s, ratio {v['ratio']:.3f}")
    print(json.dumps({"prompts": args.prompts, "repeats": args.repeats, "max_tokens": args.max_tokens,
                      **result}, ensure_ascii=False))


if __name__ == "__main__":
    main()
