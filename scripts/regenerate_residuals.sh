#!/usr/bin/env bash
# Regenerates calibrate/published/residuals.json, the validation residuals every `clustersim run` report
# reads its step-time error band from (sim/report/error_band.hpp, docs/error-band.md): builds clustersim,
# runs `clustersim validate calibrate/published/published-train.json --json`, writes its "residual_table"
# (one compared published run per line, so that a change reads as a diff of rows), and rebuilds so that
# the new table is compiled in. Same inputs, same bytes. Run it after any change that moves validate's
# errors (the table is data, not a fit: nothing in it is tuned).
# usage: scripts/regenerate_residuals.sh [BUILD_DIR]   (default build; run from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-build}"
cd "$here"
nice cmake --build "$build" --target clustersim
out=calibrate/published/residuals.json
tmp="$(mktemp "${out}.XXXXXX")"
trap 'rm -f "$tmp" "$tmp.json"' EXIT
nice "$build/clustersim" validate calibrate/published/published-train.json --json > "$tmp.json"
python3 - "$tmp.json" "$tmp" <<'PY'
import json, sys
table = json.load(open(sys.argv[1]))["residual_table"]
rows = table["rows"]
with open(sys.argv[2], "w") as f:
    f.write("{\n")
    f.write('  "source": %s,\n' % json.dumps(table["source"]))
    f.write('  "error": %s,\n' % json.dumps(table["error"]))
    f.write('  "rows": [\n')
    f.write(",\n".join("    " + json.dumps(r, separators=(", ", ": ")) for r in rows))
    f.write("\n  ]\n}\n")
print("%d rows" % len(rows), file=sys.stderr)
PY
mv "$tmp" "$out"
nice cmake --build "$build" --target clustersim
echo "wrote $out; review: git diff $out" >&2
