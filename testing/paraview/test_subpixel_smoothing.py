"""The SubpixelSmoothing property of FDTD Solver, FDTD Steady State and FDFD Solver (issue 15),
pvpython, CPU:

  pvpython test_subpixel_smoothing.py --plugin VoxelEMPlugin.so

What the physics predicts, checked in each analysis (transient, steady state, FDFD):

- No interface, no change: a homogeneous lossy dielectric (eps_r 4, 0.5 S/m) filling a box that is
  periodic on every face (no padding) has no interface anywhere, so every E sample keeps its
  material and the fields with smoothing on equal those with it off, bit for bit. (FDFD pads every
  face with vacuum, so there the model without interface is all vacuum.)
- A planar interface on voxel faces: Meep's anisotropic average gives the tangential E samples on
  the interface the arithmetic mean of eps (and of sigma: volume mean in FDTD) and leaves the normal
  samples, whose dual cells lie inside one layer, unchanged. That is exactly what the edge average
  (AverageAtEdges, property arrays) does, so a layered model (layers along z, periodic in x and y)
  gives the fields of AverageAtEdges with smoothing on (to float rounding), and they differ from the
  staircase (AverageAtEdges off) by much more. FDFD has no periodic faces: a dielectric box, whose
  faces are planes but whose edges the label interpolation rounds, so smoothing is much closer to
  the edge average than to the staircase there.
- A curved interface (the Head Phantom, labels + tissue table) changes the fields, which stay finite.
- SubpixelSmoothing replaces AverageAtEdges (the same fields whichever AverageAtEdges is).
- A 2D image is refused with one message naming SubpixelSmoothing, outputs empty.
"""
import argparse
import os
import sys

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkImageData

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vem_pvtest import Capture, Checker, check_refused  # noqa: E402

H = 0.002  # voxel size (m)


