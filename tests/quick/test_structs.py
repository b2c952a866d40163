"""The msgspec structs: unknown keys and wrong types refused with a message naming the key,
round trips, and the JSON older stores hold still read (fuzzer/structs.py)."""

import dataclasses
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import ROOT, buildfuzz_in_process
from fuzzer import structs
from fuzzer.compare.inside import Inside
from fuzzer.config import FuzzConfig, StoredConfig, stored_settings
from fuzzer.errors import UsageError
from fuzzer.execute.run import RunRecord
from fuzzer.model import RunStatus
from fuzzer.observe import Entries, Entry, Manifest
from fuzzer.plan import Perturbation
from fuzzer.rates import Count
from fuzzer.scenarios import load_scenario
from fuzzer.store import Store

names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
# what os.scandir gives for a name that is not UTF-8: its bytes as lone surrogates
undecodable = st.binary(min_size=1, max_size=8).map(lambda b: (b"x" + b).decode("utf-8", "surrogateescape"))
paths = st.one_of(names, undecodable)
perturbations = st.builds(
    Perturbation, st.integers(1, 256), st.lists(st.integers(0, 1023), min_size=1, max_size=8).map(tuple),
    st.sampled_from([0.0, 0.4, 0.8, 1.0]), st.integers(0, 2**32 - 1),
    st.dictionaries(st.sampled_from(["tz", "umask", "hold", "buildpath"]), names).map(lambda d: dict(sorted(d.items()))))
entries = st.builds(Entry, st.sampled_from(["file", "symlink", "fifo"]), paths, st.booleans(),
                    st.integers(0, 2**40), st.integers(0, 2**62))


def old_perturbation_json(p: Perturbation) -> str:
    """What buildfuzz wrote before the structs (Perturbation.to_json, then json.dumps)."""
    data = {"jobs": p.jobs, "cpus": list(p.cpus), "jitter": p.jitter, "seed": p.seed}
    return json.dumps({**data, "variations": dict(p.variations)} if p.variations else data)


def old_manifest_json(manifest: Manifest) -> bytes:
    return json.dumps({path: [e.kind, e.digest, e.executable, e.size, e.mtime_ns]
                       for path, e in manifest.entries.items()}).encode()


@given(perturbations)
def test_a_perturbation_round_trips_and_keeps_its_stored_and_reported_shape(p):
    assert structs.decode(structs.encode(p), Perturbation) == p
    assert structs.decode(old_perturbation_json(p), Perturbation) == p
    # the report's runs[].perturbation, and the bytes a bisection's identity hashes
    assert json.dumps(structs.to_data(p)) == old_perturbation_json(p)
    assert hash(structs.decode(structs.encode(p), Perturbation)) == hash(p)


def test_a_perturbation_always_says_jitter_and_seed_and_variations_only_when_one_differs():
    plain = Perturbation(4, (0, 1))
    assert structs.encode(plain) == b'{"jobs":4,"cpus":[0,1],"jitter":0.0,"seed":0}'
    assert structs.to_data(plain.with_variation("tz", "UTC"))["variations"] == {"tz": "UTC"}
    assert "variations" not in structs.to_data(plain.with_variation("tz", "UTC").with_variation("tz", ""))


@given(st.dictionaries(paths, entries, max_size=20))
def test_a_manifest_round_trips_with_names_that_are_not_utf8(found):
    manifest = Manifest(found)
    assert Manifest(structs.decode(structs.encode(manifest.entries), Entries)) == manifest
    assert Manifest(structs.decode(old_manifest_json(manifest), Entries)) == manifest
    assert json.loads(structs.encode(manifest.entries)) == json.loads(old_manifest_json(manifest))


def test_an_old_stores_runs_still_load(tmp_path):
    """Rows as buildfuzz wrote them before the structs: json.dumps text, a non-UTF-8 name."""
    manifest = Manifest({"bin/x": Entry("file", "ab" * 32, True, 10, 5), "b\udcffd": Entry("symlink", "x")})
    p = Perturbation(8, (0, 2), 0.8, 7).with_variation("tz", "UTC")
    store = Store(tmp_path, create=True, exclusive=True)
    cid = store.new_campaign("/src", "make", 1, {})
    store.save_run(cid, RunRecord(0, Perturbation(1, (0,)), RunStatus.OK, 0, 0.5, None, "/logs/0.log"))
    store.db.execute("UPDATE runs SET perturbation = ?, manifest = ?",
                     (old_perturbation_json(p), zlib.compress(old_manifest_json(manifest))))
    store.save_remembered(cid, [(p, 1)])
    store.db.execute("UPDATE remembered_runs SET perturbation = ?", (old_perturbation_json(p),))
    (run,) = store.runs(cid)
    assert (run.perturbation, run.manifest, store.remembered(cid)) == (p, manifest, [(p, 1)])
    store.close()


def test_stored_keys_that_do_not_fit_are_refused():
    with pytest.raises(msgspec.ValidationError, match="unknown field `colour`"):
        structs.decode(b'{"jobs": 2, "cpus": [0], "colour": 1}', Perturbation)
    with pytest.raises(msgspec.ValidationError, match=r"Expected `int`, got `str` - at `\$.jobs`"):
        structs.decode(b'{"jobs": "2", "cpus": [0]}', Perturbation)
    with pytest.raises(msgspec.ValidationError, match="at most length 5"):
        structs.decode(b'{"a": ["file", "ab", false, 1, 2, 3]}', Entries)


