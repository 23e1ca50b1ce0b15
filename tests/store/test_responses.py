"""The response cache: keyed by model, settings and prompt; committed as each answer is put."""
from __future__ import annotations

from cblue_core.store.responses import CachedResponse, cache_key
from cblue_core.store.workspace import connect

SETTINGS = {"mode": "chat", "max_tokens": 8, "temperature": 0.0}


def test_key_depends_on_model_settings_and_prompt_only():
    k = cache_key("m", SETTINGS, "问")
    assert k == cache_key("m", dict(reversed(list(SETTINGS.items()))), "问")
    assert len({k, cache_key("m2", SETTINGS, "问"), cache_key("m", {**SETTINGS, "max_tokens": 9}, "问"),
                cache_key("m", SETTINGS, "问 ")}) == 4


def test_an_answer_put_is_there_after_the_process_reopens_the_file(tmp_path):
    path = tmp_path / "ws.duckdb"
    ws = connect(path)
    k = cache_key("m", SETTINGS, "问")
    assert ws.responses.get_many([k]) == {}
    ws.responses.put(k, "m", SETTINGS, "问", CachedResponse("答", "stop", 3, 1, 0.25))
    ws.db.con.close()   # no explicit commit or checkpoint: put committed it
    ws = connect(path)
    assert ws.responses.get_many([k, "other"]) == {k: CachedResponse("答", "stop", 3, 1, 0.25)}
    assert ws.responses.count("m") == 1 and ws.responses.count("x") == 0
    assert ws.responses.clear("m") == 1 and ws.responses.count() == 0
    ws.close()


def test_a_key_put_twice_keeps_the_first_answer():
    ws = connect(":memory:")
    k = cache_key("m", SETTINGS, "问")
    ws.responses.put(k, "m", SETTINGS, "问", CachedResponse("答一", "stop", 3, 1, 0.25))
    ws.responses.put(k, "m", SETTINGS, "问", CachedResponse("答二", "stop", 3, 1, 0.5))
    assert ws.responses.get_many([k])[k].answer == "答一" and ws.responses.count() == 1


def test_put_many_commits_a_batch_and_skips_stored_keys(tmp_path):
    ws = connect(tmp_path / "ws.duckdb")
    rows = [(cache_key("m", SETTINGS, p), "m", SETTINGS, p, CachedResponse(p + "答", "stop", 2, 1, 0.1))
            for p in ("甲", "乙", "丙")]
    ws.responses.put(*rows[1][:4], CachedResponse("先答", "stop", 2, 1, 0.1))
    ws.responses.put_many(rows)
    got = ws.responses.get_many(r[0] for r in rows)
    assert [got[r[0]].answer for r in rows] == ["甲答", "先答", "丙答"]
    ws.close()
