#!/usr/bin/env bash
# The main job: builds VoxelEM with its ParaView plugin and runs the head-phantom demo headless
# (examples/head_phantom_demo.py under pvbatch): .vti/.pvd files and PNG images in ./demo-output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD=${VEM_BUILD_DIR:-build}
OUTDIR=${1:-demo-output}
mkdir -p "$OUTDIR"
PLUGIN=$(find "$BUILD" -name 'VoxelEM*.so' -path '*paraview*' | head -1)
if [ -z "$PLUGIN" ]; then
  echo "run_demo: the ParaView plugin was not built (is paraview-dev installed?)" >&2
  exit 1
fi
export VEM_PLUGIN="$(realpath "$PLUGIN")"
pvbatch --force-offscreen-rendering examples/head_phantom_demo.py --plugin "$VEM_PLUGIN" --output "$OUTDIR" "${@:2}"
echo "run_demo: outputs in $OUTDIR"
ls -la "$OUTDIR"
