"""Build arc4py's extension modules.

Environment switches (all off by default):
  ARC4PY_TEST_HOOKS=1   compile the generator's test hooks (tests only)
  ARC4PY_SANITIZE=1     compile the C with -fsanitize=address,undefined
  ARC4PY_NO_<ISA>=1     leave a core out of the build: its file compiles to
                        no function and its name is unknown (ISA: a row of
                        arc4py/csrc/chacha20_cores.def, upper-case; a core
                        goes with the one its row builds with)

No -m flag is ever passed: each SIMD core declares its own target inside
its file, so one build runs on every CPU of its architecture.
"""
import glob
import os
import re
import shutil
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

CSRC = "arc4py/csrc"  # the C cores and the C generator
CBIND = "arc4py/cbind"  # C for the binding layer: C API, hot calls


def flag(name):
    return os.environ.get(name, "") not in ("", "0")


def read_core_table(path=f"{CSRC}/chacha20_cores.def"):
    """chacha20_cores.def's rows as {isa: builds_with or None}, in order."""
    with open(path) as f:
        text = f.read()
    rows = re.findall(r"^ARC4PY_CORE\((\w+),\s*\w+,\s*(\w+),", text, re.M)
    if not rows:
        sys.exit(f"setup.py: no ARC4PY_CORE rows in {path}")
    return {isa: (None if needs == "NONE" else needs) for isa, needs in rows}


SIMD_CORES = read_core_table()
LEFT_OUT = {isa for isa in SIMD_CORES if flag(f"ARC4PY_NO_{isa.upper()}")}
for _ in SIMD_CORES:  # a core goes with the one it builds with
    LEFT_OUT |= {isa for isa, needs in SIMD_CORES.items() if needs in LEFT_OUT}
# Every C file of csrc/ and cbind/ is built on every target: a core whose
# ISA is foreign (or left out) and a platform file for another OS compile
# to nothing, so no list here names a core or an OS.  One extension module
# holds the cores, the generator and their bindings.
CORE_SOURCES = sorted(glob.glob(f"{CSRC}/*.c")) + sorted(glob.glob(f"{CBIND}/*.c"))


# The platform built for (sysconfig names the target when cross-building).
PLATFORM = sysconfig.get_platform()

macros = []
compile_args = []
link_args = []
libraries = []
if PLATFORM.startswith("win"):
    # rng_platform_windows.c: BCryptGenRandom where ProcessPrng is missing.
    libraries.append("bcrypt")
if sys.platform == "win32" and "GCC" not in sys.version:
    # MSVC's toolchain: clang-cl for x64 and ARM64 (BuildExt), cl.exe for
    # 32-bit x86, which has no SIMD core.
    compile_args += ["/O2"]
else:
    # GCC or Clang: Linux, macOS (Apple clang), FreeBSD, mingw-w64.  Threads
    # come from the C library or the interpreter's own link (no -lpthread).
    compile_args += ["-O3", "-fvisibility=hidden", "-Wall", "-Wextra",
                     "-Wno-unused-function",  # Cython's unused static helpers
                     # float arithmetic step by step, as Python does it:
                     # GCC fuses a * b + c on aarch64 by default, and
                     # Random's distributions must round as the stdlib's
                     "-ffp-contract=off"]
if flag("ARC4PY_TEST_HOOKS"):
    macros.append(("ARC4PY_TEST_HOOKS", "1"))
macros += [(f"ARC4PY_NO_{isa.upper()}", "1") for isa in sorted(LEFT_OUT)]
if flag("ARC4PY_SANITIZE"):
    sanitize = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                "-fno-sanitize-recover=undefined"]
    compile_args += sanitize + ["-O1", "-g"]
    link_args += sanitize

common = dict(
    include_dirs=["include", CSRC, CBIND],
    # Rebuild when a header changes, not only a source.
    depends=glob.glob("include/arc4py/*.h") + glob.glob(f"{CSRC}/*.h")
    + glob.glob(f"{CSRC}/*.def") + glob.glob(f"{CBIND}/*.h")
    + ["arc4py/_cdefs.pxd", "arc4py/_common.pxd", "arc4py/_cores.pxi",
       "arc4py/_buffer_check.pxi", "arc4py/_holder_search.pxi"],
    define_macros=macros,
    libraries=libraries,
    extra_compile_args=compile_args,
    extra_link_args=link_args,
)

try:
    import numpy
except ImportError:  # numpy is a build requirement; this is for odd builds
    numpy = None
    print("arc4py: numpy not found at build time; building without "
          "arc4py._numpy and the size= arrays", file=sys.stderr)
