"""PromptCBLUE task names, orders, label lists and metric kinds (docs/metrics.md section 3).

Everything here is data: the post-processor (:mod:`.parse`), the official scorer
(:mod:`.official`) and clean mode (:mod:`.clean`) read it.
"""
from __future__ import annotations

# Key order of the HEAD post-processor's ``results.json`` (18 tasks).
PARSER_TASKS: tuple[str, ...] = (
    "CMeEE-V2", "CMeIE-V2", "CHIP-CDN", "CHIP-CDEE", "CHIP-STS", "CHIP-CTC", "CHIP-MDCFNPC",
    "KUAKE-IR", "KUAKE-QIC", "KUAKE-QQR", "KUAKE-QTR", "MedDG", "IMCS-V2-MRG", "IMCS-V2-NER",
    "IMCS-V2-DAC", "IMCS-V2-SR", "Text2DT", "CMedCausal",
)

# Key order of the older (16-task, pre 2023-08) post-processor, used by the toy examples.
LEGACY_PARSER_TASKS: tuple[str, ...] = tuple(
    "CMeIE" if t == "CMeIE-V2" else t for t in PARSER_TASKS if t not in ("Text2DT", "CMedCausal"))

# Order in which ``evaluate.py`` scores the tasks (and sums the overall score).
SCORER_TASKS: tuple[str, ...] = (
    "CMeEE-V2", "CMeIE-V2", "CHIP-CDN", "CHIP-CDEE", "IMCS-V2-NER", "CHIP-MDCFNPC", "IMCS-V2-SR",
    "IMCS-V2-DAC", "IMCS-V2-MRG", "CHIP-CTC", "CHIP-STS", "KUAKE-IR", "KUAKE-QIC", "KUAKE-QQR",
    "KUAKE-QTR", "MedDG", "Text2DT", "CMedCausal",
)

# Older names accepted on input, mapped to the HEAD name.
TASK_ALIASES: dict[str, str] = {"CMeIE": "CMeIE-V2"}

IE_TASKS = frozenset({"CMeEE-V2", "CMeIE-V2", "CHIP-CDN", "CMedCausal", "CHIP-CDEE", "IMCS-V2-NER",
                      "IMCS-V2-SR", "CHIP-MDCFNPC"})
MACRO_CLS_TASKS = frozenset({"CHIP-CTC", "KUAKE-QIC", "IMCS-V2-DAC"})
WEIGHTED_CLS_TASKS = frozenset({"CHIP-STS", "KUAKE-IR", "KUAKE-QQR", "KUAKE-QTR"})
CLS_TASKS = MACRO_CLS_TASKS | WEIGHTED_CLS_TASKS
NLG_TASKS = frozenset({"MedDG"})
NLG_SECTION_TASKS = frozenset({"IMCS-V2-MRG"})
TREE_TASKS = frozenset({"Text2DT"})

# The ``list_labels`` that evaluate.py passes; the official scorer only uses element 0
# (the fallback for an empty prediction). Clean mode uses the whole list.
CLS_LABELS: dict[str, tuple[str, ...]] = {
    "CHIP-STS": ("是的", "不是"),
    "CHIP-CTC": (
        "非上述类型", "疾病", "症状(患者感受)", "体征(医生检测）", "怀孕相关", "肿瘤进展", "疾病分期",
        "过敏耐受", "器官组织状态", "预期寿命", "口腔相关", "药物", "治疗或手术", "设备", "护理", "诊断",
        "实验室检查", "风险评估", "受体状态", "年龄", "特殊病人特征", "读写能力", "性别", "教育情况",
        "居住情况", "种族", "知情同意", "参与其它试验", "研究者决定", "能力", "伦理审查", "依存性",
        "成瘾行为", "睡眠", "锻炼", "饮食", "酒精使用", "性取向", "吸烟状况", "献血", "病例来源",
        "残疾群体", "健康群体", "数据可及性", "含有多个类别",
    ),
    "IMCS-V2-DAC": (
        "非上述类型", "关于症状的询问", "关于症状的回答", "关于病因的询问", "关于病因的回答",
        "关于个人基本信息的询问", "关于个人基本信息的回答", "关于已有检查和治疗的提问",
        "关于已有检查和治疗的回答", "关于用药建议的提问", "关于用药建议的解答", "关于就医建议的提问",
        "关于就医建议的解答", "关于注意事项的提问", "关于注意事项的解答", "给出诊断",
    ),
    "KUAKE-IR": ("相关", "不相关"),
    "KUAKE-QIC": (
        "非上述类型", "病情诊断", "病因分析", "治疗方案", "就医建议", "指标解读", "疾病描述", "后果表述",
        "注意事项", "功效作用", "医疗费用",
    ),
    "KUAKE-QTR": ("完全不匹配或者没有参考价值", "很少匹配有一些参考价值", "部分匹配", "完全匹配"),
    "KUAKE-QQR": ("完全一致", "后者是前者的语义子集", "后者是前者的语义父集", "语义无直接关联"),
}

# Name of each task's main-metric entry in ``scoreJson``.
SCORE_JSON_KEYS: dict[str, str] = {
    t: (f"{t}-Macro-F1" if t in MACRO_CLS_TASKS
        else f"{t}-RougeL" if t in ("MedDG", "IMCS-V2-MRG")
        else f"{t}-TreeLenvRatio" if t == "Text2DT"
        else f"{t}-Micro-F1")
    for t in SCORER_TASKS
}

# Which entry of a task's detail dict (``all_scores.json``) is its main metric.
MAIN_METRIC: dict[str, str] = {
    t: ("macro-f1" if t in MACRO_CLS_TASKS
        else "rougeL" if t in ("MedDG", "IMCS-V2-MRG")
        else "tree_lenv_radio" if t == "Text2DT"
        else "f1")
    for t in SCORER_TASKS
}

# evaluate.py's error codes and messages.
ERROR_MESSAGES: dict[int, str] = {
    1: "There are missing predictions in the submission, please check again!",
    2: "Predictions are in the wrong format, please check again! ",
    3: "It seems there are missing predictions or the predicted samples are in the wrong order, please check again! ",
    4: "Error in calculating metrics!",
    99: "Other error unknown!",
}


def canonical_task(name: str) -> str:
    """The HEAD name of a task (``CMeIE`` -> ``CMeIE-V2``); unknown names are returned unchanged."""
    return TASK_ALIASES.get(name, name)


def task_kind(task: str) -> str:
    """``ie``, ``cls``, ``nlg``, ``nlg_sections`` or ``tree`` for a HEAD task name."""
    task = canonical_task(task)
    if task in IE_TASKS:
        return "ie"
    if task in CLS_TASKS:
        return "cls"
    if task in NLG_TASKS:
        return "nlg"
    if task in NLG_SECTION_TASKS:
        return "nlg_sections"
    if task in TREE_TASKS:
        return "tree"
    raise KeyError(f"unknown PromptCBLUE task: {task!r}")
