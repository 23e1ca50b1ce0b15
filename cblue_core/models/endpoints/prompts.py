"""The text sent to an endpoint for an example, by the task's kind: a PromptCBLUE record is
already a prompt; a CliMedBench item is its instruction, its input and its lettered options."""
from __future__ import annotations

from collections.abc import Callable

from ...records import Example
from ...tasks import Kind, TaskSpec


def _prompt_record(ex: Example) -> str:
    return ex.text


def _multiple_choice(ex: Example) -> str:
    options = ex.meta.get("options") or {}
    lines = [str(ex.meta.get("prompt") or "").strip(), ex.text.strip()]
    lines += [f"{letter}. {text}" for letter, text in options.items()]
    return "\n".join(line for line in lines if line)


PROMPT_BUILDERS: dict[Kind, Callable[[Example], str]] = {
    Kind.PROMPT: _prompt_record,
    Kind.MULTIPLE_CHOICE: _multiple_choice,
}


class UnsupportedTask(ValueError):
    """A task whose examples are not prompts for a language model."""


def supports(task: TaskSpec) -> bool:
    return task.kind in PROMPT_BUILDERS


def prompt_for(task: TaskSpec, ex: Example) -> str:
    """What the endpoint is asked for ``ex`` (only the example's inputs are read)."""
    build = PROMPT_BUILDERS.get(task.kind)
    if build is None:
        usable = ", ".join(k.value for k in PROMPT_BUILDERS)
        raise UnsupportedTask(f"endpoints answer prompts ({usable}); {task.name} is {task.kind.value}")
    return build(ex)
