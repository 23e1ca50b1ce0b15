"""A real Streamlit server on a free port with a throwaway workspace, and Debian's Chromium."""
from __future__ import annotations

import functools
import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "test-output"  # pytest-playwright empties its own test-results/ folder


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server(db: Path, log_dir: Path, **env_extra: str) -> Iterator[str]:
    """`streamlit run app.py` on workspace ``db`` on a free port, while inside; yields its base URL."""
    port = _free_port()
    env = dict(os.environ, CBLUE_STUDIO_DB=str(db), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", **env_extra)
    log = open(log_dir / "streamlit.log", "w")  # noqa: SIM115 - open for the server's lifetime
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true",
         f"--server.port={port}", "--server.address=127.0.0.1", "--server.fileWatcherType=none"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited: {Path(log.name).read_text()}")
        else:
            raise RuntimeError("streamlit did not start in 90 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """Start `streamlit run app.py` on the sample workspace; yield its base URL."""
    db = tmp_path_factory.mktemp("browser") / "workspace.duckdb"
    _prepare_workspace(db)
    models = tmp_path_factory.mktemp("models")
    _tiny_classifier(models / "tiny-qic")
    with streamlit_server(db, tmp_path_factory.mktemp("log"), CBLUE_STUDIO_MODELS=str(models)) as url:
        yield url


def _prepare_workspace(db: Path) -> None:
    """Sample data plus imported runs, CMeEE (run 1) and CMeIE (run 2, many predicates), written
    before the server opens the file."""
    from cblue_core.runs.record import import_run
    from cblue_core.store.ingest import bootstrap_sample_data
    from cblue_core.store.workspace import connect

    ws = connect(db)
    bootstrap_sample_data(ws, ROOT / "sample_data")
    for task in ("CMeEE", "CMeIE"):
        did = ws.datasets.find(task, "dev").dataset_id
        import_run(ws, did, ROOT / f"sample_data/cblue/{task}/{task}_dev.pred.json", name="sample model")
    ws.close()


def _tiny_classifier(folder: Path) -> None:
    """A tiny KUAKE-QIC checkpoint (random weights), so the Live page has a model to run even
    where the built-in models are absent."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    from cblue_core.tasks import get_task

    labels = list(get_task("KUAKE-QIC").label_codes)
    chars = sorted(set("糖尿病人能喝牛奶吗头痛怎么办感冒发烧吃什么药患者咳嗽三天伴发热，。？"))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars
    tok = BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=False)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=128, num_labels=len(labels),
                        id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)})
    config.cblue_task = "KUAKE-QIC"
    BertForSequenceClassification(config).save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)


@pytest.fixture(scope="session")
def browser():
    path = _chromium()
    if path is None:
        pytest.skip("no chromium on this machine: apt-get install chromium chromium-driver fonts-noto-cjk")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, headless=True,
                               args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
    pg = context.new_page()
    yield pg
    context.close()


@pytest.fixture(scope="session")
def frontend_url():
    """The span editor's frontend files served as Streamlit serves them (no app): its index.html."""
    frontend = ROOT / "app_pages/components/span_editor/frontend"
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(frontend))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    server.shutdown()


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT
