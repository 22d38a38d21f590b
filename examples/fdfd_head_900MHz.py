#!/usr/bin/env pvpython
"""VoxelEM FDFD example: a 900 MHz plane wave on the head phantom, seen from the side.

HeadPhantom (tissue labels) -> FDFDSolver (labels + the built-in Gabriel tissue table at 900 MHz,
a z-polarized unit plane wave travelling along +x, i.e. arriving at the head's left side:
IncidentTheta = 90, IncidentPhi = 0, Polarization = 180 gives E0 = +z), then:

  <out>/head_fdfd.vti          fields: E_scat / E_total (real, imag), |E|, SAR, tissue, materials
  <out>/Escat_z_xy.png         Re(E_scat,z) (V/m, the scattered field at t = 0) on the axial (xy)
                               cut through the centre of the head
  <out>/Emag_xy.png            |E_total| on the same cut
  <out>/residuals.csv, rcs.csv the residual history and the bistatic RCS cuts
  <out>/summary.json           grid, solver, iterations, residual, field and SAR statistics

  pvpython --force-offscreen-rendering examples/fdfd_head_900MHz.py --size quick --backend cpu
  pvpython --force-offscreen-rendering examples/fdfd_head_900MHz.py --size default --backend cuda
  pvpython --force-offscreen-rendering examples/fdfd_head_900MHz.py --size fine --method gcr-fdtd

The plugin is found from --plugin, $VOXELEM_PLUGIN, or the usual build folders.
"""
import argparse
import json
import os
import sys
import time

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from voxelem_example_common import find_plugin  # noqa: E402

SIZES = {
    # name: (voxels, spacing m, PML cells, air padding cells)
    "quick": ((40, 40, 20), (0.00704, 0.00704, 0.009), 8, 4),
    "default": ((64, 64, 32), (0.0044, 0.0044, 0.0056), 10, 6),
    "fine": ((128, 128, 64), (0.0022, 0.0022, 0.0028), 12, 8),
}
ORIGIN = (-0.1408, -0.1408, -0.095)  # frames the head (head_phantom.h)
METHODS = {"auto": "Auto", "bicgstab": "BiCGSTAB", "cocg": "COCG", "cocr": "COCR",
           "gcr-fdtd": "GCR + FDTD preconditioner"}


