#!/usr/bin/env bash
# The GUI screenshots of the README and docs/gui.md, at 1366x768 (a laptop screen), rendered offscreen by
# clustersim-gui --screenshot (QWidget::grab of the window; gui/app/main.cpp). Look at each PNG after
# regenerating it: text legible, nothing clipped.
#   scripts/gui-screenshots.sh [NAME ...]   only these (e.g. gui-405b-1366x768); default: all listed below
#   CLUSTERSIM_GUI=path                     the binary (default: build/clustersim-gui)
set -euo pipefail
cd "$(dirname "$0")/.."
gui=${CLUSTERSIM_GUI:-build/clustersim-gui}
[ -x "$gui" ] || { echo "gui-screenshots: $gui not built (cmake -DCLUSTERSIM_GUI=ON, ninja clustersim-gui)" >&2; exit 2; }
out=docs/screenshots

# NAME | scenario | further options
shots=(
  "gui-1366x768|scenarios/llama3-70b-h100x64-ndr400.json|"
  "gui-sweep-1366x768|scenarios/llama3-8b-h100x8.json|--view sweep"
  "gui-two-jobs-1366x768|scenarios/two-jobs-shared-spine.json|"
  "gui-405b-1366x768|scenarios/llama3-405b-h100x16384.json|"
  "gui-search-70b-1366x768|scenarios/llama3-70b-h100x64-ndr400.json|--view sweep"
  "gui-search-405b-1366x768|scenarios/llama3-405b-h100x16384.json|--view sweep"
)

wanted() {  # NAME [ASKED...]: true when nothing was asked for, or NAME was
  local name=$1 n
  shift
  [ $# -eq 0 ] && return 0
  for n; do [ "$n" = "$name" ] && return 0; done
  return 1
}
for shot in "${shots[@]}"; do
  IFS='|' read -r name scenario options <<< "$shot"
  wanted "$name" "$@" || continue
  # shellcheck disable=SC2086  # the options are words
  QT_QPA_PLATFORM=offscreen "$gui" "$scenario" $options --size 1366x768 --screenshot "$out/$name.png"
done
