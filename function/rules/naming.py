"""Deterministic names for composed objects, compatible with the AIM operator's.

Names are part of AIM's contract (users and dashboards find an InferenceService by the name AIM
gives it), so this is a faithful port of the operator's derived-name algorithm: sanitised parts, a
SHA-256 suffix over Go-JSON-encoded inputs, and shortening of the longest part until it fits.
A leaf module: standard library only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Final

DNS_LABEL_MAX: Final = 63
DEFAULT_HASH_LENGTH: Final = 8
# KServe names the predictor's objects `<isvc>-predictor-<namespace>`; that must stay a DNS label.
_PREDICTOR_OVERHEAD: Final = len("-predictor-")
_MIN_ISVC_NAME: Final = 10

_INVALID: Final = re.compile(r"[^a-z0-9-]")
_INVALID_RUN: Final = re.compile(r"[^a-z0-9-]+")

HashInput = str | int | None


class NameTooLongError(ValueError):
    """No name fits: the fixed parts (hash, separators) alone exceed the limit."""


def sanitize_part(part: str) -> str:
    """Lowercase, map every character outside `[a-z0-9-]` to `-`, trim dashes, cap at 63."""
    cleaned = _INVALID.sub("-", part.lower()).strip("-")[:DNS_LABEL_MAX].rstrip("-")
    return cleaned or "part"


def hash_suffix(inputs: Sequence[HashInput], length: int = DEFAULT_HASH_LENGTH) -> str:
    """First `length` hex digits of SHA-256 over the inputs, Go-JSON encoded and joined by `|`."""
    encoded = "|".join(_go_json(value) for value in inputs)
    return hashlib.sha256(encoded.encode()).hexdigest()[:length]


def derived_name(
    parts: Sequence[str],
    hash_inputs: Sequence[HashInput] = (),
    *,
    max_length: int = DNS_LABEL_MAX,
    hash_length: int = DEFAULT_HASH_LENGTH,
) -> str:
    """`<part>-<part>-<hash>`, shortening the longest part (first on ties) until it fits."""
    names = [sanitize_part(p) for p in parts]
    suffix = [hash_suffix(hash_inputs, hash_length)] if hash_inputs and hash_length else []
    while len(name := "-".join(names + suffix)) > max_length:
        longest = max(range(len(names)), key=lambda i: len(names[i]))
        if not names[longest]:
            msg = f"no name of at most {max_length} characters fits {list(parts)}"
            raise NameTooLongError(msg)
        names[longest] = names[longest][:-1].rstrip("-")
    return name


def inference_service_name(service: str, namespace: str) -> str:
    """Name of the InferenceService composed for an AIMService.

    Raises:
        NameTooLongError: the namespace is so long that KServe's derived names cannot fit.
    """
    limit = DNS_LABEL_MAX - _PREDICTOR_OVERHEAD - len(namespace)
    if limit < _MIN_ISVC_NAME:
        msg = (
            f"namespace {namespace!r} is too long ({len(namespace)} characters) for KServe's "
            f"'<name>-predictor-<namespace>' names; use a namespace of at most "
            f"{DNS_LABEL_MAX - _PREDICTOR_OVERHEAD - _MIN_ISVC_NAME} characters"
        )
        raise NameTooLongError(msg)
    return derived_name([service], [namespace], max_length=limit)


def auto_model_name(image: str) -> str:
    """Name of the AIMModel a service composes for `spec.model.image`: `auto-<hash of image>`.

    The AIM API's name for an auto-created model. The hash is the one `image_model_name` ends
    with, so a model made under the older name and its successor share it.

    Raises:
        ValueError: `image` has no name, so it is no image reference.
    """
    _image_name_and_tag(image)
    return f"auto-{hash_suffix([image])}"


def image_model_name(image: str) -> str:
    """The AIM operator's model name for an image: `<image name>-<tag>-<hash>`.

    Cluster models a model source creates are named so; models services composed for an image
    before they were named `auto_model_name` still are.

    Raises:
        ValueError: `image` has no name to derive one from.
    """
    name, tag = _image_name_and_tag(image)
    return derived_name([_collapse(name), _collapse(tag)], [image])


def custom_model_name(base_image: str, sources: Sequence[tuple[str, str, str | None]]) -> str:
    """Name of the AIMModel composed for `spec.model.custom`, from its first model id.

    `sources` are (modelId, sourceUri, AWS_ENDPOINT_URL or None): the same weights from another
    endpoint are another model.
    """
    inputs: list[HashInput] = [base_image]
    for model_id, uri, endpoint in sources:
        inputs += [model_id, uri] + ([endpoint] if endpoint else [])
    return derived_name([sources[0][0]], inputs)


def derived_template_name(  # noqa: PLR0913 - one keyword per override that names the template
    base: str,
    *,
    gpu: str | None,
    count: int | None,
    precision: str | None,
    metric: str | None,
    cpu: tuple[str, str | None] | None = None,
) -> str:
    """Name of the AIMServiceTemplate derived from `base` with a service's overrides.

    The operator's name, which has no CPU; an override's CPU (request, limit) adds a part and
    enters the hash, so services asking for different CPU on one base get different templates.
    """
    parts = [base, "ovr"]
    inputs: list[HashInput] = []
    if gpu:
        parts.append(gpu.lower())
        inputs += ["gpu", gpu]
    if count:
        parts.append(f"{count}gpu")
        inputs += ["count", count]
    if precision:
        parts.append(precision)
        inputs += ["precision", precision]
    if metric:
        parts.append(metric)
        inputs += ["metric", metric]
    if cpu:
        parts.append(f"{cpu[0]}cpu")
        inputs += ["cpu", cpu[0], "cpuLimit", cpu[1]]
    return derived_name(parts, inputs, hash_length=4)


def recommended_template_name(  # noqa: PLR0913 - the fields of one recommended deployment
    model: str,
    image: str,
    *,
    gpu: str | None,
    count: int | None,
    metric: str | None,
    precision: str | None,
) -> str:
    """Name of the template a model creates from one of its image's recommended deployments."""
    short_metric = {"latency": "lat", "throughput": "thr"}.get(metric or "", metric or "")
    hardware = f"{count}x-{gpu}" if gpu and count else gpu or (f"x{count}" if count else "")
    profile = "-".join(p for p in (hardware, short_metric, precision) if p)
    key = "-".join(
        [model, image]
        + ([gpu] if gpu else [])
        + ([f"x{count}"] if count else [])
        + ([metric] if metric else [])
        + ([precision] if precision else [])
    )
    return derived_name([image, profile], [key], hash_length=4)


