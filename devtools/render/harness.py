"""Render AIM examples through the real Crossplane engine, against this function over gRPC.

    python -m devtools.render.harness [EXAMPLE_DIR | NAME | FILE]
        [--required FILE]... [--observed FILE]

An example directory holds `xr.yaml` and optionally `required.yaml` (objects the function looks
up) and `observed.yaml` (composed objects as they exist in the cluster); a bare name is a
directory under examples/; a file is the user's own manifest, one XR, with `--required` and
`--observed` beside it. The Composition and XRD are the ones generated for the XR's kind. The
tests use the same helpers.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from devtools.tools import ROOT, HarnessError, Tools, build_tools, free_port, port_open
from function.api.definitions import DEFINITIONS
from function.kube.claims import composite_names

DEFAULT_EXAMPLE: Final = ROOT / "examples" / "aimservice-basic"
FUNCTIONS: Final = ROOT / "examples" / "functions.yaml"
STARTUP_TIMEOUT_S: Final = 30.0


@dataclass(frozen=True)
class Rendered:
    """What `crossplane composition render` printed and how it exited."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def objects(self) -> list[dict[str, Any]]:
        """The YAML stream, parsed: the XR, composed resources, then results."""
        return [d for d in yaml.safe_load_all(self.stdout) if isinstance(d, dict)]


@dataclass(frozen=True)
class Server:
    """A running function-aim: its gRPC target and process id."""

    target: str
    pid: int


@contextlib.contextmanager
def serve_function(
    *extra_args: str, program: Sequence[str] = ("-m", "function.server.main")
) -> Iterator[Server]:
    """Run `function-aim --insecure` (or another SDK function) on a free loopback port."""
    port = free_port()
    target = f"127.0.0.1:{port}"
    cmd = [sys.executable, *program, "--insecure", "--address", target, *extra_args]
    with subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            _wait_for_port(proc, port)
            yield Server(target, proc.pid)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def render(  # noqa: PLR0913 - mirrors the render command's inputs
    tools: Tools,
    target: str,
    xr: Path,
    *,
    required: Sequence[Path] = (),
    observed: Path | None = None,
    full_xr: bool = False,
) -> Rendered:
    """Run `crossplane composition render` for one XR with the generated Composition and XRD."""
    base, plural = _definition_of(xr)
    cmd = [
        str(tools.crossplane),
        "composition",
        "render",
        str(xr),
        str(base / "compositions" / f"{plural}.yaml"),
        str(FUNCTIONS),
        f"--crossplane-binary={tools.core}",
        f"--xrd={base / 'xrds' / f'{plural}.yaml'}",
        "--include-function-results",
        f"--function-annotations=render.crossplane.io/runtime-development-target={target}",
        "--timeout=60s",
    ]
    cmd += [f"--required-resources={p}" for p in required]
    if observed is not None:
        cmd.append(f"--observed-resources={observed}")
    if full_xr:
        cmd.append("--include-full-xr")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return Rendered(proc.returncode, proc.stdout, proc.stderr)


def render_example(tools: Tools, target: str, example: Path) -> Rendered:
    """Render an example directory (see the module docstring)."""
    required = example / "required.yaml"
    observed = example / "observed.yaml"
    return render(
        tools,
        target,
        example / "xr.yaml",
        required=[required] if required.exists() else [],
        observed=observed if observed.exists() else None,
    )


