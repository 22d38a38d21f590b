"""FDTD Solver / FDTD Steady State with the FieldStorage property (issue 16), pvpython, CPU:

  pvpython test_field_storage.py --plugin VoxelEMPlugin.so

On a small head (20 x 22 x 24 voxels of 1 cm, the tissue table):
- FDTD Solver with float16: |E| of the last snapshot finite, not equal to the float32 run's and
  within 1e-2 of it (relative L2);
- FDTD Steady State, plane wave at 900 MHz, SteadyStateTolerance 0.01: float16's SAR within 1e-2
  of float32's (relative L2), not equal;
- bfloat16 with FixedSteps 400: SAR finite and non-zero, within 0.1 of float32's at 400 steps;
- float16 with SteadyStateTolerance 0.001 and no fixed steps: one message naming
  SteadyStateTolerance and FieldStorage, empty output (the solver's rounding floor,
  fdtd_harmonic.cpp);
- a 2D image with float16: one message naming FieldStorage (the 2D solver stores float32), empty
  output.
"""
import argparse
import os
import sys

from paraview.simple import *  # noqa: F401,F403

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vem_pvtest import Capture, Checker, check_refused, fetch_cell_array  # noqa: E402

F32, F16, BF16 = "float32", "float16 (half the field memory)", "bfloat16 (half the field memory)"


def fetch_array(proxy, name, t=None):
    a = fetch_cell_array(proxy, name, t)
    return None if a is None else a.astype(np.float64)


def rel_l2(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    args = ap.parse_args()
    LoadPlugin(args.plugin, remote=False, ns=globals())
    c = Checker()
    h = 0.01
    phantom = HeadPhantom(Dimensions=[20, 22, 24], Spacing=[h, h, h], Origin=[-0.1, -0.11, -0.12])
    common = dict(Input=phantom, MaterialMode="Labels + tissue table", Backend="CPU", CPMLThickness=6)

    # Transient: a point source beside the head.
    e = {}
    for fs in (F32, F16):
        f = FDTDSolver(FieldStorage=fs, NumberOfSteps=60, SnapshotInterval=30, AirPadding=4,
                       SourcePosition=[0.11, 0.0, 0.0], **common)
        with Capture() as cap:
            f.UpdatePipelineInformation()
            e[fs] = fetch_array(f, "E_magnitude", list(f.TimestepValues)[-1])
        c.check("ERR" not in cap.text, "transient %s: no error (%s)" % (fs, cap.text.strip()[:200]))
        Delete(f)
    ok = all(v is not None and np.all(np.isfinite(v)) and v.max() > 0 for v in e.values())
    c.check(ok, "transient: |E| finite and non-zero with both storages")
    if ok:
        r = rel_l2(e[F16], e[F32])
        c.check(0 < r < 1e-2, "transient: float16 |E| within 1e-2 of float32's and not equal (rel L2 %.3g)" % r)

    # Steady state, plane wave.
    sar = {}
    for fs, tol, fixed in ((F32, 0.01, 0), (F16, 0.01, 0), (F32, 0.01, 400), (BF16, 0.01, 400)):
        st = FDTDSteadyState(FieldStorage=fs, Illumination="Plane wave", DFTFrequencies=[900e6], AirPadding=6,
                             SteadyStateTolerance=tol, FixedSteps=fixed, **common)
        with Capture() as cap:
            sar[(fs, fixed)] = fetch_array(st, "SAR")
        c.check("ERR" not in cap.text, "steady state %s, fixed steps %d: no error (%s)" % (fs, fixed, cap.text.strip()[:200]))
        Delete(st)
    ok = all(v is not None and np.all(np.isfinite(v)) and v.max() > 0 for v in sar.values())
    c.check(ok, "steady state: SAR finite and non-zero in every run")
    if ok:
        r = rel_l2(sar[(F16, 0)], sar[(F32, 0)])
        c.check(0 < r < 1e-2, "steady state: float16 SAR within 1e-2 of float32's, not equal (rel L2 %.3g)" % r)
        r = rel_l2(sar[(BF16, 400)], sar[(F32, 400)])
        c.check(0 < r < 0.1, "400 steps: bfloat16 SAR within 0.1 of float32's (rel L2 %.3g)" % r)

    # The tolerance below float16's rounding floor: one message, empty output.
    st = FDTDSteadyState(FieldStorage=F16, Illumination="Plane wave", DFTFrequencies=[900e6], AirPadding=6,
                         SteadyStateTolerance=0.001, FixedSteps=0, **common)
    check_refused(c, st, ["SteadyStateTolerance", "FieldStorage = float16"], "tolerance 0.001 with float16")
    Delete(st)
    # A 2D image (one voxel thick): the 2D solver stores float32, so float16 is refused, not ignored.
    flat = HeadPhantom(Dimensions=[20, 22, 1], Spacing=[h, h, h], Origin=[-0.1, -0.11, 0.0])
    f = FDTDSolver(Input=flat, MaterialMode="Labels + tissue table", Backend="CPU", FieldStorage=F16,
                   NumberOfSteps=20, AirPadding=4, CPMLThickness=6)
    check_refused(c, f, ["FieldStorage = float16", "2D"], "2D image with float16")
    Delete(f)
    if c.failures:
        print("FAILED: %d check(s)" % len(c.failures))
        sys.exit(1)
    print("all checks passed")


main()
