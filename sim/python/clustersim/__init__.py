"""clustersim from Python: the simulator's library for notebooks, pandas and matplotlib.

    import clustersim, pandas as pd
    report = clustersim.run("scenarios/llama3-8b-h100x8.json")          # the `run --json` report, a dict
    rows = clustersim.sweep("scenarios/llama3-8b-h100x8.json",
                            vary={"training.micro_batch_size": [1, 2, 4]})
    pd.DataFrame(rows)                                                   # one row per point, flat columns

A scenario is a path or a dict (the scenario JSON as Python objects). Every call answers in the CLI's JSON
contract (docs/ and DESIGN.md); sweep and search rows are flattened to one level ("report.step_time_s").
Bad input raises clustersim.InputError, whose .messages are the CLI's one-line errors and whose .file and
.path name the first one's file and JSON path. Long calls release the GIL, so threads can run several.
"""
import json as _json
import os as _os

from . import _clustersim as _c

__all__ = ["InputError", "run", "sweep", "search", "collective", "validate", "flatten"]


class InputError(ValueError):
    """Bad input: the CLI's messages, one line each ("file: path: what")."""

    def __init__(self, messages):
        self.messages = [str(m) for m in messages] or ["input error"]
        first = self.messages[0]
        parts = first.split(": ", 2)
        self.file = parts[0] if len(parts) > 1 else None
        self.path = parts[1] if len(parts) > 2 else None
        super().__init__("\n".join(self.messages))


def _call(fn, *args):
    try:
        return fn(*args)
    except _c._InputError as e:
        raise InputError(e.args[0] if e.args and isinstance(e.args[0], list) else [str(e)]) from None


def _scenario(scenario):
    if isinstance(scenario, dict):
        return "", _json.dumps(scenario)
    if isinstance(scenario, (str, _os.PathLike)):
        return _os.fspath(scenario), ""
    raise TypeError("scenario: a path or a dict, not %s" % type(scenario).__name__)


def _sets(set):
    if set is None:
        return []
    if isinstance(set, dict):
        return ["%s=%s" % (k, _json.dumps(v)) for k, v in set.items()]
    return [str(s) for s in set]


def flatten(obj, prefix=""):
    """A nested dict as one level: {"a": {"b": 1}} -> {"a.b": 1}; lists are kept as values."""
    out = {}
    for k, v in obj.items():
        key = prefix + k
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _row(point):
    row = dict(point.get("assignment", {}))
    row["status"] = point.get("status")
    row["error"] = point.get("error", "")
    if "report" in point:
        row.update(flatten(point["report"], "report."))
    if "usd_per_million_tokens" in point:
        row["usd_per_million_tokens"] = point["usd_per_million_tokens"]
    return row


def run(scenario, set=None):
    """Simulates one step: the report dict of `clustersim run --json` (multi-job: its jobs report).

    set: overrides as {"training.micro_batch_size": 2} or ["training.micro_batch_size=2"] (like --set).
    """
    path, text = _scenario(scenario)
    return _json.loads(_call(_c.run, path, text, _sets(set)))


def sweep(scenario, vary, set=None, threads=0):
    """The cartesian product of `vary` ({path: [values]}) over the scenario: a list of flat row dicts."""
    path, text = _scenario(scenario)
    axes = ["%s=%s" % (k, ",".join(_json.dumps(v) for v in vals)) for k, vals in vary.items()]
    return [_row(p) for p in _json.loads(_call(_c.sweep, path, text, _sets(set), axes, int(threads)))]


def search(scenario, objective="tokens_per_s", set=None, threads=0, allow_tp_across_nodes=False):
    """The layout search (`sweep --search`): the simulated layouts, best first, as flat row dicts."""
    path, text = _scenario(scenario)
    out = _json.loads(_call(_c.search, path, text, _sets(set), objective, int(threads), bool(allow_tp_across_nodes)))
    return [_row(p) for p in out["points"]]


def collective(scenario, op, ranks=None, bytes=None, network=None, algo=None):
    """One simulated NCCL collective over the scenario's cluster (`clustersim collective --json`).

    scenario must be a path here. bytes: "MIN..MAX" with K/M/G suffixes, as nccl-tests -b/-e.
    """
    options = ["--scenario", _os.fspath(scenario), "--op", op]
    if ranks is not None:
        options += ["--ranks", str(int(ranks))]
    if bytes is not None:
        options += ["--bytes", str(bytes)]
    if network is not None:
        options += ["--network", network]
    if algo is not None:
        options += ["--algo", algo]
    return _json.loads(_call(_c.collective, options))


def validate(*files, scenario=None, profile=None, gpu=None):
    """Predicted against measured (`clustersim validate --json`) for measurement or published-run files."""
    options = []
    if scenario is not None:
        options += ["--scenario", _os.fspath(scenario)]
    if profile is not None:
        options += ["--profile", _os.fspath(profile)]
    if gpu is not None:
        options += ["--gpu", gpu]
    return _json.loads(_call(_c.validate, [_os.fspath(f) for f in files], options))
