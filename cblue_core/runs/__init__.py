"""Runs: predictions for a stored split (from a model, an LLM endpoint, or a file made elsewhere),
scored, analysed, stored in the workspace and exported as the official submission file.

- :mod:`.record`: :func:`~.record.record_run`, the one way a run enters the workspace, whatever
  made its predictions; import and export of predictions files;
- :mod:`.endpoint`: a split's prompts sent to an LLM endpoint, stored as a run;
- :mod:`.evaluation`: the one scoring entry point for any task (also used by the trainers);
- :mod:`.derived`: what pages derive from a whole run, computed once and kept;
- :mod:`.seen_split`: which examples a run's model was trained on.
"""
