from setuptools import Extension, setup

# The limited API (abi3) keeps the Python version out of the wheel's name:
# cspeed-1.0-cp38-abi3-linux_x86_64.whl on any CPython >= 3.8.
setup(
    name="cspeed",
    version="1.0",
    ext_modules=[Extension("cspeed", ["cspeed.c"], py_limited_api=True,
                           define_macros=[("Py_LIMITED_API", "0x03080000")])],
)
