"""Any LOCAL Hugging Face checkpoint as a :class:`~cblue_core.models.base.Predictor`, offline.

Three heads are supported, chosen from the model card's ``kind`` or ``config.json``'s
``architectures``:

* ``hf-token-classification`` (``*ForTokenClassification``): BIO / BIOES / BMES / BILOU tags,
  decoded to half-open character spans through the fast tokenizer's offset mapping (Chinese
  is one token per character); long texts are read in overlapping windows, each token taking
  the prediction of the window where it sits farthest from an edge.
* ``hf-sequence-classification`` (``*ForSequenceClassification``): single texts
  (CHIP-CTC, KUAKE-QIC) or text pairs (CHIP-STS, KUAKE-QTR, KUAKE-QQR); the label comes from
  ``config.id2label``, the distribution goes in ``meta["probabilities"]``.
* ``hf-causal-lm`` (``*ForCausalLM`` / ``*LMHeadModel``): PromptCBLUE (and CliMedBench)
  prompts, through the tokenizer's chat template when it has one, else raw; greedy or sampled
  decoding with the parameters recorded in ``predictor.params``; left padding for batches; the
  generation goes in ``target`` (and ``meta["generation"]``).

Safety: weights load from ``*.safetensors`` only unless ``allow_pickle=True`` (then
``pytorch_model.bin`` may load, with a warning, still through ``torch.load(weights_only=True)``);
``trust_remote_code`` is always False; every ``from_pretrained`` call is ``local_files_only``
and ``HF_HUB_OFFLINE=1`` is set before transformers is imported here.
"""
from __future__ import annotations

import os

for _k, _v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
               ("HF_HUB_DISABLE_TELEMETRY", "1"), ("DISABLE_SAFETENSORS_CONVERSION", "1")):
    os.environ.setdefault(_k, _v)

import contextlib
import re
import time
import types
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from ..records import Example, Span
from ..tasks import Kind, TaskSpec, UnknownTaskError, get_task
from .base import ModelCard, Predictor, Timing, folder_size
from .devices import half_precision
from .registry import (
    CARD_FILE,
    HF_CAUSAL_LM,
    HF_KINDS,
    HF_SEQUENCE_CLASSIFICATION,
    HF_TOKEN_CLASSIFICATION,
    ModelLoadError,
    hf_kind_from_config,
    read_card,
    read_config,
    tokenizer_problem,
    weights_problem,
)

if TYPE_CHECKING:
    from transformers import GenerationConfig

# Which task kinds each head can serve.
TASK_KINDS: dict[str, tuple[Kind, ...]] = {
    HF_TOKEN_CLASSIFICATION: (Kind.SPANS,),
    HF_SEQUENCE_CLASSIFICATION: (Kind.CLASSIFICATION, Kind.PAIR),
    HF_CAUSAL_LM: (Kind.PROMPT, Kind.MULTIPLE_CHOICE),
}
DEFAULT_TASK = {HF_CAUSAL_LM: "PromptCBLUE"}  # a causal LM that does not say its task
_ROBERTA_LIKE = {"roberta", "xlm-roberta", "camembert", "longformer", "xlm-roberta-xl", "data2vec-text"}


@dataclass
class GenerationParams:
    """Decoding parameters of a causal LM; recorded with every run."""

    max_new_tokens: int = 256
    do_sample: bool = False
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int = 0
    chat_template: bool | None = None   # None: use it when the tokenizer has one

    @classmethod
    def from_any(cls, value: Self | dict | None) -> Self:
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, GenerationParams):    # a base instance given to a subclass
            raise TypeError(f"{cls.__name__}.from_any: got a {type(value).__name__}")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(value) - known)
        if unknown:
            raise ModelLoadError(f"unknown generation parameter(s) {', '.join(unknown)}; "
                                 f"known: {', '.join(sorted(known))}")
        params = cls(**value)
        if params.max_new_tokens < 1:
            raise ModelLoadError("max_new_tokens must be at least 1")
        if params.do_sample and not (params.temperature > 0 and 0 < params.top_p <= 1):
            raise ModelLoadError("sampling needs temperature > 0 and 0 < top_p <= 1")
        return params


