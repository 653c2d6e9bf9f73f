"""Build the two demo extensions as a user of arc4py's C API would."""
from Cython.Build import cythonize
from setuptools import Extension, setup

import arc4py

inc = [arc4py.get_include()]
strict = ["-Wall", "-Wextra", "-Werror"]
setup(
    name="capi_demo",
    ext_modules=cythonize([Extension("capi_demo_cy", ["capi_demo_cy.pyx"],
                                     include_dirs=inc)])
    + [Extension("capi_demo_c", ["capi_demo_c.c"], include_dirs=inc,
                 extra_compile_args=strict)],
)
