"""FDTD Solver / FDTD Steady State with the Scheme property (issue 15), pvpython, CPU:

  pvpython test_fdtd_scheme.py --plugin VoxelEMPlugin.so

- every scheme the engine steps (Yee, FV24, FV24-WB, S{2,2}) runs a small cubic head model: the
  time step reported (TimeStep) is the scheme's own (S = c dt / h from fdtd_scheme.h: 0.99 of its
  limit, so FV24's dt differs from Yee's), the output time steps are multiples of it, the fields are
  finite and non-zero, and a high-order run differs from Yee's;
- FDTD Steady State runs with FV24 (the dipole's phasors and SAR finite);
- a plane wave (TF/SF with the wide-stencil corrections) with FV24 in FDTD Solver and FDTD Steady
  State: fields, SAR and the RCS column finite and non-zero;
- bad uses give one message naming Scheme and leave the outputs empty: non-cubic voxels, a 2D image.
"""
import argparse
import math
import os
import sys

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vem_pvtest import Capture, Checker, fetch_cell_array  # noqa: E402

C0 = 299792458.0


fetch_array = fetch_cell_array


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    args = ap.parse_args()
    LoadPlugin(args.plugin, remote=False, ns=globals())
    c = Checker()
    h = 0.01
    phantom = HeadPhantom(Dimensions=[20, 22, 24], Spacing=[h, h, h], Origin=[-0.1, -0.11, -0.12])
    results = {}
    expected_s = {"Yee (2nd order)": 0.99 / math.sqrt(3.0)}
    for scheme in ["Yee (2nd order)", "FV24 (4th order, narrow-band)", "FV24-WB (4th order, wide-band)",
                   "S{2,2} (narrow-band)"]:
        f = FDTDSolver(Input=phantom, MaterialMode="Labels + tissue table", Backend="CPU", Scheme=scheme,
                       NumberOfSteps=60, SnapshotInterval=30, AirPadding=4, CPMLThickness=6,
                       SourcePosition=[0.11, 0.0, 0.0])
        with Capture() as cap:
            f.UpdatePipelineInformation()
            times = list(f.TimestepValues)
            e = fetch_array(f, "E_magnitude", times[-1])
        f.UpdatePropertyInformation()
        dt = f.GetProperty("TimeStep").GetElement(0)
        c.check("ERR" not in cap.text, "%s: no error (%s)" % (scheme, cap.text.strip()[:200]))
        c.check(e is not None and np.all(np.isfinite(e)) and e.max() > 0,
                "%s: |E| finite and non-zero (max %.3g)" % (scheme, -1 if e is None else e.max()))
        s = C0 * dt / h
        c.check(0.3 < s < 0.8, "%s: Courant number S = c dt / h = %.4f" % (scheme, s))
        c.check(len(times) == 2 and abs(times[-1] - 60 * dt) <= 1e-9 * times[-1],
                "%s: output times are multiples of the scheme's dt (%s, 60 dt = %.6g)" % (scheme, times, 60 * dt))
        if scheme in expected_s:
            c.check(abs(s - expected_s[scheme]) < 1e-9, "%s: S = 0.99 / sqrt(3)" % scheme)
        results[scheme] = (s, e)
        Delete(f)
    yee_s, yee_e = results["Yee (2nd order)"]
    for scheme, (s, e) in results.items():
        if scheme.startswith("Yee") or e is None or yee_e is None:
            continue
        c.check(abs(s - yee_s) > 1e-3, "%s: its own time step (S %.4f, Yee %.4f)" % (scheme, s, yee_s))
        c.check(e.shape == yee_e.shape and not np.array_equal(e, yee_e), "%s: fields differ from Yee's" % scheme)

    # Steady state with FV24: a dipole beside the head.
    st = FDTDSteadyState(Input=phantom, MaterialMode="Labels + tissue table", Backend="CPU",
                         Scheme="FV24 (4th order, narrow-band)", Illumination="Half-wave dipole",
                         DFTFrequencies=[900e6], DipoleCentre=[0.11, 0.0, 0.0], DipoleAxis="z",
                         DipoleLength=0.08, AirPadding=6, CPMLThickness=6, FixedSteps=400)
    with Capture() as cap:
        sar = fetch_array(st, "SAR")
    c.check("ERR" not in cap.text, "steady state, FV24: no error (%s)" % cap.text.strip()[:300])
    c.check(sar is not None and np.all(np.isfinite(sar)) and sar.max() > 0,
            "steady state, FV24: SAR finite and non-zero (max %.3g W/kg)" % (-1 if sar is None else sar.max()))
    Delete(st)

    # A plane wave (TF/SF) with FV24, transient and steady state: the wide-stencil corrections run,
    # the head scatters (|E| in the padding outside the total-field box, far-field table finite).
    pw = FDTDSolver(Input=phantom, MaterialMode="Labels + tissue table", Backend="CPU",
                    Scheme="FV24 (4th order, narrow-band)", Illumination="Plane wave", SourceFrequency=900e6,
                    NumberOfSteps=120, SnapshotInterval=120, AirPadding=8, CPMLThickness=6)
    with Capture() as cap:
        pw.UpdatePipelineInformation()
        e = fetch_array(pw, "E_magnitude", list(pw.TimestepValues)[-1])
    c.check("ERR" not in cap.text, "plane wave, FV24: no error (%s)" % cap.text.strip()[:300])
    c.check(e is not None and np.all(np.isfinite(e)) and e.max() > 0,
            "plane wave, FV24: |E| finite and non-zero (max %.3g)" % (-1 if e is None else e.max()))
    Delete(pw)
    st = FDTDSteadyState(Input=phantom, MaterialMode="Labels + tissue table", Backend="CPU",
                         Scheme="FV24 (4th order, narrow-band)", Illumination="Plane wave",
                         DFTFrequencies=[900e6], AirPadding=8, CPMLThickness=6, FixedSteps=300)
    with Capture() as cap:
        sar = fetch_array(st, "SAR")
        st.UpdatePipeline()
        far = servermanager.Fetch(st, idx=2)
    c.check("ERR" not in cap.text, "steady state plane wave, FV24: no error (%s)" % cap.text.strip()[:300])
    c.check(sar is not None and np.all(np.isfinite(sar)) and sar.max() > 0,
            "steady state plane wave, FV24: SAR finite and non-zero (max %.3g W/kg)" % (-1 if sar is None else sar.max()))
    rcs = None
    if far is not None and far.GetNumberOfRows() > 0:
        col = far.GetColumnByName("rcs_E_plane_m2")
        rcs = vtk_to_numpy(col) if col is not None else None
    c.check(rcs is not None and np.all(np.isfinite(rcs)) and rcs.max() > 0,
            "steady state plane wave, FV24: rcs_E_plane_m2 finite and positive")
    Delete(st)

    # Bad uses: one message naming Scheme, empty output.
    flat = HeadPhantom(Dimensions=[20, 22, 1], Spacing=[h, h, h], Origin=[-0.1, -0.11, 0.0])
    noncubic = HeadPhantom(Dimensions=[20, 22, 16], Spacing=[h, h, 1.5 * h], Origin=[-0.1, -0.11, -0.12])
    for name, src, needle in (("2D image", flat, "run on 3D models"), ("non-cubic voxels", noncubic, "needs cubic")):
        f = FDTDSolver(Input=src, MaterialMode="Labels + tissue table", Backend="CPU",
                       Scheme="FV24 (4th order, narrow-band)", NumberOfSteps=20, AirPadding=4, CPMLThickness=6)
        with Capture() as cap:
            f.UpdatePipeline()
        text = cap.text
        c.check(text.count("ERROR:") == 1 and needle in text and "Scheme" in text,
                "%s + FV24: one message naming Scheme ('%s'): %s" % (name, needle, text.strip()[:300]))
        c.check(f.GetDataInformation().GetNumberOfCells() == 0, "%s + FV24: empty output" % name)
        Delete(f)
    if c.failures:
        print("FAILED: %d check(s)" % len(c.failures))
        sys.exit(1)
    print("all checks passed")


main()