def custom_template_name(  # noqa: PLR0913 - what distinguishes one custom template from another
    model: str,
    index: int,
    *,
    alias: str | None,
    precision: str | None,
    metric: str | None,
    gpu_count: int | None,
    gpu: str | None,
) -> str:
    """Name of the template a custom model generates for `spec.custom.templates[index]`."""
    parts = [model, "custom"] + [p for p in (alias, precision, gpu) if p]
    inputs: list[HashInput] = [model, index]
    inputs += [v for v in (alias, precision, metric, gpu_count, gpu) if v]
    return derived_name(parts, inputs)


def _image_name_and_tag(image: str) -> tuple[str, str]:
    ref = image.strip()
    digest = ""
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    last = ref.rsplit("/", 1)[-1]
    name, _, tag = last.partition(":")
    if digest.startswith("sha256:") and not tag:
        tag = digest.removeprefix("sha256:")[:6]
    if not name:
        msg = f"{image!r} is not an image reference such as registry/org/name:tag"
        raise ValueError(msg)
    return name, tag or "latest"


def _collapse(part: str) -> str:
    return _INVALID_RUN.sub("-", part.lower()).strip("-")


def _go_json(value: HashInput) -> str:
    """Encode like Go's encoding/json, which escapes <, > and & (and U+2028/9) in strings."""
    text = json.dumps(value, ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text
