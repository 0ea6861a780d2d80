"""Build the Crossplane packages with the real `crossplane xpkg build`.

    python -m devtools.packages [OUT_DIR]     # default: _output/

The Configuration package is assembled from package/configuration/crossplane.yaml plus the
generated xrds/ and compositions/, so what is packaged is exactly what the tests validate.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

from devtools.render import ROOT, HarnessError, Tools, build_tools

CONFIGURATION: Final = ROOT / "package" / "configuration"
FUNCTION: Final = ROOT / "package" / "function"
DEFAULT_OUT: Final = ROOT / "_output"


def build_configuration(tools: Tools, out: Path) -> Path:
    """Build the Configuration package into `out`; return the .xpkg file."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copy(CONFIGURATION / "crossplane.yaml", root / "crossplane.yaml")
        for folder in ("xrds", "compositions"):
            shutil.copytree(ROOT / folder, root / folder)
        return _build(tools, root, out / "configuration-aim.xpkg")


def build_function(tools: Tools, out: Path) -> Path:
    """Build the Function package's metadata (no runtime image: that needs a container build)."""
    return _build(tools, FUNCTION, out / "function-aim.xpkg")


def _build(tools: Tools, root: Path, package: Path) -> Path:
    package.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [
            str(tools.crossplane),
            "xpkg",
            "build",
            f"--package-root={root}",
            # Examples are not packaged; point at a directory that does not exist.
            f"--examples-root={root / 'no-examples'}",
            f"--package-file={package}",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        msg = f"crossplane xpkg build of {root.name} failed: {proc.stderr.strip() or proc.stdout}"
        raise HarnessError(msg)
    return package


def main(argv: list[str]) -> int:
    """Build the packages and print their paths."""
    out = Path(argv[0]).resolve() if argv else DEFAULT_OUT
    try:
        tools = build_tools()
        print(build_configuration(tools, out))
        print(build_function(tools, out))
    except HarnessError as e:
        print(f"packages: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
