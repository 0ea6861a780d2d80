"""build/verify.py, run by python3 as the download Job's check runs it, against a stand-in Hub.

The stand-in is a tiny `huggingface_hub` on PYTHONPATH answering `model_info` as the library
does (siblings with `rfilename`, `blob_id` and, for LFS files, `lfs.sha256`); the files are
real files in a directory, as the download leaves them in the volume.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from function.api.cache import Verification
from function.build.storage import VERIFY_SCRIPT
from function.compose.cache import progress
from tests.cases import Case, table

WEIGHTS = b"\x01" * 5000
CONFIG = b'{"architectures": ["Small"]}'
CONFIG_BLOB = hashlib.sha1(b"blob %d\0" % len(CONFIG) + CONFIG, usedforsecurity=False).hexdigest()
WEIGHTS_SHA256 = hashlib.sha256(WEIGHTS).hexdigest()
FAKE_HF = f"""
class _Lfs:
    def __init__(self, sha256): self.sha256 = sha256
class _Sibling:
    def __init__(self, name, blob_id, lfs=None):
        self.rfilename, self.blob_id, self.lfs = name, blob_id, lfs
class _Info:
    siblings = [
        _Sibling("config.json", "{CONFIG_BLOB}"),
        _Sibling("model.safetensors", "ignored", _Lfs("{WEIGHTS_SHA256}")),
    ]
class HfApi:
    def __init__(self, token=None): pass
    def model_info(self, repo, files_metadata=False):
        assert files_metadata and repo == "org/model"
        return _Info()
"""


@dataclass(frozen=True)
class Download(Case):
    uri: str = "hf://org/model"
    given: dict[str, str] = field(default_factory=dict)
    method: str = "huggingface-sha256"
    files: dict[str, bytes] = field(
        default_factory=lambda: {"config.json": CONFIG, "model.safetensors": WEIGHTS}
    )
    says: str = ""


CASES = [
    Download("whole", "every file matches the Hub's hash: LFS by sha256, others by git blob id"),
    Download(
        "corrupt-weights",
        "one flipped byte in the weights is caught by their sha256",
        files={"config.json": CONFIG, "model.safetensors": WEIGHTS[:-1] + b"\x02"},
        says="checksum mismatch: model.safetensors",
    ),
    Download(
        "edited-config",
        "a non-LFS file is held to its git blob id",
        files={"config.json": CONFIG + b" ", "model.safetensors": WEIGHTS},
        says="checksum mismatch: config.json",
    ),
    Download(
        "missing-file",
        "a file the Hub lists but the volume lacks (an interrupted download)",
        files={"config.json": CONFIG},
        says="model.safetensors is missing from the volume",
    ),
    Download(
        "s3",
        "S3 publishes no sha256 for a prefix: said, not failed",
        uri="s3://bucket/m",
        method="none",
    ),
    Download(
        "s3-given",
        "a sha256 the user gives holds an S3 download to it",
        uri="s3://bucket/m",
        given={"model.safetensors": WEIGHTS_SHA256},
        method="sha256",
    ),
    Download(
        "s3-given-wrong",
        "a user's sha256 the file does not have fails the check",
        uri="s3://bucket/m",
        given={"model.safetensors": "0" * 64},
        says="checksum mismatch: model.safetensors",
    ),
    Download(
        "hf-and-given",
        "the user's checksums add to the Hub's",
        given={"config.json": hashlib.sha256(CONFIG).hexdigest()},
        method="huggingface-sha256+sha256",
    ),
    Download(
        "given-escapes",
        "a path out of the volume is never read",
        uri="s3://bucket/m",
        given={"../etc/passwd": "0" * 64},
        says="is missing from the volume",
    ),
]


@table(CASES)
def test_the_verdict_reaches_the_function(tmp_path: Path, case: Download) -> None:
    """The check's verdict travels in the termination message, and the function reads it as a
    Verification, or as the error to fail the cache with."""
    volume = tmp_path / "volume"
    volume.mkdir()
    for name, data in case.files.items():
        (volume / name).write_bytes(data)
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    (fakes / "huggingface_hub.py").write_text(FAKE_HF)
    log = tmp_path / "termination-log"
    proc = subprocess.run(
        [sys.executable, "-c", VERIFY_SCRIPT, case.uri, str(volume)],
        capture_output=True,
        text=True,
        env={
            "PYTHONPATH": str(fakes),
            "AIM_TERMINATION_LOG": str(log),
            "AIM_CHECKSUMS": json.dumps(case.given),
        },
        check=False,
        timeout=30,
    )
    message = log.read_text()
    assert json.loads(message) == json.loads(proc.stdout)
    seen = progress.verdict(message)
    if case.says:
        assert proc.returncode == 1
        assert isinstance(seen, str)
        assert case.says in seen
        return
    assert proc.returncode == 0, proc.stdout
    assert isinstance(seen, Verification)
    assert seen.method == case.method
    if case.method == "none":
        assert seen.reason == "s3:// publishes no checksums"
    elif case.method == "huggingface-sha256":
        assert (seen.files, seen.bytes) == (2, len(CONFIG) + len(WEIGHTS))
    elif case.method == "sha256":
        assert (seen.files, seen.bytes) == (1, len(WEIGHTS))
    else:
        assert seen.files == 3, "the Hub's two and the user's one"
