"""The three Hugging Face heads as predictors, and the decoding parameters of a causal LM."""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from ...records import Example, Span
from ...tasks import Kind, TaskSpec
from ..base import ModelCard, Predictor, Timing
from ..devices import half_precision
from ..registry import (
    HF_CAUSAL_LM,
    HF_SEQUENCE_CLASSIFICATION,
    HF_TOKEN_CLASSIFICATION,
    ModelLoadError,
)
from .tags import decode_tags, parse_tag
from .throughput import install_first_token_last_layer, length_buckets

if TYPE_CHECKING:
    from transformers import GenerationConfig

# Their position embeddings keep two slots for the padding offset, not for tokens.
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