# ---- tag decoding ----------------------------------------------------------------------------

_TAG_RE = re.compile(r"^([BIESMLU])[-_](.+)$")
_TAG_SUFFIX_RE = re.compile(r"^(.+)[-_]([BIESMLU])$")
_OUTSIDE = {"O", "o", "X", "[PAD]", "PAD", "<pad>", "-100"}


def parse_tag(tag: str) -> tuple[str, str | None]:
    """``"B-dis"`` -> ``("B", "dis")``; ``"O"`` -> ``("O", None)``; also ``dis-B`` and ``_``
    separators. Raises ValueError for a tag in no known scheme."""
    tag = str(tag).strip()
    if tag in _OUTSIDE:
        return "O", None
    m = _TAG_RE.match(tag)
    if m:
        return m.group(1), m.group(2)
    m = _TAG_SUFFIX_RE.match(tag)
    if m:
        return m.group(2), m.group(1)
    raise ValueError(tag)


def decode_tags(tokens: Sequence[tuple[int, int, str, str | None]]) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, type)`` from tokens ``(start, end, prefix, type)`` in text order.

    B starts a span, I/M continue one of the same type (or start one: lenient), E/L end one,
    S/U are single-token spans, O closes.
    """
    spans: list[tuple[int, int, str]] = []
    cur: list | None = None

    def close():
        nonlocal cur
        if cur is not None:
            spans.append((cur[0], cur[1], cur[2]))
            cur = None

    for s, e, p, t in tokens:
        if p == "O" or t is None:
            close()
        elif p == "B":
            close()
            cur = [s, e, t]
        elif p in ("S", "U"):
            close()
            spans.append((s, e, t))
        elif p in ("I", "M"):
            if cur is not None and cur[2] == t:
                cur[1] = e
            else:
                close()
                cur = [s, e, t]
        elif p in ("E", "L"):
            if cur is not None and cur[2] == t:
                cur[1] = e
                close()
            else:
                close()
                spans.append((s, e, t))
    close()
    return spans


def _map_to_task(names: Sequence[str], task: TaskSpec, what: str, folder: Path) -> dict[str, str]:
    """Model label/type names -> task label codes (exact, else case-insensitive)."""
    codes = task.label_codes
    lower = {c.lower(): c for c in codes}
    out, unknown = {}, []
    for n in names:
        if n in codes:
            out[n] = n
        elif n.lower() in lower:
            out[n] = lower[n.lower()]
        else:
            unknown.append(n)
    if unknown:
        raise ModelLoadError(
            f"model at {folder} does not fit task {task.name}: its {what} "
            f"{', '.join(map(repr, unknown[:8]))}{' ...' if len(unknown) > 8 else ''} are not "
            f"{task.name} labels (expected {', '.join(codes[:12])}{' ...' if len(codes) > 12 else ''})")
    return out


# ---- throughput helpers ----------------------------------------------------------------------

def length_buckets(lengths: Sequence[int], size: int, slack: float = 0.5) -> list[list[int]]:
    """Batches (lists of positions) of at most ``size`` examples, by increasing length, cut
    early when padding would exceed ``slack`` of the batch's real tokens: batches of similar
    lengths, so almost no compute goes to padding."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    cur: list[int] = []
    tokens = 0
    for i in order:
        n = lengths[i]
        if cur and (len(cur) >= size or n * (len(cur) + 1) > (1 + slack) * (tokens + n)):
            batches.append(cur)
            cur, tokens = [], 0
        cur.append(i)
        tokens += n
    if cur:
        batches.append(cur)
    return batches


