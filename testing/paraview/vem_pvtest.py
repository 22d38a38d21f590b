"""Helpers shared by the pvpython tests: a checker that prints PASS / FAIL / XFAIL lines and
collects failures, and the capture of what VTK prints (errors, warnings) while a pipeline runs."""
import sys

from vtkmodules.vtkCommonCore import vtkOutputWindow, vtkStringOutputWindow


class Checker:
    def __init__(self, known_bugs=None):
        self.failures = []
        self.xfail = []
        self.known_bugs = known_bugs or {}

    def check(self, cond, what):
        print(("PASS " if cond else "FAIL ") + what)
        sys.stdout.flush()
        if not cond:
            self.failures.append(what)
        return cond

    def known(self, key, cond, what):
        """A check that fails because of the known bug known_bugs[key]: XFAIL while it fails, a
        failure (XPASS) once it passes."""
        if cond:
            print("XPASS " + what + " -- passes now: remove the known bug '%s'" % key)
            self.failures.append("XPASS " + what)
        else:
            print("XFAIL " + what + " (known bug: %s)" % self.known_bugs[key])
            self.xfail.append(key)
        sys.stdout.flush()


class Capture:
    """A vtkStringOutputWindow as the output window while in the `with` block; .text afterwards.
    (pvpython sends Python's own output to the output window too: nothing is printed meanwhile.)"""

    def __enter__(self):
        self.previous = vtkOutputWindow.GetInstance()
        self.previous.Register(None)  # keep it alive while it is not the instance
        self.window = vtkStringOutputWindow()
        vtkOutputWindow.SetInstance(self.window)
        return self

    def __exit__(self, *exc):
        vtkOutputWindow.SetInstance(self.previous)
        self.previous.UnRegister(None)
        text = self.window.GetOutput()
        self.text = text.decode(errors="replace") if isinstance(text, bytes) else text
        return False


def update_capturing(proxy):
    """UpdatePipeline() of `proxy`; returns what VTK printed meanwhile."""
    with Capture() as c:
        proxy.UpdatePipeline()
    return c.text


def fetch_cell_array(proxy, name, t=None):
    """Cell array `name` of `proxy`'s output (at time t when given) as a numpy copy, or None."""
    from paraview import servermanager
    from vtkmodules.util.numpy_support import vtk_to_numpy
    proxy.UpdatePipeline(t) if t is not None else proxy.UpdatePipeline()
    a = servermanager.Fetch(proxy).GetCellData().GetArray(name)
    return None if a is None else vtk_to_numpy(a).copy()


def check_refused(c, proxy, needles, what):
    """Updates `proxy`: exactly one ERROR printed, holding every string of `needles`, and an
    empty output."""
    text = update_capturing(proxy)
    c.check(text.count("ERROR:") == 1 and all(n in text for n in needles),
            "%s: one message naming %s: %s" % (what, ", ".join(needles), text.strip()[:400]))
    c.check(proxy.GetDataInformation().GetNumberOfCells() == 0, "%s: empty output" % what)
