"""A real `streamlit run` of the app (``app.py`` or ``serve.py``) on a workspace file, for the
tests that need a server rather than AppTest: started on a free port, returned once its health
check answers."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db, log_path, script: str = "app.py") -> tuple[subprocess.Popen, str]:
    """``streamlit run script`` on ``db``, its output in ``log_path``: (process, base URL)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env["CBLUE_STUDIO_DB"] = str(db)
    log = open(log_path, "w")  # noqa: SIM115 - open for the server's lifetime
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.headless=true",
                             f"--server.port={port}", "--server.address=127.0.0.1"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).status == 200:
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError(f"streamlit did not start: {Path(log_path).read_text()[-2000:]}")
