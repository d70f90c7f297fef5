#!/usr/bin/env bash
# make fresh-check: the README's set-up on a machine that has never seen clustersim.
#
# Creates a minimal Debian 12 root with debootstrap (Debian's package), clones the repository's committed
# state into it (what a user's `git clone` gets: nothing untracked, no build/), and inside it (chroot) runs
# the README's two commands, `make demo` and `make test`, then `make deb` and installs the package with
# apt-get. It checks that the CLI, the GUI, the Python module and the tests were all built and pass, and
# that the installed package runs a shipped scenario. Where a root cannot be created it fails, never passes.
#   FRESH_ROOT=DIR    where to build the root (default: a new folder under /var/tmp, removed afterwards)
#   FRESH_MIRROR=URL  the Debian mirror (default: http://deb.debian.org/debian)
#   FRESH_KEEP=1      keep the root afterwards
#   FRESH_CMAKE_ARGS  CMake options for the root's first configure (make's CMAKE_ARGS), e.g.
#                     -DCLUSTERSIM_WERROR=ON (CI); letters, digits and -_=.:/ only
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
start=$(date +%s)
say() { printf '[fresh-check %4ds] %s\n' "$(( $(date +%s) - start ))" "$*"; }
fail() { say "FAILED: $*"; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
  command -v sudo > /dev/null || fail "needs root (debootstrap and chroot): run it as root, or install sudo"
  exec sudo --preserve-env=FRESH_ROOT,FRESH_MIRROR,FRESH_KEEP,FRESH_CMAKE_ARGS "$0" "$@"
fi
cmake_args=${FRESH_CMAKE_ARGS:-}
# It goes into a command line run in the root: anything but plain option characters is refused, not quoted.
[[ "$cmake_args" =~ ^[-A-Za-z0-9_=.:/\ ]*$ ]] || fail "FRESH_CMAKE_ARGS may hold only letters, digits, spaces and -_=.:/"
./scripts/install-deps.sh debootstrap git || fail "cannot install debootstrap"
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}
root=${FRESH_ROOT:-$(mktemp -d /var/tmp/clustersim-fresh.XXXXXX)}
# mktemp makes the folder 0700; as the root's "/" that would lock every non-root user out of the whole
# system (munge's postinst runs `su munge` and fails with "/bin/sh: Permission denied"). A real / is 0755.
chmod 755 "$root"
mounted=()
cleanup() {
  for ((i=${#mounted[@]}-1; i>=0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  if [ -z "${FRESH_KEEP:-}" ] && [ -z "${FRESH_ROOT:-}" ]; then rm -rf "$root"; fi
}
trap cleanup EXIT

if [ ! -x "$root/usr/bin/apt-get" ]; then
  say "debootstrap bookworm (minbase) into $root from $mirror"
  debootstrap --variant=minbase bookworm "$root" "$mirror" > "$root.debootstrap.log" 2>&1 \
    || { tail -5 "$root.debootstrap.log"; fail "debootstrap could not create the root (log: $root.debootstrap.log)"; }
fi
for m in proc sys dev dev/pts; do
  mkdir -p "$root/$m"
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sys "$root/sys" ;;
    *) mount --bind "/$m" "$root/$m" ;;
  esac || fail "cannot mount /$m in the root"
  mounted+=("$root/$m")
done
cp /etc/resolv.conf "$root/etc/resolv.conf"

say "cloning the committed tree ($(git rev-parse --short HEAD)) into the root"
rm -rf "$root/home/user/clustersim"
mkdir -p "$root/home/user"
git clone -q --no-local "$repo" "$root/home/user/clustersim"

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
  bash -c "cd /home/user/clustersim && $*"; }
say "the README's prerequisites: apt-get install make sudo"
in_root "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make sudo ca-certificates > /dev/null" \
  || fail "apt-get in the root"
say "make demo"
in_root "make demo${cmake_args:+ CMAKE_ARGS='$cmake_args'}" > "$root.demo.log" 2>&1 || { tail -20 "$root.demo.log"; fail "make demo"; }
tail -7 "$root.demo.log"
say "make test"
in_root "make test" > "$root.test.log" 2>&1 || { tail -30 "$root.test.log"; fail "make test"; }
grep -E "tests passed|tests failed" "$root.test.log"
for f in build/clustersim build/clustersim-gui build/python/clustersim/__init__.py; do
  [ -e "$root/home/user/clustersim/$f" ] || fail "$f was not built"
done
in_root "QT_QPA_PLATFORM=offscreen ./build/clustersim-gui --help > /dev/null" || fail "clustersim-gui does not start"
in_root "PYTHONPATH=build/python python3 -c \"import clustersim; print('python:', clustersim.run('scenarios/llama3-8b-h100x8.json')['step_time_s'])\"" \
  || fail "the Python module does not import and run"
say "make deb; apt-get install ./build/package/clustersim_*.deb"
in_root "make deb" > "$root.deb.log" 2>&1 || { tail -20 "$root.deb.log"; fail "make deb"; }
in_root "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./build/package/clustersim_*.deb > /dev/null" || fail "apt-get install of the package"
in_root "cd / && clustersim run /usr/share/clustersim/scenarios/llama3-8b-h100x8.json | head -3" || fail "the installed clustersim"
in_root "cd / && python3 -c 'import clustersim; print(\"installed python:\", clustersim.run(\"/usr/share/clustersim/scenarios/llama3-8b-h100x8.json\")[\"step_time_s\"])'" \
  || fail "the installed Python module"
[ -x "$root/usr/bin/clustersim-gui" ] || fail "the package has no clustersim-gui"
say "PASSED: CLI, GUI, Python module and tests built and passing in a fresh Debian 12 root; the package installs and runs"
