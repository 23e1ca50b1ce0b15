"""The shipped CMeIE recipe (:func:`.training.train`'s defaults) and the tiny one of the tests."""
from __future__ import annotations

DEFAULTS: dict = {"epochs": 14, "max_chars": 320, "batch_size": 16, "lr": 2e-3, "head": "pointer", "pair_dim": 128,
                      "pair_scores": False, "pair_loss": "mlce", "init_from": "cmeee",
                      "threshold": 0.2, "subject_threshold": 0.3, "pair_threshold": 0.2, "members": 3,
                      "lexicon": False, "teacher": None}
TINY = {"char_dim": 16, "bigram_dim": 8, "hidden": 16, "layers": 1, "span_dim": 16, "max_span": 12, "dropout": 0.0,
            "epochs": 2, "batch_size": 4, "lr": 1e-2, "min_bigram_count": 1, "pair_dim": 8, "init_from": None,
            "members": 1}
