#!/usr/bin/env pvpython
"""VoxelEM FDFD example: bistatic RCS of a dielectric sphere against the Mie series.

A sphere (radius 72 mm, eps_r = 4, the FDFD paper's test object) voxelized on a cubic grid, given
to the FDFD Solver as a permittivity array, lit at 1 GHz by an x-polarized plane wave travelling
along +z. The RCS in the E-plane (xz) and H-plane (yz) from the solver's near-to-far-field
transform is compared with the Mie series (computed here with numpy, Bohren & Huffman's
recurrences; e^{+jwt} as in vem/mie.h):

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
import glob
import json
import math
import os
import sys
import time

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkDoubleArray
from vtkmodules.vtkCommonDataModel import vtkImageData, vtkTable

SIZES = {
    # name: (cell size m, PML cells, air padding cells)
    "quick": (0.010, 8, 6),
    "medium": (0.006, 10, 8),
    "paper": (0.004, 10, 10),
}
RADIUS, EPS_R, FREQ = 0.072, 4.0, 1e9


def find_plugin(explicit):
    candidates = [c for c in (explicit, os.environ.get("VOXELEM_PLUGIN")) if c]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for p in (os.path.join(root, "build*", "lib*", "paraview-*", "plugins", "VoxelEMPlugin", "VoxelEMPlugin.so"),
              "/tmp/b-*/lib*/paraview-*/plugins/VoxelEMPlugin/VoxelEMPlugin.so",
              "/usr/local/lib*/paraview-*/plugins/VoxelEMPlugin/VoxelEMPlugin.so"):
        candidates.extend(sorted(glob.glob(p)))
    for c in candidates:
        if os.path.isfile(c):
            return c
    return None


def sphere_image(h):
    n = int(math.ceil(2 * RADIUS / h)) + 2
    img = vtkImageData()
    img.SetDimensions(n + 1, n + 1, n + 1)
    img.SetSpacing(h, h, h)
    img.SetOrigin(-0.5 * n * h, -0.5 * n * h, -0.5 * n * h)
    c = (np.arange(n) + 0.5) * h - 0.5 * n * h
    z, y, x = np.meshgrid(c, c, c, indexing="ij")
    inside = (x * x + y * y + z * z < RADIUS * RADIUS).ravel()
    for name, v in (("permittivity", np.where(inside, EPS_R, 1.0)), ("conductivity", np.zeros(inside.size))):
        a = numpy_to_vtk(np.ascontiguousarray(v, dtype=np.float32), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    return img, n


def mie_rcs(a, f, eps):
    """(E-plane, H-plane) bistatic RCS functions of theta (rad), m^2 (Bohren & Huffman)."""
    k = 2 * math.pi * f / 299792458.0
    x = k * a
    m = np.conj(np.sqrt(complex(eps)))
    nstop = int(x + 4 * x ** (1 / 3) + 2)
    mx = m * x
    nmx = int(max(nstop, abs(mx)) + 16)
    d = np.zeros(nmx + 1, dtype=complex)
    for nn in range(nmx, 0, -1):
        d[nn - 1] = nn / mx - 1 / (d[nn] + nn / mx)
    psi0, psi1 = math.cos(x), math.sin(x)
    chi0, chi1 = -math.sin(x), math.cos(x)
    xi1 = complex(psi1, -chi1)
    an, bn = [], []
    for nn in range(1, nstop + 1):
        psi = (2 * nn - 1) * psi1 / x - psi0
        chi = (2 * nn - 1) * chi1 / x - chi0
        xi = complex(psi, -chi)
        an.append(((d[nn] / m + nn / x) * psi - psi1) / ((d[nn] / m + nn / x) * xi - xi1))
        bn.append(((m * d[nn] + nn / x) * psi - psi1) / ((m * d[nn] + nn / x) * xi - xi1))
        psi0, psi1, chi0, chi1 = psi1, psi, chi1, chi
        xi1 = complex(psi1, -chi1)

    def rcs(theta):
        mu = np.cos(theta)
        s1 = np.zeros_like(mu, dtype=complex)
        s2 = np.zeros_like(mu, dtype=complex)
        pi0, pi1 = np.zeros_like(mu), np.ones_like(mu)
        for nn in range(1, nstop + 1):
            tau = nn * mu * pi1 - (nn + 1) * pi0
            fn = (2 * nn + 1) / (nn * (nn + 1))
            s1 += fn * (an[nn - 1] * pi1 + bn[nn - 1] * tau)
            s2 += fn * (an[nn - 1] * tau + bn[nn - 1] * pi1)
            pi0, pi1 = pi1, ((2 * nn + 1) * mu * pi1 - (nn + 1) * pi0) / nn
        return 4 * math.pi * np.abs(s2) ** 2 / k ** 2, 4 * math.pi * np.abs(s1) ** 2 / k ** 2

    return rcs


def plot_matplotlib(png, th, cols):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, y, style in cols:
        ax.plot(th, y, style, label=name)
    ax.set_xlabel("theta (deg), 0 = forward")
    ax.set_ylabel("RCS (dBsm)")
    ax.set_xlim(0, 180)
    ax.grid(True, alpha=0.3)
    ax.legend()
    ax.set_title("Dielectric sphere a = 72 mm, eps_r = 4, 1 GHz: FDFD vs Mie")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def plot_paraview(png, th, cols):
    t = vtkTable()
    for name, y in [("theta_deg", th)] + [(c[0], c[1]) for c in cols]:
        a = vtkDoubleArray()
        a.SetName(name)
        for v in y:
            a.InsertNextValue(float(v))
        t.AddColumn(a)
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(t)
    view = CreateView("XYChartView")
    view.ViewSize = [900, 560]
    view.ChartTitle = "Dielectric sphere a = 72 mm, eps_r = 4, 1 GHz: FDFD vs Mie"
    view.LeftAxisTitle = "RCS (dBsm)"
    view.BottomAxisTitle = "theta (deg), 0 = forward"
    disp = Show(src, view)
    disp.UseIndexForXAxis = 0
    disp.XArrayName = "theta_deg"
    disp.SeriesVisibility = [c[0] for c in cols]
    styles = []
    for c in cols:
        styles += [c[0], "2" if "Mie" in c[0] else "1"]
    disp.SeriesLineStyle = styles
    Render(view)
    SaveScreenshot(png, view, ImageResolution=[900, 560])
    Delete(view)
    Delete(src)


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
    img, n = sphere_image(h)
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
    th = col(rcs, "theta_deg")
    e_db, h_db = col(rcs, "rcs_E_plane_dBsm"), col(rcs, "rcs_H_plane_dBsm")
    me, mh = mie_rcs(RADIUS, FREQ, EPS_R)(np.radians(th))
    me_db, mh_db = 10 * np.log10(me), 10 * np.log10(mh)

    csv = os.path.join(args.out, "sphere_rcs.csv")
    np.savetxt(csv, np.column_stack([th, e_db, h_db, me_db, mh_db]), delimiter=",", fmt="%.6g",
               header="theta_deg,fdfd_E_plane_dBsm,fdfd_H_plane_dBsm,mie_E_plane_dBsm,mie_H_plane_dBsm",
               comments="")
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
            plot_matplotlib(png, th, cols)
            used = "matplotlib"
        except ImportError:
            pass
    if used == "paraview":
        plot_paraview(png, th, cols)

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
