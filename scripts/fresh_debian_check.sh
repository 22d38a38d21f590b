#!/usr/bin/env bash
# Runs the README's two commands in a freshly bootstrapped Debian 12 root, from a fresh clone of a
# commit, as a new user on a new machine would: nothing installed by hand on this machine can hide a
# missing package. Needs root, network access to the Debian mirror, and debootstrap (installed here
# if missing). Prints the time and disk space each phase took; the full log is <root>.log.
#
#   bash scripts/fresh_debian_check.sh [--root DIR] [--commit REV] [--cuda] [--quick]
#                                      [--demo-only | --tests-only] [--apt-cache DIR] [--keep]
#
#   --root DIR       where the root is built (default /var/tmp/voxelem-fresh-root; removed first)
#   --commit REV     what to clone (default HEAD of this repository; uncommitted changes are not in it)
#   --cuda           bind-mount /usr/local/cuda read-only (default: left out, the CPU build, which is
#                    enough to find missing Debian packages and is what a machine without CUDA gets)
#   --quick          pass --quick to the demo (the README's command runs the default demo)
#   --demo-only / --tests-only   run one of the two commands (default both: demo, then tests)
#   --apt-cache DIR  keep downloaded .deb files in DIR across runs (nothing is installed from it
#                    that apt would not install anyway; it only saves the download)
#   --keep           leave the root in place afterwards (it is unmounted either way)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=/var/tmp/voxelem-fresh-root
COMMIT=HEAD
CUDA=0 QUICK=0 DEMO=1 TESTS=1 KEEP=0 APT_CACHE=""
MIRROR=${VEM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
while [ $# -gt 0 ]; do
  case "$1" in
    --root) ROOT=$2; shift ;;
    --commit) COMMIT=$2; shift ;;
    --cuda) CUDA=1 ;;
    --quick) QUICK=1 ;;
    --demo-only) TESTS=0 ;;
    --tests-only) DEMO=0 ;;
    --apt-cache) APT_CACHE=$(realpath -m "$2"); shift ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "fresh_debian_check: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "fresh_debian_check: run as root (debootstrap and chroot need it)" >&2; exit 2; }
SHA=$(git -C "$REPO" rev-parse --verify "$COMMIT^{commit}")
LOG="$ROOT.log"
: > "$LOG"
say() { echo "fresh_debian_check: $*" | tee -a "$LOG"; }
now() { date +%s; }
disk() { du -sxm "$ROOT" 2>/dev/null | cut -f1; }

unmount_all() {
  for m in dev/pts dev sys proc usr/local/cuda var/cache/apt/archives; do
    mountpoint -q "$ROOT/$m" 2>/dev/null && umount -l "$ROOT/$m" || true
  done
}
cleanup() {
  unmount_all
  if [ "$KEEP" = 0 ] && [ -d "$ROOT" ]; then rm -rf --one-file-system "$ROOT"; fi
}
trap cleanup EXIT

command -v debootstrap > /dev/null || { apt-get update -q && apt-get install -y -q debootstrap; } >> "$LOG" 2>&1
unmount_all
rm -rf --one-file-system "$ROOT"
mkdir -p "$ROOT"

t0=$(now)
say "debootstrap Debian 12 (bookworm, minbase) into $ROOT from $MIRROR"
debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >> "$LOG" 2>&1
# The suites a Debian 12 installation has by default.
cat > "$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
t_boot=$(( $(now) - t0 )); base_mb=$(disk)
say "base system: ${t_boot} s, ${base_mb} MB"

mount -t proc proc "$ROOT/proc"
mount -t sysfs sys "$ROOT/sys"
mount --bind /dev "$ROOT/dev"
mount --bind /dev/pts "$ROOT/dev/pts"
if [ -n "$APT_CACHE" ]; then
  mkdir -p "$APT_CACHE" "$ROOT/var/cache/apt/archives"
  mount --bind "$APT_CACHE" "$ROOT/var/cache/apt/archives"
