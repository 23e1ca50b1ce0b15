"""The BasicTokenizer and rouge_chinese reimplementations."""
from __future__ import annotations

import pytest

from cblue_core.metrics.promptcblue.basic_tokenizer import basic_tokenize, tokenized_text
from cblue_core.metrics.promptcblue.rouge import cut_sentences, lcs_length, rouge_avg, rouge_pair_scores

STRINGS = [
    "", " ", "\n\t\r", "建议多喝水，注意休息。", "可以服用PPI类药物, 比如奥美拉唑。", "可以服用ppi类药物,比如奥美拉唑。",
    "Hello, World!", "CRP 12.5mg/L，WBC 10.2×10^9/L", "C++ and C#", "e-mail: test@example.com",
    "café naïve résumé", "ÀÉÎÕÜ", "İstanbul", "straße", "ﬁnance", "ǅemal", "Ⅳ型高脂血症", "½ 片",
    "ＰＰＩ　全角空格", "“引号”和‘单引号’", "……——", "1.5%的患者", "a\u0301b", "e\u0301\u0302",
    "零宽\u200b空格", "不换行\u00a0空格", "控制\x07字符\x1f", "\x00空\ufffd字", "行\u2028分隔", "emoji 😀 表情",
    "한국어 텍스트", "ひらがなカタカナ", "𠀀𪜀 CJK 扩展", "兀 CJK兼容 \uf900\ufa00", "(括号)[方括号]{花括号}",
    "^$`~|\\", "3-4天，每天2~3次", "COVID-19 疫苗", "HbA1c≥6.5%", "β-内酰胺类", "Ｗｉｎｄｏｗｓ１０", "NaN inf -0",
    "多  空格\t\t制表", "你好！？?!", "¿Qué?", "«guillemets»", "Ωμέγα", "ДЕЛО дело",
]


def test_hand_examples():
    assert basic_tokenize("可以服用PPI类药物, 比如奥美拉唑。") == [
        "可", "以", "服", "用", "ppi", "类", "药", "物", ",", "比", "如", "奥", "美", "拉", "唑", "。"]
    assert basic_tokenize("café 12.5mg") == ["cafe", "12", ".", "5mg"]
    assert tokenized_text("  \n ") == ""
    assert tokenized_text("无。") == "无 。"


def test_matches_transformers_basic_tokenizer():
    transformers = pytest.importorskip("transformers", reason="transformers not installed")
    tok = transformers.BasicTokenizer(tokenize_chinese_chars=True)
    for s in STRINGS:
        assert basic_tokenize(s) == tok.tokenize(s), repr(s)
    assert len(STRINGS) >= 40


def test_rouge_details():
    assert cut_sentences("好 。 坏 。") == ["好 。", " 坏 。"]
    assert lcs_length(["a", "b", "c", "d"], ["b", "d", "x"]) == 2
    r = rouge_pair_scores("好 好 好", "好")
    assert r.rouge1 == pytest.approx(2 / (2 + 1e-8), abs=1e-15) and r.rouge2 == 0.0
    assert rouge_avg([r, r]) == pytest.approx(tuple(r))
    with pytest.raises(ValueError, match="Hypothesis is empty"):
        rouge_pair_scores("", "好")
    with pytest.raises(ZeroDivisionError):
        rouge_avg([])