def image(n, eps, sigma):
    """n = (nx, ny, nz) cells of H; eps, sigma: functions of the cell index k along z (numpy)."""
    img = vtkImageData()
    img.SetDimensions(n[0] + 1, n[1] + 1, n[2] + 1)
    img.SetSpacing(H, H, H)
    img.SetOrigin(*[-0.5 * m * H for m in n])
    k = np.repeat(np.arange(n[2]), n[0] * n[1])
    for name, f in (("permittivity", eps), ("conductivity", sigma)):
        a = numpy_to_vtk(np.ascontiguousarray(f(k), dtype=np.float32), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(img)
    return src


def fetch(proxy, names, t=None):
    """The cell arrays `names` of output 0 (None for a missing one) and what VTK printed."""
    with Capture() as cap:
        proxy.UpdatePipeline(t) if t is not None else proxy.UpdatePipeline()
        d = servermanager.Fetch(proxy)
    out = []
    for name in names:
        a = d.GetCellData().GetArray(name) if d is not None else None
        out.append(None if a is None else vtk_to_numpy(a).astype(np.float64).copy())
    return out, cap.text


def rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


class Runs:
    """Runs one filter kind with properties varied around a base; returns the chosen arrays."""

    def __init__(self, c, label, make, names, last_time=False):
        self.c, self.label, self.make, self.names, self.last_time = c, label, make, names, last_time

    def __call__(self, what, src, **props):
        f = self.make(src, **props)
        t = None
        if self.last_time:
            f.UpdatePipelineInformation()
            t = list(f.TimestepValues)[-1]
        arrays, text = fetch(f, self.names, t)
        Delete(f)
        ok = "ERROR" not in text and all(a is not None and a.size > 0 and np.all(np.isfinite(a)) for a in arrays)
        self.c.check(ok, "%s, %s: no error, %s finite (%s)" % (self.label, what, "/".join(self.names),
                                                              text.strip()[:300]))
        return np.concatenate([a.ravel() for a in arrays]) if ok else None


def planar_checks(c, label, run, layered, homogeneous, periodic_xy, periodic_all, exact_planar=True):
    # No interface: identical.
    if homogeneous is not None:
        off = run("homogeneous, off", homogeneous, AverageAtEdges=0, SubpixelSmoothing=0, **periodic_all)
        on = run("homogeneous, on", homogeneous, AverageAtEdges=0, SubpixelSmoothing=1, **periodic_all)
        if off is not None and on is not None:
            c.check(np.abs(off).max() > 0 and np.array_equal(on, off),
                    "%s: no interface -> smoothing on gives the same fields bit for bit (max |diff| %.3g)"
                    % (label, np.abs(on - off).max()))
    stair = run("layered, staircase", layered, AverageAtEdges=0, SubpixelSmoothing=0, **periodic_xy)
    edge = run("layered, edge average", layered, AverageAtEdges=1, SubpixelSmoothing=0, **periodic_xy)
    smooth = run("layered, smoothing", layered, AverageAtEdges=0, SubpixelSmoothing=1, **periodic_xy)
    smooth_edge = run("layered, smoothing + AverageAtEdges", layered, AverageAtEdges=1, SubpixelSmoothing=1,
                      **periodic_xy)
    if any(x is None for x in (stair, edge, smooth, smooth_edge)):
        return
    c.check(np.array_equal(smooth, smooth_edge),
            "%s: SubpixelSmoothing replaces AverageAtEdges (max |diff| %.3g)" % (label, np.abs(smooth - smooth_edge).max()))
    d_edge, d_stair = rel(smooth, edge), rel(smooth, stair)
    if exact_planar:
        c.check(d_edge < 1e-5 and d_stair > 1e-3,
                "%s: planar interface -> smoothing = arithmetic mean on the tangential samples = the edge "
                "average (rel. diff %.2e < 1e-5), not the staircase (rel. diff %.2e > 1e-3)" % (label, d_edge, d_stair))
    else:
        c.check(d_stair > 1e-3 and d_edge < 0.25 * d_stair,
                "%s: a box (planar faces, rounded edges) -> smoothing near the edge average (rel. diff %.2e) "
                "and away from the staircase (rel. diff %.2e, > 4x and > 1e-3)" % (label, d_edge, d_stair))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    args = ap.parse_args()
    LoadPlugin(args.plugin, remote=False, ns=globals())
    c = Checker()

    # Models. Layered: vacuum below z = 0, eps_r 4 / 0.5 S/m above (planes of voxel faces).
    n = (6, 6, 16)
    layered = image(n, lambda k: np.where(k >= n[2] // 2, 4.0, 1.0), lambda k: np.where(k >= n[2] // 2, 0.5, 0.0))
    homogeneous = image((8, 8, 8), lambda k: np.full(k.shape, 4.0), lambda k: np.full(k.shape, 0.5))
    periodic_xy = dict(XLowBoundary="Periodic", XHighBoundary="Periodic", YLowBoundary="Periodic",
                       YHighBoundary="Periodic")
    periodic_all = dict(periodic_xy, ZLowBoundary="Periodic", ZHighBoundary="Periodic")
    common = dict(MaterialMode="Property arrays", Backend="CPU", AirPadding=4, CPMLThickness=6,
                  Dimension="3D")
    source = dict(SourcePosition=[0.0005, 0.0003, -0.006], SourcePolarization=[0.6, 0.0, 0.8])

    # Transient: |E| and E at the last snapshot.
    def transient(src, **props):
        kw = dict(common, **source)
        kw.update(props)
        return FDTDSolver(Input=src, NumberOfSteps=120, SnapshotInterval=120, SourceFrequency=3e9, **kw)
    planar_checks(c, "FDTD Solver", Runs(c, "FDTD Solver", transient, ["E"], last_time=True),
                  layered, homogeneous, periodic_xy, periodic_all)

    # Steady state: the phasors of a point source (one-edge dipole) at 3 GHz, a fixed number of steps.
    def steady(src, **props):
        kw = dict(common, **source)
        kw.update(SourcePolarization=[0.0, 0.0, 1.0])  # one-edge dipole along an axis
        kw.update(props)
        return FDTDSteadyState(Input=src, Illumination="Point source", DFTFrequencies=[3e9], FixedSteps=400,
                               **kw)
    # (Every face periodic leaves the steady state's near-to-far box no room: PEC z faces without
    # padding instead, the source in the middle; the tangential E samples on the walls, the only
    # ones whose dual cells reach past the model, are held at 0 by them.)
    walled = dict(periodic_xy, ZLowBoundary="PEC", ZHighBoundary="PEC", AirPadding=0,
                  SourcePosition=[0.0005, 0.0003, 0.0])
    planar_checks(c, "FDTD Steady State", Runs(c, "FDTD Steady State", steady, ["E_real", "E_imag"]),
                  layered, homogeneous, periodic_xy, walled)

    # FDFD: a plane wave on a dielectric box (the whole image, padded with vacuum), 3 GHz.
    box = image((6, 6, 6), lambda k: np.full(k.shape, 4.0), lambda k: np.full(k.shape, 0.5))
    vacuum = image((6, 6, 6), lambda k: np.full(k.shape, 1.0), lambda k: np.full(k.shape, 0.0))

    def fdfd(src, **props):
        kw = dict(MaterialMode="Property arrays", Backend="CPU", AirPadding=4, PMLThickness=6, Frequency=3e9,
                  Tolerance=1e-8, MaxIterations=5000)
        kw.update(props)
        return FDFDSolver(Input=src, **kw)
    planar_checks(c, "FDFD Solver", Runs(c, "FDFD Solver", fdfd, ["E_scat_real", "E_scat_imag"]), box, None,
                  {}, {}, exact_planar=False)
    fr = Runs(c, "FDFD Solver", fdfd, ["E_total_real", "E_total_imag"])
    off, on = fr("vacuum, off", vacuum, SubpixelSmoothing=0), fr("vacuum, on", vacuum, SubpixelSmoothing=1)
    if off is not None and on is not None:
        c.check(np.array_equal(on, off), "FDFD Solver: no interface (all vacuum) -> the same fields bit for bit "
                "(max |diff| %.3g)" % np.abs(on - off).max())

    # Curved interfaces: the Head Phantom's labels, each analysis.
    phantom = HeadPhantom(Dimensions=[14, 16, 18], Spacing=[0.01, 0.01, 0.01], Origin=[-0.07, -0.08, -0.09])
    labels = dict(MaterialMode="Labels + tissue table", Backend="CPU")
    curved = [
        ("FDTD Solver", lambda s, **p: FDTDSolver(Input=s, NumberOfSteps=60, SnapshotInterval=60, AirPadding=4,
                                                  CPMLThickness=6, SourcePosition=[0.08, 0.0, 0.0], **labels, **p),
         ["E_magnitude"], True),
        ("FDTD Steady State", lambda s, **p: FDTDSteadyState(Input=s, Illumination="Point source",
                                                             DFTFrequencies=[900e6], FixedSteps=300, AirPadding=4,
                                                             CPMLThickness=6, SourcePosition=[0.08, 0.0, 0.0],
                                                             **labels, **p), ["E_magnitude"], False),
        ("FDFD Solver", lambda s, **p: FDFDSolver(Input=s, AirPadding=4, PMLThickness=6, Tolerance=1e-6,
                                                  MaxIterations=5000, **labels, **p), ["E_magnitude"], False),
    ]
    for label, make, names, last in curved:
        r = Runs(c, label, make, names, last_time=last)
        off, on = r("head, off", phantom, SubpixelSmoothing=0), r("head, on", phantom, SubpixelSmoothing=1)
        if off is not None and on is not None:
            d = rel(on, off)
            c.check(d > 1e-3, "%s: curved tissue interfaces -> smoothing changes |E| (rel. diff %.3g)" % (label, d))

    # 2D: refused, one message naming the property, empty output.
    flat = HeadPhantom(Dimensions=[20, 22, 1], Spacing=[0.01, 0.01, 0.01], Origin=[-0.1, -0.11, 0.0])
    f = FDTDSolver(Input=flat, MaterialMode="Labels + tissue table", Backend="CPU", SubpixelSmoothing=1,
                   NumberOfSteps=20, AirPadding=4, CPMLThickness=6)
    check_refused(c, f, ["SubpixelSmoothing", "3D"], "2D image + SubpixelSmoothing")
    Delete(f)

    if c.failures:
        print("FAILED: %d check(s)" % len(c.failures))
        sys.exit(1)
    print("all checks passed")


main()
