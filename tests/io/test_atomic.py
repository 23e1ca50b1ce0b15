"""Atomic writes through an unpredictable temporary name: a link planted at the target or at any
name the old writers used is never written through, and a failed write leaves the target as it was."""
from __future__ import annotations

import os
import stat

import pytest

from cblue_core.io.atomic import atomic_writer, write_bytes_atomic, write_text_atomic
from cblue_core.io.writers import write_text
from cblue_core.models.builtin.common import Checkpoint
from cblue_core.scale.shards import MANIFEST, Manifest, write_output_shard


@pytest.fixture
def victim(tmp_path):
    v = tmp_path / "elsewhere" / "victim.txt"
    v.parent.mkdir()
    v.write_text("precious", encoding="utf-8")
    return v


def test_a_link_at_the_target_is_replaced_not_followed(tmp_path, victim):
    out = tmp_path / "out" / "a.json"
    out.parent.mkdir()
    out.symlink_to(victim)
    write_text_atomic(out, "new")
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not out.is_symlink() and out.read_text(encoding="utf-8") == "new"


def test_a_failed_write_leaves_the_target_and_no_temporary(tmp_path):
    out = tmp_path / "a.bin"
    write_bytes_atomic(out, b"old")
    with pytest.raises(RuntimeError), atomic_writer(out) as fh:
        fh.write(b"half")
        raise RuntimeError("the writer died")
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin"]


def test_the_new_file_gets_the_mode_open_would_give_it(tmp_path):
    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "b.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == 0o644


def test_write_text_replaces_a_link_at_the_output(tmp_path, victim):
    out = tmp_path / "CMeEE_test.json"
    out.symlink_to(victim)
    write_text(out, "[]\n", "crlf")
    assert victim.read_text(encoding="utf-8") == "precious"
    assert out.read_bytes() == b"[]\r\n"


def test_output_shards_and_manifest_ignore_links_at_the_old_temporary_names(tmp_path, victim):
    out = tmp_path / "out"
    out.mkdir()
    pid = os.getpid()
    (out / f".a.parquet.tmp-{pid}").symlink_to(victim)
    (out / f".{MANIFEST}.tmp-{pid}").symlink_to(victim)
    path, _ = write_output_shard(out, "a.parquet", [0], ["k"], ['{"x": 1}'])
    Manifest(out, {"task": "KUAKE-QIC", "model": "m"}).save()
    assert victim.read_text(encoding="utf-8") == "precious"
    assert path.stat().st_size > 0 and (out / MANIFEST).is_file()


def test_checkpoint_state_ignores_a_link_at_the_old_temporary_name(tmp_path, victim):
    import torch

    ck = Checkpoint(tmp_path)
    ck.dir.mkdir(parents=True)
    (ck.dir / "state.json.tmp").symlink_to(victim)
    ck.save(torch.nn.Linear(2, 2), None, {"epoch": 1})  # type: ignore[typeddict-unknown-key]
    assert victim.read_text(encoding="utf-8") == "precious"
    assert (ck.dir / "state.json").is_file()
