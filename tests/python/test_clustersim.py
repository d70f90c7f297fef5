"""The Python package against the CLI: the same numbers, the same errors (run by ctest: `python`)."""
import json
import os
import subprocess
import threading

import pytest

import clustersim

SRC = os.environ["CLUSTERSIM_SOURCE_DIR"]
CLI = os.environ["CLUSTERSIM_BINARY"]
SCENARIO = os.path.join(SRC, "scenarios", "llama3-8b-h100x8.json")


def cli_json(*args):
    out = subprocess.run([CLI, *args], check=True, capture_output=True, text=True, cwd=SRC)
    return json.loads(out.stdout)


def test_run_is_the_cli_report():
    assert clustersim.run(SCENARIO) == cli_json("run", SCENARIO, "--json")


def test_run_takes_a_dict_and_overrides():
    with open(SCENARIO) as f:
        doc = json.load(f)
    by_dict = clustersim.run(doc, set={"training.micro_batch_size": 2})
    by_cli = cli_json("run", SCENARIO, "--json", "--set", "training.micro_batch_size=2")
    assert by_dict == by_cli
    assert by_dict["step_time_s"] != clustersim.run(doc)["step_time_s"]


def test_a_new_gpu_takes_its_price_as_in_the_cli():
    # The scenario prices its H100 at $2.50; cluster.gpu=B200 must not keep that price (issue 28), in
    # Python as in `clustersim run --set`.
    by_py = clustersim.run(SCENARIO, set={"cluster.gpu": "B200"})
    by_cli = cli_json("run", SCENARIO, "--json", "--set", "cluster.gpu=B200")
    assert by_py == by_cli
    assert by_py["cost"]["price_per_gpu_hour_usd"] != 2.5


def test_input_error_carries_file_and_path():
    with pytest.raises(clustersim.InputError) as e:
        clustersim.run(SCENARIO, set={"training.micro_batch_size": 0})
    assert e.value.file == SCENARIO
    assert e.value.path == "training.micro_batch_size"
    with pytest.raises(clustersim.InputError) as e:
        clustersim.run({"model": {"preset": "llama3-8b"}})
    assert e.value.file == "<dict>"


def test_sweep_rows_are_flat_and_match_the_cli():
    rows = clustersim.sweep(SCENARIO, vary={"training.micro_batch_size": [1, 2]}, threads=1)
    cli = cli_json("sweep", SCENARIO, "--vary", "training.micro_batch_size=1,2", "--json", "--threads", "1")
    assert [r["training.micro_batch_size"] for r in rows] == [1, 2]
    for row, point in zip(rows, cli["points"]):
        assert row["status"] == point["status"]
        assert row["report.step_time_s"] == point["report"]["step_time_s"]
        assert all(not isinstance(v, dict) for v in row.values())
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(rows)
    assert frame.shape[0] == 2 and "report.tokens_per_s" in frame.columns


def test_collective_is_the_cli_table():
    py = clustersim.collective(SCENARIO, "all_reduce", ranks=8, bytes="1M..16M")
    assert py == cli_json("collective", "--scenario", SCENARIO, "--op", "all_reduce", "--ranks", "8",
                          "--bytes", "1M..16M", "--json")


def test_long_calls_release_the_gil():
    # While one thread simulates, another keeps running Python code.
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=tick)
    t.start()
    clustersim.sweep(SCENARIO, vary={"training.micro_batch_size": [1, 2, 4]}, threads=1)
    done.set()
    t.join()
    assert len(ticks) > 1


# The CLI's checks on what Python passes (issue 32): each refusal raises clustersim.InputError (a ValueError)
# with one line, never a signal.

def refusal(fn, *args, **kwargs):
    with pytest.raises(clustersim.InputError) as e:
        fn(*args, **kwargs)
    assert isinstance(e.value, ValueError)
    assert len(e.value.messages) == 1
    return e.value.messages[0]


def test_a_nul_in_a_path_or_override_is_refused():
    # C's open() would read the path cut at the NUL: another file.
    msg = "scenario path: contains a NUL character (a path or option cannot hold one)"
    assert refusal(clustersim.run, SCENARIO + "\0.ignored") == msg
    assert refusal(clustersim.run, SCENARIO, set=["training.micro_batch_size=2\0"]) == \
        "set: contains a NUL character (a path or option cannot hold one)"
    assert refusal(clustersim.validate, SCENARIO + "\0x") == \
        "validate: file: contains a NUL character (a path or option cannot hold one)"


def test_json_nested_deeper_than_the_cli_allows_is_refused():
    # The CLI's JSON reader and its limit (sim/files/json_file.hpp: 256 levels); json.loads of the text
    # segfaulted the extension.
    deep = {}
    for _ in range(300):
        deep = {"a": deep}
    assert "nested deeper than 256 levels" in refusal(clustersim.run, deep)
    with pytest.raises(ValueError) as e:
        clustersim._clustersim.run("", "[" * 200000, [])
    assert "nested deeper than 256 levels" in str(e.value)


def test_a_negative_thread_count_is_refused():
    assert refusal(clustersim.sweep, SCENARIO, vary={"training.micro_batch_size": [1]}, threads=-5) == \
        "sweep: threads -5: expected at least 1 (or 0: all cores), as --threads"
    assert refusal(clustersim.search, SCENARIO, threads=-1) == \
        "search: threads -1: expected at least 1 (or 0: all cores), as --threads"


def test_option_like_arguments_are_not_read_as_options():
    # validate("-h") printed the help, which was then parsed as JSON.
    assert refusal(clustersim.validate, "-h") == \
        "validate: file \"-h\": starts with '-', which the command would read as an option (write ./-h for a file of that name)"
    assert refusal(clustersim.validate, SCENARIO, gpu="--help") == \
        "validate: gpu \"--help\": starts with '-', which the command would read as an option " \
        "(write ./--help for a file of that name)"
    assert refusal(clustersim.collective, SCENARIO, "-h") == \
        "collective: op \"-h\": starts with '-', which the command would read as an option (write ./-h for a file of that name)"
