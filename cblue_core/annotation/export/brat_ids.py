"""brat type names: the fixed ASCII ids of CMeIE's entity types and predicates, the 53 CMeIE
schemas, and the reversible ``X_`` + hex id of any other name."""
from __future__ import annotations

import re

# brat stores type names in the .ann files and the configuration, where they must match
# [A-Za-z0-9_-]+ (brat's "storage form"); the Chinese names go to visual.conf as display labels.
# The ids are fixed here, so that an export reads the same whatever the data or the registry:
#
# - CMeEE entity types are ASCII codes already (dis, sym, ...): kept as they are.
# - CMeIE entity types: E + two digits (in the order the types first appear in the official
#   53_schemas.json) + an English gloss.
# - CMeIE predicates: P + two digits (the order of the official 53_schemas.json, which the task
#   registry follows) + the registry's English gloss.
# - Any other name that is not valid ASCII (a type an annotator added, an empty type): X_ + the
#   hex of its UTF-8 bytes (疾患 -> X_e796bee682a3, "" -> X_), which decodes back exactly.
CMEIE_TYPE_IDS: dict[str, str] = {
    "疾病": "E01_disease", "其他": "E02_other", "其他治疗": "E03_other_treatment",
    "手术治疗": "E04_surgical_treatment", "检查": "E05_examination", "流行病学": "E06_epidemiology",
    "症状": "E07_symptom", "社会学": "E08_sociology", "药物": "E09_drug", "部位": "E10_site",
    "预后": "E11_prognosis",
}
# (predicate, brat id, object type): the subject type is 疾病 except for 同义词, which links two
# mentions of the same type (CMEIE_SYNONYM_TYPES); together the 53 schemas.
_CMEIE_PREDICATES: tuple[tuple[str, str, str], ...] = (
    ("预防", "P01_prevention", "其他"),
    ("阶段", "P02_stage", "其他"),
    ("就诊科室", "P03_department", "其他"),
    ("同义词", "P04_synonym", ""),
    ("辅助治疗", "P05_adjuvant_therapy", "其他治疗"),
    ("化疗", "P06_chemotherapy", "其他治疗"),
    ("放射治疗", "P07_radiotherapy", "其他治疗"),
    ("手术治疗", "P08_surgery", "手术治疗"),
    ("实验室检查", "P09_laboratory_test", "检查"),
    ("影像学检查", "P10_imaging", "检查"),
    ("辅助检查", "P11_auxiliary_examination", "检查"),
    ("组织学检查", "P12_histology", "检查"),
    ("内窥镜检查", "P13_endoscopy", "检查"),
    ("筛查", "P14_screening", "检查"),
    ("多发群体", "P15_affected_population", "流行病学"),
    ("发病率", "P16_incidence", "流行病学"),
    ("发病年龄", "P17_age_of_onset", "流行病学"),
    ("多发地区", "P18_affected_region", "流行病学"),
    ("发病性别倾向", "P19_sex_predilection", "流行病学"),
    ("死亡率", "P20_mortality", "流行病学"),
    ("多发季节", "P21_season", "流行病学"),
    ("传播途径", "P22_transmission", "流行病学"),
    ("并发症", "P23_complication", "疾病"),
    ("病理分型", "P24_pathological_type", "疾病"),
    ("相关（导致）", "P25_related_causes", "疾病"),
    ("鉴别诊断", "P26_differential_diagnosis", "疾病"),
    ("相关（转化）", "P27_related_transforms", "疾病"),
    ("相关（症状）", "P28_related_symptom", "疾病"),
    ("临床表现", "P29_clinical_manifestation", "症状"),
    ("治疗后症状", "P30_post_treatment_symptom", "症状"),
    ("侵及周围组织转移的症状", "P31_invasion_symptom", "症状"),
    ("病因", "P32_cause", "社会学"),
    ("高危因素", "P33_risk_factor", "社会学"),
    ("风险评估因素", "P34_risk_assessment_factor", "社会学"),
    ("病史", "P35_history", "社会学"),
    ("遗传因素", "P36_genetic_factor", "社会学"),
    ("发病机制", "P37_pathogenesis", "社会学"),
    ("病理生理", "P38_pathophysiology", "社会学"),
    ("药物治疗", "P39_drug_therapy", "药物"),
    ("发病部位", "P40_site", "部位"),
    ("转移部位", "P41_metastasis_site", "部位"),
    ("外侵部位", "P42_invasion_site", "部位"),
    ("预后状况", "P43_prognosis", "预后"),
    ("预后生存率", "P44_survival_rate", "预后"),
)
CMEIE_PREDICATE_IDS: dict[str, str] = {p: pid for p, pid, _ in _CMEIE_PREDICATES}
CMEIE_SYNONYM_TYPES = ("其他", "其他治疗", "手术治疗", "检查", "流行病学", "疾病", "症状", "社会学", "药物",
                       "部位")
# The 53 (subject_type, predicate, object_type) schemas of CMeIE.
CMEIE_SCHEMAS: tuple[tuple[str, str, str], ...] = tuple(
    schema for p, _, o in _CMEIE_PREDICATES
    for schema in ([("疾病", p, o)] if o else [(t, p, t) for t in CMEIE_SYNONYM_TYPES]))

# Entity types and predicates have their own ids (手术治疗 is both: E04_surgical_treatment and
# P08_surgery); the ids themselves never collide, so one table reads both back.
_BRAT_NAMES = {v: k for k, v in [*CMEIE_TYPE_IDS.items(), *CMEIE_PREDICATE_IDS.items()]}
_BRAT_STORAGE = re.compile(r"[A-Za-z0-9_-]+")
_BRAT_HEX = re.compile(r"X_((?:[0-9a-f]{2})*)")
# brat's reserved names (special relation types, macros) cannot be type names.
_BRAT_RESERVED = {"ENTITY-NESTING", "Equiv", "Arg", "Arg1", "Arg2", "Value", "Combined"}
BRAT_OVERLAP = "<OVERLAP>\tArg1:<ENTITY>, Arg2:<ENTITY>, <OVL-TYPE>:<ANY>"


def brat_type_id(name: str, predicate: bool = False) -> str:
    """The brat type name of an entity type (or, with ``predicate``, a relation type): CMeIE's
    fixed ids (see the tables above), an ASCII name as it is, anything else ``X_`` + the hex of
    its UTF-8 bytes (a lone surrogate included), so any name is safe in brat's files."""
    fixed = CMEIE_PREDICATE_IDS if predicate else CMEIE_TYPE_IDS
    if name in fixed:
        return fixed[name]
    if (_BRAT_STORAGE.fullmatch(name) and name not in _BRAT_NAMES and not _BRAT_HEX.fullmatch(name)
            and name not in _BRAT_RESERVED):
        return name
    return "X_" + name.encode("utf-8", "surrogatepass").hex()


def brat_type_name(type_id: str) -> str:
    """The type or predicate a brat type name stands for (the inverse of :func:`brat_type_id`;
    a name it did not make, e.g. a Chinese type in an older export, is returned as it is)."""
    if type_id in _BRAT_NAMES:
        return _BRAT_NAMES[type_id]
    m = _BRAT_HEX.fullmatch(type_id)
    if m:
        try:
            return bytes.fromhex(m.group(1)).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return type_id
    return type_id
