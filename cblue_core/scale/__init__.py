"""Large prediction jobs: sharded inputs and outputs, the local and Ray engines, and importing
predictions made elsewhere as runs.

* :mod:`.shards`: folders of JSON-lines / Parquet shards in, Parquet shards plus a manifest out
  (resumable: finished shards are recorded with their record counts and hashes);
* :mod:`.work`: the one piece of code that turns input rows into predictions, used by both
  engines (so that their outputs are identical);
* :mod:`.jobs`: ``predict`` and ``run`` jobs with ``engine="local"`` or ``"ray"``;
* :mod:`.ray_engine`: Ray Data over an actor pool of predictors (Ray is optional: see
  ``requirements-ray.txt``; nothing here imports it until a Ray job starts);
* :mod:`.imports`: a predictions file or Parquet folder imported as a run;
* :mod:`.commands`: the ``import-run`` subcommand.
"""
