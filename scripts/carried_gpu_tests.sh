#!/usr/bin/env bash
# GPU tests from binaries built on the development machine, carried to the device machine: the
# device then spends its time on the tests, not on a cold build (about 250-300 s of its 30 min a
# session; scripts/device_check.sh builds there).
#
#   scripts/carried_gpu_tests.sh pack BUILD_DIR [JUNIT]   # here, after a CUDA build (sm_90)
#   scripts/carried_gpu_tests.sh run [SECONDS]            # there: run's command, carry [".carry"]
#
# pack: lists the CUDA tests of BUILD_DIR's test programs (a name with cuda / Cuda / CUDA / Gpu /
#   GPU, or any test of the agreement programs), longest first by the times of JUNIT (a ctest
#   JUnit file of an earlier GPU suite; 5 s where unknown), strips the programs that have one and
#   packs them with zstd (long-distance matching: the programs share their CUDA kernels, 36 of
#   them pack into about 42 MB) into .carry/ with the list and the zstd program. The commit is
#   recorded (HEAD when packing: pack right after the build). The working tree and the carried
#   folder together must stay under the device tool's 64 MiB.
# run: unpacks, runs test_fdtd_bad_input's CUDA tests alone first (its out-of-memory case reads
#   the free GPU memory), then every listed test as its own process (as ctest does), JOBS
#   (default 6) at a time, each under a cap of CAP seconds (default 240), the whole within
#   SECONDS (default 180). One line a test in $OUT/summary.txt as it ends (PASS / SKIP /
#   FAIL(rc=N) and seconds), the output of every test that did not pass in $OUT/logs.tar.gz.
#   Session 32 learned the caps: eight GPU-heavy tests at once (the longest first) share the GPU
#   eightfold; the full-head FDFD and the FDFD regularization tests, 39 and 46 s in a ctest -j8
#   suite, passed 120 s there.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case "$mode" in
pack)
  build=${2:?usage: carried_gpu_tests.sh pack BUILD_DIR [JUNIT]}
  junit=${3:-}
  mkdir -p .carry
  python3 - "$build/testing" "$junit" > .carry/gpu_tests.txt <<'EOF'
import os, re, subprocess, sys, xml.etree.ElementTree as ET
folder, junit = sys.argv[1], sys.argv[2]
times = {}
if junit:
    for tc in ET.parse(junit).iter('testcase'):
        times[tc.get('name')] = float(tc.get('time') or 0)
whole = {'test_fdtd_cpu_cuda_agreement', 'test_fdtd2d_cpu_cuda_agreement', 'test_fdtd_schemes_cuda_agreement'}
rows = []
for b in sorted(os.listdir(folder)):
    path = os.path.join(folder, b)
    if not b.startswith('test_') or '[' in b or not os.access(path, os.X_OK) or os.path.isdir(path):
        continue
    out = subprocess.run([path, '--gtest_list_tests'], capture_output=True, text=True).stdout
    suite = None
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(' '):
            suite = line.split('#')[0].strip()
            continue
        name = suite + line.strip().split('#')[0].strip()
        if b in whole or re.search('cuda|Cuda|CUDA|Gpu|GPU', name):
            rows.append((times.get(name, 5.0), b, name))
rows.sort(key=lambda r: -r[0])
for t, b, name in rows:
    print(b, name)
EOF
  stage=$(mktemp -d)
  for b in $(awk '{print $1}' .carry/gpu_tests.txt | sort -u); do cp "$build/testing/$b" "$stage/"; done
  strip "$stage"/*
  tar -cf - -C "$stage" . | zstd -T0 --long=30 -19 -q -f -o .carry/gpu_tests.tar.zst
  rm -rf "$stage"
  cp "$(command -v zstd)" .carry/zstd
  git rev-parse --short HEAD > .carry/gpu_tests.commit
  if ! git diff --quiet HEAD; then echo "(with uncommitted changes)" >> .carry/gpu_tests.commit; fi
  echo "pack: $(wc -l < .carry/gpu_tests.txt) tests of $(awk '{print $1}' .carry/gpu_tests.txt | sort -u | wc -l) programs," \
       "$(du -h .carry/gpu_tests.tar.zst | cut -f1), commit $(head -1 .carry/gpu_tests.commit)"
  ;;
run)
  total=${2:-180}
  jobs=${JOBS:-6}
  cap=${CAP:-240}
  : "${OUT:?run: OUT, the output folder of the device tool, is not set}"
  bins=$(mktemp -d)
  t0=$(date +%s)
  .carry/zstd -d -q --long=30 -c .carry/gpu_tests.tar.zst | tar -xf - -C "$bins"
  summary=$OUT/summary.txt
  {
    echo "commit $(tr '\n' ' ' < .carry/gpu_tests.commit)(binaries built on the development machine)"
    nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader 2>&1
    echo "jobs $jobs, cap $cap s a test, $total s in all; unpacked in $(( $(date +%s) - t0 )) s"
  } > "$summary"
  mkdir -p "$OUT/logs"
  export OMP_NUM_THREADS=2 bins summary cap OUT
  one() {  # program test
    local log=$OUT/logs/$(echo "$1.$2" | tr '/' '_').log t1=$EPOCHREALTIME rc res=PASS
    timeout "$cap" "$bins/$1" --gtest_filter="$2" > "$log" 2>&1
    rc=$?
    if [ $rc != 0 ]; then res="FAIL(rc=$rc)"; elif grep -q '^\[  SKIPPED \] 1 test' "$log"; then res=SKIP; fi
    echo "$res $1 $2 $(awk "BEGIN{printf \"%.1f\", $EPOCHREALTIME - $t1}")" >> "$summary"
    if [ $res = PASS ]; then rm -f "$log"; fi
  }
  export -f one
  timeout 60 "$bins/test_fdtd_bad_input" --gtest_filter='*cuda*:*Cuda*:*CUDA*' > "$OUT/logs/bad_input_alone.log" 2>&1
  echo "test_fdtd_bad_input alone: rc=$? $(grep -E '^\[  (PASSED|FAILED) +\]' "$OUT/logs/bad_input_alone.log" | tr '\n' ' ')" >> "$summary"
  grep -v '^test_fdtd_bad_input ' .carry/gpu_tests.txt > "$bins/list.txt"
  echo "$(wc -l < "$bins/list.txt") tests, $jobs at a time" >> "$summary"
  left=$(( total - ($(date +%s) - t0) ))
  timeout "$left" xargs -P "$jobs" -L 1 bash -c 'one "$0" "$1"' < "$bins/list.txt"
  echo "ended at $(( $(date +%s) - t0 )) s: $(grep -c '^PASS' "$summary") passed, $(grep -c '^SKIP' "$summary") skipped," \
       "$(grep -c '^FAIL' "$summary") failed, $(( $(wc -l < "$bins/list.txt") - $(grep -cE '^(PASS|SKIP|FAIL)' "$summary") )) not run" >> "$summary"
  tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$OUT/logs"
  ;;
*)
  echo "usage: carried_gpu_tests.sh pack BUILD_DIR [JUNIT] | run [SECONDS]" >&2
  exit 2
  ;;
esac
