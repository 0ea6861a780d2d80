"""Which env entries of a cluster-scoped config or template carry a credential in plain text.

An AIMClusterRuntimeConfig's or AIMClusterServiceTemplate's env reaches the pods of every
namespace that uses it, and any user allowed to read the catalog can read it. A literal token
there is shared with every team; `valueFrom.secretKeyRef` keeps it in each namespace's Secret.

A name looks like a credential when one of its words is a credential word (`TOKEN`, `KEY`,
`SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL`, their plurals, and a few run-together forms such
as `APIKEY`), or when it starts with `AWS_` and is none of AWS's plain settings (region,
profile, endpoint). Words are the name's runs of letters and digits, case-insensitive, also
split where a lowercase letter meets an uppercase one (`hfToken` is `HF TOKEN`): `HF_TOKEN`,
`AWS_SECRET_ACCESS_KEY` and `MY_API_KEY` match; `KEYCLOAK_REALM` and `TOKENIZERS_PARALLELISM`
do not (no whole word). A name whose last word says where something is (`URL`, `PATH`, `FILE`,
...) names a location, not the credential, and does not match: `KEY_VALUE_STORE_URL`,
`HF_TOKEN_PATH`, `AWS_SHARED_CREDENTIALS_FILE`. Only literal `value`s count: `valueFrom` is the
fix, and an empty value carries nothing.

The rule only warns: a miss or a false alarm never changes what is composed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from function.api.common import EnvVar
from function.rules.status import Condition, ConditionStatus, ConditionType, Reason
from function.rules.text import cut

CREDENTIAL_WORDS: Final = frozenset(
    {
        "TOKEN",
        "TOKENS",
        "KEY",
        "KEYS",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWORDS",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "APIKEY",
        "ACCESSKEY",
        "PRIVATEKEY",
        "AUTHTOKEN",
    }
)
"""Words that make a name look like a credential, wherever they are in it."""

LOCATION_WORDS: Final = frozenset(
    {"URL", "URI", "PATH", "FILE", "DIR", "HOST", "PORT", "ENDPOINT", "BUNDLE"}
)
"""A name ending in one of these says where something is, not what it is."""

AWS_SETTINGS: Final = frozenset({"REGION", "PROFILE", "ENDPOINT"})
"""Words of `AWS_*` names that are settings, not credentials (`AWS_DEFAULT_REGION`)."""

MAX_NAME: Final = 256
"""Characters of a name that are read; a longer name is judged by its start."""
MAX_NAMED: Final = 5
"""Entries a message names before it says "N more"."""
_MAX_SHOWN: Final = 64
"""Characters of one name a message shows."""

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD = re.compile(r"[A-Z0-9]+")


def words(name: str) -> list[str]:
    """The name's words, uppercase: runs of letters and digits, split at camelCase humps."""
    return _WORD.findall(_CAMEL.sub(r"\1_\2", name[:MAX_NAME]).upper())


def looks_like_credential(name: str) -> bool:
    """Whether an env name looks like it holds a credential (see the module's rule)."""
    found = words(name)
    if not found or found[-1] in LOCATION_WORDS:
        return False
    if any(w in CREDENTIAL_WORDS for w in found):
        return True
    return found[0] == "AWS" and len(found) > 1 and not AWS_SETTINGS.intersection(found)


def literal_credentials(env: Iterable[EnvVar] | None) -> list[str]:
    """Names, once each in order, whose entry sets a non-empty literal value to a credential."""
    names: dict[str, None] = {}
    for var in env or ():
        if var.value and looks_like_credential(var.name):
            names.setdefault(var.name, None)
    return list(names)


def credentials_condition(
    kind: str, envs: Iterable[tuple[str, Iterable[EnvVar] | None]], *, had: bool
) -> Condition | None:
    """The `CredentialsInline` condition of a cluster-scoped `kind`, from its env lists.

    `envs` gives each env list with the field it is at (`spec.env`). True, told once as a
    Warning, while a credential is written in; False once none is, but only if the object `had`
    the condition (Crossplane keeps a condition a function stops returning, so it is cleared
    this way); None for an object that never had one. The message names the entries and their
    fields, never their values.
    """
    found = [f"{_shown(name)} in {at}" for at, env in envs for name in literal_credentials(env)]
    if found:
        if len(found) > MAX_NAMED:
            found = [*found[: MAX_NAMED - 1], f"{len(found) - MAX_NAMED + 1} more"]
        return Condition(
            ConditionType.CREDENTIALS_INLINE,
            ConditionStatus.TRUE,
            Reason.LITERAL_CREDENTIAL,
            f"literal credential value(s): {', '.join(found)}; the pods of every namespace "
            f"using this {kind} get them, and everyone who may read {kind}s can read them: put "
            "each in a Secret in each namespace and use valueFrom.secretKeyRef, or set it in "
            "each namespace's own AIMRuntimeConfig",
            warn=True,
        )
    if had:
        return Condition(
            ConditionType.CREDENTIALS_INLINE,
            ConditionStatus.FALSE,
            Reason.NO_LITERAL_CREDENTIALS,
            "no env entry sets a credential-like name to a literal value",
        )
    return None


def _shown(name: str) -> str:
    return repr(cut(name, _MAX_SHOWN))
