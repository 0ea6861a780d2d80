"""Credentials written in plain text into a cluster-scoped config's or template's env."""

from __future__ import annotations

from dataclasses import dataclass

from function.api.common import EnvVar
from function.rules.credentials import (
    credentials_condition,
    literal_credentials,
    looks_like_credential,
)
from function.rules.status import ConditionStatus
from tests.cases import Case, table

KIND = "AIMClusterRuntimeConfig"


@dataclass(frozen=True)
class NameCase(Case):
    name: str
    credential: bool


NAME_CASES = [
    NameCase("hf-token", "the download token the AIM images read", "HF_TOKEN", credential=True),
    NameCase("hf-hub-token", "the older spelling of it", "HUGGING_FACE_HUB_TOKEN", credential=True),
    NameCase("aws-secret", "an AWS secret key", "AWS_SECRET_ACCESS_KEY", credential=True),
    NameCase("aws-key-id", "an AWS access key id", "AWS_ACCESS_KEY_ID", credential=True),
    NameCase("aws-session", "an AWS session token", "AWS_SESSION_TOKEN", credential=True),
    NameCase(
        "aws-other", "any other AWS_ name, as the issue asks", "AWS_WEB_IDENTITY", credential=True
    ),
    NameCase("api-key", "KEY as a whole word", "MY_API_KEY", credential=True),
    NameCase("apikey", "the run-together form", "OPENAI_APIKEY", credential=True),
    NameCase("password", "a password", "DB_PASSWORD", credential=True),
    NameCase("pgpasswd", "PASSWD inside a word is no word", "PGPASSWD_X", credential=False),
    NameCase("passwd-word", "the short form as a word", "PG_PASSWD", credential=True),
    NameCase("credentials", "the plural", "GCP_CREDENTIALS", credential=True),
    NameCase("lowercase", "case does not matter", "hf_token", credential=True),
    NameCase("camel", "a camelCase hump splits words", "hfToken", credential=True),
    NameCase("dashes", "any non-alphanumeric splits words", "my-secret.value", credential=True),
    NameCase("secret-first", "the word may start the name", "SECRET", credential=True),
    NameCase("keycloak", "KEY inside a word is no word", "KEYCLOAK_REALM", credential=False),
    NameCase(
        "tokenizers", "TOKEN inside a word is no word", "TOKENIZERS_PARALLELISM", credential=False
    ),
    NameCase("monkey", "KEY at the end of a word", "MONKEY_COUNT", credential=False),
    NameCase("kv-url", "a location, not the credential", "KEY_VALUE_STORE_URL", credential=False),
    NameCase("token-path", "where a token is mounted", "HF_TOKEN_PATH", credential=False),
    NameCase(
        "aws-file", "AWS's credentials file path", "AWS_SHARED_CREDENTIALS_FILE", credential=False
    ),
    NameCase("aws-region", "an AWS setting", "AWS_DEFAULT_REGION", credential=False),
    NameCase("aws-endpoint", "an S3 endpoint setting", "AWS_ENDPOINT_URL_S3", credential=False),
    NameCase("aws-alone", "AWS with nothing after it", "AWS", credential=False),
    NameCase("vllm", "an engine setting", "VLLM_ENABLE_METRICS", credential=False),
    NameCase("punctuation", "a name of no letters", "___", credential=False),
    NameCase(
        "long", "a long name is read by its start", "SECRET_" + "A" * 100_000, credential=True
    ),
]


@table(NAME_CASES)
def test_which_env_names_look_like_credentials(case: NameCase) -> None:
    """Whole words, case-insensitive; a location or an AWS setting is not a credential."""
    assert looks_like_credential(case.name) is case.credential, case.reason


@dataclass(frozen=True)
class EnvCase(Case):
    env: list[EnvVar]
    names: list[str]