# Architectures whose sequence-classification head reads the first token's last hidden state only
# (BERT's pooler, RoBERTa/ELECTRA's classification heads), with BERT's layer layout.
_FIRST_TOKEN_TYPES = {"bert", "roberta", "xlm-roberta", "camembert", "electra", "ernie", "data2vec-text"}


def _first_token_forward(layer, hidden_states, attention_mask=None, *args, **kwargs):
    """The forward of an encoder's last (BERT-layout) layer for the first position only: its
    query, attention output and feed-forward (keys and values still from every position);
    returns hidden states of shape (batch, 1, hidden)."""
    import torch

    sa = layer.attention.self
    b, n, _ = hidden_states.shape
    d = sa.attention_head_size
    first = hidden_states[:, :1]
    q = sa.query(first).view(b, 1, -1, d).transpose(1, 2)
    k = sa.key(hidden_states).view(b, n, -1, d).transpose(1, 2)
    v = sa.value(hidden_states).view(b, n, -1, d).transpose(1, 2)
    mask = attention_mask
    if mask is not None and mask.dim() == 4 and mask.shape[-2] == n:
        mask = mask[:, :, :1, :]
    att = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=mask, scale=getattr(sa, "scaling", d ** -0.5))
    att = layer.attention.output(att.transpose(1, 2).reshape(b, 1, -1), first)
    return layer.output(layer.intermediate(att), att)


def _set_first_token(layer, on: bool) -> None:
    """Switch a layer between its own forward and :func:`_first_token_forward` (an instance
    attribute: parameters, state dict and saved checkpoints are unchanged)."""
    if on:
        layer.forward = types.MethodType(_first_token_forward, layer)
    elif "forward" in vars(layer):
        del layer.forward


def install_first_token_last_layer(model) -> bool:
    """On a BERT-like sequence classifier, compute the last layer for the first token only
    (all its head reads): the other positions' queries, attention outputs and feed-forward are
    skipped (a fifth of a 4-layer encoder's work). Installed only when probe batches, padded
    and unpadded, give the same logits as the full model (within 1e-5 in float32); returns
    whether it was installed."""
    import torch

    config = model.config
    layers = getattr(getattr(getattr(model, "base_model", None), "encoder", None), "layer", None)
    if (getattr(config, "model_type", "") not in _FIRST_TOKEN_TYPES or getattr(config, "is_decoder", False)
            or getattr(config, "add_cross_attention", False) or not isinstance(layers, torch.nn.ModuleList)
            or len(layers) == 0 or int(getattr(config, "vocab_size", 0) or 0) < 8):
        return False
    last = layers[-1]
    sa = getattr(getattr(last, "attention", None), "self", None)
    if sa is None or not all(hasattr(sa, a) for a in ("query", "key", "value", "attention_head_size")) \
            or not all(hasattr(last, a) for a in ("intermediate", "output")):
        return False
    param = next(model.parameters())
    ids = torch.randint(5, int(config.vocab_size), (3, 9), generator=torch.Generator().manual_seed(0))
    ids = ids.to(param.device)
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    mask[2, 2:] = 0
    probes = [{"input_ids": ids, "attention_mask": mask}, {"input_ids": ids[:2]}]
    tol = 1e-5 if param.dtype == torch.float32 else 2e-2
    try:
        with torch.inference_mode():
            full = [model(**x).logits.float() for x in probes]
            _set_first_token(last, True)
            fast = [model(**x).logits.float() for x in probes]
    except Exception:  # noqa: BLE001 - any surprise in the layout: the full model stays
        _set_first_token(last, False)
        return False
    if all(torch.allclose(a, b, atol=tol, rtol=tol) for a, b in zip(full, fast)):
        return True
    _set_first_token(last, False)
    return False


# ---- predictors ------------------------------------------------------------------------------