def validate(tools: Tools, extensions: Sequence[Path], resources: Path) -> Rendered:
    """Run `crossplane resource validate` offline; a resource without a schema is a failure.

    `--crossplane-image=` (empty) keeps it from downloading Crossplane's own package; the
    extensions (CRDs, XRDs) are everything it validates against.
    """
    cmd = [
        str(tools.crossplane),
        "resource",
        "validate",
        "--crossplane-image=",
        "--error-on-missing-schemas",
        ",".join(str(p) for p in extensions),
        str(resources),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return Rendered(proc.returncode, proc.stdout, proc.stderr)


def _definition_of(xr: Path) -> tuple[Path, str]:
    """The directory holding the XR's XRD and Composition, and their file name.

    The claims flavour's `XAIM...` composites are under claims/, named by the composite's plural.
    """
    kind = yaml.safe_load(xr.read_text()).get("kind")
    for d in DEFINITIONS:
        if d.kind == kind:
            return ROOT, d.plural
        composite, plural = composite_names(d)
        if composite == kind:
            return ROOT / "claims", plural
    msg = f"{xr}: no XRD for kind {kind!r}"
    raise HarnessError(msg)


def _wait_for_port(proc: subprocess.Popen[str], port: int) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            msg = f"{proc.args!r} exited with code {proc.returncode} on start:\n{err[-2000:]}"
            raise HarnessError(msg)
        if port_open(port):
            return
        time.sleep(0.05)
    msg = f"function-aim did not listen on 127.0.0.1:{port} within {STARTUP_TIMEOUT_S}s"
    raise HarnessError(msg)


MAX_MANIFEST_BYTES: Final = 4 * 1024 * 1024
USAGE: Final = "scripts/render [EXAMPLE | FILE] [--required FILE]... [--observed FILE]"
DESCRIPTION: Final = """\
Render an AIM manifest through the real Crossplane engine and print what the function composes.

  EXAMPLE  an example directory (examples/aimservice-basic) or its name (aimservice-basic):
           xr.yaml, and beside it optionally required.yaml and observed.yaml
  FILE     your own manifest: one AIM object (kind AIMService, AIMModel, ...) in a YAML file

Default: examples/aimservice-basic.
From make: make render EXAMPLE=... | FILE=... [REQUIRED=...] [OBSERVED=...]
"""


class UsageError(ValueError):
    """The arguments name nothing render can render; the message says what to pass instead."""


@dataclass(frozen=True)
class Inputs:
    """What one render reads: the XR, the objects it looks up, the composed objects observed."""

    xr: Path
    required: tuple[Path, ...] = ()
    observed: Path | None = None


def example_names(examples: Path = ROOT / "examples") -> list[str]:
    """Every example directory holding an xr.yaml, as a path under `examples` (claims/ included)."""
    return sorted(str(p.parent.relative_to(examples)) for p in examples.glob("**/xr.yaml"))


def _examples_hint(wanted: str = "") -> str:
    names = example_names()
    close = difflib.get_close_matches(Path(wanted).name, names, n=3, cutoff=0.6) if wanted else []
    lines = [f"did you mean: {', '.join(close)}?"] if close else []
    lines.append("examples (make render EXAMPLE=<name>):")
    lines.append(
        textwrap.fill(
            " ".join(names),
            width=100,
            initial_indent="  ",
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
    )
    return "\n".join(lines)


def _fix(problem: str, wanted: str = "") -> UsageError:
    return UsageError(
        f"{problem}\n"
        "pass an example directory or its name (make render EXAMPLE=aimservice-basic), or your own "
        "manifest (make render FILE=my-service.yaml)\n" + _examples_hint(wanted)
    )


def _check_manifest(path: Path, what: str) -> list[Any]:
    """The YAML documents of a file the user named, read within bounds; UsageError if not."""
    problem = ""
    if not path.is_file():
        problem = "no such file"
    elif path.stat().st_size > MAX_MANIFEST_BYTES:
        problem = f"over {MAX_MANIFEST_BYTES // 1024 // 1024} MiB"
    else:
        try:
            return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        except (yaml.YAMLError, UnicodeDecodeError) as e:
            problem = f"not YAML: {e}"
    msg = f"{what} {path}: {problem}"
    raise UsageError(msg)


def _check_xr(path: Path) -> None:
    """The XR file holds one object of a kind that has an XRD here."""
    docs = _check_manifest(path, "manifest")
    if len(docs) != 1 or not isinstance(docs[0], dict):
        msg = (
            f"manifest {path}: holds {len(docs)} YAML documents; render takes one AIM object (the "
            "XR): put the objects it looks up in another file and pass it with --required "
            "(make render FILE=... REQUIRED=...)"
        )
        raise UsageError(msg)
    kind = docs[0].get("kind")
    kinds = [d.kind for d in DEFINITIONS] + [composite_names(d)[0] for d in DEFINITIONS]
    if kind not in kinds:
        msg = (
            f"manifest {path}: kind {kind!r} is not an AIM kind; render takes one of "
            + ", ".join(sorted(set(kinds)))
        )
        raise UsageError(msg)


def resolve_inputs(
    target: str | None,
    required: Sequence[str] = (),
    observed: str | None = None,
    cwd: Path | None = None,
) -> Inputs:
    """What to render, from the command line: a directory, an example's name or a file.

    Relative paths are relative to `cwd` (where the user stands); one that is no path there is
    looked up under examples/, then in the checkout. UsageError, naming the fix and the examples,
    otherwise.
    """
    here = cwd or Path.cwd()
    if target is None:
        path = DEFAULT_EXAMPLE
    else:
        # Where the user stands first, then the checkout's examples/ and the checkout itself.
        tried = [here / target, ROOT / "examples" / target, ROOT / target]
        path = next((p for p in tried if p.exists()), tried[0])
    if not path.exists():
        msg = f"{target}: no such example directory or file"
        raise _fix(msg, target or "")
    if path.is_file() and path.name == "xr.yaml" and not required and observed is None:
        path = path.parent  # an example's own xr.yaml: render the example, beside files included
    if path.is_dir():
        xr = path / "xr.yaml"
        if not xr.is_file():
            msg = f"{target}: a directory without xr.yaml"
            raise _fix(msg, target or "")
        beside_required = path / "required.yaml"
        beside_observed = path / "observed.yaml"
        found_required = (beside_required,) if beside_required.is_file() else ()
        found_observed = beside_observed if beside_observed.is_file() else None
    else:
        xr, found_required, found_observed = path, (), None
    _check_xr(xr)
    req = (*found_required, *(here / r for r in required))
    obs = here / observed if observed is not None else found_observed
    for r in req:
        _check_manifest(r, "--required")
    if obs is not None:
        _check_manifest(obs, "--observed")
    return Inputs(xr.resolve(), tuple(r.resolve() for r in req), obs.resolve() if obs else None)


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/render",
        usage=USAGE,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", nargs="?", metavar="EXAMPLE | FILE", help="what to render")
    parser.add_argument(
        "--required",
        action="append",
        default=[],
        metavar="FILE",
        help="objects the function looks up (models, templates, runtime configs); repeatable",
    )
    parser.add_argument(
        "--observed",
        metavar="FILE",
        help="composed objects as they exist in the cluster (their status, for readiness)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    """Render one example or manifest and print the composed objects."""
    args = _parse(argv)
    try:
        inputs = resolve_inputs(args.target, args.required, args.observed)
    except UsageError as e:
        print(f"render: {e}", file=sys.stderr)
        return 2
    try:
        tools = build_tools("render")
        with serve_function("--oras", str(tools.oras)) as server:
            result = render(
                tools,
                server.target,
                inputs.xr,
                required=inputs.required,
                observed=inputs.observed,
            )
    except HarnessError as e:
        print(f"render: {e}", file=sys.stderr)
        return 1
    sys.stderr.write(result.stderr)
    print(result.stdout, end="")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
