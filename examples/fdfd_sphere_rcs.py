#!/usr/bin/env pvpython
"""VoxelEM FDFD example: bistatic RCS of a dielectric sphere against the Mie series.

A sphere (radius 72 mm, eps_r = 4, the FDFD paper's test object) voxelized on a cubic grid, given
to the FDFD Solver as a permittivity array, lit at 1 GHz by an x-polarized plane wave travelling
along +z. The RCS in the E-plane (xz) and H-plane (yz) from the solver's near-to-far-field
transform is compared with the Mie series (computed here with numpy, Bohren & Huffman's
recurrences; e^{+jwt} as in vem/models/mie.h):

  <out>/sphere_rcs.csv     theta_deg, FDFD and Mie RCS in both planes (dBsm)
  <out>/sphere_rcs.png     the two cuts, FDFD (lines) and Mie (dashed); matplotlib when pvpython
                           can import it, otherwise ParaView's line chart view
  <out>/residuals.csv      the residual history
  <out>/summary.json       grid, solver, iterations, residual, |FDFD - Mie| in dB

  pvpython examples/fdfd_sphere_rcs.py --size quick --backend cpu        # 1 cm cells, seconds
  pvpython examples/fdfd_sphere_rcs.py --size paper --backend cuda       # 4 mm: 80^3 + PML (GPU)

The plugin is found from --plugin, $VOXELEM_PLUGIN, or the usual build folders.
"""
import argparse
import json
import math
import os
import sys
import time

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from voxelem_example_common import find_plugin, plot_rcs_matplotlib, plot_rcs_paraview, rcs_against_mie, sphere_image  # noqa: E402

SIZES = {
    # name: (cell size m, PML cells, air padding cells)
    "quick": (0.010, 8, 6),
    "medium": (0.006, 10, 8),
    "paper": (0.004, 10, 10),
}
RADIUS, EPS_R, FREQ = 0.072, 4.0, 1e9


def sphere_image_h(h):
    n = int(math.ceil(2 * RADIUS / h)) + 2
    return sphere_image(n, h, RADIUS, EPS_R), n

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plugin")
    ap.add_argument("--out", default="fdfd-sphere-output")
    ap.add_argument("--size", choices=sorted(SIZES), default="quick")
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--precision", choices=["complex128", "complex64"], default="complex128")
    ap.add_argument("--tolerance", type=float, default=1e-6)
    ap.add_argument("--no-matplotlib", action="store_true", help="render the PNG with ParaView's chart view")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    plugin = find_plugin(args.plugin)
    if not plugin:
        sys.exit("VoxelEMPlugin.so not found: give --plugin or set VOXELEM_PLUGIN")
    LoadPlugin(plugin, remote=False, ns=globals())

    h, pml, pad = SIZES[args.size]
    img, n = sphere_image_h(h)
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(img)
    backend = {"auto": "Auto", "cpu": "CPU", "cuda": "CUDA"}[args.backend]
    t0 = time.time()
    fdfd = FDFDSolver(Input=src, Frequency=FREQ, PMLThickness=pml, AirPadding=pad,
                      Tolerance=args.tolerance, Precision=args.precision, Backend=backend,
                      RCSAngleStep=2.0)
    fdfd.UpdatePipeline()
    wall = time.time() - t0
    algo = fdfd.GetClientSideObject()
    rcs = algo.GetOutputDataObject(2)
    res = algo.GetOutputDataObject(1)
    if rcs.GetNumberOfRows() == 0:
        sys.exit("the FDFD solve produced no RCS table (see the errors above)")
    col = lambda t, name: vtk_to_numpy(t.GetColumnByName(name))
    csv = os.path.join(args.out, "sphere_rcs.csv")
    th, e_db, h_db, me_db, mh_db = rcs_against_mie(rcs, RADIUS, FREQ, EPS_R, csv, "fdfd")
    it, rr = col(res, "iteration"), col(res, "relative_residual")
    tr = col(res, "true_relative_residual")
    np.savetxt(os.path.join(args.out, "residuals.csv"), np.column_stack([it, rr, tr]), delimiter=",",
               fmt="%.6g", header="iteration,relative_residual,true_relative_residual", comments="")

    cols = [("FDFD E-plane", e_db, "-"), ("FDFD H-plane", h_db, "-"),
            ("Mie E-plane", me_db, "--"), ("Mie H-plane", mh_db, "--")]
    png = os.path.join(args.out, "sphere_rcs.png")
    used = "paraview"
    if not args.no_matplotlib:
        try:
            plot_rcs_matplotlib(png, th, cols, "Dielectric sphere a = 72 mm, eps_r = 4, 1 GHz: FDFD vs Mie")
            used = "matplotlib"
        except ImportError:
            pass
    if used == "paraview":
        plot_rcs_paraview(png, th, cols, "Dielectric sphere a = 72 mm, eps_r = 4, 1 GHz: FDFD vs Mie")

    de, dh = np.abs(e_db - me_db), np.abs(h_db - mh_db)
    summary = {
        "cell_size_m": h, "voxels": n, "pml": pml, "air_padding": pad,
        "grid_cells": (n + 2 * pad + 2 * pml) ** 3, "backend": args.backend,
        "precision": args.precision, "tolerance": args.tolerance,
        "iterations": int(it[-1]), "final_true_relative_residual": float(tr[-1]),
        "wall_seconds": wall, "plot": used,
        "abs_dB_error_E_plane": {"median": float(np.median(de)), "max": float(de.max())},
        "abs_dB_error_H_plane": {"median": float(np.median(dh)), "max": float(dh.max())},
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    print(f"wrote {csv} and {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