ENV_CASES = [
    EnvCase("literal", "a literal token", [EnvVar(name="HF_TOKEN", value="hf_x")], ["HF_TOKEN"]),
    EnvCase(
        "value-from",
        "a Secret reference is the fix, never a warning",
        [EnvVar(name="HF_TOKEN", value_from={"secretKeyRef": {"name": "hf", "key": "token"}})],
        [],
    ),
    EnvCase("empty", "an empty value carries nothing", [EnvVar(name="HF_TOKEN", value="")], []),
    EnvCase("unset", "no value at all", [EnvVar(name="HF_TOKEN")], []),
    EnvCase(
        "plain",
        "a literal that is no credential",
        [EnvVar(name="VLLM_ENABLE_METRICS", value="true")],
        [],
    ),
    EnvCase(
        "once-each",
        "a name set twice is named once, in order",
        [
            EnvVar(name="MY_API_KEY", value="a"),
            EnvVar(name="HF_TOKEN", value="b"),
            EnvVar(name="MY_API_KEY", value="c"),
        ],
        ["MY_API_KEY", "HF_TOKEN"],
    ),
]


@table(ENV_CASES)
def test_only_literal_values_count(case: EnvCase) -> None:
    """`value` is what the warning is about; `valueFrom` and empty values are fine."""
    assert literal_credentials(case.env) == case.names, case.reason


def test_the_warning_names_the_entries_and_the_fix_never_the_values() -> None:
    """Anyone who reads the object's status or events must not learn the token from them."""
    env = [
        EnvVar(name="HF_TOKEN", value="hf_SuperSecretValue"),
        EnvVar(name="AWS_SECRET_ACCESS_KEY", value="wJalrXUtnFEMI"),
        EnvVar(name="VLLM_ENABLE_METRICS", value="true"),
    ]
    condition = credentials_condition(KIND, [("spec.env", env)], had=False)
    assert condition is not None
    assert (condition.type, condition.status, condition.reason) == (
        "CredentialsInline",
        ConditionStatus.TRUE,
        "LiteralCredential",
    )
    assert condition.warn
    assert "'HF_TOKEN' in spec.env" in condition.message
    assert "'AWS_SECRET_ACCESS_KEY' in spec.env" in condition.message
    assert "VLLM_ENABLE_METRICS" not in condition.message
    assert "valueFrom.secretKeyRef" in condition.message
    assert KIND in condition.message
    assert "hf_SuperSecretValue" not in condition.message
    assert "wJalrXUtnFEMI" not in condition.message


def test_the_warning_names_a_bounded_number_of_entries() -> None:
    """A config with many credentials (or a huge name) gives a message of bounded size."""
    env = [EnvVar(name=f"TOKEN_{i}", value="x") for i in range(50)]
    env.append(EnvVar(name="SECRET_" + "A" * 10_000, value="x"))
    condition = credentials_condition(KIND, [("spec.env", env)], had=False)
    assert condition is not None
    # 51 entries, four of them named and the fifth place saying how many are left.
    assert "47 more;" in condition.message
    assert "'TOKEN_3'" in condition.message
    assert "'TOKEN_4'" not in condition.message
    assert len(condition.message) < 1000


def test_a_clean_env_clears_a_warning_the_object_carries_and_adds_none_otherwise() -> None:
    """Crossplane keeps a condition a function stops returning: a fixed config must say so,
    and a config that never had a credential gets no condition at all."""
    env = [EnvVar(name="HF_TOKEN", value_from={"secretKeyRef": {"name": "hf", "key": "t"}})]
    cleared = credentials_condition(KIND, [("spec.env", env)], had=True)
    assert cleared is not None
    assert (cleared.status, cleared.reason, cleared.warn) == (
        ConditionStatus.FALSE,
        "NoLiteralCredentials",
        False,
    )
    assert credentials_condition(KIND, [("spec.env", env)], had=False) is None
    assert credentials_condition(KIND, [("spec.env", None)], had=False) is None
