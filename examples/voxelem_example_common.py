"""Helpers shared by the VoxelEM example scripts (pvpython): finding the plugin, the Mie-series
RCS of a sphere (Bohren & Huffman, BHMIE) and the RCS plot (matplotlib when available, else a
ParaView chart view).

Import it from an example in this folder: `from voxelem_example_common import find_plugin`.
"""
import glob
import math
import os

import numpy as np


def find_plugin(explicit):
    """The plugin library: `explicit`, $VOXELEM_PLUGIN, a build*/ folder of this checkout, the
    development builds in /tmp, or an installed copy; None when nothing is found."""
    candidates = [c for c in (explicit, os.environ.get("VOXELEM_PLUGIN")) if c]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for p in (os.path.join(root, "build*", "lib*", "paraview-*", "plugins", "VoxelEMPlugin", "VoxelEMPlugin.so"),
              "/tmp/b-*/lib*/paraview-*/plugins/VoxelEMPlugin/VoxelEMPlugin.so",
              "/usr/local/lib*/paraview-*/plugins/VoxelEMPlugin/VoxelEMPlugin.so",
              "/usr/lib/x86_64-linux-gnu/paraview-*/plugins/VoxelEMPlugin/VoxelEMPlugin.so"):
        candidates.extend(sorted(glob.glob(p)))
    for c in candidates:
        if os.path.isfile(c):
            return c
    return None


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


def plot_rcs_matplotlib(png, th, cols, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, y, style in cols:
        ax.plot(th, y, style, label=name)
    ax.set_xlabel("theta (deg), 0 = forward, 180 = backscatter")
    ax.set_ylabel("RCS (dBsm)")
    ax.set_xlim(0, 180)
    ax.grid(True, alpha=0.3)
    ax.legend()
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def plot_rcs_paraview(png, th, cols, title):
    from paraview.simple import CreateView, Delete, Render, SaveScreenshot, Show, TrivialProducer
    from vtkmodules.vtkCommonCore import vtkDoubleArray
    from vtkmodules.vtkCommonDataModel import vtkTable

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
    view.ChartTitle = title
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


def rcs_against_mie(table, radius, freq, eps, csv_path, solver):
    """theta (deg) and the E- / H-plane RCS (dBsm) of a far-field table (columns `theta_deg`,
    `rcs_E_plane_dBsm`, `rcs_H_plane_dBsm`) with the Mie values at the same angles; writes all five
    columns to `csv_path` (`solver` names the solver's columns). Returns (th, e_db, h_db, me_db, mh_db)."""
    from vtkmodules.util.numpy_support import vtk_to_numpy

    def col(name):
        return vtk_to_numpy(table.GetColumnByName(name))

    th = col("theta_deg")
    e_db, h_db = col("rcs_E_plane_dBsm"), col("rcs_H_plane_dBsm")
    me, mh = mie_rcs(radius, freq, eps)(np.radians(th))
    me_db, mh_db = 10 * np.log10(me), 10 * np.log10(mh)
    np.savetxt(csv_path, np.column_stack([th, e_db, h_db, me_db, mh_db]), delimiter=",", fmt="%.6g",
               header=f"theta_deg,{solver}_E_plane_dBsm,{solver}_H_plane_dBsm,mie_E_plane_dBsm,mie_H_plane_dBsm",
               comments="")
    return th, e_db, h_db, me_db, mh_db


def sphere_image(n, h, radius, eps_r):
    """vtkImageData of n^3 cubic voxels of side h centred on the origin, with cell arrays
    "permittivity" (eps_r where the voxel centre lies inside the sphere, else 1) and
    "conductivity" (0)."""
    from vtkmodules.util.numpy_support import numpy_to_vtk
    from vtkmodules.vtkCommonDataModel import vtkImageData

    img = vtkImageData()
    img.SetDimensions(n + 1, n + 1, n + 1)
    img.SetSpacing(h, h, h)
    img.SetOrigin(-0.5 * n * h, -0.5 * n * h, -0.5 * n * h)
    c = (np.arange(n) + 0.5) * h - 0.5 * n * h
    z, y, x = np.meshgrid(c, c, c, indexing="ij")
    inside = (x * x + y * y + z * z < radius * radius).ravel()
    for name, v in (("permittivity", np.where(inside, eps_r, 1.0)), ("conductivity", np.zeros(inside.size))):
        a = numpy_to_vtk(np.ascontiguousarray(v, dtype=np.float32), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    return img


def dark_render_view(resolution):
    """A render view of the given size on the examples' dark background, with orientation axes."""
    from paraview.simple import CreateView

    view = CreateView("RenderView")
    view.ViewSize = list(resolution)
    view.Background = [0.08, 0.08, 0.12]
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    view.OrientationAxesVisibility = 1
    return view
