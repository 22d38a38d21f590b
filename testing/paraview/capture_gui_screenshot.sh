#!/bin/bash
# Screenshot of the whole ParaView GUI with the VoxelEM pipeline applied (for examples/):
# starts Xvfb, runs the GUI with gui_check.py (left open), dumps the screen with xwd (Debian
# package x11-apps) and converts it with pvpython.
#   capture_gui_screenshot.sh <VoxelEMPlugin.so> <out.png>
set -eu
plugin=$1 png=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1600x1000x24 > "$work/xvfb.log" 2>&1 &
xvfb_pid=$!
trap 'kill $pv_pid $xvfb_pid 2>/dev/null || true; rm -rf "$work"' EXIT
pv_pid=
sleep 2
DISPLAY=$display PV_PLUGIN_PATH=$(dirname "$plugin") VEM_GUI_OUT=$work VEM_GUI_KEEP_OPEN=1 \
  paraview --script="$here/gui_check.py" > "$work/paraview.log" 2>&1 &
pv_pid=$!
for _ in $(seq 1 120); do [ -f "$work/gui_check.txt" ] && break; sleep 1; done
cat "$work/gui_check.txt" || { tail -20 "$work/paraview.log"; exit 1; }
sleep 8   # let the GUI repaint the pipeline browser and the properties panel
xwd -root -silent -display "$display" > "$work/screen.xwd"
pvpython "$here/xwd_to_png.py" "$work/screen.xwd" "$png"
