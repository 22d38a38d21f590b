"""pvpython test: FDTD Solver and FDTD Steady State on 2D images (issue 14).

- A 60 x 60 image of 2 mm cells, one cell thick along z, x or y (and a flat image with one point
  along y): FDTD Solver (CPU, TM and TE) runs the 2D solver, its output lies in the input's plane
  (same orientation, flat for the flat input), E has only the normal component in TM and only
  in-plane components in TE, the three orientations give the same numbers (the axes mapped), the
  probe table has the polarization's components named in 3D, the backend says "2D".
- A dielectric block in TM: the field inside differs from vacuum (the materials reach the 2D grid).
- Plane wave (TF/SF at IncidentAngle2D) in TM: E appears inside the total-field box, the
  scattered-field region stays near zero in vacuum.
- FDTD Steady State, TM point source at 10 GHz: E_real / E_imag in the plane, the summary says
  converged, the far-field table has phi_deg; a plane wave gives scattering_width_m.
- Bad values: Polarization2D = 5, IncidentAngle2D = nan (plane wave), a TM source polarized in the
  plane, a half-wave dipole, two DFT frequencies in 2D: each prints one message naming the
  member / property, and every output is empty.
- Dimension = 3D on a one-cell-thick image runs the 3D solver.

  pvpython test_fdtd2d_pipeline.py --plugin VoxelEMPlugin.so
"""
import argparse
import math
import sys

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager as sm

import numpy as np
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData

from vem_pvtest import Checker, update_capturing

ap = argparse.ArgumentParser()
ap.add_argument("--plugin", required=True)
args = ap.parse_args()
LoadPlugin(args.plugin, remote=False, ns=globals())
chk = Checker()

N, H = 60, 2e-3
TM, TE = "TM (E normal to the plane)", "TE (E in the plane)"


