#!/usr/bin/env bash
# The main job: builds VoxelEM with its ParaView plugin and runs the head-phantom demo headless
# (examples/head_phantom_demo.py under pvpython): a 900 MHz dipole beside the head phantom,
# .vti/.pvd time series, |E| slice and volume renderings as PNG, a state file, in ./demo-output.
# Debian's ParaView renders through X only, so the render runs under a private Xvfb
# (scripts/with_xvfb.sh).
# Extra arguments go to the demo (e.g. --quick, --backend cuda, --size ...).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD=${VEM_BUILD_DIR:-build}
OUTDIR=${VEM_DEMO_OUT:-demo-output}
PLUGIN=$(find "$BUILD" -name 'VoxelEMPlugin.so' | head -1)
if [ -z "$PLUGIN" ]; then
  echo "run_demo: the ParaView plugin was not built (is paraview-dev installed?)" >&2
  exit 1
fi
bash scripts/with_xvfb.sh --screen 1280x1024x24 \
  pvpython --force-offscreen-rendering examples/head_phantom_demo.py \
  --plugin "$(realpath "$PLUGIN")" --out "$OUTDIR" "$@"
echo "run_demo: outputs in $OUTDIR:"
ls "$OUTDIR"