class HFPredictor(Predictor):
    """Shared plumbing: model + tokenizer on a device, ``params`` recorded with runs."""

    kind = ""

    def __init__(self, model, tokenizer, task: TaskSpec, card: ModelCard, device: str,
                 path: Path, params: dict[str, Any], batch_size: int = 32):
        self.model, self.tokenizer = model, tokenizer
        self.task, self.card, self.device, self.path = task, card, device, path
        self.batch_size = batch_size
        self.run_params = params
        self.last_timing = None
        config = model.config
        positions = (getattr(config, "max_position_embeddings", None)
                     or getattr(config, "n_positions", None) or 512)
        if getattr(config, "model_type", "") in _ROBERTA_LIKE:
            positions -= 2
        tml = getattr(tokenizer, "model_max_length", None)
        if isinstance(tml, int) and 0 < tml < 1_000_000:
            positions = min(positions, tml)
        self.max_length = int(positions)

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.run_params)

    def to(self, device: str) -> HFPredictor:
        self.model.to(device=device, dtype=half_precision(device))
        self.device = device
        self.run_params["device"] = device
        self.run_params["dtype"] = str(half_precision(device)).replace("torch.", "")
        return self

    def _inputs(self, enc) -> dict:
        names = set(getattr(self.tokenizer, "model_input_names", ())) or {"input_ids", "attention_mask"}
        return {k: v.to(self.device) for k, v in enc.items() if k in names}

    def _torch(self):
        import torch
        return torch