def slice_png(fdfd, array, component, title, png, symmetric, resolution):
    view = CreateView("RenderView")
    view.ViewSize = list(resolution)
    view.OrientationAxesVisibility = 0
    view.Background = [1, 1, 1]
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    sl = Slice(Input=fdfd)
    sl.SliceType = "Plane"
    sl.SliceType.Origin = [0.0, 0.0, 0.0]
    sl.SliceType.Normal = [0.0, 0.0, 1.0]
    disp = Show(sl, view)
    ColorBy(disp, ("CELLS", array, component) if component else ("CELLS", array))
    lut = GetColorTransferFunction(array)
    data = servermanager.Fetch(sl)
    a = vtk_to_numpy(data.GetCellData().GetArray(array))
    v = a[:, {"X": 0, "Y": 1, "Z": 2}[component]] if component else a
    if symmetric:
        top = float(np.percentile(np.abs(v), 99.5)) or 1.0
        lut.ApplyPreset("Cool to Warm", True)
        lut.RescaleTransferFunction(-top, top)
    else:
        top = float(np.percentile(v, 99.5)) or 1.0
        lut.ApplyPreset("Inferno (matplotlib)", True)
        lut.RescaleTransferFunction(0.0, top)
    lut.AutomaticRescaleRangeMode = "Never"
    bar = GetScalarBar(lut, view)
    bar.Title = title
    bar.ComponentTitle = ""
    bar.TitleColor = [0, 0, 0]
    bar.LabelColor = [0, 0, 0]
    bar.Visibility = 1
    # The head outline: tissue > 0 contour on the same cut.
    outline = Contour(Input=CellDatatoPointData(Input=sl), ContourBy=["POINTS", "tissue"], Isosurfaces=[0.5])
    od = Show(outline, view)
    ColorBy(od, None)
    od.AmbientColor = od.DiffuseColor = [0.1, 0.1, 0.1]
    od.LineWidth = 2.0
    text = Text(Text=title)
    td = Show(text, view)
    td.WindowLocation = "Upper Center"
    td.Color = [0, 0, 0]
    td.FontSize = 14
    view.CameraPosition = [0, 0, 1]
    view.CameraFocalPoint = [0, 0, 0]
    view.CameraViewUp = [0, 1, 0]
    view.ResetCamera()
    Render(view)
    SaveScreenshot(png, view, ImageResolution=list(resolution))
    Delete(view)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plugin")
    ap.add_argument("--out", default="fdfd-head-output")
    ap.add_argument("--size", choices=sorted(SIZES), default="quick")
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--precision", choices=["complex128", "complex64"], default="complex128")
    ap.add_argument("--method", choices=sorted(METHODS), default="auto",
                    help="Krylov method; gcr-fdtd: GCR with the FDTD time-domain preconditioner "
                         "(fastest on the head: 2-3 outer iterations)")
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--max-iterations", type=int, default=20000)
    ap.add_argument("--resolution", type=int, nargs=2, default=[900, 800])
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    plugin = find_plugin(args.plugin)
    if not plugin:
        sys.exit("VoxelEMPlugin.so not found: give --plugin or set VOXELEM_PLUGIN")
    LoadPlugin(plugin, remote=False, ns=globals())

    dims, spacing, pml, pad = SIZES[args.size]
    phantom = HeadPhantom(Dimensions=list(dims), Spacing=list(spacing), Origin=list(ORIGIN))
    backend = {"auto": "Auto", "cpu": "CPU", "cuda": "CUDA"}[args.backend]
    fdfd = FDFDSolver(Input=phantom, MaterialMode="Labels + tissue table", Frequency=900e6,
                      IncidentTheta=90.0, IncidentPhi=0.0, Polarization=180.0,
                      PMLThickness=pml, AirPadding=pad, Tolerance=args.tolerance,
                      MaxIterations=args.max_iterations, Precision=args.precision, Backend=backend,
                      Method=METHODS[args.method])
    t0 = time.time()
    fdfd.UpdatePipeline()
    wall = time.time() - t0
    algo = fdfd.GetClientSideObject()
    out = algo.GetOutputDataObject(0)
    if out.GetNumberOfCells() == 0:
        sys.exit("the FDFD solve produced no output (see the errors above)")
    res, rcs = algo.GetOutputDataObject(1), algo.GetOutputDataObject(2)

    SaveData(os.path.join(args.out, "head_fdfd.vti"), proxy=fdfd, ChooseArraysToWrite=0)
    col = lambda t, n: vtk_to_numpy(t.GetColumnByName(n))
    np.savetxt(os.path.join(args.out, "residuals.csv"),
               np.column_stack([col(res, "iteration"), col(res, "relative_residual"),
                                col(res, "true_relative_residual")]),
               delimiter=",", fmt="%.6g", header="iteration,relative_residual,true_relative_residual",
               comments="")
    if rcs.GetNumberOfRows() > 0:
        np.savetxt(os.path.join(args.out, "rcs.csv"),
                   np.column_stack([col(rcs, "theta_deg"), col(rcs, "rcs_E_plane_dBsm"),
                                    col(rcs, "rcs_H_plane_dBsm")]),
                   delimiter=",", fmt="%.6g", header="theta_deg,rcs_E_plane_dBsm,rcs_H_plane_dBsm",
                   comments="")

    slice_png(fdfd, "E_scat_real", "Z", "Re E_scat,z (V/m), 900 MHz, E0 = z, k = +x",
              os.path.join(args.out, "Escat_z_xy.png"), True, args.resolution)
    slice_png(fdfd, "E_magnitude", None, "|E_total| (V/m), 900 MHz, |E0| = 1 V/m",
              os.path.join(args.out, "Emag_xy.png"), False, args.resolution)

    cd = out.GetCellData()
    tissue = vtk_to_numpy(cd.GetArray("tissue"))
    mag = vtk_to_numpy(cd.GetArray("E_magnitude"))
    sar = vtk_to_numpy(cd.GetArray("SAR")) if cd.GetArray("SAR") else np.zeros(1)
    head = tissue > 0
    it, tr = col(res, "iteration"), col(res, "true_relative_residual")
    summary = {
        "size": args.size, "voxels": list(dims), "spacing_m": list(spacing), "pml": pml,
        "air_padding": pad, "output_cells": int(out.GetNumberOfCells()),
        "backend": args.backend, "method": args.method, "precision": args.precision,
        "tolerance": args.tolerance,
        "iterations": int(it[-1]), "final_true_relative_residual": float(tr[-1]),
        "wall_seconds": wall,
        "E_total_in_head_V_per_m": {"mean": float(mag[head].mean()), "max": float(mag[head].max())},
        "SAR_W_per_kg": {"mean_in_head": float(sar[head].mean()) if sar.size > 1 else 0.0,
                         "max": float(sar.max())},
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
