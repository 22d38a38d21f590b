#!/bin/bash
# GUI check: starts the ParaView GUI (needs an X display; ctest runs this under
# scripts/with_xvfb.sh) with the plugin's folder in PV_PLUGIN_PATH, runs gui_check.py inside it,
# and reports its checks.
#   run_gui_check.sh <paraview> <VoxelEMPlugin.so> <gui_check.py> <out dir>
set -u
paraview_exe=$1 plugin=$2 script=$3 out=$4
mkdir -p "$out"
rm -f "$out/gui_check.txt"
export PV_PLUGIN_PATH
PV_PLUGIN_PATH=$(dirname "$plugin")
export VEM_GUI_OUT=$out
# A private, empty settings folder and --dr (ignore user settings): leftover settings of an
# earlier, interrupted ParaView (its crash-recovery prompt is a modal dialog) must not block a run.
export XDG_CONFIG_HOME="$out/config"
rm -rf "$XDG_CONFIG_HOME"
mkdir -p "$XDG_CONFIG_HOME"
timeout 300 "$paraview_exe" --dr --script="$script" > "$out/paraview.log" 2>&1
rc=$?
cat "$out/gui_check.txt" 2>/dev/null || { echo "gui_check.py wrote no results"; tail -20 "$out/paraview.log"; }
exit $rc