np_common = None
if numpy is not None:
    np_common = dict(common)
    np_common["include_dirs"] = common["include_dirs"] + [numpy.get_include()]
    np_common["define_macros"] = macros + [
        ("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]

extensions = [
    # The cores and the generator, with their Python face (_cores.pxi
    # included), the C API, the hot calls and the size= arrays (numpy's C
    # API loaded on the first: cbind/arrays.c).
    Extension("arc4py._core", ["arc4py/_core.pyx"] + CORE_SOURCES,
              **(common if np_common is None else dict(
                  np_common, define_macros=np_common["define_macros"]
                  + [("ARC4PY_NUMPY_ARRAYS", "1")]))),
    # arc4py.Random over _core's C base type, its distributions drawing
    # through _core's capsule: no C of its own.
    Extension("arc4py._random", ["arc4py/_random.pyx"],
              **common),
]

if PLATFORM.startswith("linux"):  # C-level rows of `arc4py bench --c-api`
    extensions.append(Extension("arc4py.bench._capi_loops",
                                ["arc4py/bench/capi_loops.c"],
                                **dict(common, libraries=libraries + ["dl"])))

if np_common is not None and os.path.exists("arc4py/_numpy.pyx"):
    extensions.append(Extension("arc4py._numpy", ["arc4py/_numpy.pyx"],
                                **np_common))


def missing_compiler(compiler):
    """The C compiler command ``compiler`` (distutils') would run, if it is
    not there; None if it is, or if the toolchain finds its own (MSVC,
    which says itself what to install)."""
    command = getattr(compiler, "compiler_so", None)
    if not command:
        return None
    return None if shutil.which(command[0]) else command[0]


# What clang-cl targets, per 64-bit Windows platform (the x64 clang-cl of a
# Visual Studio install builds ARM64 too).
CLANG_CL_TARGETS = {"win-amd64": "x86_64-pc-windows-msvc",
                    "win-arm64": "aarch64-pc-windows-msvc"}


def use_clang_cl(compiler, extensions):
    """MSVC's toolchain with clang-cl compiling: MSVC's cl.exe has neither
    target attributes nor GNU inline assembly, so it would build no SIMD
    core and no register wipe (compiler_compat.h refuses it).  clang-cl
    comes with Visual Studio's "C++ Clang tools" and with LLVM."""
    if not compiler.initialized:
        compiler.initialize(PLATFORM)
    vc = os.environ.get("VCINSTALLDIR", "")
    arch = "ARM64" if PLATFORM == "win-arm64" else "x64"
    search = os.pathsep.join([os.environ.get("PATH", ""),
                              getattr(compiler, "_paths", ""),
                              os.path.join(vc, "Tools", "Llvm", arch, "bin"),
                              os.path.join(vc, "Tools", "Llvm", "x64", "bin")])
    clang_cl = shutil.which("clang-cl", path=search)
    if clang_cl is None:
        sys.exit(f"error: building arc4py for {PLATFORM} needs clang-cl (MSVC's "
                 f"cl.exe would leave out every SIMD core and the register wipe): "
                 f"install Visual Studio's \"C++ Clang tools for Windows\" or "
                 f"LLVM, or install arc4py from a wheel.")
    compiler.cc = clang_cl
    flags = [f"--target={CLANG_CL_TARGETS[PLATFORM]}", "-Wno-unused-function",
             # float arithmetic step by step, as on the other compilers
             "/clang:-ffp-contract=off",
             "/Brepro"]  # no time stamp in the objects (nor, below, the DLL)
    for ext in extensions:
        ext.extra_compile_args = ext.extra_compile_args + flags
        ext.extra_link_args = ext.extra_link_args + ["/Brepro"]


class BuildExt(build_ext):
    """build_ext that ends with what to do when there is no C compiler, and
    builds with clang-cl where MSVC's toolchain builds for 64-bit Windows;
    it writes Cython's C into this build's own temporary folder (one per
    Python and platform, as the objects are), never into the source tree:
    builds for two Pythons from one checkout at once write no file twice."""

    def build_extensions(self):
        if (self.compiler.compiler_type == "msvc"
                and PLATFORM in CLANG_CL_TARGETS):
            use_clang_cl(self.compiler, self.extensions)
        cc = missing_compiler(self.compiler)
        if cc is not None:
            sys.exit(
                f"error: building arc4py from source needs a C compiler, "
                f"and {cc!r} was not found.  Install a C compiler (gcc or clang: "
                f"e.g. apt install gcc, dnf install gcc, xcode-select "
                f"--install), or set CC to one, or install arc4py from a "
                f"wheel.")
        super().build_extensions()

    def build_extension(self, ext):
        if any(source.endswith(".pyx") for source in ext.sources):
            from Cython.Build import cythonize
            ext.sources = cythonize(
                [ext], build_dir=self.build_temp, force=self.force,
                quiet=not self.verbose, compiler_directives={
                    "language_level": "3", "freethreading_compatible": True},
            )[0].sources
        super().build_extension(ext)


PUBLIC_HEADERS = glob.glob("include/arc4py/*.h")


class BuildPy(build_py):
    """build_py that also installs the public C header(s), include/arc4py/,
    into the package (arc4py/include/arc4py/), where get_include() finds
    them."""

    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "arc4py", "include", "arc4py")
        self.mkpath(dest)
        for header in PUBLIC_HEADERS:
            self.copy_file(header, dest)

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [
            os.path.join(self.build_lib, "arc4py", "include", "arc4py",
                         os.path.basename(h)) for h in PUBLIC_HEADERS]


# The wheel's staging folder, by default build/bdist.<platform>/wheel, one
# per Python too, named as setuptools names the build's other folders.
FREE_THREADED = "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""
WHEEL_STAGING = os.path.join("build", f"bdist.{PLATFORM}-"
                             f"{sys.implementation.cache_tag}{FREE_THREADED}",
                             "wheel")

setup(
    cmdclass={"build_ext": BuildExt, "build_py": BuildPy},
    ext_modules=extensions,
    options={"bdist_wheel": {"bdist_dir": WHEEL_STAGING}},
)