def image(normal, flat=False, eps=None):
    img = vtkImageData()
    dims = [N + 1] * 3
    dims[normal] = 1 if flat else 2
    img.SetDimensions(*dims)
    img.SetSpacing(H, H, H)
    origin = [-N * H / 2] * 3
    origin[normal] = 0.0
    img.SetOrigin(*origin)
    nc = img.GetNumberOfCells()
    e = np.ones(nc) if eps is None else eps
    for name, v in (("permittivity", e), ("conductivity", np.zeros(nc))):
        a = numpy_to_vtk(np.ascontiguousarray(v, dtype=np.float64), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(img)
    return src, img


def centre(normal, flat):
    p = [0.0, 0.0, 0.0]
    p[normal] = 0.0 if flat else H / 2
    return p


def solver(src, normal, flat, pol, **kw):
    f = FDTDSolver(Input=src)
    f.Backend = "CPU"
    f.AirPadding = 4
    f.CPMLThickness = 8
    f.NumberOfSteps = 80
    f.SnapshotInterval = 40
    f.SourcePosition = centre(normal, flat)
    sp = [0.0, 0.0, 0.0]
    sp[normal if pol == TM else (normal + 1) % 3] = 1.0
    f.SourcePolarization = sp
    f.Polarization2D = pol
    probe = centre(normal, flat)
    probe[(normal + 1) % 3] = 10 * H
    f.ProbePositions = probe
    for k, v in kw.items():
        setattr(f, k, v)
    return f


def fetch(f, port=0):
    return sm.Fetch(f, idx=port)


# 1. Orientations, TM and TE.
reference = {}
for normal, flat in ((2, False), (0, False), (1, False), (1, True)):
    src, img = image(normal, flat)
    for pol in (TM, TE):
        f = solver(src, normal, flat, pol)
        text = update_capturing(f)
        out = fetch(f)
        tag = "normal %s%s %s" % ("xyz"[normal], " (flat)" if flat else "", pol[:2])
        chk.check("ERR" not in text, tag + ": no error (%s)" % text.strip()[:200])
        dims = list(out.GetDimensions())
        expect = [N + 9, N + 9, N + 9]  # voxels + 2 x padding + 1 points
        expect[normal] = 1 if flat else 2
        chk.check(dims == expect, tag + ": output dims %s == %s" % (dims, expect))
        chk.check(abs(out.GetOrigin()[normal] - 0.0) < 1e-12, tag + ": output in the input's plane")
        backend = out.GetFieldData().GetAbstractArray("backend").GetValue(0)
        chk.check("2D " + pol[:2] in backend, tag + ": backend '%s' says 2D" % backend)
        E = dsa.WrapDataObject(out).CellData["E"]
        amax = np.abs(E).max(axis=0)
        normal_only = amax[normal] > 0 and all(amax[a] == 0 for a in range(3) if a != normal)
        in_plane = amax[normal] == 0 and amax[(normal + 1) % 3] > 0
        chk.check(normal_only if pol == TM else in_plane, tag + ": E components %s" % amax)
        # The same run in every orientation: the field along the normal / first in-plane axis.
        key = pol[:2]
        main = amax[normal] if pol == TM else amax[(normal + 1) % 3]
        if key in reference:
            chk.check(abs(main - reference[key]) <= 1e-6 * reference[key],
                      tag + ": max |E| %.6e equals the z-normal run's %.6e" % (main, reference[key]))
        else:
            reference[key] = main
        table = fetch(f, 1)
        names = [table.GetColumnName(c) for c in range(table.GetNumberOfColumns())]
        comps = ["E" + "xyz"[normal]] if pol == TM else ["E" + "xyz"[(normal + 1) % 3], "E" + "xyz"[(normal + 2) % 3]]
        want = ["probe0_" + c for c in comps] + ["source_" + c for c in comps]
        chk.check(all(w in names for w in want) and table.GetNumberOfRows() == 80,
                  tag + ": probe columns %s include %s, 80 rows" % (names, want))
        Delete(f)
    Delete(src)

# 2. A dielectric block changes the TM field.
eps = np.ones(N * N)
eps.reshape(N, N)[20:40, 20:40] = 4.0
src, img = image(2, eps=eps)
f_block = solver(src, 2, False, TM, NumberOfSteps=120, SnapshotInterval=120)
f_block.UpdatePipeline()
src0, _ = image(2)
f_vac = solver(src0, 2, False, TM, NumberOfSteps=120, SnapshotInterval=120)
f_vac.UpdatePipeline()
eb = dsa.WrapDataObject(fetch(f_block)).CellData["E"][:, 2]
ev = dsa.WrapDataObject(fetch(f_vac)).CellData["E"][:, 2]
chk.check(np.abs(eb - ev).max() > 0.05 * np.abs(ev).max(), "dielectric block: the TM field differs from vacuum")
perm = dsa.WrapDataObject(fetch(f_block)).CellData["permittivity"]
chk.check(abs(float(np.max(perm)) - 4.0) < 1e-6, "dielectric block: permittivity 4 on the output")
Delete(f_block)
Delete(f_vac)

# 3. Plane wave at 30 degrees in TM.
pw = FDTDSolver(Input=src0)
pw.Backend = "CPU"
pw.AirPadding = 8
pw.CPMLThickness = 8
pw.Illumination = "Plane wave"
pw.IncidentAngle2D = 30.0
pw.SourceFrequency = 5e9
pw.NumberOfSteps = 200
pw.SnapshotInterval = 200
text = update_capturing(pw)
chk.check("ERR" not in text, "plane wave: no error (%s)" % text.strip()[:200])
out = fetch(pw)
Ez = dsa.WrapDataObject(out).CellData["E"][:, 2].reshape(N + 16, N + 16)
inside, outside = np.abs(Ez[10:-10, 10:-10]).max(), np.abs(Ez[:2, :]).max()
chk.check(inside > 0.3 and outside < 0.05 * inside,
          "plane wave: total field %.3f inside the box, scattered-field region %.2e in vacuum" % (inside, outside))
Delete(pw)

# 4. Steady state in 2D.
ss = FDTDSteadyState(Input=src0)
ss.Backend = "CPU"
ss.AirPadding = 4
ss.CPMLThickness = 8
ss.DFTFrequencies = [10e9]
ss.SourcePosition = [0.0, 0.0, H / 2]
ss.SourcePolarization = [0.0, 0.0, 1.0]
text = update_capturing(ss)
chk.check("ERR" not in text, "steady state 2D: no error")
chk.check("not computed in 2D" in text, "steady state 2D: the warning says what is not available")
out = fetch(ss)
names = [out.GetCellData().GetArrayName(i) for i in range(out.GetCellData().GetNumberOfArrays())]
chk.check(all(n in names for n in ("E_real", "E_imag", "H_real", "H_imag", "E_magnitude")), "steady state 2D: arrays %s" % names)
Er = dsa.WrapDataObject(out).CellData["E_real"]
chk.check(np.abs(Er[:, 2]).max() > 0 and np.abs(Er[:, :2]).max() == 0, "steady state 2D: TM phasor along z only")
summary = fetch(ss, 1)
conv = summary.GetColumnByName("converged")
chk.check(conv is not None and conv.GetValue(0) == 1.0, "steady state 2D: summary says converged")
far = fetch(ss, 2)
chk.check(far.GetColumnByName("phi_deg") is not None and far.GetNumberOfRows() == 180, "steady state 2D: far field per 2 degrees")
ss.Illumination = "Plane wave"
ss.AirPadding = 8
text = update_capturing(ss)
far = fetch(ss, 2)
chk.check("ERR" not in text and far.GetColumnByName("scattering_width_m") is not None,
          "steady state 2D plane wave: scattering_width_m column")
Delete(ss)


# 5. Bad values: one message, empty outputs.
def bad(label, make, expect):
    f = make()
    text = update_capturing(f)
    n = text.count(expect)
    out = fetch(f)
    empty = out.GetNumberOfCells() == 0 and out.GetCellData().GetNumberOfArrays() == 0
    chk.check(n == 1 and text.count("ERROR") == 1 and empty,
              "%s: one message containing '%s' (found %d; printed: %s), empty output %s" % (label, expect, n, text.strip()[-300:], empty))
    Delete(f)


def polarization5():
    f = solver(src0, 2, False, TM)
    f.SMProxy.GetProperty("Polarization2D").SetElement(0, 5)
    f.SMProxy.UpdateVTKObjects()
    return f


bad("Polarization2D = 5", polarization5, "Transient2dOptions::polarization (Polarization2D) = 5")
bad("IncidentAngle2D = nan", lambda: solver(src0, 2, False, TM, Illumination="Plane wave", AirPadding=8,
                                            IncidentAngle2D=float("nan")),
    "Transient2dOptions::incident_angle (IncidentAngle2D) = nan")
bad("TM source in the plane", lambda: solver(src0, 2, False, TM, SourcePolarization=[1.0, 0.0, 0.0]),
    "TransientOptions::source_polarization (SourcePolarization) = (1, 0, 0): has no component along the image's normal z")
bad("half-wave dipole", lambda: solver(src0, 2, False, TM, Illumination="Half-wave dipole"),
    "a thin wire is a 3D object")


def two_freqs():
    s = FDTDSteadyState(Input=src0)
    s.Backend = "CPU"
    s.DFTFrequencies = [5e9, 10e9]
    s.SourcePosition = [0.0, 0.0, H / 2]
    return s


bad("two DFT frequencies in 2D", two_freqs, "a 2D run takes exactly one")

# 6. Dimension = 3D on the one-cell-thick image.
f3 = solver(src0, 2, False, TM, Dimension="3D", NumberOfSteps=20, SnapshotInterval=20)
text = update_capturing(f3)
out = fetch(f3)
backend = out.GetFieldData().GetAbstractArray("backend").GetValue(0)
chk.check("ERR" not in text and "2D" not in backend and out.GetDimensions()[2] == 2 + 2 * 4,
          "Dimension = 3D: a 3D run (backend %s, dims %s)" % (backend, out.GetDimensions()))

print("%d failure(s)" % len(chk.failures))
sys.exit(1 if chk.failures else 0)
