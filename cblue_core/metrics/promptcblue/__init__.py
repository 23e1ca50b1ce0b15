"""PromptCBLUE evaluation: the official post-processor and scorer, reimplemented exactly in
pure Python, plus a clean scoring mode and per-sample statistics for bootstrapping.

Public API:

* :func:`evaluate_promptcblue` (gold records, predicted records) -> :class:`PromptCBLUEEvaluation`
  (``.to_json()``, ``.official``, ``.tasks``, ``.clean``, ``.parse_failures``, ``.sample_stats()``);
* :func:`score_structured` (gold ``results.json`` dict, predicted one) -> :class:`OfficialScore`;
  :func:`clean_scores` for the same dicts in clean mode;
* :func:`structure` / :func:`structure_with_issues` / :func:`parse_generation` /
  :func:`parse_record`: the post-processor;
* :func:`sample_stats` and :func:`metric_from_stats`: per-sample statistics and the task
  metric recomputed from any resample of them.

Module map: ``tasks`` (names, label lists), ``parse`` (post-processor), ``official`` (scorer),
``classification`` / ``basic_tokenizer`` / ``rouge`` / ``text2dt`` (the library behaviour the
scorer depends on), ``stats`` (official per-sample statistics), ``clean`` (clean mode and how
it differs), ``evaluation`` (record matching and the combined result).
"""
from .clean import CleanScore, CleanTaskScore, clean_scores, clean_task_score
from .evaluation import (
                         PromptCBLUEEvaluation,
                         PromptCBLUEInputError,
                         SampleIdError,
                         TaskMismatchError,
                         evaluate_promptcblue,
                         metric_from_stats,
                         sample_stats,
)
from .official import OfficialError, OfficialScore, TaskScore, score_structured, score_task
from .parse import (
                         ParsedAnswer,
                         ParseIssue,
                         PromptParseError,
                         StructuredParse,
                         UnknownTaskError,
                         parse_generation,
                         parse_record,
                         structure,
                         structure_with_issues,
)
from .tasks import PARSER_TASKS, SCORER_TASKS, canonical_task

__all__ = [
                         "PARSER_TASKS",
                         "SCORER_TASKS",
                         "CleanScore",
                         "CleanTaskScore",
                         "OfficialError",
                         "OfficialScore",
                         "ParseIssue",
                         "ParsedAnswer",
                         "PromptCBLUEEvaluation",
                         "PromptCBLUEInputError",
                         "PromptParseError",
                         "SampleIdError",
                         "StructuredParse",
                         "TaskMismatchError",
                         "TaskScore",
                         "UnknownTaskError",
                         "canonical_task",
                         "clean_scores",
                         "clean_task_score",
                         "evaluate_promptcblue",
                         "metric_from_stats",
                         "parse_generation",
                         "parse_record",
                         "sample_stats",
                         "score_structured",
                         "score_task",
                         "structure",
                         "structure_with_issues",
]
