#!/usr/bin/env python3
"""Checks that every system file a configured and built VoxelEM tree found or used comes from the
Debian packages scripts/setup_debian.sh installs, or from their dependency closure.

A package installed by hand on a developer machine can make the build work there and fail on a
fresh Debian 12 machine; this check cannot be fooled by it: it looks at what the build really used
and asks dpkg who owns each file.

Files checked (each is "needed as" one of these kinds):
  - CMake package config: every *_DIR entry of CMakeCache.txt naming a directory with a package
    config in it (<Name>Config.cmake / <name>-config.cmake: what find_package read),
  - program: the project's own find_program / find_path results (VEM_PVPYTHON, VEM_XVFB,
    VEM_PARAVIEW_GUI, ...), the compilers, ar, ld, ninja and the cmake / ctest of the cache,
  - header: every header of every object in ninja's dependency log (ninja -t deps),
  - build tool / build input: the programs and files named by absolute path on the build commands
    (ninja -t commands),
  - link library: the .so / .a files and -l names on the link lines, resolved like the linker does
    (the compiler's -print-search-dirs, then ld's default multiarch folders),
  - runtime library: ldd of every executable and shared library the build produced.
The other PATH / FILEPATH entries of the cache were found by the Find modules of ParaView's
dependencies, often optionally (FindX11 records every X11 library it sees); they are reported in a
note, not a failure: what the build really uses of them shows up as headers and libraries.
Skipped: the source tree, the build tree and /usr/local/cuda (the CUDA Toolkit is not a Debian
package). Every other file must be owned by an installed package (a file no package owns was
copied by hand: failure) that is in the closure: the packages of the list (read like
setup_debian.sh reads it), the Essential / Priority: required packages every Debian system has,
and, recursively, their Depends and Pre-Depends as installed (dpkg-query; any installed
alternative of 'a | b' counts; a virtual package counts through its installed providers).
Recommends and Suggests do not count. A symlink counts as every package that owns a hop of its
chain (/usr/bin/c++ -> /etc/alternatives/c++ -> g++ -> g++-12 ...); merged /usr is understood.

Usage:
  check_debian_packages.py --build DIR --packages FILE            # the check (exit 0 / 1)
  check_debian_packages.py --build DIR --packages FILE --self-test [--omit PKG]
      runs the check on a copy of the list without PKG (default: the first package of the list
      whose removal takes a file the build used out of the closure) plus a file no package owns,
      and passes when that run exits 1 naming PKG, no package its omission did not take out of
      the closure, and that file.
  -v lists every file checked with its packages.
Exit codes: 0 OK, 1 failure, 2 usage / build tree problem, 77 not Debian 12 (no dpkg-query or
dpkg database, or another distribution or release, e.g. the GPU machine's Ubuntu; ctest SKIP). Standard library only.
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

SKIP_RC = 77
LIST_NAME = "scripts/setup_debian.sh"
# Directories whose files are not Debian's by design (README: the CUDA Toolkit is expected there).
NOT_DEBIAN = ["/usr/local/cuda"]
# The linker's default search path on Debian amd64 after the compiler's own directories.
LD_DEFAULT_DIRS = ["/usr/local/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                   "/usr/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu64", "/usr/local/lib64",
                   "/lib64", "/usr/lib64", "/usr/local/lib", "/lib", "/usr/lib",
                   "/usr/x86_64-linux-gnu/lib64", "/usr/x86_64-linux-gnu/lib"]
KIND_ORDER = ["CMake package config", "cache path", "cache library", "program", "header",
              "build tool", "build input", "link library", "runtime library", "extra file"]


def read_package_list(path):
    """The list as setup_debian.sh reads it: '#' starts a comment, split on whitespace."""
    names = []
    with open(path) as f:
        for line in f:
            names.extend(line.split("#", 1)[0].split())
    return names


# ---------------------------------------------------------------------------------------------
# dpkg: who owns what, what is installed, and the dependency closure
# ---------------------------------------------------------------------------------------------

class Dpkg:
    def __init__(self, info_dir="/var/lib/dpkg/info"):
        self.owners = {}  # path as listed by dpkg -> set of package names (no :arch)
        for lst in glob.glob(os.path.join(info_dir, "*.list")):
            pkg = os.path.basename(lst)[:-len(".list")].split(":", 1)[0]
            with open(lst, encoding="utf-8", errors="surrogateescape") as f:
                for line in f:
                    p = line.rstrip("\n")
                    if p and p != "/.":
                        s = self.owners.get(p)
                        if s is None:
                            self.owners[p] = {pkg}
                        else:
                            s.add(pkg)
        # merged /usr: /lib -> usr/lib etc.; dpkg may list either spelling
        self.usr_aliases = [d for d in ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
                            if os.path.islink("/" + d)
                            and os.path.realpath("/" + d) == "/usr/" + d]
        self.present = {}  # name -> dict(essential, priority, depends, provides)
        out = subprocess.run(
            ["dpkg-query", "-W", "-f",
             "${Package}\t${db:Status-Abbrev}\t${Essential}\t${Priority}\t${Provides}\t"
             "${Pre-Depends}\t${Depends}\n"],
            check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split("\t")
            if len(f) < 7:
                continue
            name, status = f[0], f[1]
            # second letter of the status: the files are on disk when installed, unpacked,
            # half-configured or waiting for triggers
            if len(status) < 2 or status[1] not in "iUFWt":
                continue
            e = self.present.setdefault(name, {"essential": False, "priority": "",
                                               "deps": [], "provides": set()})
            e["essential"] |= f[2] == "yes"
            e["priority"] = e["priority"] or f[3]
            e["provides"] |= {alt[0] for alt in parse_deps(f[4])}
            e["deps"] += parse_deps(f[5]) + parse_deps(f[6])
        self.providers = {}
        for name, e in self.present.items():
            for v in e["provides"]:
                self.providers.setdefault(v, set()).add(name)

    def base_packages(self):
        return {n for n, e in self.present.items() if e["essential"] or e["priority"] == "required"}

    def resolve(self, name):
        if name in self.present:
            return {name}
        return self.providers.get(name, set())

    def closure(self, roots):
        seen = set()
        stack = [r for r in roots if r in self.present]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            for group in self.present[n]["deps"]:
                for alt in group:  # any installed alternative counts
                    for m in self.resolve(alt):
                        if m not in seen:
                            stack.append(m)
        return seen

    def _spellings(self, p):
        yield p
        for d in self.usr_aliases:
            if p.startswith("/usr/" + d + "/"):
                yield p[4:]
            elif p.startswith("/" + d + "/"):
                yield "/usr" + p

    def lookup(self, p):
        for q in self._spellings(p):
            s = self.owners.get(q)
            if s:
                return s
        return None


def parse_deps(field):
    """'a (>= 1) | b:any, c' -> [['a', 'b'], ['c']]"""
    groups = []
    for group in field.split(","):
        alts = []
        for alt in group.split("|"):
            alt = alt.strip()
            if not alt:
                continue
            name = re.split(r"[\s(\[<]", alt, maxsplit=1)[0].split(":", 1)[0]
            if name:
                alts.append(name)
        if alts:
            groups.append(alts)
    return groups


def dir_resolved(p):
    """p with its directory part resolved (symlinks, '..') and its last component kept."""
    d, b = os.path.split(p)
    return os.path.join(os.path.realpath(d or "/"), b) if b else os.path.realpath(p)


def owned_hops(dpkg, p):
    """[(path, owners)] for the path as given and every hop of its symlink chain, ending with the
    realpath; only the hops that some package owns. Empty: no package owns the file."""
    hops = []
    for q in (dir_resolved(p), os.path.normpath(p)):
        if q not in hops:
            hops.append(q)
    cur = hops[0]
    for _ in range(40):
        if not os.path.islink(cur):
            break
        nxt = dir_resolved(os.path.join(os.path.dirname(cur), os.readlink(cur)))
        if nxt in hops:
            break
        hops.append(nxt)
        cur = nxt
    real = os.path.realpath(p)
    if real not in hops:
        hops.append(real)
    result = []
    for h in hops:
        s = dpkg.lookup(h)
        if s:
            result.append((h, s))
    return result


# ---------------------------------------------------------------------------------------------
# What the build found and used
# ---------------------------------------------------------------------------------------------

class Needed:
    """file -> first (kind, why) it was needed as, and per-kind sets of files."""

    def __init__(self, skip_dirs):
        self.skip_dirs = [d.rstrip("/") for d in skip_dirs if d]
        self.first = {}
        self.by_kind = {}
        self.skipped = set()

    def skipped_path(self, p):
        for q in (p, os.path.realpath(p)):
            for d in self.skip_dirs:
                if q == d or q.startswith(d + "/"):
                    return True
        return False

    def add(self, path, kind, why):
        if not path or not os.path.isabs(path):
            return
        path = os.path.normpath(path)
        if self.skipped_path(path):
            self.skipped.add(path)
            return
        if not os.path.exists(path):
            return
        self.by_kind.setdefault(kind, set()).add(path)
        self.first.setdefault(path, (kind, why))


def read_cache(build):
    entries = []
    path = os.path.join(build, "CMakeCache.txt")
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9_.+\-]+|\"[^\"]+\"):([A-Z]+)=(.*)$", line.rstrip("\n"))
            if m:
                entries.append((m.group(1).strip('"'), m.group(2), m.group(3)))
    return entries


def config_files(name, directory):
    """The package config file(s) find_package read from <Name>_DIR; [] if none is there (then
    the entry is a plain path, e.g. MPI_C_HEADER_DIR)."""
    prefix = name[:-len("_DIR")]
    for cand in (prefix + "Config.cmake", prefix.lower() + "-config.cmake"):
        p = os.path.join(directory, cand)
        if os.path.isfile(p):
            return [p]
    return sorted(glob.glob(os.path.join(directory, "*Config.cmake")) +
                  glob.glob(os.path.join(directory, "*-config.cmake")))


def collect_cache(needed, optional, entries):
    """*_DIR entries (find_package), the project's own find_program / find_path results (VEM_*),
    the compilers and cmake itself go to needed. The other PATH / FILEPATH entries were found by
    the Find modules of ParaView's dependencies, often optionally (FindX11 records every X11
    library it sees): they go to optional, reported but not a failure; what the build really
    uses of them shows up in its headers, link lines and ldd."""
    for name, typ, value in entries:
        if not value.startswith("/") or value.endswith("-NOTFOUND"):
            continue
        if typ == "INTERNAL":
            # the cmake / ctest that configured the tree and run its tests
            if name in ("CMAKE_COMMAND", "CMAKE_CTEST_COMMAND"):
                needed.add(value, "program", name)
            continue
        # PATH / FILEPATH: what find_package / find_path / find_library / find_program found
        # (the install destinations are where the build goes, not what it used)
        if typ not in ("PATH", "FILEPATH", "UNINITIALIZED") or name.startswith("CMAKE_INSTALL_"):
            continue
        if not os.path.exists(value):
            continue
        configs = config_files(name, value) if name.endswith("_DIR") and os.path.isdir(value) \
            else []
        if configs:
            for p in configs:
                needed.add(p, "CMake package config", name)
            continue
        used = name.startswith("VEM_") or name in (
            "CMAKE_C_COMPILER", "CMAKE_CXX_COMPILER", "CMAKE_CUDA_COMPILER", "CMAKE_MAKE_PROGRAM",
            "CMAKE_AR", "CMAKE_RANLIB", "CMAKE_LINKER")
        if os.path.isdir(value):
            kind = "cache path"
        elif re.search(r"\.(so(\.[0-9.]+)?|a)$", os.path.basename(value)):
            kind = "cache library"
        elif os.access(value, os.X_OK):
            kind = "program"
        else:
            kind = "cache path"
        (needed if used else optional).add(value, kind, name)


def run_ninja(ninja, build, *tool):
    r = subprocess.run([ninja, "-C", build, "-t", *tool], capture_output=True, text=True,
                       errors="surrogateescape")
    if r.returncode != 0:
        raise RuntimeError("%s -t %s failed: %s" % (ninja, " ".join(tool), r.stderr.strip()))
    return r.stdout


def collect_headers(needed, ninja, build):
    out = run_ninja(ninja, build, "deps")
    target = None
    objects = 0
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            target = line.split(":", 1)[0]
            objects += 1
            continue
        p = line.strip()
        if not os.path.isabs(p):
            p = os.path.join(build, p)
        needed.add(p, "header", "compiled into " + target)
    return objects


class LinkerSearch:
    def __init__(self):
        self.dirs_by_compiler = {}

    def dirs(self, compiler):
        if compiler not in self.dirs_by_compiler:
            dirs = []
            try:
                out = subprocess.run([compiler, "-print-search-dirs"], capture_output=True,
                                     text=True, timeout=30).stdout
                for line in out.splitlines():
                    if line.startswith("libraries:"):
                        dirs = [os.path.normpath(d) for d in
                                line.split(":", 1)[1].strip().lstrip("=").split(":") if d]
            except (OSError, subprocess.SubprocessError):
                pass
            self.dirs_by_compiler[compiler] = dirs + LD_DEFAULT_DIRS
        return self.dirs_by_compiler[compiler]

    def find(self, compiler, extra_dirs, name, static):
        if name.startswith(":"):
            files = [name[1:]]
        else:
            files = ["lib%s.a" % name] if static else ["lib%s.so" % name, "lib%s.a" % name]
        for d in extra_dirs + self.dirs(compiler):
            for f in files:
                p = os.path.join(d, f)
                if os.path.isfile(p):
                    return p
        return None


LIB_RE = re.compile(r"\.(so(\.[0-9]+)*|a)$")
COMPILERS = re.compile(r"(^|[-/])(c\+\+|g\+\+|gcc|cc|clang|clang\+\+|nvcc|ld|ld\.gold|ld\.bfd)"
                       r"(-[0-9.]+)?$")


def collect_commands(needed, ninja, build, linker):
    out = run_ninja(ninja, build, "commands")
    unresolved = []
    for line in out.splitlines():
        try:
            tokens = shlex.split(line)
        except ValueError:
            tokens = line.split()
        # split into the commands joined by && ; ||
        cmds, cur = [], []
        for t in tokens:
            if t in ("&&", ";", "||", "|"):
                cmds.append(cur)
                cur = []
            else:
                cur.append(t)
        cmds.append(cur)
        for cmd in cmds:
            if not cmd or cmd[0] in (":", "cd"):
                continue
            tool = cmd[0]
            needed.add(tool, "build tool", "runs " + os.path.basename(tool))
            is_link = (COMPILERS.search(os.path.basename(tool)) is not None
                       and "-c" not in cmd and "-E" not in cmd and "-o" in cmd)
            output = cmd[cmd.index("-o") + 1] if "-o" in cmd and cmd.index("-o") + 1 < len(cmd) \
                else "?"
            lib_dirs, static = [], False
            i = 1
            while i < len(cmd):
                t = cmd[i]
                if is_link and t == "-L" and i + 1 < len(cmd):
                    lib_dirs.append(os.path.join(build, cmd[i + 1]))
                    i += 1
                elif is_link and t.startswith("-L"):
                    lib_dirs.append(os.path.join(build, t[2:]))
                elif is_link and t in ("-Wl,-Bstatic", "-static"):
                    static = True
                elif is_link and t == "-Wl,-Bdynamic":
                    static = False
                elif is_link and t.startswith("-l") and len(t) > 2:
                    p = linker.find(tool, lib_dirs, t[2:], static)
                    if p:
                        needed.add(p, "link library", "%s on the link line of %s" % (t, output))
                    else:
                        unresolved.append("%s (link line of %s)" % (t, output))
                elif t.startswith("/") and os.path.isfile(t):
                    if is_link and LIB_RE.search(t):
                        needed.add(t, "link library", "on the link line of " + output)
                    else:
                        needed.add(t, "build input", "named on a command of "
                                   + os.path.basename(tool))
                i += 1
    return unresolved


def built_binaries(build):
    found = []
    for root, dirs, files in os.walk(build):
        dirs[:] = [d for d in dirs if d != "CMakeFiles" and not d.startswith(".")]
        for f in files:
            p = os.path.join(root, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            if not (os.access(p, os.X_OK) or ".so" in f):
                continue
            try:
                with open(p, "rb") as fh:
                    if fh.read(4) != b"\x7fELF":
                        continue
            except OSError:
                continue
            found.append(p)
    return sorted(found)


def collect_ldd(needed, build):
    ldd = shutil.which("ldd")
    binaries = built_binaries(build)
    missing = []
    if not ldd:
        return binaries, ["ldd not found: runtime libraries not checked"]
    for b in binaries:
        r = subprocess.run([ldd, b], capture_output=True, text=True, errors="surrogateescape")
        rel = os.path.relpath(b, build)
        for line in r.stdout.splitlines():
            line = line.strip()
            if "=> not found" in line:
                missing.append("%s: %s" % (rel, line))
                continue
            m = re.search(r"(?:=>\s*)?(/\S+)\s+\(0x", line)
            if m:
                needed.add(m.group(1), "runtime library", "ldd of " + rel)
    return binaries, missing


# ---------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------

def gather(build, extra_files=()):
    """Everything the build found or used, as a Needed; plus notes."""
    entries = read_cache(build)
    cache = {n: v for n, _, v in entries}
    source = cache.get("CMAKE_HOME_DIRECTORY", "")
    skip = [source, os.path.realpath(source) if source else "", build, os.path.realpath(build)]
    for d in NOT_DEBIAN:
        skip += [d, os.path.realpath(d)]
    needed = Needed(skip)
    optional = Needed(skip)
    notes = []
    collect_cache(needed, optional, entries)
    if cache.get("CMAKE_GENERATOR") == "Ninja":
        ninja = cache.get("CMAKE_MAKE_PROGRAM") or shutil.which("ninja")
        objects = collect_headers(needed, ninja, build)
        if objects == 0:
            raise RuntimeError("ninja's dependency log of %s is empty: build the tree first" % build)
        unresolved = collect_commands(needed, ninja, build, LinkerSearch())
        notes += ["link library not found: " + u for u in sorted(set(unresolved))]
    else:
        notes.append("generator is %s, not Ninja: headers and build commands not checked"
                     % cache.get("CMAKE_GENERATOR"))
    binaries, missing = collect_ldd(needed, build)
    if not binaries:
        raise RuntimeError("no executable or shared library in %s: build the tree first" % build)
    notes += ["ldd: " + m for m in missing[:10]]
    for f in extra_files:
        needed.add(os.path.abspath(f), "extra file", "--extra-file")
    return needed, optional, len(binaries), notes


def evaluate(dpkg, needed, allowed):
    """-> (packages used, {package: [files]} outside allowed, [files owned by no package])"""
    used = set()
    bad = {}
    unowned = []
    for path in sorted(needed.first):
        hops = owned_hops(dpkg, path)
        if not hops:
            unowned.append(path)
            continue
        for hop, owners in hops:
            used |= owners
            if owners & allowed:
                continue
            for pkg in sorted(owners):
                bad.setdefault(pkg, [])
                if path not in bad[pkg]:
                    bad[pkg].append(path)
    return used, bad, unowned


def plural(kind, n):
    if n == 1:
        return kind
    return kind[:-1] + "ies" if kind.endswith("ry") else kind + "s"


def check(args):
    t0 = time.time()
    build = os.path.abspath(args.build)
    if not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        print("check_debian_packages: %s has no CMakeCache.txt (configure and build first)" % build)
        return 2
    listed = read_package_list(args.packages)
    dpkg = Dpkg()
    base = dpkg.base_packages()
    allowed = dpkg.closure(set(listed) | base)
    not_installed = [p for p in listed if p not in dpkg.present and p not in dpkg.providers]
    try:
        needed, optional, nbin, notes = gather(build, args.extra_file or [])
    except (RuntimeError, OSError) as e:
        print("check_debian_packages: %s" % e)
        return 2
    used, bad, unowned = evaluate(dpkg, needed, allowed)
    _, opt_bad, opt_unowned = evaluate(dpkg, optional, allowed)
    if args.verbose:
        for path in sorted(needed.first, key=lambda p: (KIND_ORDER.index(needed.first[p][0]), p)):
            kind, why = needed.first[path]
            owners = sorted({o for _, s in owned_hops(dpkg, path) for o in s})
            print("%-20s %s  [%s]  (%s)" % (kind, path, " ".join(owners) or "NO PACKAGE", why))

    print("debian_package_closure: build %s, list %s (%d packages)"
          % (build, args.packages, len(listed)))
    print("  closure: %d installed packages (the list, %d Essential/Priority: required, and their"
          " Depends/Pre-Depends)" % (len(allowed), len(base)))
    counts = ", ".join("%d %s" % (len(needed.by_kind[k]), plural(k, len(needed.by_kind[k])))
                       for k in KIND_ORDER if needed.by_kind.get(k))
    print("  checked %d files (%s; ldd of %d built binaries); skipped %d in the source/build "
          "trees and /usr/local/cuda" % (len(needed.first), counts, nbin, len(needed.skipped)))
    print("  they come from %d packages" % len(used))
    if opt_bad or opt_unowned:
        print("  note: %d other cache entries record files that Find modules saw on this machine "
              "but the build does not compile or link against (not a failure); outside the "
              "closure: %s" % (len(optional.first), ", ".join(
                  ["%s (%s)" % (p, optional.first[f[0]][1]) for p, f in sorted(opt_bad.items())]
                  + ["%s (%s, no package)" % (f, optional.first[f][1]) for f in opt_unowned])))
    for n in notes:
        print("  note: " + n)
    for p in not_installed:
        print("  note: listed package %s is not installed here" % p)

    if not bad and not unowned:
        print("OK: %d files from %d packages, all in the dependency closure of %s (%.1f s)"
              % (len(needed.first), len(used), args.packages, time.time() - t0))
        return 0
    print("FAIL: %d package(s) outside the closure, %d file(s) owned by no package"
          % (len(bad), len(unowned)))
    for pkg in sorted(bad):
        files = bad[pkg]
        kind, why = needed.first[files[0]]
        print("package %s (not installed by %s nor in its dependency closure) provides %s, "
              "needed as %s (%s)" % (pkg, LIST_NAME, files[0], kind, why))
        if len(files) > 1:
            print("    and %d more file(s) of it, e.g. %s" % (len(files) - 1,
                                                            ", ".join(files[1:4])))
    for path in unowned:
        kind, why = needed.first[path]
        print("no Debian package owns %s (copied by hand?), needed as %s (%s)" % (path, kind, why))
    print("(%.1f s)" % (time.time() - t0))
    return 1


def self_test(args):
    """Proves the check can fail: a list without a package the build needs, and a file no
    package owns, must make it fail naming exactly those."""
    t0 = time.time()
    build = os.path.abspath(args.build)
    listed = read_package_list(args.packages)
    dpkg = Dpkg()
    base = dpkg.base_packages()
    full = dpkg.closure(set(listed) | base)
    try:
        needed, _, _, _ = gather(build)
    except (RuntimeError, OSError) as e:
        print("self-test: %s" % e)
        return 2
    used, bad, unowned = evaluate(dpkg, needed, full)
    if bad or unowned:
        print("self-test: the check fails with the full list already; run it first")
        return 1
    # used packages reachable only through each listed package
    def lost_without(pkg):
        rest = dpkg.closure((set(listed) - {pkg}) | base)
        return {u for u in used if u not in rest}, rest
    candidates = [args.omit] if args.omit else \
        [p for p in ["libqt5opengl5-dev"] + listed if p in listed]
    omit = None
    for pkg in candidates:
        if pkg not in listed:
            print("self-test: %s is not in %s" % (pkg, args.packages))
            return 2
        lost, rest = lost_without(pkg)
        if pkg in lost:  # the package itself owns a file the build used
            omit = pkg
            break
    if omit is None:
        print("self-test: no package of the list could be omitted to make the check fail")
        return 1
    print("self-test: omitting %s takes %d used package(s) out of the closure: %s"
          % (omit, len(lost), " ".join(sorted(lost))))
    with tempfile.TemporaryDirectory(prefix="vem-pkg-selftest-") as tmp:
        trimmed = os.path.join(tmp, "debian-packages-without-%s.txt" % omit)
        with open(args.packages) as src, open(trimmed, "w") as dst:
            for line in src:
                code, sep, comment = line.partition("#")
                words = code.split()
                dst.write(" ".join(w for w in words if w != omit) + (" " if words else "")
                          + sep + comment.rstrip("\n") + "\n")
        assert omit not in read_package_list(trimmed)
        assert set(read_package_list(trimmed)) == set(listed) - {omit}
        stray = os.path.join(tmp, "libhand_copied.so")
        with open(stray, "w") as f:
            f.write("not from a Debian package\n")
        cmd = [sys.executable, os.path.abspath(__file__), "--build", build, "--packages", trimmed,
               "--extra-file", stray]
        r = subprocess.run(cmd, capture_output=True, text=True)
        out = r.stdout + r.stderr
        print("self-test: the check with the trimmed list and %s exited %d:" % (stray, r.returncode))
        for line in out.splitlines():
            print("    | " + line)
        problems = []
        if r.returncode != 1:
            problems.append("expected exit code 1, got %d" % r.returncode)
        named = set(re.findall(r"^package (\S+) \(not installed by ", out, re.M))
        if omit not in named:
            problems.append("the output does not name the omitted package %s" % omit)
        if named - lost:
            problems.append("the output names packages the omission did not take out of the "
                            "closure: %s" % " ".join(sorted(named - lost)))
        if not re.search(r"^no Debian package owns %s " % re.escape(stray), out, re.M):
            problems.append("the output does not report %s as owned by no package" % stray)
        others = [l for l in re.findall(r"^no Debian package owns (\S+)", out, re.M) if l != stray]
        if others:
            problems.append("unexpected unowned files: %s" % " ".join(others))
    if problems:
        for p in problems:
            print("self-test FAILED: " + p)
        return 1
    print("self-test OK: the check fails, naming %s (and only what its omission lost) and the "
          "hand-made file (%.1f s)" % (omit, time.time() - t0))
    return 0


def debian_release():
    """'debian 12', 'ubuntu 24.04', ...: ID and VERSION_ID of /etc/os-release ('' if unknown)."""
    fields = {}
    try:
        with open("/etc/os-release") as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                fields[k] = v.strip('"')
    except OSError:
        return ""
    return ("%s %s" % (fields.get("ID", ""), fields.get("VERSION_ID", ""))).strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="configured and built VoxelEM build tree")
    ap.add_argument("--packages", required=True, help="scripts/debian-packages.txt")
    ap.add_argument("--extra-file", action="append",
                    help="also check this file (needed as 'extra file'); repeatable")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="list every file checked with its owning packages")
    ap.add_argument("--self-test", action="store_true",
                    help="prove that the check fails on a list without a needed package")
    ap.add_argument("--omit", help="with --self-test: the package to leave out")
    args = ap.parse_args()
    missing = [t for t in ("dpkg-query",) if not shutil.which(t)]
    if missing or not os.path.isdir("/var/lib/dpkg/info"):
        print("SKIP: not a Debian system (no %s): the package closure cannot be checked"
              % (" ".join(missing) or "/var/lib/dpkg/info"))
        return SKIP_RC
    release = debian_release()
    if release != "debian 12":
        # The list is Debian 12's (the README's platform); Ubuntu (the GPU machine) or another
        # Debian release has other package names and versions.
        print("SKIP: the package list is for Debian 12; this system is %s" % (release or "unknown"))
        return SKIP_RC
    if not os.path.isfile(args.packages):
        print("check_debian_packages: no package list %s" % args.packages)
        return 2
    return self_test(args) if args.self_test else check(args)


if __name__ == "__main__":
    sys.exit(main())
