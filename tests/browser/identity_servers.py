"""Real servers for the sign-in tests: Streamlit in a given identity mode, Debian's nginx run from
a temporary prefix on a free port (no system file or port touched), and the npm OpenID Connect
provider."""
from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.browser.conftest import _free_port

ROOT = Path(__file__).resolve().parents[2]
NGINX_CONF = ROOT / "docs/deploy/nginx-proxy.conf"
OIDC_PACKAGE = Path(__file__).with_name("oidc")
# Where .ci/run installs the provider (npm ci); the test installs it there itself when missing.
OIDC_MODULES = Path(os.environ.get("CBLUE_STUDIO_NPM_CACHE", Path.home() / ".cache/cblue-studio/oidc"))


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if found is None:
        pytest.skip("no nginx on this machine: apt-get install nginx")
    return found


def wait_http(url: str, proc: subprocess.Popen, log: Path, seconds: float = 90) -> None:
    """Until ``url`` answers at all (any HTTP status), or fail with the server's log."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.3)
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited: {log.read_text()}")
    raise RuntimeError(f"{url} did not answer in {seconds:.0f} s: {log.read_text()}")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def streamlit(db: Path, folder: Path, env: dict[str, str], *args: str,
              port: int | None = None) -> Iterator[tuple[str, int]]:
    """``streamlit run app.py`` on 127.0.0.1 (``port`` or a free one) with ``env`` added; yields
    (url, port)."""
    port = port or _free_port()
    log = folder / "streamlit.log"
    full = {k: v for k, v in os.environ.items() if not k.startswith(("STREAMLIT_", "CBLUE_STUDIO_"))}
    full.update(CBLUE_STUDIO_DB=str(db), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", **env)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless=true",
             f"--server.port={port}", "--server.address=127.0.0.1", "--server.fileWatcherType=none", *args],
            cwd=ROOT, env=full, stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_http(f"{url}/_stcore/health", proc, log)
            yield url, port
        finally:
            stop(proc)


def write_htpasswd(path: Path, users: dict[str, str]) -> None:
    """The password file nginx reads, made as the README says (``htpasswd`` from apache2-utils),
    or, without that tool, with salted SHA-1 lines ({SSHA}) written here. Names and passwords
    are UTF-8 either way, as a UTF-8 terminal hands them to ``htpasswd`` and as browsers send
    Basic credentials: nginx compares the bytes."""
    tool = shutil.which("htpasswd")
    if tool is None:
        path.write_bytes(htpasswd(users))
        return
    path.unlink(missing_ok=True)
    for name, password in users.items():
        subprocess.run([tool, "-i", *(["-c"] if not path.exists() else []), str(path), name],
                       input=password.encode("utf-8"), check=True, capture_output=True, timeout=30)


def htpasswd(users: dict[str, str]) -> bytes:
    """An htpasswd file's bytes, salted SHA-1 ({SSHA}), with no Apache tools."""
    lines = []
    for name, password in users.items():
        salt = os.urandom(8)
        digest = hashlib.sha1(password.encode("utf-8") + salt).digest()
        lines.append(f"{name}:{{SSHA}}{base64.b64encode(digest + salt).decode()}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def deploy_conf(listen: int, upstream: int, htpasswd_file: Path, secret: str) -> str:
    """docs/deploy/nginx-proxy.conf as the README shows it, with this test's ports, password file
    and secret in place of the documented ones (each must occur exactly once)."""
    text = NGINX_CONF.read_text()
    for documented, here in (("listen 8080;", f"listen 127.0.0.1:{listen};"),
                             ("http://127.0.0.1:8501;", f"http://127.0.0.1:{upstream};"),
                             ("/etc/nginx/cblue-studio.htpasswd", str(htpasswd_file)),
                             ('"change-me-to-CBLUE_STUDIO_PROXY_SECRET"', f'"{secret}"')):
        assert text.count(documented) == 1, documented
        text = text.replace(documented, here)
    return text


@contextmanager
def nginx(prefix: Path, upstream: int, users: dict[str, str], secret: str) -> Iterator[str]:
    """Debian's nginx serving the documented config in front of ``upstream``; yields its URL."""
    binary = nginx_binary()
    port = _free_port()
    write_htpasswd(prefix / "htpasswd", users)
    (prefix / "cblue-studio.conf").write_text(deploy_conf(port, upstream, prefix / "htpasswd", secret))
    # As root, nginx's workers would switch to "nobody", who cannot read pytest's private folders.
    user = "user root;" if os.geteuid() == 0 else ""
    (prefix / "nginx.conf").write_text(f"""
{user}
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log info;
events {{ worker_connections 128; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    include {prefix}/cblue-studio.conf;
}}
""")
    log = prefix / "nginx.out"
    with open(log, "w") as out:
        proc = subprocess.Popen([binary, "-p", str(prefix), "-c", str(prefix / "nginx.conf"),
                                 "-e", str(prefix / "error.log")], stdout=out, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_http(url, proc, log, seconds=20)
            yield url
        finally:
            stop(proc)


def oidc_modules() -> Path:
    """The provider's node_modules, installed with ``npm ci`` from the pinned lock file if absent."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("no node/npm on this machine: apt-get install nodejs npm")
    lock = (OIDC_PACKAGE / "package-lock.json").read_bytes()
    stamp = OIDC_MODULES / ".lock-installed"
    if not stamp.exists() or stamp.read_bytes() != lock:
        OIDC_MODULES.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(OIDC_PACKAGE / name, OIDC_MODULES / name)
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=OIDC_MODULES, check=True, timeout=300)
        stamp.write_bytes(lock)
    return OIDC_MODULES / "node_modules"


@contextmanager
def oidc_provider(folder: Path, email: str) -> Iterator[str]:
    """oauth2-mock-server (npm) on a free port, signing every visitor in as ``email``; yields its
    issuer URL."""
    modules = oidc_modules()
    # An ES module finds packages beside itself only (NODE_PATH is ignored): run it from there.
    script = shutil.copyfile(OIDC_PACKAGE / "provider.mjs", modules.parent / "provider.mjs")
    port = _free_port()
    log = folder / "oidc.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(["node", str(script), str(port), email],
                                cwd=modules.parent, stdout=out, stderr=subprocess.STDOUT)
        try:
            issuer = f"http://127.0.0.1:{port}"
            wait_http(f"{issuer}/.well-known/openid-configuration", proc, log, seconds=30)
            yield issuer
        finally:
            stop(proc)
