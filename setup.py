"""Builds the optional native flattening kernel; the project metadata lives in pyproject.toml.

The extension is optional: without a C compiler (or Python headers) the install still succeeds
and flatten.py runs its Python walker, which gives the same tables, only slower.
"""

import os

from setuptools import Extension, setup

# -O2 rather than CPython's default -O3: as fast here, smaller code
COMPILE_ARGS = [] if os.name == "nt" else ["-O2", "-Wall"]

setup(
    ext_modules=[
        Extension(
            "jsoneval_polars._flatten",
            ["jsoneval_polars/_flatten.c"],
            extra_compile_args=COMPILE_ARGS,
            optional=True,
        )
    ]
)
