#!/bin/bash
# GUI live check (issue 14): the ParaView GUI (under the X display that ctest's
# scripts/with_xvfb.sh provides) loads examples/fdtd2d_live.pvsm through gui_live_check.py; the
# live-source timer advances the run; two screen dumps (xwd) some seconds apart must differ where the wave moved (compare_live_shots.py).
#   run_gui_live_check.sh <paraview> <pvpython> <VoxelEMPlugin.so> <state.pvsm> <out dir> [copy-to-dir]
set -u
paraview_exe=$1 pvpython_exe=$2 plugin=$3 state=$4 out=$5 copy_to=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v xwd > /dev/null; then
  echo "SKIP: xwd (Debian package x11-apps) not found; the GUI live check needs it"; exit 77
fi
mkdir -p "$out"
rm -f "$out/live_ready.txt" "$out"/live_*.png "$out"/*.xwd
export PV_PLUGIN_PATH VEM_GUI_OUT=$out VEM_LIVE_STATE=$state
PV_PLUGIN_PATH=$(dirname "$plugin")
export XDG_CONFIG_HOME="$out/config"
rm -rf "$XDG_CONFIG_HOME"; mkdir -p "$XDG_CONFIG_HOME"
"$paraview_exe" --dr --script="$here/gui_live_check.py" > "$out/paraview.log" 2>&1 &
pv_pid=$!
trap 'kill $pv_pid 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do [ -f "$out/live_ready.txt" ] && break; sleep 1; done
cat "$out/live_ready.txt" 2>/dev/null || { echo "FAIL: the GUI script did not finish"; tail -20 "$out/paraview.log"; exit 1; }
grep -q FAIL "$out/live_ready.txt" && exit 1
sleep "${VEM_LIVE_FIRST:-6}"
xwd -root -silent > "$out/live_1.xwd"
sleep "${VEM_LIVE_SECOND:-6}"
xwd -root -silent > "$out/live_2.xwd"
kill $pv_pid 2>/dev/null
"$pvpython_exe" "$here/xwd_to_png.py" "$out/live_1.xwd" "$out/live_1.png" &&
  "$pvpython_exe" "$here/xwd_to_png.py" "$out/live_2.xwd" "$out/live_2.png" || exit 1
"$pvpython_exe" "$here/compare_live_shots.py" "$out/live_1.png" "$out/live_2.png"
rc=$?
if [ $rc -eq 0 ] && [ -n "$copy_to" ]; then
  cp "$out/live_1.png" "$copy_to/fdtd2d_live_gui_1.png"; cp "$out/live_2.png" "$copy_to/fdtd2d_live_gui_2.png"
fi
exit $rc
