"""The character vocabulary and its tokenizer: saved so that plain transformers loads it, one token
per Chinese character, digits and Latin letters through ``##`` pieces."""
from __future__ import annotations

from cblue_core.models.encoder.vocab import (
    SPECIALS,
    build_vocab,
    count_pieces,
    load_tokenizer,
    read_vocab,
    save_tokenizer,
)

TEXTS = ["患儿发热39.5℃，伴咳嗽。", "糖尿病人能喝牛奶吗", "CT示右肺炎症", "患儿咳嗽3天"]


def test_pieces_follow_wordpiece_words():
    counts = count_pieces(TEXTS)
    assert counts["患"] == 2 and counts["3"] == 2 and counts["##9"] == 1 and counts["##℃"] == 1
    assert counts["c"] == 1 and counts["##t"] == 1   # lower-cased, as the tokenizer does


def test_vocab_cutoff_and_order():
    tokens = build_vocab(TEXTS, min_count=2)
    assert tokens[:5] == SPECIALS
    assert {"患", "儿", "咳", "嗽", "3"} <= set(tokens) and "牛" not in tokens
    assert all(count_pieces(TEXTS)[t] >= 2 for t in tokens[5:])
    assert build_vocab(TEXTS, 1, max_size=8) == build_vocab(TEXTS, 1)[:8]


def test_saved_tokenizer_loads_with_plain_transformers(tmp_path):
    from transformers import AutoTokenizer, BertTokenizerFast

    tokens = build_vocab(TEXTS, min_count=1)
    save_tokenizer(tokens, tmp_path, 64)
    assert read_vocab(tmp_path) == tokens
    assert {"vocab.txt", "tokenizer.json", "tokenizer_config.json"} <= {p.name for p in tmp_path.iterdir()}
    for tok in (load_tokenizer(tmp_path), AutoTokenizer.from_pretrained(tmp_path),
                BertTokenizerFast.from_pretrained(tmp_path)):
        ids = tok("患儿发热39.5℃")["input_ids"]
        assert tok.convert_ids_to_tokens(ids) == ["[CLS]", "患", "儿", "发", "热", "3", "##9", ".", "5",
                                                  "##℃", "[SEP]"]
        assert tok.unk_token_id not in ids and tok.model_max_length == 64
        assert tok.mask_token == "[MASK]" and tok.pad_token_id == 0
