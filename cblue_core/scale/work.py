"""What every worker does, whichever engine runs it: rows in, predictions out.

Input rows (a pyarrow table): ``shard`` (int), ``i`` (the record's index in its shard or
file), ``line`` (1-based line in a JSON-lines shard, 0 when none) and either ``rec`` (a raw
record as JSON text, decoded here with the task's codec) or ``ex`` (an input example as
:meth:`~cblue_core.records.Example.to_dict` JSON, as the driver read it).

Output rows: ``shard``, ``i``, ``key``, and ``record`` (the official submission record as
JSON, ``mode="records"``) or ``pred`` (the prediction as ``Example.to_dict`` JSON,
``mode="examples"``, for runs); ``pid`` (the process that predicted the row) and ``params``
(the predictor's run parameters as JSON on the first row of a batch, null elsewhere).

Predictions are made by :func:`~cblue_core.models.devices.predict_with_oom_retry` over the
batch, then encoded by :func:`~cblue_core.io.writers.encode_records`, exactly as the local
``predict`` command does, so both engines write the same file.
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ..io.bounded_json import loads
from ..io.codecs import DecodeContext, RecordError, codec_for
from ..io.errors import FileRefused, short_error
from ..io.offsets import INCLUSIVE
from ..io.writers import encode_records
from ..models.base import Predictor
from ..models.devices import predict_with_oom_retry
from ..records import Example, example_from_dict
from ..tasks import TaskSpec, get_task
from .shards import ShardError

MODES = ("records", "examples")
ERROR_KEY = "__shard_error__"


def raise_error_row(batch: Any) -> None:
    """Raise the :class:`ShardError` that a worker returned as a row (``params`` holds it)."""
    shards = batch.column("shard").to_pylist()
    if -1 not in shards:
        return
    for s, p in zip(shards, batch.column("params").to_pylist()):
        if s == -1 and p and ERROR_KEY in p:
            e = json.loads(p)[ERROR_KEY]
            raise ShardError(e["file"], e["record"], e["message"], e["line"])


def set_threads(threads: int | None) -> None:
    """Torch intra-op threads of this worker (None: leave torch's default)."""
    if not threads:
        return
    import torch

    try:
        torch.set_num_threads(max(1, int(threads)))
    except RuntimeError:  # pragma: no cover - already started parallel work
        pass


def load_worker_predictor(model_path: str, task: str, device: str, *, allow_pickle: bool = False,
                          generation: dict | None = None, batch_size: int = 32) -> Predictor:
    from ..models.loading import load_predictor

    return load_predictor(model_path, task=task, device=device, allow_pickle=allow_pickle,
                          generation=generation, batch_size=batch_size)


class RowPredictor:
    """Rows of one batch -> output rows; holds the model (loaded once per worker)."""

    def __init__(self, predictor: Predictor, task: str | TaskSpec, *, mode: str = "records",
                 shard_names: Sequence[str] = (), batch_size: int | None = None,
                 convention: str = INCLUSIVE):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.predictor = predictor
        self.task = task if isinstance(task, TaskSpec) else get_task(task)
        self.mode = mode
        self.shard_names = list(shard_names)
        self.batch_size = int(batch_size or predictor.batch_size)
        self.convention = convention
        self.codec = codec_for(self.task)
        self.pid = os.getpid()
        self._params: str | None = None

    def shard_name(self, shard: int) -> str:
        return self.shard_names[shard] if 0 <= shard < len(self.shard_names) else f"shard {shard}"

    def decode(self, shard: int, index: int, line: int, text: str) -> Example:
        """One raw record (JSON text) -> an input example; ShardError with its place if it cannot."""
        name = self.shard_name(shard)
        try:
            rec = loads(text, name)
        except FileRefused as refused:  # nested past the depth limit
            d = refused.defects[0]
            raise ShardError(name, index, f"{d.message} (expected {d.expected})", line or None) from None
        except ValueError as exc:
            raise ShardError(name, index, f"not a JSON record ({exc})", line or None) from None
        ctx = DecodeContext(name, self.task, self.convention, record=index, line=line or None)
        try:
            return self.codec.decode(rec, index, ctx)
        except RecordError as err:
            where = f"field {err.field!r}: " if err.field else ""
            expected = f" (expected {err.expected})" if err.expected else ""
            raise ShardError(name, index, f"{where}{err.message}{expected}", line or None) from None
        except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
            raise ShardError(name, index, f"the record has an unexpected shape ({type(exc).__name__}: "
                                          f"{short_error(exc)})", line or None) from None

    def examples(self, columns: dict[str, list]) -> list[Example]:
        if "ex" in columns:
            return [example_from_dict(json.loads(t)) for t in columns["ex"]]
        return [self.decode(s, i, ln, t) for s, i, ln, t in
                zip(columns["shard"], columns["i"], columns["line"], columns["rec"])]

    def predict(self, examples: list[Example], places: list[tuple[int, int, int]]) -> list[Example]:
        """Predictions in input order; a failure is pinned to the first record that fails alone."""
        try:
            return predict_with_oom_retry(self.predictor, examples, self.batch_size)
        except Exception as exc:
            for ex, (shard, index, line) in zip(examples, places):
                try:
                    self.predictor.predict([ex], batch_size=1)
                except Exception as one:
                    raise ShardError(self.shard_name(shard), index,
                                     f"the model failed: {type(one).__name__}: {short_error(one)}",
                                     line or None) from one
            raise ShardError(self.shard_name(places[0][0]) if places else "?", None,
                             f"the model failed on a batch: {type(exc).__name__}: {short_error(exc)}") from exc

    def params(self) -> str:
        if self._params is None:
            from ..models.loading import predictor_params

            self._params = json.dumps(predictor_params(self.predictor), ensure_ascii=False, default=str)
        return self._params

    def columns(self, columns: dict[str, list]) -> dict[str, list]:
        """Input columns (lists) -> output columns (lists)."""
        shards, index = list(columns["shard"]), list(columns["i"])
        lines = list(columns.get("line") or [0] * len(index))
        examples = self.examples(columns)
        preds = self.predict(examples, list(zip(shards, index, lines)))
        out: dict[str, list] = {"shard": shards, "i": index, "key": [p.key for p in preds]}
        if self.mode == "records":
            records = encode_records(self.task, preds, use_raw=False)
            out["record"] = [json.dumps(r, ensure_ascii=False) for r in records]
        else:
            out["pred"] = [json.dumps(p.to_dict(include_raw=True), ensure_ascii=False, default=str) for p in preds]
        out["pid"] = [self.pid] * len(preds)
        out["params"] = [self.params()] + [None] * (len(preds) - 1) if preds else []
        return out

    def __call__(self, table: Any, *, errors_as_rows: bool = False) -> Any:
        """A pyarrow table of input rows -> a pyarrow table of output rows. With
        ``errors_as_rows`` a :class:`ShardError` comes back as one error row (see
        :func:`raise_error_row`) instead of being raised: Ray would flatten it to text."""
        try:
            cols = self.columns({name: table.column(name).to_pylist() for name in table.column_names})
        except ShardError as err:
            if not errors_as_rows:
                raise
            return self.error_table(err)
        return self._table(cols)

    def error_table(self, err: ShardError) -> Any:
        """One output row carrying ``err`` (``shard`` -1, the error as JSON in ``params``)."""
        error = json.dumps({ERROR_KEY: {"file": err.file, "record": err.record, "message": err.message,
                                        "line": err.line}}, ensure_ascii=False)
        return self._table({"shard": [-1], "i": [-1], "key": [""], self.out_column: [""], "pid": [self.pid],
                            "params": [error]})

    @property
    def out_column(self) -> str:
        return "record" if self.mode == "records" else "pred"

    def _table(self, cols: dict[str, list]) -> Any:
        import pyarrow as pa

        return pa.table({
            "shard": pa.array(cols["shard"], pa.int32()), "i": pa.array(cols["i"], pa.int64()),
            "key": pa.array(cols["key"], pa.string()),
            **({"record": pa.array(cols["record"], pa.string())} if "record" in cols
               else {"pred": pa.array(cols["pred"], pa.string())}),
            "pid": pa.array(cols["pid"], pa.int64()), "params": pa.array(cols["params"], pa.string())})
