"""Build arc4py's extension modules.

Environment switches (all off by default):
  ARC4PY_TEST_HOOKS=1   compile the generator's test hooks (tests only)
  ARC4PY_SANITIZE=1     compile the C with -fsanitize=address,undefined
  ARC4PY_NO_<ISA>=1     leave a core out (ISA: SSE2, SSSE3, AVX2, AVX512)

No -m flag is ever passed: each SIMD core declares its own target inside
its file, so one build runs on every CPU of its architecture.
"""
import glob
import os
import sys

from setuptools import Extension, setup

CSRC = "arc4py/csrc"
CORE_SOURCES = [
    f"{CSRC}/chacha20_{isa}.c"
    for isa in ("generic", "sse2", "ssse3", "avx2", "avx512")
] + [f"{CSRC}/chacha20_dispatch.c", f"{CSRC}/generator.c"]


def flag(name):
    return os.environ.get(name, "") not in ("", "0")


macros = []
compile_args = []
link_args = []
if sys.platform != "win32":
    compile_args += ["-O3", "-fvisibility=hidden", "-Wall", "-Wno-unused-function"]
if flag("ARC4PY_TEST_HOOKS"):
    macros.append(("ARC4PY_TEST_HOOKS", "1"))
for isa in ("SSE2", "SSSE3", "AVX2", "AVX512"):
    if flag(f"ARC4PY_NO_{isa}"):
        macros.append((f"ARC4PY_NO_{isa}", "1"))
if flag("ARC4PY_SANITIZE"):
    sanitize = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                "-fno-sanitize-recover=undefined"]
    compile_args += sanitize + ["-O1", "-g"]
    link_args += sanitize

common = dict(
    include_dirs=["include", CSRC],
    # Rebuild when a header changes, not only a source.
    depends=glob.glob("include/arc4py/*.h") + glob.glob(f"{CSRC}/*.h")
    + ["arc4py/_cdefs.pxd", "arc4py/_common.pxd"],
    define_macros=macros,
    extra_compile_args=compile_args,
    extra_link_args=link_args,
)

extensions = [
    Extension("arc4py._core", ["arc4py/_core.pyx"] + CORE_SOURCES, **common),
    # arc4py.Random's methods (through _core's capsule: no C of its own).
    Extension("arc4py._random_methods", ["arc4py/_random_methods.pyx"],
              **common),
]

try:
    import numpy
except ImportError:  # numpy is a build requirement; this is for odd builds
    numpy = None
    print("arc4py: numpy not found at build time; building without "
          "arc4py._numpy", file=sys.stderr)
if numpy is not None and os.path.exists("arc4py/_numpy.pyx"):
    np_common = dict(common)
    np_common["include_dirs"] = common["include_dirs"] + [numpy.get_include()]
    np_common["define_macros"] = macros + [
        ("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
    extensions.append(Extension("arc4py._numpy", ["arc4py/_numpy.pyx"],
                                **np_common))

from Cython.Build import cythonize  # noqa: E402

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3"},
    ),
)
