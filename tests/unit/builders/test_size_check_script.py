"""build/size_check.py, run by python3 as the size-check Job runs it, against stand-ins.

The stand-ins are tiny `huggingface_hub` and `boto3` modules on PYTHONPATH (the real ones live in
the download image and would call the network); they answer as those libraries do.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from function.build.storage import SIZE_CHECK_SCRIPT
from function.rules import caching
from tests.cases import Case, table

FAKE_HF = """
import os
class _File:
    def __init__(self, size): self.size = size
class _Info:
    siblings = [_File(1000), _File(None), _File(2 * 1024**3)]
class HfApi:
    def __init__(self, token=None):
        self.token = token
    def model_info(self, repo, files_metadata=False):
        if repo == "org/missing":
            raise RuntimeError("RepositoryNotFoundError: 404 Client Error")
        assert files_metadata and self.token == os.environ.get("HF_TOKEN")
        return _Info()
"""
FAKE_BOTO3 = """
class _Pages:
    def paginate(self, Bucket, Prefix):
        assert (Bucket, Prefix) == ("bucket", "models/llama")
        return [{"Contents": [{"Size": 10}, {"Size": 20}]}, {}]
class _Client:
    def get_paginator(self, name):
        return _Pages()
def client(service, endpoint_url=None):
    assert endpoint_url == "https://s3.example.com"
    return _Client()
"""


def run(tmp_path: Path, uri: str) -> tuple[int, str, str]:
    fakes = tmp_path / "fakes"
    fakes.mkdir(exist_ok=True)
    (fakes / "huggingface_hub.py").write_text(FAKE_HF)
    (fakes / "boto3.py").write_text(FAKE_BOTO3)
    log = tmp_path / "termination-log"
    log.write_text("")
    env = {
        "PYTHONPATH": str(fakes),
        "AIM_TERMINATION_LOG": str(log),
        "HF_TOKEN": "hf_test",
        "AWS_ENDPOINT_URL": "https://s3.example.com",
    }
    proc = subprocess.run(
        [sys.executable, "-c", SIZE_CHECK_SCRIPT, uri],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=30,
    )
    return proc.returncode, log.read_text(), proc.stderr


@dataclass(frozen=True)
class SourceCase(Case):
    uri: str
    size: int


SOURCE_CASES = [
    SourceCase(
        "hf", "a Hugging Face repository's files, summed", "hf://org/model", 1000 + 2 * 1024**3
    ),
    SourceCase("s3", "the objects under an S3 prefix, summed", "s3://bucket/models/llama", 30),
]


@table(SOURCE_CASES)
def test_the_size_travels_in_the_termination_message(tmp_path: Path, case: SourceCase) -> None:
    """The size check's answer travels in the termination message."""
    code, message, _ = run(tmp_path, case.uri)
    assert code == 0, case.reason
    assert json.loads(message) == {"sizeBytes": case.size}
    assert caching.parse_size(message) == case.size


def test_a_missing_repository_fails_in_words_the_function_classifies(tmp_path: Path) -> None:
    """A missing repository fails in words the function classifies as a missing source."""
    code, message, stderr = run(tmp_path, "hf://org/missing")
    assert code != 0
    assert message == ""  # Kubernetes then uses the log's tail (FallbackToLogsOnError)
    assert caching.classify_failure(stderr)[1].startswith("the source does not exist")
