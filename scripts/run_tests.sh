#!/usr/bin/env bash
# Builds VoxelEM and runs the whole test suite with ctest. Without a GPU the CUDA tests skip
# with a visible message (they run on the device machine: scripts/device_check.sh).
# Then, when VEM_SANITIZE_TESTS=1 or in CI (CI=true), the CPU unit tests again under ASan + UBSan
# (scripts/run_sanitized_tests.sh, its own build in build-asan: 11 min on 2 cores, build included).
# VEM_SANITIZE_TESTS=0 skips that even in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD=${VEM_BUILD_DIR:-build}
# One OpenMP thread per test process, as many test processes as cores: no oversubscription.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
ROOT=$PWD
cd "$BUILD"
ctest --output-on-failure -j "$(nproc)" --timeout 1200
# Say plainly whether the CUDA tests ran or skipped (ctest only prints "Skipped").
if [ -x testing/test_fdtd_smoke ]; then
  ./testing/test_fdtd_smoke --gtest_filter='*cuda*' 2>&1 | grep -m1 -E "CUDA backend not tested|OK \]" |
    sed 's/^/run_tests: /' || true
fi
cd "$ROOT"
if [ "${VEM_SANITIZE_TESTS:-}" = 1 ] || { [ "${CI:-}" = true ] && [ "${VEM_SANITIZE_TESTS:-}" != 0 ]; }; then
  bash scripts/run_sanitized_tests.sh
fi
