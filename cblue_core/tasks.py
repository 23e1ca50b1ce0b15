"""The task registry: every supported task declared once.

Loaders, storage, metrics, models and pages look a task up here instead of branching on its
name. A task names its record *codec* (how one record becomes an :class:`~cblue_core.records.Example`
and back, see :mod:`cblue_core.io.codecs`), its file container, the field predictions are
matched on, its label set and its official metric. Adding a task means adding one entry here
(and a codec only if no existing one fits).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path


class Family(str, Enum):
    CBLUE1 = "CBLUE 1.0"
    CBLUE2 = "CBLUE 2.0"
    PROMPTCBLUE = "PromptCBLUE"
    CLIMEDBENCH = "CliMedBench"


class Kind(str, Enum):
    SPANS = "span extraction"
    RELATIONS = "relation extraction"
    NORMALIZATION = "normalization"
    CLASSIFICATION = "single-text classification"
    PAIR = "text-pair classification"
    EVENTS = "event extraction"
    DIALOGUE = "dialogue"
    RETRIEVAL = "retrieval"
    GENERATION = "generation"
    TREE = "decision tree extraction"
    PROMPT = "LLM prompt"
    MULTIPLE_CHOICE = "multiple choice"

    @property
    def label_is_input(self) -> bool:
        """Whether ``Example.label`` names the sub-task or scenario of a record (an input a
        model is given) rather than the gold answer it must predict."""
        return self in (Kind.PROMPT, Kind.MULTIPLE_CHOICE)


@dataclass(frozen=True)
class Label:
    code: str
    zh: str
    en: str

    def display(self) -> str:
        """'中文 / English (code)', without repeating a name that equals the code (CHIP-CTC's
        codes are their English names: '疾病 / Disease'), or just the code when both equal it."""
        if self.zh == self.code and self.en in ("", self.code):
            return self.code
        if self.zh == self.code:
            return f"{self.zh} ({self.en})"
        if self.en == self.code:
            return f"{self.zh} / {self.en}"
        return f"{self.zh} / {self.en} ({self.code})" if self.en else f"{self.zh} ({self.code})"


# TaskSpec.container -> the container a reader detects in the file (see cblue_core.io.jsonfile).
CONTAINER_SHAPES: dict[str, str] = {"json": "array", "jsonl": "lines", "dialogs": "object", "tsv": "tsv"}
CONTAINER_DESCRIPTIONS: dict[str, str] = {
    "array": "one JSON array of records",
    "lines": "JSON lines (one record per line)",
    "object": "one JSON object keyed by dialog id",
    "tsv": "tab-separated lines",
}


@dataclass(frozen=True)
class TaskSpec:
    """Everything the rest of the code needs to know about one task."""

    name: str
    family: Family
    kind: Kind
    codec: str                      # record codec in cblue_core.io.codecs
    description: str
    labels: tuple[Label, ...] = ()  # label set (entity types, predicates, classes...)
    # Official container of the task's files: json (one JSON array), jsonl (JSON lines), dialogs
    # (one JSON object keyed by dialog id) or tsv. Readers detect the container from the content
    # and warn when it is not this one; writers write this one.
    container: str = "json"
    key_field: str = "id"           # field predictions are matched on
    files: dict[str, str] = field(default_factory=dict)  # split -> official file name
    submission_file: str = ""       # name the official format checker requires
    metric: str = ""                # leaderboard metric, as the benchmark names it
    fields: dict[str, str] = field(default_factory=dict)  # codec options (field names, ...)
    public_data: bool = True        # False where the real data are not released
    scorer: str = ""                # metric implementation in cblue_core.metrics.registry.SCORERS
    pred_codec: str = ""            # codec of submission files when their shape differs
    # A plain-language title for people who do not know the benchmark (the clinicians' demo):
    # Chinese first, English beside. Empty where no one has written one: ``plain_title`` then
    # falls back to the description.
    title_zh: str = ""
    title_en: str = ""

    def __post_init__(self) -> None:
        if self.container not in CONTAINER_SHAPES:
            raise ValueError(f"task {self.name}: unknown container {self.container!r}, "
                             f"expected one of {', '.join(CONTAINER_SHAPES)}")

    @property
    def plain_title(self) -> str:
        """'医学实体识别 · Medical entities in a sentence', or the description without a title."""
        if self.title_zh:
            return f"{self.title_zh} · {self.title_en}" if self.title_en else self.title_zh
        return self.description

    @property
    def official_container(self) -> str:
        """The container as readers name it (:attr:`RawFile.container`): array, lines, object, tsv."""
        return CONTAINER_SHAPES[self.container]

    def label(self, code: str) -> Label | None:
        for lab in self.labels:
            if lab.code == code:
                return lab
        return None

    @property
    def label_codes(self) -> tuple[str, ...]:
        return tuple(lab.code for lab in self.labels)

    def display_label(self, code: str) -> str:
        lab = self.label(code)
        return lab.display() if lab else code


def _labels(rows: str) -> tuple[Label, ...]:
    """Parse 'code|zh|en' lines (zh and en optional) into labels."""
    out = []
    for line in rows.strip().splitlines():
        parts = [p.strip() for p in line.split("|")]
        code = parts[0]
        zh = parts[1] if len(parts) > 1 and parts[1] else code
        en = parts[2] if len(parts) > 2 else ""
        out.append(Label(code, zh, en))
    return tuple(out)


def _cblue_files(task: str, ext: str = "json") -> dict[str, str]:
    return {s: f"{task}_{s}.{ext}" for s in ("train", "dev", "test")}


CMEEE_TYPES = _labels("""
dis|疾病|disease
sym|临床表现|clinical manifestation
dru|药物|drug
equ|医疗设备|medical equipment
pro|医疗程序|medical procedure
bod|身体部位|body part
ite|医学检验项目|medical test item
mic|微生物类|microorganism
dep|医院科室|department
""")

CMEIE_PREDICATES = _labels("""
预防||prevention
阶段||stage
就诊科室||department
同义词||synonym
辅助治疗||adjuvant therapy
化疗||chemotherapy
放射治疗||radiotherapy
手术治疗||surgery
实验室检查||laboratory test
影像学检查||imaging
辅助检查||auxiliary examination
组织学检查||histology
内窥镜检查||endoscopy
筛查||screening
多发群体||affected population
发病率||incidence
发病年龄||age of onset
多发地区||affected region
发病性别倾向||sex predilection
死亡率||mortality
多发季节||season
传播途径||transmission
并发症||complication
病理分型||pathological type
相关（导致）||related (causes)
鉴别诊断||differential diagnosis
相关（转化）||related (transforms)
相关（症状）||related (symptom)
临床表现||clinical manifestation
治疗后症状||post-treatment symptom
侵及周围组织转移的症状||invasion symptom
病因||cause
高危因素||risk factor
风险评估因素||risk assessment factor
病史||history
遗传因素||genetic factor
发病机制||pathogenesis
病理生理||pathophysiology
药物治疗||drug therapy
发病部位||site
转移部位||metastasis site
外侵部位||invasion site
预后状况||prognosis
预后生存率||survival rate
""")

CTC_LABELS = _labels("""
Disease|疾病
Symptom|症状(患者感受)
Sign|体征(医生检测）
Pregnancy-related Activity|怀孕相关
Neoplasm Status|肿瘤进展
Non-Neoplasm Disease Stage|疾病分期
Allergy Intolerance|过敏耐受
Organ or Tissue Status|器官组织状态
Life Expectancy|预期寿命
Oral related|口腔相关
Pharmaceutical Substance or Drug|药物
Therapy or Surgery|治疗或手术
Device|设备
Nursing|护理
Diagnostic|诊断
Laboratory Examinations|实验室检查
Risk Assessment|风险评估
Receptor Status|受体状态
Age|年龄
Special Patient Characteristic|特殊病人特征
Literacy|读写能力
Gender|性别
Education|教育情况
Address|居住情况
Ethnicity|种族
Consent|知情同意
Enrollment in other studies|参与其它试验
Researcher Decision|研究者决定
Capacity|能力
Ethical Audit|伦理审查
Compliance with Protocol|依存性
Addictive Behavior|成瘾行为
Bedtime|睡眠
Exercise|锻炼
Diet|饮食
Alcohol Consumer|酒精使用
Sexual related|性取向
Smoking Status|吸烟状况
Blood Donation|献血
Encounter|病例来源
Disabilities|残疾群体
Healthy|健康群体
Data Accessible|数据可及性
Multiple|含有多个类别
""")
# CTC labels are English codes; their display puts the Chinese name first.
CTC_LABELS = tuple(Label(lab.code, lab.zh, lab.code) for lab in CTC_LABELS)

QIC_LABELS = _labels("""
病情诊断||diagnosis
病因分析||cause
治疗方案||method
就医建议||advice
指标解读||metric explain
疾病表述||disease expression
后果表述||result
注意事项||attention
功效作用||effect
医疗费用||price
其他||other
""")

STS_LABELS = _labels("""
0|不同|different meaning
1|相同|same meaning
""")

QTR_LABELS = _labels("""
0|完全不匹配或者没有参考价值|no match
1|很少匹配有一些参考价值|little match
2|部分匹配|partial match
3|完全匹配|full match
""")

QQR_LABELS = _labels("""
0|后者是前者的语义父集或语义无直接关联|broader or unrelated
1|后者是前者的语义子集|narrower
2|完全一致|same meaning
""")

CDEE_TENDENCIES = _labels("""
|肯定|present
不确定||uncertain
否定||negated
""")

IMCS_NER_TYPES = _labels("""
Symptom|症状|symptom
Drug|药物|drug
Drug_Category|药物类别|drug category
Medical_Examination|医学检查检验|medical examination
Operation|医疗操作|operation
""")

IMCS_ACTS = _labels("""
Request-Symptom|关于症状的询问|request symptom
Inform-Symptom|关于症状的回答|inform symptom
Request-Etiology|关于病因的询问|request etiology
Inform-Etiology|关于病因的回答|inform etiology
Request-Basic_Information|关于个人基本信息的询问|request basic information
Inform-Basic_Information|关于个人基本信息的回答|inform basic information
Request-Existing_Examination_and_Treatment|关于已有检查和治疗的提问|request existing examination and treatment
Inform-Existing_Examination_and_Treatment|关于已有检查和治疗的回答|inform existing examination and treatment
Request-Drug_Recommendation|关于用药建议的提问|request drug recommendation
Inform-Drug_Recommendation|关于用药建议的解答|inform drug recommendation
Request-Medical_Advice|关于就医建议的提问|request medical advice
Inform-Medical_Advice|关于就医建议的解答|inform medical advice
Request-Precautions|关于注意事项的提问|request precautions
Inform-Precautions|关于注意事项的解答|inform precautions
Diagnose|给出诊断|diagnose
Other|非上述类型|other
""")

IMCS_SR_VALUES = _labels("""
0|没有患有该症状|absent
1|患有该症状|present
2|无法根据上下文确定病人是否患有该症状|undeterminable
""")

MDCFNPC_ATTRS = _labels("""
阳性|已有症状疾病或者假设未来可能发生的疾病等|positive
阴性|未患有症状疾病|negative
其他|没有回答、不知道、回答不明确或者模棱两可不好推断|other
不标注|无实际意义的不标注或者和病人当前的状态独立不标注|not annotated
""")

MRG_SECTIONS = ("主诉", "现病史", "辅助检查", "既往史", "诊断", "建议")

TEXT2DT_RELATIONS = _labels("""
临床表现||clinical manifestation
治疗药物||drug
用法用量||dosage
治疗方案||treatment
禁用药物||contraindicated drug
基本情况||basic condition
""")

CMEDCAUSAL_RELATIONS = _labels("""
1|因果|causal
2|条件|conditional
3|上下位|hypernym
""")

# PromptCBLUE: task_dataset -> task_type (HEAD 18-task naming; the toy files say CMeIE).
PROMPT_TASKS: dict[str, str] = {
    "CMeEE-V2": "ner",
    "CMeIE-V2": "spo_generation",
    "CHIP-CDN": "normalization",
    "CHIP-CDEE": "event_extraction",
    "IMCS-V2-NER": "ner",
    "CHIP-MDCFNPC": "attr_cls",
    "IMCS-V2-SR": "attr_cls",
    "IMCS-V2-DAC": "cls",
    "IMCS-V2-MRG": "report_generation",
    "CHIP-CTC": "cls",
    "CHIP-STS": "cls",
    "KUAKE-IR": "matching",
    "KUAKE-QIC": "cls",
    "KUAKE-QQR": "matching",
    "KUAKE-QTR": "matching",
    "MedDG": "response_generation",
    "Text2DT": "tree_generation",
    "CMedCausal": "relation_generation",
}
PROMPT_TASK_ALIASES = {"CMeIE": "CMeIE-V2"}  # the older 16-task naming


def canonical_prompt_task(task_dataset: str) -> str:
    return PROMPT_TASK_ALIASES.get(task_dataset, task_dataset)


@dataclass(frozen=True)
class Scenario:
    code: str
    name: str
    dimension: str
    metric: str        # accuracy, kendall_tau, rouge1, similarity
    answer: str        # letter, order, text, keywords
    size: int


CLIMEDBENCH_DIMENSIONS = ("Clinical QA", "Knowledge Application", "Reasoning",
                          "Information Retrieval", "Summarization", "Hallucination", "Toxicity")

CLIMEDBENCH_SCENARIOS: tuple[Scenario, ...] = (
    Scenario("ID1", "In-hospital Diagnosis #1 (examinations)", "Clinical QA", "accuracy", "letter", 2639),
    Scenario("ID2", "In-hospital Diagnosis #2 (primary diagnosis)", "Clinical QA", "accuracy", "letter", 6693),
    Scenario("ID3", "In-hospital Diagnosis #3 (treatment)", "Clinical QA", "accuracy", "letter", 1748),
    Scenario("ID4", "In-hospital Diagnosis #4 (discharge advice)", "Clinical QA", "accuracy", "letter", 2728),
    Scenario("BKT", "Basic Knowledge Test", "Knowledge Application", "accuracy", "letter", 4160),
    Scenario("FIT", "False Info Test", "Hallucination", "similarity", "text", 3003),
    Scenario("FTT", "False Treatment Test", "Hallucination", "accuracy", "letter", 1114),
    Scenario("WTD", "Wrong Treatment Detection", "Toxicity", "similarity", "text", 807),
    Scenario("DS", "Discharge Summary", "Summarization", "accuracy", "letter", 4644),
    Scenario("MC", "Medicine Consultation", "Toxicity", "similarity", "text", 661),
    Scenario("SSO", "Surgical Steps Organization", "Reasoning", "kendall_tau", "order", 472),
    Scenario("CPR", "Clinical Pathway Reasoning", "Reasoning", "kendall_tau", "order", 95),
    Scenario("KE", "Keyword Extraction", "Information Retrieval", "rouge1", "keywords", 713),
    Scenario("CS", "Case Summary", "Summarization", "accuracy", "letter", 320),
)


TASKS: tuple[TaskSpec, ...] = (
    # ---- CBLUE 1.0 -------------------------------------------------------------------------
    TaskSpec(
        name="CMeEE", family=Family.CBLUE1, kind=Kind.SPANS, codec="entities",
        description="Medical named entities (nested), 9 types", labels=CMEEE_TYPES,
        title_zh="医学实体识别", title_en="Medical entities in a sentence",
        container="json", key_field="text", files=_cblue_files("CMeEE"),
        submission_file="CMeEE_test.json", metric="micro-F1 over (sentence, start, end, type)",
        scorer="spans"),
    TaskSpec(
        name="CMeIE", family=Family.CBLUE1, kind=Kind.RELATIONS, codec="spo",
        description="Medical relation (SPO) extraction, 44 predicates, 53 schemas",
        title_zh="医学关系抽取", title_en="Medical relations between entities",
        labels=CMEIE_PREDICATES,
        container="jsonl", key_field="text", files=_cblue_files("CMeIE"),
        submission_file="CMeIE_test.jsonl", metric="micro-F1 over triples", scorer="cmeie_triples"),
    TaskSpec(
        name="CHIP-CDN", family=Family.CBLUE1, kind=Kind.NORMALIZATION, codec="terms",
        description="Diagnosis normalisation to ICD-10 Beijing v601 terms ('##'-joined)",
        title_zh="诊断名称标准化", title_en="Diagnoses mapped to standard ICD-10 terms",
        container="json", key_field="text", files=_cblue_files("CHIP-CDN"),
        submission_file="CHIP-CDN_test.json", metric="micro-F1 over (text, term)", scorer="terms"),
    TaskSpec(
        name="CHIP-CTC", family=Family.CBLUE1, kind=Kind.CLASSIFICATION, codec="single_label",
        description="Clinical-trial eligibility criterion classification, 44 classes",
        title_zh="临床试验筛选条件分类", title_en="Type of a clinical-trial criterion",
        labels=CTC_LABELS,
        container="json", files=_cblue_files("CHIP-CTC"), submission_file="CHIP-CTC_test.json",
        metric="macro-F1", fields={"text": "text"}, scorer="macro_f1"),
    TaskSpec(
        name="CHIP-STS", family=Family.CBLUE1, kind=Kind.PAIR, codec="pair_label",
        description="Medical question-pair similarity", labels=STS_LABELS,
        title_zh="医学问句相似判断", title_en="Do two questions ask the same thing?",
        container="json", files=_cblue_files("CHIP-STS"), submission_file="CHIP-STS_test.json",
        metric="macro-F1", fields={"text": "text1", "text2": "text2", "extra": "category"},
        scorer="macro_f1"),
    TaskSpec(
        name="KUAKE-QIC", family=Family.CBLUE1, kind=Kind.CLASSIFICATION, codec="single_label",
        description="Search-query intent classification, 11 classes", labels=QIC_LABELS,
        title_zh="搜索意图识别", title_en="What a health search query asks for",
        container="json", files=_cblue_files("KUAKE-QIC"), submission_file="KUAKE-QIC_test.json",
        metric="accuracy", fields={"text": "query"}, scorer="accuracy"),
    TaskSpec(
        name="KUAKE-QTR", family=Family.CBLUE1, kind=Kind.PAIR, codec="pair_label",
        description="Query-title relevance, 4 levels", labels=QTR_LABELS,
        title_zh="搜索词与标题相关度", title_en="How well a page title answers a query",
        container="json", files=_cblue_files("KUAKE-QTR"), submission_file="KUAKE-QTR_test.json",
        metric="accuracy", fields={"text": "query", "text2": "title"}, scorer="accuracy"),
    TaskSpec(
        name="KUAKE-QQR", family=Family.CBLUE1, kind=Kind.PAIR, codec="pair_label",
        description="Query-query relevance, 3 classes", labels=QQR_LABELS,
        title_zh="搜索词关系判断", title_en="How two health search queries relate",
        container="json", files=_cblue_files("KUAKE-QQR"), submission_file="KUAKE-QQR_test.json",
        metric="accuracy", fields={"text": "query1", "text2": "query2"}, scorer="accuracy"),
    # ---- CBLUE 2.0 -------------------------------------------------------------------------
    TaskSpec(
        name="CMeEE-V2", family=Family.CBLUE2, kind=Kind.SPANS, codec="entities",
        description="Medical named entities, version 2 (same format; some copies use exclusive ends)",
        labels=CMEEE_TYPES,
        container="json", key_field="text", files=_cblue_files("CMeEE-V2"),
        submission_file="CMeEE-V2_test.json", metric="micro-F1 over (sentence, start, end, type)",
        scorer="spans"),
    TaskSpec(
        name="CMeIE-V2", family=Family.CBLUE2, kind=Kind.RELATIONS, codec="spo",
        description="Medical relation extraction, version 2", labels=CMEIE_PREDICATES,
        container="jsonl", key_field="text", files=_cblue_files("CMeIE-V2", "jsonl"),
        submission_file="CMeIE-V2_test.jsonl", metric="micro-F1 over triples", scorer="cmeie_triples"),
    TaskSpec(
        name="CHIP-CDEE", family=Family.CBLUE2, kind=Kind.EVENTS, codec="events",
        description="Clinical finding events: core word, tendency, descriptors, anatomy",
        labels=CDEE_TENDENCIES,
        container="json", files=_cblue_files("CHIP-CDEE"), submission_file="CHIP-CDEE_test.json",
        metric="micro-F1 over events", scorer="events"),
    TaskSpec(
        name="IMCS-V2-NER", family=Family.CBLUE2, kind=Kind.DIALOGUE, codec="imcs",
        description="Named entities in doctor-patient dialogues (BIO per character)",
        labels=IMCS_NER_TYPES,
        container="dialogs", key_field="dialog_id", files=_cblue_files("IMCS-V2"),
        submission_file="IMCS-V2-NER_test.json", metric="micro-F1 over entities",
        fields={"view": "ner"}, pred_codec="imcs_prediction", scorer="dialogue_spans"),
    TaskSpec(
        name="IMCS-V2-DAC", family=Family.CBLUE2, kind=Kind.DIALOGUE, codec="imcs",
        description="Dialogue act classification, 16 acts", labels=IMCS_ACTS,
        container="dialogs", key_field="dialog_id", files=_cblue_files("IMCS-V2"),
        submission_file="IMCS-V2-DAC_test.json", metric="accuracy / macro-F1",
        fields={"view": "dac"}, pred_codec="imcs_prediction", scorer="dialogue_acts"),
    TaskSpec(
        name="IMCS-V2-SR", family=Family.CBLUE2, kind=Kind.DIALOGUE, codec="imcs",
        description="Symptom recognition: normalised symptoms with status 0/1/2",
        labels=IMCS_SR_VALUES,
        container="dialogs", key_field="dialog_id", files=_cblue_files("IMCS-V2"),
        submission_file="IMCS-V2-SR_test.json", metric="micro-F1 over (symptom, status)",
        fields={"view": "sr"}, pred_codec="imcs_prediction", scorer="dialogue_symptoms"),
    TaskSpec(
        name="IMCS-V2-MRG", family=Family.CBLUE2, kind=Kind.DIALOGUE, codec="imcs",
        description="Medical report generation from a dialogue (6 sections)",
        labels=tuple(Label(s, s, "") for s in MRG_SECTIONS),
        container="dialogs", key_field="dialog_id", files=_cblue_files("IMCS-V2"),
        submission_file="IMCS-V2-MRG_test.json", metric="ROUGE-L",
        fields={"view": "mrg"}, pred_codec="imcs_prediction", scorer="report_rouge"),
    TaskSpec(
        name="CHIP-MDCFNPC", family=Family.CBLUE2, kind=Kind.DIALOGUE, codec="mdcfnpc",
        description="Positivity of clinical findings in dialogues", labels=MDCFNPC_ATTRS,
        container="jsonl", key_field="dialog_id", files=_cblue_files("CHIP-MDCFNPC", "jsonl"),
        submission_file="CHIP-MDCFNPC_test.jsonl", metric="micro-F1 over (finding, attribute)",
        scorer="dialogue_spans"),
    TaskSpec(
        name="KUAKE-IR", family=Family.CBLUE2, kind=Kind.RETRIEVAL, codec="retrieval",
        description="Passage retrieval for search queries (10 ranked passages)",
        container="tsv", key_field="query_id",
        files={s: f"KUAKE-IR_{s}.tsv" for s in ("train", "dev", "test")},
        submission_file="KUAKE-IR_test.tsv", metric="MRR@10", scorer="mrr10",
        pred_codec="retrieval_prediction"),
    TaskSpec(
        name="MedDG", family=Family.CBLUE2, kind=Kind.GENERATION, codec="dialogue_generation",
        description="Next doctor utterance in a medical dialogue",
        container="json", files=_cblue_files("MedDG"),
        submission_file="MedDG_test.json", metric="BLEU / ROUGE", scorer="generation_rouge"),
    TaskSpec(
        name="Text2DT", family=Family.CBLUE2, kind=Kind.TREE, codec="tree",
        description="Medical decision trees from guideline text", labels=TEXT2DT_RELATIONS,
        container="json", key_field="text", files=_cblue_files("Text2DT"),
        submission_file="Text2DT_test.json", metric="tree edit ratio", scorer="text2dt"),
    TaskSpec(
        name="CMedCausal", family=Family.CBLUE2, kind=Kind.RELATIONS, codec="causal",
        description="Causal, conditional and hypernym relations between mentions",
        labels=CMEDCAUSAL_RELATIONS,
        container="json", key_field="text", files=_cblue_files("CMedCausal"),
        submission_file="CMedCausal_test.json", metric="micro-F1 over triples",
        scorer="causal_triples"),
    # ---- PromptCBLUE -----------------------------------------------------------------------
    TaskSpec(
        name="PromptCBLUE", family=Family.PROMPTCBLUE, kind=Kind.PROMPT, codec="prompt",
        description="CBLUE rebuilt as LLM prompts (18 tasks; older 16-task naming accepted)",
        labels=tuple(Label(t, t, PROMPT_TASKS[t]) for t in PROMPT_TASKS),
        container="jsonl", key_field="sample_id",
        files={"train": "train.json", "dev": "dev.json", "test": "test.json"},
        submission_file="test_predictions.json", metric="mean of 18 task scores x100",
        scorer="promptcblue"),
    # ---- CliMedBench -----------------------------------------------------------------------
    TaskSpec(
        name="CliMedBench", family=Family.CLIMEDBENCH, kind=Kind.MULTIPLE_CHOICE, codec="climedbench",
        description="Clinical multiple-choice, ordering and open questions (14 scenarios, "
                    "7 dimensions); the questions are not public: files users bring in the "
                    "documented shape",
        labels=tuple(Label(s.code, s.name, s.dimension) for s in CLIMEDBENCH_SCENARIOS),
        container="jsonl", key_field="id",
        files={"test": "CliMedBench.jsonl"}, submission_file="CliMedBench_predictions.jsonl",
        metric="accuracy / Kendall tau / ROUGE-1 / similarity", public_data=False,
        scorer="climedbench", pred_codec="climedbench_prediction"),
)

REGISTRY: dict[str, TaskSpec] = {t.name: t for t in TASKS}


class UnknownTaskError(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


def get_task(name: str) -> TaskSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        known = ", ".join(REGISTRY)
        raise UnknownTaskError(f"unknown task {name!r}; known tasks: {known}") from None


_SPLIT_RE = re.compile(r"[_.-](train|dev|test|val|valid)\b", re.IGNORECASE)


def infer_task(path: str | Path) -> TaskSpec | None:
    """The task a file name points to (CMeEE_dev.json -> CMeEE), longest name first."""
    name = Path(path).name
    stem = name.lower()
    for task in sorted(TASKS, key=lambda t: -len(t.name)):
        tname = task.name.lower()
        if stem.startswith(tname) and (len(stem) == len(tname) or not stem[len(tname)].isalnum()
                                       or stem[len(tname):].startswith("_")):
            # "CMeEE-V2_dev" must not match CMeEE: the longer name is tried first.
            return task
    if stem.startswith("imcs-v2"):
        return REGISTRY["IMCS-V2-NER"]
    parent = Path(path).parent.name
    # Files such as CMeEE/example_gold.json are named after their task folder.
    return REGISTRY.get(parent) if parent != name else None


def infer_tasks(path: str | Path) -> list[TaskSpec]:
    """Every task a file serves: IMCS-V2_dev.json holds the dialogues of the four IMCS-V2 tasks."""
    name = Path(path).name
    shared = [t for t in TASKS if name in t.files.values()]
    if len(shared) > 1:
        return shared
    one = infer_task(path)
    return [one] if one else []


def infer_split(path: str | Path) -> str | None:
    m = _SPLIT_RE.search(Path(path).name)
    if not m:
        return None
    s = m.group(1).lower()
    return {"val": "dev", "valid": "dev"}.get(s, s)


def tasks_by_family() -> dict[Family, list[TaskSpec]]:
    out: dict[Family, list[TaskSpec]] = {}
    for t in TASKS:
        out.setdefault(t.family, []).append(t)
    return out
