"""Live page under AppTest with a tiny local checkpoint (a user model folder): normal mode,
demo mode, the identifier warning."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_pages.live_page.inputs import CURATED, DATASET
from tests.app_pages.conftest import APP, html_of

QIC = ["病情诊断", "病因分析", "治疗方案", "就医建议", "指标解读", "疾病表述", "后果表述", "注意事项",
       "功效作用", "医疗费用", "其他"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("models") / "tiny-qic"
    chars = sorted(set("糖尿病人能喝牛奶吗头痛怎么办感冒发烧吃什么药患者身份证号电话住院"
                       "0123456789X，。？"))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars
    tok = BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=False)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=128, num_labels=len(QIC),
                        id2label=dict(enumerate(QIC)), label2id={l: i for i, l in enumerate(QIC)})
    config.cblue_task = "KUAKE-QIC"
    BertForSequenceClassification(config).save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    return folder.parent


@pytest.fixture
def live(app, model_dir, monkeypatch):
    monkeypatch.setenv("CBLUE_STUDIO_MODELS", str(model_dir))

    def open_live(query=None) -> AppTest:
        at = app(query)
        at.run()
        at.switch_page("pages/live.py")
        for k, v in (query or {}).items():
            at.query_params[k] = v
        return at.run()
    return open_live


def choose_tiny(at: AppTest) -> AppTest:
    at.selectbox(key="live_task").set_value("KUAKE-QIC").run()
    at.selectbox(key="live_model").set_value("tiny-qic").run()
    return at


def test_predicts_typed_text(live):
    at = choose_tiny(live())
    assert not at.exception, at.exception
    at.text_area(key="live_text").input("糖尿病人能喝牛奶吗？").run()
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error
    labels = {m.label for m in at.metric}
    assert {"Latency / 耗时", "Device / 设备"} <= labels
    body = html_of(at)
    assert "糖尿病人能喝牛奶吗" in body
    assert any(label in body for label in QIC)


def test_dataset_example_shows_gold_beside_prediction(live):
    at = choose_tiny(live())
    at.radio(key="live_source").set_value(DATASET).run()
    assert "待分析文本" in html_of(at) and "无实体" not in html_of(at)   # the text, no result yet
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error
    body = html_of(at)                            # the result replaces the text: drawn once
    assert len(at.get("html")) == 1 and "标准答案 / Gold" in body and "待分析文本" not in body


def test_demo_mode_notice_and_no_json(live):
    at = choose_tiny(live({"demo": "1"}))
    assert at.toggle(key="live_demo").value
    assert any("not for clinical use" in w.value for w in at.warning)
    at.radio(key="live_source").set_value(CURATED).run()
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error
    assert not at.json and not at.get("code")


def test_identifier_warning_blocks_until_confirmed(live):
    at = choose_tiny(live({"demo": "1"}))
    at.text_area(key="live_text").input("患者身份证号11010519491231002X，电话13812345678，头痛怎么办").run()
    assert any("patient identifiers" in w.value for w in at.warning)
    assert at.button(key="live_run").disabled
    at.checkbox(key="live_confirm").check().run()
    assert not at.button(key="live_run").disabled


def test_missing_model_folder_is_a_message(app, monkeypatch, tmp_path):
    monkeypatch.setenv("CBLUE_STUDIO_MODELS", str(tmp_path / "nowhere"))
    at = app()
    at.run()
    at.switch_page("pages/live.py").run()
    assert not at.exception and not at.error
    warning, = [w.value for w in at.warning]
    assert "folder not found" in warning and "nowhere" in warning
    # the built-in models stay usable beside the broken folder
    assert len(at.selectbox(key="live_task").options) == 8


@pytest.mark.skipif(not (Path(APP).parent / "models" / "cmeie" / "model_card.json").is_file(),
                    reason="the built-in CMeIE model is not in this checkout")
def test_builtin_relation_model_shows_triples_with_scores(live):
    at = live()
    at.selectbox(key="live_task").set_value("CMeIE").run()
    at.selectbox(key="live_model").set_value("cmeie").run()
    at.text_area(key="live_text").input("肺炎@肺炎患者常见发热、咳嗽和胸痛，可用阿莫西林治疗。").run()
    at.button(key="live_run").click().run()
    assert not at.exception and not at.error
    body = html_of(at)                            # the text is cut into marked mentions
    assert "肺炎" in body and "发热" in body and "常见" in body
    assert not at.dataframe                       # the triples once: in the rendered table
    assert body.count("<table class=\"cbr-tab cbr-rl-tab\">") == 1
    scores, = [c.value for c in at.caption if c.value.startswith("Model scores of the predicted triples")]
    numbers = [float(part.split()[1]) for part in scores.split(": ", 1)[1].split(" · ")]
    assert numbers and all(0 < n <= 1 for n in numbers)


def test_demo_is_a_clean_surface(live):
    at = live({"demo": "1"})
    assert not at.exception
    # no developer controls: workspace, device, model folders, author name
    assert not [w for w in at.text_input if w.key in ("db_path", "model_dirs", "user_name")]
    assert not [w for w in at.selectbox if w.key == "device"]
    assert not at.metric                                         # no latency or load figures
    assert at.selectbox(key="live_task").value == "CMeEE"        # opens on nested entities


def test_live_opens_on_cmeee(live):
    at = live()
    assert at.selectbox(key="live_task").value == "CMeEE"


def test_demo_curated_cases_follow_the_rule_and_marks_show(live, workspace_file):
    from app_pages.common import shared_workspace
    from cblue_core.analysis.curation import curated_indices
    from cblue_core.models.provenance import overlapping, read_training_records

    at = live({"demo": "1"})
    at.radio(key="live_source").set_value(CURATED).run()
    options = at.selectbox(key="live_example").options
    ws = shared_workspace(str(workspace_file)).cursor()     # the app's own connection to the file
    dev = ws.datasets.find("CMeEE", "dev")
    examples = ws.datasets.examples(dev.dataset_id)
    records = read_training_records(Path(APP).parent / "models" / "cmeee")
    seen = {examples[i].index for i in overlapping(examples, records or frozenset())}
    expected = curated_indices(examples, exclude=seen)
    texts = ws.datasets.texts(dev.dataset_id, expected)
    assert options == [f"{n}. {texts[i][:60]}" for n, i in enumerate(expected, start=1)] and expected
    assert "无实体" not in html_of(at)                           # no result before a prediction
    assert "待分析文本" in html_of(at)
    at.button(key="live_run").click().run()
    assert not at.exception
    verdicts = [m.value for m in at.success] + [m.value for m in at.warning if "gold" in m.value]
    assert any("matches the gold" in v or "differs from the gold" in v for v in verdicts)
    assert "cbr-m-" in html_of(at)                               # right and wrong marked on spans


def test_demo_switch_gives_the_same_surface_as_the_url(live):
    at = live()
    assert at.text_input(key="db_path")                          # the developer sidebar
    at.toggle(key="live_demo").set_value(True).run()
    assert not at.exception and at.query_params["demo"] in ("1", ["1"])
    assert not [w for w in at.text_input if w.key in ("db_path", "model_dirs", "user_name")]
    assert not at.sidebar.get("page_link")                      # no navigation either
    at.toggle(key="live_demo").set_value(False).run()
    assert "demo" not in at.query_params and at.text_input(key="db_path")


def test_demo_names_read_as_a_product(live):
    at = live({"demo": "1"})
    task = at.selectbox(key="live_task")
    assert task.format_func("CMeEE") == "医学实体识别 · Medical entities in a sentence · CMeEE"
    model = at.selectbox(key="live_model")
    assert model.format_func(model.value) == "内置模型 · built-in model (cmeee)"
    at.radio(key="live_source").set_value(CURATED).run()
    captions = " ".join(c.value for c in at.caption)
    assert "seed-0" not in captions and "模型训练时未见过" in captions


def test_text_in_the_models_training_records_is_marked(live, model_dir):
    from cblue_core.models.provenance import write_training_records
    from cblue_core.records import Example

    write_training_records(model_dir / "tiny-qic", [Example(key="t", index=0, text="头痛怎么办")],
                           sources=["a test record"])
    at = choose_tiny(live())
    at.text_area(key="live_text").input("头痛怎么办").run()
    assert [i for i in at.info if "trained on this text" in i.value]
    at.text_area(key="live_text").input("感冒发烧吃什么药").run()
    assert not [i for i in at.info if "trained on this text" in i.value]
