"""pvpython test of the FDFD Solver filter (vtkVEMFDFDSolver) on the CPU.

1. A small dielectric sphere given as property arrays (permittivity, conductivity, density):
   output arrays and their sizes, |E| = |E_total|, total = incident + scattered outside the
   sphere (checked through |E_total| ~ 1 far from it), SAR where sigma > 0 (and ~ sigma |E|^2 / 2 rho
   inside), the residual table
   (decreasing to the tolerance) and the RCS table (columns, 0..180 deg, finite, within a few dB
   of the Mie series on this coarse grid), in complex128 and in complex64 (iterative refinement).
2. HeadPhantom labels + tissue table: SAR from the table's densities, z-polarized side incidence.
3. Errors: a missing permittivity array gives an error and empty outputs (no crash).

  pvpython test_fdfd_pipeline.py --plugin VoxelEMPlugin.so
"""
import argparse
import math
import os
import sys

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkImageData

# The Mie series (Bohren & Huffman) shared with the examples.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from voxelem_example_common import mie_rcs  # noqa: E402

failures = []


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what)
    sys.stdout.flush()
    if not cond:
        failures.append(what)


def sphere_image(n, h, radius, eps, sigma, rho, with_eps=True):
    img = vtkImageData()
    img.SetDimensions(n + 1, n + 1, n + 1)
    img.SetSpacing(h, h, h)
    img.SetOrigin(-0.5 * n * h, -0.5 * n * h, -0.5 * n * h)
    c = (np.arange(n) + 0.5) * h - 0.5 * n * h
    z, y, x = np.meshgrid(c, c, c, indexing="ij")  # x fastest after ravel
    inside = (x * x + y * y + z * z < radius * radius).ravel()
    arrays = {
        "conductivity": np.where(inside, sigma, 0.0),
        "density": np.where(inside, rho, 0.0),
    }
    if with_eps:
        arrays["permittivity"] = np.where(inside, eps, 1.0)
    for name, v in arrays.items():
        a = numpy_to_vtk(np.ascontiguousarray(v, dtype=np.float32), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    return img, int(inside.sum())


def producer(img):
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(img)
    return src


def fetch(proxy, port):
    return servermanager.Fetch(proxy, port) if port == 0 else servermanager.Fetch(proxy, port)


def column(table, name):
    a = table.GetColumnByName(name)
    return None if a is None else vtk_to_numpy(a)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    args = ap.parse_args()
    LoadPlugin(args.plugin, remote=False, ns=globals())
    check("FDFDSolver" in globals(), "pvpython name FDFDSolver exists")

    # --- 1. Sphere, property arrays. --------------------------------------------------------
    n, h, radius, eps, sigma, rho = 12, 0.01, 0.045, 4.0, 0.05, 1000.0
    f0 = 1e9
    img, n_inside = sphere_image(n, h, radius, eps, sigma, rho)
    src = producer(img)
    from vtkmodules.vtkCommonCore import vtkObject  # noqa: F401

    mie = None
    try:
        # Mie series at the voxelized radius with the same complex permittivity, via numpy.
        mie = mie_rcs(radius, f0, complex(eps, -sigma / (2 * math.pi * f0 * 8.8541878128e-12)))
    except Exception as e:  # pragma: no cover
        print("Mie reference unavailable:", e)

    for precision in ("complex128", "complex64"):
        fdfd = FDFDSolver(Input=src, Frequency=f0, PMLThickness=8, AirPadding=6, Tolerance=1e-6,
                          Backend="CPU", Precision=precision, RCSAngleStep=5.0)
        fdfd.UpdatePipeline()
        algo = fdfd.GetClientSideObject()
        out = servermanager.Fetch(fdfd, None, 0) if False else algo.GetOutputDataObject(0)
        res = algo.GetOutputDataObject(1)
        rcs = algo.GetOutputDataObject(2)
        tag = f"[{precision}]"
        m = n + 12
        check(out.GetNumberOfCells() == m ** 3, f"{tag} output has (voxels + 2 x padding)^3 = {m}^3 cells")
        cd = out.GetCellData()
        for name, comps in (("E_scat_real", 3), ("E_scat_imag", 3), ("E_total_real", 3),
                            ("E_total_imag", 3), ("E_magnitude", 1), ("SAR", 1),
                            ("permittivity", 1), ("conductivity", 1)):
            a = cd.GetArray(name)
            check(a is not None and a.GetNumberOfComponents() == comps,
                  f"{tag} cell array {name} with {comps} component(s)")
        if failures:
            break
        tr = vtk_to_numpy(cd.GetArray("E_total_real"))
        ti = vtk_to_numpy(cd.GetArray("E_total_imag"))
        mag = vtk_to_numpy(cd.GetArray("E_magnitude"))
        mag2 = np.sqrt((tr ** 2 + ti ** 2).sum(axis=1))
        check(np.allclose(mag, mag2, rtol=1e-4, atol=1e-6), f"{tag} E_magnitude = |E_total|")
        check(np.all(np.isfinite(mag)), f"{tag} E_magnitude finite")
        # Corner cells (air, far from the sphere): |E_total| ~ |E_inc| = 1 V/m.
        corner = mag.reshape(m, m, m)[0, 0, 0]
        check(0.8 < corner < 1.2, f"{tag} |E_total| at a corner ~ 1 V/m ({corner:.3f})")
        sar = vtk_to_numpy(cd.GetArray("SAR"))
        sig_out = vtk_to_numpy(cd.GetArray("conductivity"))
        check(np.all(sar[sig_out == 0] == 0) and np.all(sar[sig_out > 0] > 0),
              f"{tag} SAR > 0 exactly where sigma > 0")
        # SAR comes from each E sample's own conductivity (sar.h); inside the sphere, where the
        # field is smooth and all neighbours are tissue, it equals sigma |E_centre|^2 / (2 rho)
        # up to the difference between the mean of |E_edge|^2 and |mean E_edge|^2 (a few %).
        sg = sig_out.reshape(m, m, m)
        inner = np.zeros_like(sg, dtype=bool)
        inner[1:-1, 1:-1, 1:-1] = True
        for dz in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    inner &= np.roll(sg, (dz, dy, dx), axis=(0, 1, 2)) > 0
        inner = inner.ravel()
        ratio = sar[inner] / (sig_out[inner] * mag[inner] ** 2 / (2 * rho))
        med = float(np.median(ratio)) if ratio.size else float("nan")
        check(ratio.size > 0 and abs(med - 1) < 0.05,
              f"{tag} SAR ~ sigma |E|^2 / (2 rho) inside the sphere (median ratio {med:.4f} over {ratio.size} voxels)")

        it = column(res, "iteration")
        rr = column(res, "relative_residual")
        tr_ = column(res, "true_relative_residual")
        check(it is not None and rr is not None and tr_ is not None and len(it) > 10,
              f"{tag} residual table (iteration, relative_residual, true_relative_residual), {0 if it is None else len(it)} rows")
        if it is not None and rr is not None:
            check(it[0] == 0 and rr[0] == 1.0 and np.all(np.diff(it) == 1), f"{tag} residual rows start at iteration 0, residual 1")
            check(rr[-1] <= 1e-6 * 1.01, f"{tag} final relative residual {rr[-1]:.2e} <= 1e-6")
            final_true = tr_[-1]
            check(final_true <= 2e-6, f"{tag} true residual {final_true:.2e}")
            measured = tr_[np.isfinite(tr_)]
            if precision == "complex64":
                check(len(measured) >= 3 and np.all(np.diff(measured) < 0),
                      f"{tag} refinement: {len(measured)} decreasing outer true residuals")
        th = column(rcs, "theta_deg")
        e_db = column(rcs, "rcs_E_plane_dBsm")
        h_db = column(rcs, "rcs_H_plane_dBsm")
        check(th is not None and e_db is not None and h_db is not None, f"{tag} RCS table columns")
        if th is None or e_db is None or h_db is None:
            break
        check(len(th) == 37 and th[0] == 0 and th[-1] == 180, f"{tag} RCS from 0 to 180 deg in 5 deg steps")
        check(np.all(np.isfinite(e_db)) and np.all(np.isfinite(h_db)), f"{tag} RCS finite")
        check(abs(e_db[0] - h_db[0]) < 0.05, f"{tag} forward RCS equal in both planes ({e_db[0]:.2f} / {h_db[0]:.2f} dBsm)")
        if mie is not None:
            me, mh = mie(np.radians(th))
            de = np.abs(e_db - 10 * np.log10(me))
            dh = np.abs(h_db - 10 * np.log10(mh))
            # Coarse grid (h = lambda_d / 15, staircase sphere): a few dB where the pattern is deep.
            print(f"{tag} |FDFD - Mie| dB: E-plane median {np.median(de):.2f} max {de.max():.2f};"
                  f" H-plane median {np.median(dh):.2f} max {dh.max():.2f}")
            check(np.median(de) < 1.5 and np.median(dh) < 1.5, f"{tag} RCS within 1.5 dB of Mie (median)")
            check(abs(e_db[0] - 10 * np.log10(me[0])) < 1.0, f"{tag} forward RCS within 1 dB of Mie")
        Delete(fdfd)

    # --- 2. Head phantom labels + tissue table, z-polarized wave from the side. -------------
    phantom = HeadPhantom(Dimensions=[16, 16, 12], Spacing=[0.016, 0.016, 0.016],
                          Origin=[-0.128, -0.128, -0.096])
    head = FDFDSolver(Input=phantom, MaterialMode="Labels + tissue table", Frequency=900e6,
                      IncidentTheta=90.0, IncidentPhi=0.0, Polarization=180.0, PMLThickness=6,
                      AirPadding=2, Tolerance=1e-3, Backend="CPU")
    head.UpdatePipeline()
    algo = head.GetClientSideObject()
    out = algo.GetOutputDataObject(0)
    cd = out.GetCellData()
    # The same head with Method "GCR + FDTD preconditioner" (set by its name, as pvpython users
    # do): a few outer iterations, the COCG field to the tolerance's order.
    head_td = FDFDSolver(Input=phantom, MaterialMode="Labels + tissue table", Frequency=900e6,
                         IncidentTheta=90.0, IncidentPhi=0.0, Polarization=180.0, PMLThickness=6,
                         AirPadding=2, Tolerance=1e-6, Backend="CPU",
                         Method="GCR + FDTD preconditioner")
    head_td.UpdatePipeline()
    td = head_td.GetClientSideObject()
    td_res = td.GetOutputDataObject(1)
    td_it = column(td_res, "iteration")
    td_true = column(td_res, "true_relative_residual")
    check(td_it is not None and 1 <= td_it[-1] <= 5 and td_true[-1] <= 1e-6,
          f"[head, GCR + FDTD] {None if td_it is None else int(td_it[-1])} outer iterations, "
          f"true residual {None if td_true is None else td_true[-1]:.2e}")
    e_cocg = vtk_to_numpy(cd.GetArray("E_total_real"))
    e_td = vtk_to_numpy(td.GetOutputDataObject(0).GetCellData().GetArray("E_total_real"))
    diff = np.linalg.norm(e_td - e_cocg) / np.linalg.norm(e_cocg)
    check(diff < 2e-3, f"[head, GCR + FDTD] E_total within {diff:.1e} of the COCG solve (tolerance 1e-3)")
    Delete(head_td)
    check(cd.GetArray("SAR") is not None and cd.GetArray("tissue") is not None,
          "[head] SAR and tissue arrays in label mode")
    if cd.GetArray("SAR") is not None:
        sar = vtk_to_numpy(cd.GetArray("SAR"))
        check(np.all(np.isfinite(sar)) and sar.max() > 0, f"[head] SAR finite, max {sar.max():.3g} W/kg")
        einc = vtk_to_numpy(cd.GetArray("E_total_real"))[0]
        check(True, f"[head] corner E_total_real {einc}")
    # theta = 90, phi = 0, psi = 180: k along +x, E0 = -theta_hat = +z.
    tr = vtk_to_numpy(cd.GetArray("E_total_real"))
    ti = vtk_to_numpy(cd.GetArray("E_total_imag"))
    amp = np.sqrt(tr ** 2 + ti ** 2)[0]
    check(amp[2] > 0.8 and amp[0] < 0.2, f"[head] z-polarized incidence at a corner: |E| = {amp}")
    Delete(head)

    # --- 3. Errors. ----------------------------------------------------------------------------
    bad_img, _ = sphere_image(6, 0.01, 0.02, 4.0, 0.0, 1000.0, with_eps=False)
    bad_src = producer(bad_img)
    bad = FDFDSolver(Input=bad_src, Backend="CPU", PMLThickness=4, AirPadding=2)
    bad.UpdatePipeline()
    out = bad.GetClientSideObject().GetOutputDataObject(0)
    check(out.GetNumberOfCells() == 0, "[error] missing permittivity array: empty output, no crash")

    if failures:
        print(f"{len(failures)} check(s) failed:")
        for f in failures:
            print("  " + f)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
