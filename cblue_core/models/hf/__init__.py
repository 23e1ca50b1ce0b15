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

from .loading import DEFAULT_TASK, TASK_KINDS, check_folder, load_hf, resolve_task
from .predictors import GenerationParams, HFCausalLM, HFPredictor, HFSequenceClassifier, HFTokenClassifier
from .tags import decode_tags, parse_tag
from .throughput import install_first_token_last_layer, length_buckets

__all__ = ["DEFAULT_TASK", "TASK_KINDS", "GenerationParams", "HFCausalLM", "HFPredictor",
           "HFSequenceClassifier", "HFTokenClassifier", "check_folder", "decode_tags",
           "install_first_token_last_layer", "length_buckets", "load_hf", "parse_tag", "resolve_task"]
