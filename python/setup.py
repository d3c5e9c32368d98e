"""Builds libkiln.so (the compiler and runtime behind kiln/_capi.py) with the
repository's CMake build and ships it inside the package:

    pip install ./python            # from the repository root

The repository's `make configure` installs what the build needs (LLVM/MLIR
22, CMake, Ninja) and configures build/; then only the library is built.
KILN_BUILD_DIR picks another build folder. pip must build in place (pip >= 21.3
does for a local folder): the repository around python/ is the source.
"""
import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        build = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))
        subprocess.check_call(["make", "-C", ROOT, "configure", f"BUILD={build}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "kiln_jit"])
        target = os.path.join(self.build_lib, "kiln")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(os.path.join(build, "lib", "libkiln.so"), target)


class NativeDistribution(Distribution):
    """libkiln.so is native code: the wheel is tagged for this platform,
    not as pure Python."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=NativeDistribution)