fi
if [ "$CUDA" = 1 ]; then
  [ -x /usr/local/cuda/bin/nvcc ] || { say "--cuda: no /usr/local/cuda/bin/nvcc here"; exit 2; }
  mkdir -p "$ROOT/usr/local/cuda"
  mount --bind -o ro /usr/local/cuda "$ROOT/usr/local/cuda"
fi

# A fresh clone of the commit (the chroot has no git yet: setup installs it).
git clone -q --no-local "$REPO" "$ROOT/root/voxelem"
git -C "$ROOT/root/voxelem" checkout -q "$SHA"
say "cloned $SHA into /root/voxelem (CUDA: $([ "$CUDA" = 1 ] && echo bind-mounted || echo left out))"

in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 bash -c "cd /root/voxelem && $1"; }
# The demo and the tests run in a network namespace of their own: a chroot shares the host's
# abstract X11 sockets, so an Xvfb on this machine with the same display number would steal the
# root's connection where a display number is chosen by lock files, as xvfb-run -a does (the tests
# and the demo use scripts/with_xvfb.sh, which avoids that too). Nothing after the set-up needs the network, but
# the namespace's loopback interface is brought up: with no interface at all Open MPI's compiler
# wrapper fails (opal_ifinit) and CMake's FindMPI, which ParaView's config calls, stops.
ISOLATE=0
if command -v ip > /dev/null && unshare --net ip link set lo up 2> /dev/null; then ISOLATE=1; fi
in_root_offline() {
  local cmd=(chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb PATH=/usr/sbin:/usr/bin:/sbin:/bin
             LANG=C.UTF-8 bash -c "cd /root/voxelem && $1")
  if [ "$ISOLATE" = 1 ]; then
    unshare --net sh -c 'ip link set lo up && exec "$@"' isolate "${cmd[@]}"
  else
    "${cmd[@]}"
  fi
}

status=0
t0=$(now)
say "setup: bash scripts/setup_debian.sh"
if in_root "bash scripts/setup_debian.sh" >> "$LOG" 2>&1; then
  t_setup=$(( $(now) - t0 )); setup_mb=$(( $(disk) - base_mb ))
  say "setup: ${t_setup} s, +${setup_mb} MB installed (apt's archive of .deb files: $(du -sm "$ROOT/var/cache/apt/archives" | cut -f1) MB)"
else
  say "setup FAILED after $(( $(now) - t0 )) s (log: $LOG)"; tail -30 "$LOG"; exit 1
fi

if [ "$DEMO" = 1 ]; then
  demo_args=""; [ "$QUICK" = 1 ] && demo_args="--quick"
  t0=$(now)
  say "demo: bash scripts/setup_debian.sh (done above) && bash scripts/run_demo.sh $demo_args"
  if in_root_offline "bash scripts/run_demo.sh $demo_args" >> "$LOG" 2>&1; then
    say "demo: passed in $(( $(now) - t0 )) s (build included); outputs: $(ls "$ROOT/root/voxelem/demo-output" | tr '\n' ' ')"
  else
    say "demo FAILED after $(( $(now) - t0 )) s (log: $LOG)"; tail -40 "$LOG"; status=1
  fi
fi
if [ "$TESTS" = 1 ] && [ "$status" = 0 ]; then
  t0=$(now)
  say "tests: bash scripts/setup_debian.sh (done above) && bash scripts/run_tests.sh"
  if in_root_offline "bash scripts/run_tests.sh" >> "$LOG" 2>&1; then
    say "tests: passed in $(( $(now) - t0 )) s: $(grep -E 'tests passed|tests failed' "$LOG" | tail -1)"
  else
    say "tests FAILED after $(( $(now) - t0 )) s (log: $LOG)"; grep -E 'Failed|\*\*\*' "$LOG" | tail -40; status=1
  fi
fi
say "disk: ${base_mb} MB base system + ${setup_mb} MB set-up; $(disk) MB in all with the clone and its build"
exit $status
