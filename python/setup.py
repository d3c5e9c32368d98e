"""Builds libkiln.so (the compiler and runtime behind kiln/_capi.py) with the
repository's CMake build, and kiln._C (the C++ ops of python/csrc/, against
the torch of the environment that builds: pip's --no-build-isolation), and
ships both inside the package:

    pip install --no-build-isolation ./python      # from the repository root

The repository's `make configure` installs what the build needs (LLVM/MLIR
22, CMake, Ninja) and configures build/; then only the library is built.
KILN_BUILD_DIR picks another build folder; KILN_LIBRARY names a libkiln.so
already built (a machine without LLVM: only kiln._C is compiled there). pip
must build in place (pip >= 21.3 does for a local folder): the repository
around python/ is the source.
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from torch.utils.cpp_extension import BuildExtension, CppExtension

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build"))


def _library():
    """The libkiln.so to ship: $KILN_LIBRARY, else the build folder's."""
    return os.environ.get("KILN_LIBRARY") or os.path.join(BUILD, "lib", "libkiln.so")


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        if not os.environ.get("KILN_LIBRARY"):
            subprocess.check_call(["make", "-C", ROOT, "configure", f"BUILD={BUILD}"])
            subprocess.check_call(["cmake", "--build", BUILD, "--target", "kiln_jit"])
        target = os.path.join(self.build_lib, "kiln")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(_library(), os.path.join(target, "libkiln.so"))


# kiln._C links libkiln.so by its soname; kiln/_capi.py loads the library
# first (from the package, $KILN_LIBRARY or the build folder), so both use the
# one copy; $ORIGIN finds the package's own when _C is loaded alone.
ops = CppExtension(
    "kiln._C", ["csrc/Attention.cpp", "csrc/Programs.cpp"],
    include_dirs=[os.path.join(ROOT, "runtime", "include")],
    library_dirs=[os.path.dirname(_library())], libraries=[":libkiln.so"],
    extra_compile_args=["-O2"], extra_link_args=["-Wl,-rpath,$ORIGIN"])

# build_py (which builds libkiln.so) runs before build_ext (which links it).
setup(cmdclass={"build_py": BuildWithLibrary, "build_ext": BuildExtension}, ext_modules=[ops])
