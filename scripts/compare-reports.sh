#!/usr/bin/env bash
# scripts/compare-reports.sh OLD_BINARY NEW_BINARY [SCENARIO...]
# Runs every shipped scenario (or those given) with both binaries, text and --json, mirrored and every rank,
# on the analytical and the flow network, and says which reports differ (cmp). Exit 1 when any differs.
# A refactoring that promises "no behaviour change" is checked with it against the binary it started from.
# COMPARE_VARIANTS (space-separated --set values, "asis" for none) replaces the four variants.
set -uo pipefail
old=${1:?usage: compare-reports.sh OLD NEW [SCENARIO...]}; new=${2:?usage: compare-reports.sh OLD NEW [SCENARIO...]}
shift 2
cd "$(dirname "$0")/.."
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(scenarios/*.json)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
same=0 differ=0
for f in "${files[@]}"; do
  for variant in ${COMPARE_VARIANTS:-asis simulation.network=analytical simulation.network=flow simulation.symmetry=false}; do
    [ "$variant" = asis ] && variant=""
    for fmt in text json; do
      args=(run "$f")
      [ -n "$variant" ] && args+=(--set "$variant")
      [ "$fmt" = json ] && args+=(--json)
      "$old" "${args[@]}" > "$tmp/old" 2>&1; a=$?
      "$new" "${args[@]}" > "$tmp/new" 2>&1; b=$?
      if [ $a -eq $b ] && cmp -s "$tmp/old" "$tmp/new"; then
        same=$((same + 1))
      else
        differ=$((differ + 1))
        echo "DIFFERS: $f ${variant:-as is} $fmt (exit $a vs $b)"
      fi
    done
  done
done
echo "$same identical, $differ different"
[ $differ -eq 0 ]
