"""build/adapter_sync.py, run by python3 as a service's adapter Job runs it, on real directories.

Each adapter's cache is a directory as the download leaves it; the disk is a directory as the
Job mounts it. What is checked is what the inference pods would see under `live/` and the verdict
the function reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from function.build.adapters import SYNC_SCRIPT
from tests.cases import Case, table

WEIGHTS = b"\x01" * 4096


def adapter(
    root: Path, name: str, *, rank: object = 8, files: dict[str, bytes] | None = None
) -> Path:
    """A PEFT LoRA adapter as a download leaves it: its config and its weights."""
    source = root / "sources" / name
    source.mkdir(parents=True)
    config = json.dumps({"r": rank, "peft_type": "LORA", "base_model_name_or_path": "org/base"})
    contents = {"adapter_config.json": config.encode(), "adapter_model.safetensors": WEIGHTS}
    for path, data in (files if files is not None else contents).items():
        (source / path).parent.mkdir(parents=True, exist_ok=True)
        (source / path).write_bytes(data)
    return source


def run(disk: Path, wanted: list[dict[str, object]], cap: int | None = None) -> dict[str, object]:
    """Run the script as the Job does; its verdict (stdout and termination message agree)."""
    log = disk.parent / "termination-log"
    env = {
        **os.environ,
        "AIM_ADAPTERS": json.dumps(wanted),
        "AIM_ADAPTER_MAX_RANK": "" if cap is None else str(cap),
        "AIM_TERMINATION_LOG": str(log),
    }
    proc = subprocess.run(
        [sys.executable, "-c", SYNC_SCRIPT, str(disk)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    verdict: dict[str, object] = json.loads(proc.stdout)
    assert json.loads(log.read_text()) == verdict
    assert len(log.read_bytes()) < 4096  # the kubelet's cap on a termination message
    return verdict


def want(source: Path, key: str = "uid-1", rank: int | None = None) -> dict[str, object]:
    return {"name": source.name, "source": str(source), "key": key, "rank": rank}


def live(disk: Path) -> dict[str, set[str]]:
    """What the inference pods see: each adapter directory and its files."""
    return {
        d.name: {str(f.relative_to(d)) for f in d.rglob("*") if f.is_file()}
        for d in sorted((disk / "live").iterdir())
    }


PEFT = {"adapter_config.json", "adapter_model.safetensors"}


@dataclass(frozen=True)
class Bad(Case):
    files: dict[str, bytes] | None = None
    rank: object = 8
    declared: int | None = None
    cap: int | None = None
    says: str = ""
    link: bool = False
    extra: dict[str, bytes] = field(default_factory=dict)


BAD = [
    Bad(
        "no-config",
        "weights without a config are not a PEFT adapter",
        files={"adapter_model.bin": WEIGHTS},
        says="adapter_config.json is missing",
    ),
    Bad(
        "not-json",
        "a config that is not JSON",
        files={"adapter_config.json": b"{r: 8", "adapter_model.bin": WEIGHTS},
        says="is not JSON",
    ),
    Bad(
        "config-a-list",
        "JSON but not an object: no rank to read",
        files={"adapter_config.json": b"[8]", "adapter_model.bin": WEIGHTS},
        says="has no rank r",
    ),
    Bad("rank-a-string", "a rank that is not a whole number", rank="8", says="has no rank r"),
    Bad(
        "rank-a-bool",
        "true is not a rank, though Python counts it an int",
        rank=True,
        says="has no rank r",
    ),
    Bad("rank-zero", "rank 0 is no adapter", rank=0, says="has no rank r"),
    Bad(
        "huge-config",
        "a config over 1 MiB is refused unread",
        files={"adapter_config.json": b" " * (1 << 20 + 1), "adapter_model.bin": WEIGHTS},
        says="over 1 MiB",
    ),
    Bad(
        "no-weights",
        "a config alone serves nothing",
        files={"adapter_config.json": b'{"r": 8}'},
        says="no weights",
    ),
    Bad(
        "over-declared",
        "the bytes' rank above what the cache declares",
        rank=32,
        declared=16,
        says="its rank r is 32, over the rank 16 its cache declares",
    ),
    Bad(
        "over-cap",
        "the bytes' rank above the server's cap",
        rank=64,
        cap=32,
        says="over the server's cap of 32",
    ),
    Bad(
        "symlink",
        "a link could point the pod's read-only mount at anything",
        link=True,
        says="is a symbolic link",
    ),
]


@table(BAD)
def test_a_bad_adapter_fails_alone_and_nothing_of_it_goes_live(case: Bad, tmp_path: Path) -> None:
    """The bad adapter is named in the verdict with why; a good one beside it is staged."""
    bad = adapter(tmp_path, "bad", rank=case.rank, files=case.files)
    if case.link:
        (bad / "escape").symlink_to("/etc")
    good = adapter(tmp_path, "good")
    disk = tmp_path / "disk"
    disk.mkdir()

    verdict = run(disk, [want(bad, rank=case.declared), want(good)], cap=case.cap)

    failed = verdict["failed"]
    assert isinstance(failed, dict)
    assert list(failed) == ["bad"], verdict
    assert case.says in failed["bad"], failed
    assert verdict["staged"] == 1
    assert live(disk) == {"good": PEFT}


def test_staging_adds_keeps_and_removes_as_the_declared_set_changes(tmp_path: Path) -> None:
    """A first run stages both; a run with the same keys copies nothing again (the files'
    inodes are the same); a changed key re-stages that adapter only; an adapter no longer
    wanted leaves `live/`. Nothing is left in the staging or trash directories."""
    a, b = adapter(tmp_path, "tone"), adapter(tmp_path, "legal")
    disk = tmp_path / "disk"
    disk.mkdir()

    assert run(disk, [want(a), want(b)]) == {"staged": 2, "removed": 0, "failed": {}}
    assert live(disk) == {"legal": PEFT, "tone": PEFT}
    inode = (disk / "live" / "tone" / "adapter_model.safetensors").stat().st_ino

    assert run(disk, [want(a), want(b)]) == {"staged": 2, "removed": 0, "failed": {}}
    assert (disk / "live" / "tone" / "adapter_model.safetensors").stat().st_ino == inode

    (a / "adapter_model.safetensors").write_bytes(b"\x02" * 10)
    assert run(disk, [want(a, key="uid-2"), want(b)])["staged"] == 2
    assert (disk / "live" / "tone" / "adapter_model.safetensors").read_bytes() == b"\x02" * 10

    assert run(disk, [want(b)]) == {"staged": 1, "removed": 1, "failed": {}}
    assert live(disk) == {"legal": PEFT}
    assert list((disk / ".staging").iterdir()) == []
    assert list((disk / ".trash").iterdir()) == []


def test_the_live_copy_is_readable_by_another_user(tmp_path: Path) -> None:
    """The inference pods run as another user than the Job: every file is world-readable and
    every directory world-listable, whatever the cache's own modes."""
    source = adapter(tmp_path, "tone")
    (source / "adapter_model.safetensors").chmod(0o600)
    disk = tmp_path / "disk"
    disk.mkdir()
    run(disk, [want(source)])
    for path in [disk / "live", *(disk / "live").rglob("*")]:
        mode = path.stat().st_mode & 0o777
        assert mode == (0o755 if path.is_dir() else 0o644), (path, oct(mode))


def test_many_failures_keep_the_verdict_under_the_kubelets_cap(tmp_path: Path) -> None:
    """64 bad adapters with long names: as many are listed as fit, the rest counted."""
    disk = tmp_path / "disk"
    disk.mkdir()
    wanted = [want(adapter(tmp_path, f"{'x' * 200}-{i}", rank=0)) for i in range(64)]
    verdict = run(disk, wanted)
    failed = verdict["failed"]
    assert isinstance(failed, dict)
    assert 0 < len(failed) < 64
    assert verdict["more"] == 64 - len(failed)