class HFTokenClassifier(HFPredictor):
    kind = HF_TOKEN_CLASSIFICATION

    def __init__(self, *args, type_map: dict[str, str], **kwargs):
        super().__init__(*args, **kwargs)
        id2label = self.model.config.id2label
        self.tags = {int(i): parse_tag(t) for i, t in id2label.items()}
        self.tags = {i: (p, type_map.get(t) if t is not None else None) for i, (p, t) in self.tags.items()}
        self.stride = max(0, min(128, self.max_length // 4))

    def length_of(self, ex: Example) -> int:
        return len(ex.text)

    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        torch = self._torch()
        texts = [ex.text for ex in batch]
        enc = self.tokenizer(texts, truncation=True, max_length=self.max_length, stride=self.stride,
                             return_overflowing_tokens=True, return_offsets_mapping=True,
                             padding=True, return_tensors="pt")
        offsets = enc["offset_mapping"].tolist()
        sample_of = (enc["overflow_to_sample_mapping"].tolist() if "overflow_to_sample_mapping" in enc
                     else list(range(len(texts))))
        with torch.inference_mode():
            logits = self.model(**self._inputs(enc)).logits
        pred = logits.argmax(-1).tolist()
        best: list[dict[tuple[int, int], tuple[int, int]]] = [{} for _ in texts]
        for w, sample in enumerate(sample_of):
            seq = enc.sequence_ids(w)
            content = [j for j, sid in enumerate(seq) if sid == 0]
            n = len(content)
            for rank, j in enumerate(content):
                s, e = offsets[w][j]
                if e <= s:
                    continue
                margin = min(rank, n - 1 - rank)
                old = best[sample].get((s, e))
                if old is None or margin > old[0]:
                    best[sample][(s, e)] = (margin, pred[w][j])
        out = []
        for ex, toks in zip(batch, best):
            seq_tags = []
            for (s, e), (_, label_id) in sorted(toks.items()):
                p, t = self.tags.get(label_id, ("O", None))
                seq_tags.append((s, e, p, t))
            spans = sorted({Span(s, e, t, ex.text[s:e]) for s, e, t in decode_tags(seq_tags)})
            out.append(Example(key=ex.key, index=ex.index, text=ex.text, spans=spans,
                               meta=dict(ex.meta)))
        return out


class HFSequenceClassifier(HFPredictor):
    """Single texts or text pairs -> one label. :meth:`predict` is the fast path: every text is
    tokenized once (one call of the fast tokenizer), examples are bucketed by token length so
    that batches carry almost no padding (and no attention mask at all when a batch has one
    length), and, on BERT-like encoders whose head reads the first token only, the last layer
    is computed for that token alone (:func:`install_first_token_last_layer`, checked at load)."""

    kind = HF_SEQUENCE_CLASSIFICATION

    def __init__(self, *args, labels: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.labels = labels  # task codes by class id
        self.pair = self.task.kind == Kind.PAIR
        self.first_token_only = install_first_token_last_layer(self.model)
        self.run_params["first_token_last_layer"] = self.first_token_only

    def _encode(self, batch: Sequence[Example]):
        """Token ids of every example (no padding, no tensors): one fast-tokenizer call."""
        first = [ex.text for ex in batch]
        if self.pair:
            return self.tokenizer(first, [ex.text2 for ex in batch], truncation=True,
                                  max_length=self.max_length)
        return self.tokenizer(first, truncation=True, max_length=self.max_length)

    def logits(self, examples: Sequence[Example], batch_size: int | None = None):
        """Float32 logits of ``examples`` in input order (a CPU tensor), and the batch count."""
        torch = self._torch()
        size = max(1, int(batch_size or self.batch_size))
        n_labels = len(self.labels)
        if not examples:
            return torch.empty(0, n_labels), 0
        enc = self._encode(examples)
        names = [k for k in (getattr(self.tokenizer, "model_input_names", None)
                             or ("input_ids", "attention_mask")) if k in enc and k != "attention_mask"]
        columns = {k: enc[k] for k in names}
        ids = columns["input_ids"]
        lengths = [len(x) for x in ids]
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        out = torch.empty(len(examples), n_labels, dtype=torch.float32)
        batches = length_buckets(lengths, size)
        with torch.inference_mode():
            for b in batches:
                width = max(lengths[i] for i in b)
                uniform = all(lengths[i] == width for i in b)
                inputs = {}
                for k, rows in columns.items():
                    fill = pad_id if k == "input_ids" else 0
                    inputs[k] = torch.tensor([rows[i] + [fill] * (width - lengths[i]) for i in b],
                                             dtype=torch.long)
                if not uniform:
                    inputs["attention_mask"] = torch.tensor(
                        [[1] * lengths[i] + [0] * (width - lengths[i]) for i in b], dtype=torch.long)
                logits = self.model(**{k: v.to(self.device) for k, v in inputs.items()}).logits
                out[b] = logits.float().cpu()
        return out, len(batches)

    def predict(self, examples: Sequence[Example], batch_size: int | None = None) -> list[Example]:
        torch = self._torch()
        start = time.perf_counter()
        logits, batches = self.logits(examples, batch_size)
        probs = torch.softmax(logits, dim=-1)
        best = probs.argmax(-1).tolist()
        rows = probs.tolist()
        out = []
        for ex, row, k in zip(examples, rows, best):
            meta = dict(ex.meta)
            meta["probabilities"] = {lab: round(p, 6) for lab, p in zip(self.labels, row)}
            out.append(Example(key=ex.key, index=ex.index, text=ex.text, text2=ex.text2,
                               label=self.labels[k], meta=meta))
        self.last_timing = Timing(len(examples), time.perf_counter() - start, batches, self.device)
        return out

    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        return self.predict(batch, batch_size=len(batch) or 1)


class HFCausalLM(HFPredictor):
    kind = HF_CAUSAL_LM

    def __init__(self, *args, generation: GenerationParams, **kwargs):
        super().__init__(*args, **kwargs)
        tok = self.tokenizer
        self.generation = generation
        self.templated = bool(getattr(tok, "chat_template", None)) if generation.chat_template is None \
            else bool(generation.chat_template)
        if self.templated and not getattr(tok, "chat_template", None):
            raise ModelLoadError(f"model at {self.path}: chat_template=True but the tokenizer has no chat template")
        tok.padding_side = "left"
        tok.truncation_side = "left"
        if tok.pad_token is None:
            if tok.eos_token is not None:
                tok.pad_token = tok.eos_token
            elif tok.unk_token is not None:
                tok.pad_token = tok.unk_token
            else:
                raise ModelLoadError(f"model at {self.path}: the tokenizer has no pad, eos or unk "
                                     f"token to pad batches with")
        self.max_prompt = (self.max_length - generation.max_new_tokens
                           if self.max_length > generation.max_new_tokens + 8 else None)
        self.run_params.update({k: v for k, v in asdict(generation).items() if k != "chat_template"})
        self.run_params["chat_template"] = self.templated

    def length_of(self, ex: Example) -> int:
        return len(ex.text)

    def prompt(self, text: str) -> str:
        if not self.templated:
            return text
        return self.tokenizer.apply_chat_template([{"role": "user", "content": text}],
                                                  tokenize=False, add_generation_prompt=True)

    def _generation_config(self) -> GenerationConfig:
        from transformers import GenerationConfig

        g = self.generation
        base = getattr(self.model, "generation_config", None)
        eos = getattr(base, "eos_token_id", None)
        if eos is None:
            eos = self.tokenizer.eos_token_id
        kw: dict[str, Any] = {"max_new_tokens": g.max_new_tokens, "do_sample": g.do_sample,
                                  "pad_token_id": self.tokenizer.pad_token_id, "eos_token_id": eos,
                                  "bos_token_id": getattr(base, "bos_token_id", None)}
        if g.do_sample:
            kw.update(temperature=g.temperature, top_p=g.top_p)
        return GenerationConfig(**kw)

    def _predict_batch(self, batch: Sequence[Example]) -> list[Example]:
        torch = self._torch()
        g = self.generation
        prompts = [self.prompt(ex.text) for ex in batch]
        kw: dict[str, Any] = {"padding": True, "return_tensors": "pt", "add_special_tokens": not self.templated}
        if self.max_prompt:
            kw.update(truncation=True, max_length=self.max_prompt)
        enc = self.tokenizer(prompts, **kw)
        if g.do_sample:
            torch.manual_seed(g.seed)
            if str(self.device).startswith("cuda"):
                torch.cuda.manual_seed_all(g.seed)
        with torch.inference_mode():
            out = self.model.generate(**self._inputs(enc), generation_config=self._generation_config())
        new = out[:, enc["input_ids"].shape[1]:].cpu()
        texts = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        preds = []
        for ex, text in zip(batch, texts):
            meta = dict(ex.meta)
            meta["generation"] = text
            preds.append(Example(key=ex.key, index=ex.index, text=ex.text, label=ex.label,
                                 choices=list(ex.choices), target=text.strip(), meta=meta,
                                 raw=ex.raw))
        return preds


# ---- loading ---------------------------------------------------------------------------------

@contextlib.contextmanager
def _quiet_loading():
    """No weight-loading progress bars from transformers while we load."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover
        yield
        return
    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


def check_folder(path: str | Path, allow_pickle: bool = False) -> dict[str, Any]:
    """Raise :class:`ModelLoadError` naming what the folder lacks; return its config."""
    path = Path(path)
    if not path.exists():
        raise ModelLoadError(f"model folder not found: {path}")
    if not path.is_dir():
        raise ModelLoadError(f"not a folder: {path} (a model is a folder with config.json, weights "
                             f"and tokenizer files)")
    if not (path / "config.json").is_file():
        raise ModelLoadError(f"model folder {path} has no config.json (not a Hugging Face checkpoint)")
    try:
        config = read_config(path)
    except ValueError as exc:
        raise ModelLoadError(f"model folder {path}: {exc}") from None
    problem = weights_problem(path, allow_pickle) or tokenizer_problem(path)
    if problem:
        raise ModelLoadError(f"model folder {path}: {problem}")
    explicit = config.get("transformers_weights")
    if explicit and not allow_pickle and not str(explicit).endswith((".safetensors", ".safetensors.index.json")):
        raise ModelLoadError(f"model folder {path}: config.json points at {explicit!r}, not safetensors "
                             f"(pass allow_pickle=True to load it)")
    return config


def resolve_task(path: Path, kind: str, task: str | TaskSpec | None, model_task: str | None) -> TaskSpec:
    """The task to predict: the requested one, checked against what the model says it does."""
    want = task.name if isinstance(task, TaskSpec) else task
    if want and model_task and want != model_task:
        raise ModelLoadError(f"model at {path} is for task {model_task}, not {want}")
    name = want or model_task or DEFAULT_TASK.get(kind)
    if not name:
        raise ModelLoadError(f"model at {path} does not say its task (no {CARD_FILE}, no 'cblue_task' "
                             f"in config.json): pass the task (--task NAME)")
    try:
        spec = task if isinstance(task, TaskSpec) else get_task(name)
    except UnknownTaskError as exc:
        raise ModelLoadError(f"model at {path}: {exc}") from None
    allowed = TASK_KINDS[kind]
    if spec.kind not in allowed:
        raise ModelLoadError(
            f"model at {path} is a {kind} model; it cannot predict {spec.name} "
            f"({spec.kind.value}); it serves {' / '.join(k.value for k in allowed)} tasks")
    return spec


def _classification_labels(config, spec: TaskSpec, path: Path) -> list[str]:
    n = int(getattr(config, "num_labels", 0) or len(config.id2label))
    names = [str(config.id2label.get(i, f"LABEL_{i}")) for i in range(n)]
    if all(re.fullmatch(r"LABEL_\d+", x) for x in names):
        codes = spec.label_codes
        if len(codes) == n and all(c == str(i) for i, c in enumerate(codes)):
            return list(codes)  # numbered classes (STS, QQR, QTR): class i is label "i"
        raise ModelLoadError(
            f"model at {path} has no label names (config.id2label is LABEL_0..LABEL_{n - 1}); "
            f"set id2label to {spec.name} labels ({', '.join(codes[:8])}...)")
    mapping = _map_to_task(names, spec, "labels", path)
    return [mapping[x] for x in names]


def _token_types(config, path: Path) -> list[str]:
    types, bad = [], []
    for i, tag in sorted(config.id2label.items(), key=lambda kv: int(kv[0])):
        try:
            _, t = parse_tag(tag)
        except ValueError:
            bad.append(str(tag))
            continue
        if t is not None and t not in types:
            types.append(t)
    if bad:
        raise ModelLoadError(f"model at {path}: tags {', '.join(map(repr, bad[:8]))} in config.id2label "
                             f"follow no BIO/BIOES scheme (expected O, B-type, I-type, E-type, S-type)")
    return types


def load_hf(path: str | Path, *, task: str | TaskSpec | None = None, kind: str | None = None,
            device: str = "cpu", allow_pickle: bool = False, card: ModelCard | None = None,
            generation: GenerationParams | dict | None = None, batch_size: int = 32) -> HFPredictor:
    """Load the checkpoint at ``path`` as a predictor on ``device`` (already resolved).

    ``kind`` defaults to the model card's, else the one ``config.json``'s architecture implies;
    ``task`` defaults to the card's, else ``config.json``'s ``cblue_task`` (PromptCBLUE for causal
    LMs). Raises :class:`ModelLoadError` with the folder and the reason.
    """
    path = Path(path).expanduser()
    raw_config = check_folder(path, allow_pickle)
    if card is None and (path / CARD_FILE).is_file():
        try:
            card = read_card(path)
        except ValueError as exc:
            raise ModelLoadError(f"model folder {path}: {exc}") from None
    arch_kind = hf_kind_from_config(raw_config)
    kind = kind or (card.kind if card else None) or arch_kind
    if kind not in HF_KINDS:
        archs = ", ".join(map(str, raw_config.get("architectures") or [])) or "none"
        raise ModelLoadError(f"model at {path}: unsupported model (kind {kind!r}, architectures {archs}); "
                             f"supported: {', '.join(HF_KINDS)}")
    if arch_kind is not None and arch_kind != kind:
        raise ModelLoadError(f"model at {path}: the card says {kind} but config.json's architecture "
                             f"is a {arch_kind} model")
    model_task = card.task if card else (str(raw_config["cblue_task"]) if raw_config.get("cblue_task") else None)
    spec = resolve_task(path, kind, task, model_task)
    gen = GenerationParams.from_any(generation) if kind == HF_CAUSAL_LM else None

    import transformers  # heavy imports only once the folder passed the checks
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForSequenceClassification,
        AutoModelForTokenClassification,
        AutoTokenizer,
    )

    common = {"local_files_only": True, "trust_remote_code": False}
    try:
        config = AutoConfig.from_pretrained(str(path), **common)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelLoadError(f"model at {path}: cannot read config.json ({exc}); custom model code is "
                             f"never run (trust_remote_code=False)") from None

    # Check labels against the task before reading any weights.
    extra: dict[str, Any] = {}
    if kind == HF_TOKEN_CLASSIFICATION:
        extra["type_map"] = _map_to_task(_token_types(config, path), spec, "entity types", path)
    elif kind == HF_SEQUENCE_CLASSIFICATION:
        extra["labels"] = _classification_labels(config, spec, path)

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), **common)
    except (OSError, ValueError, KeyError, TypeError, ImportError) as exc:
        raise ModelLoadError(f"model at {path}: cannot load the tokenizer ({exc})") from None
    if kind == HF_TOKEN_CLASSIFICATION and not getattr(tokenizer, "is_fast", False):
        raise ModelLoadError(f"model at {path}: token classification needs a fast tokenizer "
                             f"(tokenizer.json) for character offsets")

    pickle_only = weights_problem(path, allow_pickle=False) is not None
    if pickle_only:
        warnings.warn(f"loading pickle weights from {path} (allow_pickle=True): only load "
                      f"checkpoints you trust; convert them to safetensors", stacklevel=2)
    dtype = half_precision(device)
    auto = {HF_TOKEN_CLASSIFICATION: AutoModelForTokenClassification,
            HF_SEQUENCE_CLASSIFICATION: AutoModelForSequenceClassification,
            HF_CAUSAL_LM: AutoModelForCausalLM}[kind]
    load_kw: dict[str, Any] = {"config": config, "dtype": dtype, "weights_only": True,
                               "use_safetensors": None if allow_pickle else True, **common}
    try:
        with _quiet_loading():
            try:   # PyTorch's fused attention where the architecture has it
                model = auto.from_pretrained(str(path), attn_implementation="sdpa", **load_kw)
            except (ValueError, ImportError) as exc:
                if "sdpa" not in str(exc).lower() and "attn" not in str(exc).lower():
                    raise
                model = auto.from_pretrained(str(path), **load_kw)
    except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:
        raise ModelLoadError(f"model at {path}: cannot load the weights ({exc})") from None
    model.to(device)
    model.eval()

    if card is None:
        card = ModelCard(name=path.name, task=spec.name, kind=kind,
                         labels=[str(config.id2label[i]) for i in sorted(config.id2label)]
                         if kind != HF_CAUSAL_LM else [],
                         description=f"Hugging Face checkpoint ({', '.join(config.architectures or [])})",
                         size_bytes=folder_size(path),
                         extra={"model_type": getattr(config, "model_type", ""), "source": "hf"})
    params: dict[str, Any] = {"model_path": str(path), "kind": kind, "device": device,
                              "dtype": str(dtype).replace("torch.", ""),
                              "weights": "pickle" if pickle_only else "safetensors",
                              "transformers": transformers.__version__}
    cls = {HF_TOKEN_CLASSIFICATION: HFTokenClassifier, HF_SEQUENCE_CLASSIFICATION: HFSequenceClassifier,
           HF_CAUSAL_LM: HFCausalLM}[kind]
    if gen is not None:
        extra["generation"] = gen
        batch_size = min(batch_size, 8)
    return cls(model, tokenizer, spec, card, device, path, params, batch_size=batch_size, **extra)
