"""Predictions from an endpoint: one prediction :class:`Example` per input, its answer in
``target`` (as the in-process causal LM gives it) and, in ``meta``, the raw answer, latency,
token counts, finish reason, whether it came from the cache, and the failure line when the
request failed (its answer is then empty, scored as such)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...records import Example
from ...store.responses import ResponseStore
from ...tasks import TaskSpec
from .config import EndpointConfig
from .prompts import prompt_for
from .runner import PromptResult, RunStats, run_prompts


@dataclass(frozen=True)
class EndpointPredictions:
    predictions: list[Example]
    stats: RunStats

    @property
    def partial(self) -> bool:
        return self.stats.failed > 0


def prediction(ex: Example, result: PromptResult) -> Example:
    meta = dict(ex.meta)
    a = result.answer
    if a is None:
        meta.update(generation="", failure=result.failure)
    else:
        meta.update(generation=a.text, latency_s=round(a.latency_s, 4), prompt_tokens=a.prompt_tokens,
                    completion_tokens=a.completion_tokens, finish_reason=a.finish_reason, cached=result.cached)
    return Example(key=ex.key, index=ex.index, text=ex.text, label=ex.label, choices=list(ex.choices),
                   target=a.text.strip() if a is not None else "", meta=meta, raw=ex.raw)


def endpoint_predict(cfg: EndpointConfig, task: TaskSpec, inputs: Sequence[Example], *,
                     cache: ResponseStore | None = None,
                     progress: Callable[[int], None] | None = None) -> EndpointPredictions:
    """Ask the endpoint about every input (model inputs only: see ``models.base.model_input``)."""
    prompts = [prompt_for(task, ex) for ex in inputs]
    out = run_prompts(cfg, prompts, cache=cache, progress=progress)
    return EndpointPredictions([prediction(ex, r) for ex, r in zip(inputs, out.results)], out.stats)
