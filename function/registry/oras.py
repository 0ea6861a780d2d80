"""The production `Inspector`: the `oras` CLI, run as a subprocess under asyncio.

`oras manifest fetch` gives the manifest (an image index is resolved to its linux/amd64 image
here, so the digest recorded is the one the tag pointed at), and `oras manifest fetch-config`
the image config with its labels. Neither pulls a layer. Credentials reach oras on standard
input, never on its command line, and oras is told to read no credential file of its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from pydantic import JsonValue

from function.registry.credentials import Credential
from function.registry.inspect import (
    MAX_ENTRYPOINT_ARG,
    MAX_ENTRYPOINT_ARGS,
    FailureKind,
    Inspection,
    InspectionOutcome,
    InspectionRequest,
    RegistryFailure,
)
from function.registry.reference import ImageReference
from function.registry.urls import without_userinfo
from function.rules import jsontext

INDEX_TYPES: Final = frozenset(
    {
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    }
)
PLATFORM: Final = {"os": "linux", "architecture": "amd64"}
DEFAULT_TIMEOUT_S: Final = 30.0
# oras reads ~/.docker/config.json unless told otherwise; a path that does not exist means "none",
# so a function pod never authenticates with credentials nobody listed on the model.
_NO_CREDENTIAL_FILE: Final = "/nonexistent/aim-crossplane/registry-config.json"
_MAX_MESSAGE: Final = 500
# What registries accept for a manifest; a config is smaller still.
_MAX_DOCUMENT_BYTES: Final = 4 << 20

_CLASSES: Final = (
    (
        FailureKind.UNAUTHORIZED,
        ("unauthorized", "credential", "denied", "forbidden", " 401", " 403"),
    ),
    (FailureKind.NOT_FOUND, ("not found", "manifest unknown", "name unknown", " 404")),
    (
        FailureKind.UNREACHABLE,
        ("connection refused", "no such host", "dial tcp", "i/o timeout", "tls:", "https client"),
    ),
)
_HINT: Final = re.compile(r"^(Please check|Usage:)", re.IGNORECASE)


class OrasError(Exception):
    """oras failed; `kind` says how, as a condition reason."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        """An error of `kind`, in words for a condition (no credential in them)."""
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class OrasInspector:
    """Inspects images with the `oras` binary at `oras`.

    `insecure` lists registries (`host[:port]`) spoken to over plain HTTP, like Docker's
    insecure-registries setting; every other registry is HTTPS. `mirrors` maps a registry to the
    host that serves its repositories instead (air-gapped sites, pull-through caches), as
    containerd's registry mirrors do; the image keeps its name and its pull secret, and only the
    host asked changes.
    """

    oras: str = "oras"
    timeout_s: float = DEFAULT_TIMEOUT_S
    insecure: frozenset[str] = frozenset()
    mirrors: Mapping[str, str] = field(default_factory=dict)

    async def inspect(self, request: InspectionRequest) -> InspectionOutcome:
        """Resolve the image's digest and read its config, within `timeout_s` in all."""
        deadline = time.monotonic() + self.timeout_s
        ref = self.served_from(request.reference)
        try:
            raw = await self._oras(["manifest", "fetch", str(ref)], request, deadline)
            digest = ref.digest or "sha256:" + hashlib.sha256(raw).hexdigest()
            target = _platform_manifest(raw, str(ref)) or digest
            config = await self._oras(
                ["manifest", "fetch-config", ref.at(target)], request, deadline
            )
            labels, entrypoint = _labels_and_entrypoint(config, str(ref))
        except OrasError as e:
            return RegistryFailure(request.image, e.kind, e.message)
        return Inspection(request.image, digest, labels, entrypoint)

    def served_from(self, ref: ImageReference) -> ImageReference:
        """The reference as asked of the registry that serves it: its mirror, if it has one."""
        mirror = self.mirrors.get(ref.registry)
        return replace(ref, registry=mirror) if mirror else ref

    async def _oras(
        self, args: Sequence[str], request: InspectionRequest, deadline: float
    ) -> bytes:
        return await self.run(
            args,
            request.reference.registry,
            request.credential,
            deadline,
            what=f"while reading {request.reference}",
            max_bytes=_MAX_DOCUMENT_BYTES,
        )

    async def run(  # noqa: PLR0913 - what one oras call needs
        self,
        args: Sequence[str],
        registry: str,
        credential: Credential | None,
        deadline: float,
        *,
        what: str,
        max_bytes: int,
        cut: bool = False,
        within: str = "",
    ) -> bytes:
        """Run `oras ARGS` against `registry` (or its mirror) and return what it printed.

        An answer longer than `max_bytes` is an error, or with `cut` its first `max_bytes + 1`
        bytes (the caller tells it was cut by its length), and oras is stopped. `within` names
        the time `deadline` allows, for the error past it (an inspection's `timeout_s` if unset).

        Raises:
            OrasError: oras failed, ran past `deadline`, or answered too much without `cut`.
        """
        cmd = [self.oras, *args, "--registry-config", _NO_CREDENTIAL_FILE]
        if self.mirrors.get(registry, registry) in self.insecure:
            cmd.append("--plain-http")
        if credential is not None:
            cmd += ["--username", credential.username, "--password-stdin"]
        stdin = credential.password.encode() if credential is not None else b""
        try:
            proc = await asyncio.create_subprocess_exec(
                *cmd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=_environment(),
            )
        except OSError as e:
            msg = f"cannot run {self.oras!r}: {e.strerror}; install oras or pass --oras"
            raise OrasError(FailureKind.ERROR, msg) from None
        try:
            out, err = await asyncio.wait_for(
                _bounded(proc, stdin, max_bytes),
                timeout=max(deadline - time.monotonic(), 0.001),
            )
        except TimeoutError:
            await _stop(proc)
            msg = f"no answer from {registry} within {within or f'{self.timeout_s:g}s'} {what}"
            raise OrasError(FailureKind.TIMEOUT, msg) from None
        if len(out) > max_bytes:
            await _stop(proc)
            if cut:
                return out
            msg = f"{registry} answered more than {max_bytes >> 10} KiB {what}"
            raise OrasError(FailureKind.ERROR, msg)
        if proc.returncode != 0:
            message = _redact(_message(err.decode(errors="replace")), credential)
            raise OrasError(_classify(message), message)
        return out


