#!/usr/bin/env bash
# with_xvfb.sh [--screen WxHxD] COMMAND [ARGS...]
# Runs COMMAND under a private Xvfb (Debian's ParaView renders through X only) and stops the
# server afterwards; the exit status is COMMAND's.
#
# -noreset: an X server resets when its last client leaves, and a client that connects during the
# reset is dropped ("bad X server connection. DISPLAY=:99. Aborting.": stop 44's CI, with
# xvfb-run -a; the fresh-root demo under load, with xvfb-run and with this script before
# -noreset). pvpython opens short-lived connections before its window (at its start, probably
# Open MPI's hwloc probing the displays: it prints "Invalid MIT-MAGIC-COOKIE-1 key" beside a
# foreign server), so the window can fall in a reset. Reproduced on the 2-core machine:
# 9 of 100 clients one after the other failed without -noreset, 0 with it
# (testing/paraview/test_with_xvfb.sh).
#
# -displayfd: the server picks its display number itself, the first where it can open every
# listening socket, abstract ones included, and tells it through a pipe. xvfb-run -a picks the
# first number without a lock file in this machine's /tmp; an X server of another file-system view
# of the same network namespace (a container, a chroot) holds its abstract socket without a lock
# file here, and the command would reach that server.
#
# The cookie: a fresh MIT-MAGIC-COOKIE-1 in a private XAUTHORITY file, written before the number is
# known as a FamilyWild entry with no display number (it matches any display; the server reads the
# same file with -auth).
set -euo pipefail
screen=1280x1024x24
if [ "${1:-}" = --screen ]; then screen=$2; shift 2; fi
if [ $# = 0 ]; then echo "usage: with_xvfb.sh [--screen WxHxD] COMMAND [ARGS...]" >&2; exit 2; fi
for tool in Xvfb xauth mcookie; do
  command -v "$tool" > /dev/null || { echo "with_xvfb: $tool not found (Debian: xvfb, xauth, util-linux)" >&2; exit 2; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/vem-xvfb.XXXXXX")
server=
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export XAUTHORITY=$dir/Xauthority
# xauth nmerge line: family ffff (FamilyWild), empty address, empty display number,
# the name MIT-MAGIC-COOKIE-1 (18 bytes) in hex, the 16-byte cookie.
touch "$XAUTHORITY"
echo "ffff 0000  0000  0012 4d49542d4d414749432d434f4f4b49452d31 0010 $(mcookie)" |
  xauth -q -f "$XAUTHORITY" nmerge -
mkfifo "$dir/displayfd"
Xvfb -displayfd 3 -screen 0 "$screen" -nolisten tcp -noreset -auth "$XAUTHORITY" \
  3> "$dir/displayfd" > "$dir/Xvfb.log" 2>&1 &
server=$!
# The server writes the number once it listens; if it dies first, the read ends at end of file.
number=
read -r -t 60 number < "$dir/displayfd" || true
if ! [[ "$number" =~ ^[0-9]+$ ]]; then
  echo "with_xvfb: Xvfb did not start (no display number within 60 s); its log:" >&2
  cat "$dir/Xvfb.log" >&2
  exit 1
fi
export DISPLAY=:$number
set +e
"$@"
status=$?
set -e
if [ $status != 0 ]; then
  if kill -0 "$server" 2> /dev/null; then
    echo "with_xvfb: the command failed ($status); the X server on :$number still runs" >&2
  else
    code=0
    wait "$server" 2> /dev/null || code=$?
    echo "with_xvfb: the command failed ($status); the X server on :$number had exited ($code); its log:" >&2
    server=
  fi
  cat "$dir/Xvfb.log" >&2
fi
exit $status
