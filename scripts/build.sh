#!/usr/bin/env bash
# Configures and builds VoxelEM into ./build (CUDA when /usr/local/cuda/bin/nvcc exists, CPU-only
# otherwise; the ParaView plugin when ParaView's development files are installed).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${VEM_BUILD_DIR:-build}
CUDA=OFF
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc > /dev/null; then CUDA=ON; fi
PLUGIN=OFF
if ls /usr/lib/*/cmake/paraview-*/paraview-config.cmake > /dev/null 2>&1; then PLUGIN=ON; fi
echo "build: CUDA engine ${CUDA}, ParaView plugin ${PLUGIN} -> ${BUILD}"
cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DVEM_ENABLE_CUDA=$CUDA -DVEM_BUILD_PLUGIN=$PLUGIN
# Cores counted without OMP_NUM_THREADS, which GNU nproc honours.
cmake --build "$BUILD" -j "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)"
