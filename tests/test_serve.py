"""``streamlit run serve.py`` checks the sign-in settings while the server starts: unusable ones
stop it with their reason instead of greeting every visitor with it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.browser.conftest import _free_port

ROOT = Path(__file__).resolve().parents[1]


def test_a_proxy_mode_without_its_secret_stops_the_server_at_start(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMLIT_", "CBLUE_STUDIO_"))}
    env.update(CBLUE_STUDIO_DB=str(tmp_path / "ws.duckdb"), CBLUE_STUDIO_AUTH="proxy",
               CBLUE_STUDIO_USER_HEADER="X-Remote-User")
    done = subprocess.run([sys.executable, "-m", "streamlit", "run", "serve.py", "--server.headless=true",
                           f"--server.port={_free_port()}", "--server.address=127.0.0.1"],
                          check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    out = done.stdout + done.stderr
    assert "CBLUE_STUDIO_AUTH=proxy needs $CBLUE_STUDIO_PROXY_SECRET" in out
    assert "startup failed" in out
    assert not (tmp_path / "ws.duckdb").exists()
