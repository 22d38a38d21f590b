#!/usr/bin/env pvpython
"""VoxelEM FDTD example: bistatic RCS of a dielectric sphere against the Mie series, from the FDTD
Steady State filter (FDTDSteadyState).

The FDFD issue's sphere (radius 72 mm, eps_r = 4, lossless) voxelized on a cubic grid and given to
FDTD Steady State as property arrays, lit at 1 GHz by an x-polarized plane wave travelling along +z
(Illumination = 'Plane wave': a total-field / scattered-field
source, running DFTs until the 1 GHz phasors stop changing, near-to-far transform). The RCS in
the E-plane (xz) and H-plane (yz) is compared with the Mie series (mie_rcs of
examples/voxelem_example_common.py: numpy, Bohren & Huffman's recurrences, e^{+jwt}):

  <out>/sphere_rcs.csv     theta_deg, FDTD and Mie RCS in both planes (dBsm)
  <out>/sphere_rcs.png     the two cuts, FDTD (lines) and Mie (dashed); matplotlib when pvpython
                           can import it, otherwise ParaView's line chart view
  <out>/summary.json       grid, steps, convergence, time, scattering cross-section,
                           |FDTD - Mie| in dB

  pvpython examples/fdtd_sphere_rcs.py --quick --backend cpu       # 14 cells across, seconds
  pvpython examples/fdtd_sphere_rcs.py --backend cuda              # 36 cells across (4 mm)
  pvpython examples/fdtd_sphere_rcs.py --cells 72 --backend cuda   # 2 mm

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
from voxelem_example_common import find_plugin, plot_rcs_matplotlib, plot_rcs_paraview, rcs_against_mie, sphere_image  # noqa: E402

RADIUS, EPS_R, FREQ = 0.072, 4.0, 1e9
QUICK_CELLS, DEFAULT_CELLS = 14, 36


def sphere_image_cells(cells):
    """The sphere on cells x cells x cells voxels of 2 a / cells, plus one voxel of air per face."""
    h = 2 * RADIUS / cells
    n = cells + 2
    return sphere_image(n, h, RADIUS, EPS_R), n, h

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plugin")
    ap.add_argument("--out", default="fdtd-sphere-output")
    ap.add_argument("--quick", action="store_true", help=f"coarse grid ({QUICK_CELLS} cells across the sphere)")
    ap.add_argument("--cells", type=int, help=f"cells across the sphere's diameter (default {DEFAULT_CELLS}: 4 mm)")
    ap.add_argument("--padding", type=int, default=8, help="air cells around the model (>= 6 for the plane wave)")
    ap.add_argument("--cpml", type=int, default=10, help="CPML cells")
    ap.add_argument("--tolerance", type=float, default=1e-3, help="steady-state tolerance")
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--no-matplotlib", action="store_true", help="render the PNG with ParaView's chart view")
    args = ap.parse_args()
    cells = args.cells or (QUICK_CELLS if args.quick else DEFAULT_CELLS)
    os.makedirs(args.out, exist_ok=True)
    plugin = find_plugin(args.plugin)
    if not plugin:
        sys.exit("VoxelEMPlugin.so not found: give --plugin or set VOXELEM_PLUGIN")
    LoadPlugin(plugin, remote=False, ns=globals())

    img, n, h = sphere_image_cells(cells)
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(img)
    t0 = time.time()
    fdtd = FDTDSteadyState(Input=src, Illumination="Plane wave",
                           DFTFrequencies=[FREQ], IncidentTheta=0.0, IncidentPhi=0.0, Polarization=0.0,
                           IncidentAmplitude=1.0, SteadyStateTolerance=args.tolerance, FarFieldStep=2.0,
                           AirPadding=args.padding, CPMLThickness=args.cpml, ProgressInterval=100,
                           Backend={"auto": "Auto", "cpu": "CPU", "cuda": "CUDA"}[args.backend])
    fdtd.PermittivityArray = ["CELLS", "permittivity"]
    fdtd.ConductivityArray = ["CELLS", "conductivity"]
    fdtd.UpdatePipeline()
    wall = time.time() - t0
    far = servermanager.Fetch(fdtd, idx=2)
    summ = servermanager.Fetch(fdtd, idx=1)
    if far.GetNumberOfRows() == 0:
        sys.exit("the FDTD run produced no far-field table (see the errors above)")
    col = lambda t, name: vtk_to_numpy(t.GetColumnByName(name))
    csv = os.path.join(args.out, "sphere_rcs.csv")
    th, e_db, h_db, me_db, mh_db = rcs_against_mie(far, RADIUS, FREQ, EPS_R, csv, "fdtd")
    cols = [("FDTD E-plane", e_db, "-"), ("FDTD H-plane", h_db, "-"),
            ("Mie E-plane", me_db, "--"), ("Mie H-plane", mh_db, "--")]
    title = (f"Dielectric sphere a = 72 mm, eps_r = 4, 1 GHz: FDTD steady state "
             f"({cells} cells across) vs Mie")
    png = os.path.join(args.out, "sphere_rcs.png")
    used = "paraview"
    if not args.no_matplotlib:
        try:
            plot_rcs_matplotlib(png, th, cols, title)
            used = "matplotlib"
        except ImportError:
            pass
    if used == "paraview":
        plot_rcs_paraview(png, th, cols, title)

    de, dh = np.abs(e_db - me_db), np.abs(h_db - mh_db)
    value = lambda name: float(col(summ, name)[0])
    summary = {
        "cells_across": cells, "cell_size_m": h, "voxels": n, "air_padding": args.padding, "cpml": args.cpml,
        "grid_cells": (n + 2 * args.padding + 2 * args.cpml) ** 3, "backend_requested": args.backend,
        "steps": int(value("steps")), "converged": bool(value("converged")),
        "steady_state_tolerance": args.tolerance, "wall_seconds": wall, "plot": used,
        "scattering_cross_section_m2": value("scattering_cross_section_m2"),
        "abs_dB_error_E_plane": {"median": float(np.median(de)), "max": float(de.max())},
        "abs_dB_error_H_plane": {"median": float(np.median(dh)), "max": float(dh.max())},
        "backscatter_dBsm": {"fdtd": float(e_db[-1]), "mie": float(me_db[-1])},
        "forward_dBsm": {"fdtd": float(e_db[0]), "mie": float(me_db[0])},
    }
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    print(f"wrote {csv} and {png}")
    if not summary["converged"]:
        sys.exit("the run did not meet the steady-state criterion")
    return 0


if __name__ == "__main__":
    sys.exit(main())