def test_stored_settings_of_every_age_give_the_config_back(tmp_path):
    config = FuzzConfig(source=tmp_path, command="make", store=tmp_path / "s", runs=7, jobs=(2, 4), parallel=3,
                        output_dirs=(tmp_path / "out",), artifacts=("*.so",))
    stored = structs.to_data(stored_settings(config, "/w", (0, 1)))
    assert list(stored) == ["runs", "artifacts", "ignore", "jobs", "axes", "timeout", "in_place",
                            "clean", "parallel", "output", "workspace", "cpus", "count_bookkeeping", "default_ignore"]
    assert stored["output"] == [str(tmp_path / "out")] and stored["jobs"] == [2, 4]
    back = structs.convert(stored, StoredConfig).config(str(tmp_path), "make", 0, tmp_path / "s")
    assert back == config
    # stores from before --parallel, --output and --count-bookkeeping: default_ignore false counted the tools' logs
    before_parallel = {**{key: stored[key] for key in list(stored)[:8]}, "default_ignore": False}
    old = structs.convert(before_parallel, StoredConfig).config(str(tmp_path), "make", 0, tmp_path / "s")
    assert (old.parallel, old.output_dirs, old.runs, old.count_bookkeeping) == (1, (), 7, True)
    counting = dataclasses.replace(config, count_bookkeeping=True)
    stored = structs.to_data(stored_settings(counting, "/w", (0, 1)))
    assert (stored["count_bookkeeping"], stored["default_ignore"]) == (True, False)
    assert structs.convert(stored, StoredConfig).config(str(tmp_path), "make", 0, tmp_path / "s") == counting
    with pytest.raises(msgspec.ValidationError, match="unknown field `colour`"):
        structs.convert({**stored, "colour": 1}, StoredConfig)


@given(st.integers(0, 50), st.integers(1, 50))
def test_a_rate_keeps_its_keys_and_order(seen, builds):
    seen = min(seen, builds)
    rate = structs.to_data(Count(seen, builds).rate())
    assert list(rate) == ["seen", "builds", "low", "high", "confidence", "method", "text"]
    pooled = structs.to_data(Count(seen, builds).rate("over 2 campaigns", campaigns=2))
    assert list(pooled)[-2:] == ["text", "campaigns"] and pooled["text"] == "over 2 campaigns"
    assert structs.to_data(Count(seen, builds).rate(upper_bound=None))["upper_bound"] is None


def test_inside_gives_the_reports_keys():
    inside = Inside("zip", "1 member differs", members=("a.txt",), identical=3, notes=("x",))
    assert structs.to_data(inside) == {"format": "zip", "summary": "1 member differs", "metadata_only": False,
                                       "members": ["a.txt"], "identical": 3, "metadata": [], "details": [],
                                       "notes": ["x"]}
    assert inside.content_differs and not Inside("bytes", "identical bytes", metadata_only=True).content_differs


@pytest.mark.parametrize("table, message", [
    ("[run]\nruns = 3\nspeed = 2\n", "unknown key 'run.speed'; known keys: run.runs, run.artifacts"),
    ("[run]\njobs = [1, '4']\n", "run.jobs must be [LO, HI] with 1 <= LO <= HI <= "),
    ("[run]\nruns = 3.0\n", "run.runs must be a whole number from 2 to 100000, got 3.0"),
    ("[run]\ndefault_ignore = 'no'\n", "run.default_ignore must be true or false, got 'no'"),
    ("[run]\ncheck_steps = ''\n", "run.check_steps must be a non-empty string without NUL characters, got ''"),
    ("run = 3\n", "run must be a table ([section]), got 3"),
])
def test_a_scenario_file_that_does_not_fit_names_file_key_and_expectation(tmp_path, table, message):
    (tmp_path / "scenario.toml").write_text("command = 'make'\n" + table + "[expect]\nverdict = 'reproducible'\n")
    with pytest.raises(UsageError, match=re.escape(f"{tmp_path / 'scenario.toml'}': {message}")):
        load_scenario(tmp_path)


def test_a_bad_scenario_file_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "scenario.toml").write_text("command = 'make'\n[expect]\nverdict = 'reproducible'\nhazards = '1'\n")
    result = buildfuzz_in_process("scenarios", "check", str(tmp_path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "scenario.toml': expect.hazards must be a whole number from 0 to 1000000, got '1'" in result.stderr


def test_a_settings_file_that_does_not_fit_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "buildfuzz.toml").write_text("runs = 4\nparallel = '2'\n")
    result = buildfuzz_in_process("run", "--source", str(tmp_path), "--", "true")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert f"{Path(tmp_path) / 'buildfuzz.toml'}': parallel must be a whole number, got '2'" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["buildfuzz.toml"]


def test_the_store_json_bench_runs_its_smoke_mode():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_store_json.py"), "--smoke"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.search(r"1000 entries .* ratio +\d", done.stdout)
