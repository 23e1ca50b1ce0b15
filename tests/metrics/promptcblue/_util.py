"""Helpers shared by the PromptCBLUE metric tests."""
from __future__ import annotations

import json
from pathlib import Path


def load_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_json(path: Path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def comparable(structured: dict) -> dict:
    """A results.json dict with CHIP-CDN answers made order-free (their official order is
    hash-dependent)."""
    out = {}
    for task, items in structured.items():
        rows = []
        for item in items:
            answer = item["answer"]
            if task == "CHIP-CDN":
                answer = sorted(json.dumps(a, ensure_ascii=False, sort_keys=True) for a in answer)
            rows.append((item["sample_id"], answer))
        out[task] = rows
    return out


MDCFNPC_CHOICES = ["已有症状疾病或者假设未来可能发生的疾病等", "未患有症状疾病",
                   "没有回答、不知道、回答不明确或者模棱两可不好推断", "无实际意义的不标注或者和病人当前的状态独立不标注"]
SR_CHOICES = ["没有患有该症状", "患有该症状", "无法根据上下文确定病人是否患有该症状"]

# One hand-made gold record per task (all 18), in the layout of the reference targets.
_MINI = [
    ("CMeEE-V2", ["疾病", "临床表现"], "上述句子中的实体包含：\n疾病实体：感冒\n临床表现实体：发热，咳嗽"),
    ("CMeIE-V2", ["临床表现"], "具有临床表现关系的头尾实体对如下：头实体为感冒，尾实体为发热。头实体为感冒，尾实体为咳嗽。"),
    ("CHIP-CDN", ["感冒", "上呼吸道感染", "发热"], "感冒，上呼吸道感染"),
    ("CHIP-CDEE", None, "上述句子中的临床发现事件如下：\n主体词：发热；发生状态：；描述词：持续性，高；解剖部位："),
    ("CHIP-STS", ["是的", "不是"], "是的"),
    ("CHIP-CTC", ["疾病", "药物", "年龄"], "疾病"),
    ("CHIP-MDCFNPC", MDCFNPC_CHOICES, "上述对话中临床发现实体以及其阴阳性判别如下：\n发热：" + MDCFNPC_CHOICES[0]),
    ("KUAKE-IR", ["相关", "不相关"], "相关"),
    ("KUAKE-QIC", ["病因分析", "治疗方案"], "病因分析"),
    ("KUAKE-QQR", ["完全一致", "后者是前者的语义子集", "后者是前者的语义父集", "语义无直接关联"], "完全一致"),
    ("KUAKE-QTR", ["完全不匹配或者没有参考价值", "很少匹配有一些参考价值", "部分匹配", "完全匹配"], "部分匹配"),
    ("MedDG", None, "多喝水，注意休息。"),
    ("IMCS-V2-MRG", None, "上述问诊对话的诊疗报告如下：\n主诉：发热。\n现病史：发热两天。\n辅助检查：\n既往史：无。\n诊断：感冒。\n建议：休息。"),
    ("IMCS-V2-NER", ["症状"], "上述句子中的实体包含：\n症状实体：发热"),
    ("IMCS-V2-DAC", ["关于症状的询问", "给出诊断"], "关于症状的询问"),
    ("IMCS-V2-SR", SR_CHOICES, "当前对话中的症状及其阴阳性判断为：\n发热：患有该症状"),
    ("Text2DT", None, ("根据给定的指南文本抽取的诊疗决策树如下：\n"
                      "节点0：role=C；logical_rel=null；triples=[[\"患者\", \"临床表现\", \"发热\"]]\n"
                      "节点1：role=D；logical_rel=null；triples=[[\"患者\", \"治疗药物\", \"布洛芬\"]]\n"
                      "节点2：role=D；logical_rel=null；triples=[]")),
    ("CMedCausal", None, "上述文本中的因果关系三元组如下：\n头实体：感冒；尾实体：发热"),
]


def mini_records() -> list[dict]:
    """Fresh copies of the 18 hand-made gold records (sample ids ``m0``..``m17``)."""
    return [{"input": f"prompt {i}", "target": target, "answer_choices": None if choices is None else list(choices),
             "task_type": "x", "task_dataset": task, "sample_id": f"m{i}"}
            for i, (task, choices, target) in enumerate(_MINI)]


def with_targets(records: list[dict], targets: dict[str, str]) -> list[dict]:
    """Copies of ``records`` whose ``target`` is replaced for the given task names."""
    return [{**r, "target": targets.get(r["task_dataset"], r["target"])} for r in records]
