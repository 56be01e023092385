"""Builds seqrt's C++ extension seqrt._seqrt with the repository's CMake
project; the package's metadata is in pyproject.toml.

`pip install ./python` configures a Release build of the runtime (tests,
benchmarks and samples off) for the installing Python, builds only the
`_seqrt` target and puts the module into the package. With the environment
variable SEQRT_BUILD_DIR naming an already configured build folder
(absolute, or relative to the repository root: scripts/test.sh gives
build/dev), the target is built there instead.
"""

import importlib.machinery
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

REPO = pathlib.Path(__file__).resolve().parent.parent


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        if not (REPO / "CMakeLists.txt").is_file():
            sys.exit(f"seqrt: {REPO} is not the seqrt repository; build from "
                     "a checkout (pip >= 21.3 builds ./python in place)")
        given = os.environ.get("SEQRT_BUILD_DIR")
        # pip runs this file from python/: a relative SEQRT_BUILD_DIR is
        # taken from the repository root (SEQRT_BUILD_DIR=build/dev).
        build_dir = (REPO / given).resolve() if given else self._configure()
        if given and not (build_dir / "CMakeCache.txt").is_file():
            sys.exit(f"seqrt: SEQRT_BUILD_DIR={given} is not a configured "
                     "CMake build folder")
        jobs = ["--parallel", str(self.parallel or os.cpu_count() or 1)]
        self._cmake("--build", str(build_dir), "--target", "_seqrt", *jobs)
        location = build_dir / "python" / "_seqrt_location.txt"
        if not location.is_file():
            sys.exit(f"seqrt: {build_dir} has no _seqrt target: reconfigure "
                     "it with -DSEQRT_BUILD_PYTHON=ON and pybind11-dev and "
                     "python3-dev installed (CMake's warning says which)")
        module = pathlib.Path(location.read_text().strip())
        suffixes = importlib.machinery.EXTENSION_SUFFIXES
        if not any(module.name.endswith(s) for s in suffixes):
            sys.exit(f"seqrt: {module.name} in {build_dir} was built for "
                     f"another Python than {sys.executable} (which loads "
                     f"{suffixes[0]}); reconfigure that folder with "
                     f"-DPython_EXECUTABLE={sys.executable}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module, target)

    def _configure(self) -> pathlib.Path:
        build_dir = pathlib.Path(self.build_temp).resolve() / "cmake"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        self._cmake("-S", str(REPO), "-B", str(build_dir), *generator,
                    "-DCMAKE_BUILD_TYPE=Release",
                    "-DSEQRT_BUILD_TESTS=OFF", "-DSEQRT_BUILD_BENCH=OFF",
                    "-DSEQRT_BUILD_SAMPLES=OFF", "-DSEQRT_BUILD_PYTHON=ON",
                    f"-DPython_EXECUTABLE={sys.executable}")
        return build_dir

    @staticmethod
    def _cmake(*args: str) -> None:
        print("seqrt: cmake", " ".join(args), flush=True)
        subprocess.run(["cmake", *args], check=True)


setup(ext_modules=[Extension("seqrt._seqrt", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