async def _bounded(
    proc: asyncio.subprocess.Process, stdin: bytes, max_bytes: int
) -> tuple[bytes, bytes]:
    """The process's output, reading no more than `max_bytes + 1` of stdout (then it is cut)."""
    pipe_in, pipe_out, pipe_err = proc.stdin, proc.stdout, proc.stderr
    if pipe_in is None or pipe_out is None or pipe_err is None:
        msg = "oras was started without its pipes"
        raise RuntimeError(msg)
    try:
        if stdin:
            pipe_in.write(stdin)
            await pipe_in.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # oras exited without reading it: its exit status and stderr say why
    pipe_in.close()
    out = b""
    while len(out) <= max_bytes:
        chunk = await pipe_out.read(min(1 << 16, max_bytes + 1 - len(out)))
        if not chunk:
            break
        out += chunk
    if len(out) > max_bytes:
        return out, b""
    err = await pipe_err.read(_MAX_MESSAGE * 8)
    await proc.wait()
    return out, err


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
    await proc.wait()


def _platform_manifest(raw: bytes, ref: str) -> str | None:
    """For an image index, the digest of its linux/amd64 image; None for an image manifest."""
    manifest = _json(raw, f"the manifest of {ref}")
    if manifest.get("mediaType") not in INDEX_TYPES and "manifests" not in manifest:
        return None
    entries = manifest.get("manifests")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        platform = entry.get("platform")
        if isinstance(platform, dict) and all(platform.get(k) == v for k, v in PLATFORM.items()):
            digest = entry.get("digest")
            if isinstance(digest, str):
                return digest
    msg = f"the image index {ref} has no linux/amd64 image"
    raise OrasError(FailureKind.NOT_FOUND, msg)


def _labels_and_entrypoint(raw: bytes, ref: str) -> tuple[dict[str, str], tuple[str, ...]]:
    config = _json(raw, f"the config of {ref}").get("config")
    config = config if isinstance(config, dict) else {}
    labels = config.get("Labels")
    entrypoint = config.get("Entrypoint")
    # An entrypoint no image needs is treated as unknown, so discovery uses the configured one.
    usable = (
        isinstance(entrypoint, list)
        and len(entrypoint) <= MAX_ENTRYPOINT_ARGS
        and all(isinstance(a, str) and len(a) <= MAX_ENTRYPOINT_ARG for a in entrypoint)
    )
    return (
        {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {},
        tuple(str(a) for a in entrypoint) if usable and isinstance(entrypoint, list) else (),
    )


def _json(raw: bytes, what: str) -> dict[str, JsonValue]:
    try:
        value = jsontext.loads(raw, max_bytes=_MAX_DOCUMENT_BYTES)
    except jsontext.JsonTextError as e:
        msg = f"{what} {e}"
        raise OrasError(FailureKind.ERROR, msg) from None
    if not isinstance(value, dict):
        msg = f"{what} is not a JSON object"
        raise OrasError(FailureKind.ERROR, msg)
    return value


def _message(stderr: str) -> str:
    """Oras's error without its prefixes and advice, on one line."""
    lines = [
        line.strip().removeprefix("Error response from registry: ").removeprefix("Error: ")
        for line in stderr.splitlines()
        if line.strip() and not _HINT.match(line.strip())
    ]
    text = "; ".join(lines) or "oras failed without a message"
    return text[:_MAX_MESSAGE]


def _classify(message: str) -> FailureKind:
    lowered = message.lower()
    for kind, words in _CLASSES:
        if any(word in lowered for word in words):
            return kind
    return FailureKind.ERROR


def _redact(message: str, credential: Credential | None) -> str:
    # oras does not echo passwords; this keeps it that way if a registry ever does, and a URL
    # it quotes (a token realm, a redirect) loses its userinfo.
    if credential is not None and credential.password:
        message = message.replace(credential.password, "<redacted>")
    return without_userinfo(message)


def _environment() -> dict[str, str]:
    """The function's environment for proxies and certificates, minus Docker's config location."""
    return {k: v for k, v in os.environ.items() if k != "DOCKER_CONFIG"}
