"""Brings a service's adapter disk to the adapters it declares; prints what it did.

Run by a service's adapter Job in the download image (python3, the standard library only):
`python3 -c <this file> <disk>`. The disk is the service's own ReadWriteMany volume; the inference
pods mount its `live/` read-only, and the AIM runtime serves each `live/<name>/` as the adapter
`<name>`. AIM_ADAPTERS (JSON) lists the adapters wanted, each `{"name", "source", "key", "rank"}`:
`source` is where the Job mounts that adapter's cache (read-only), `key` what identifies the bytes
(the cache's uid and source), `rank` the rank its cache declares, if any. AIM_ADAPTER_MAX_RANK is
the most the inference server is started with.

For each adapter whose `key` is not the one staged already: its files are checked (a PEFT
`adapter_config.json` of at most 1 MiB whose `r` is a whole number no higher than the declared
rank and the server's cap, weights as `adapter_model.safetensors` or `.bin`, regular files and
directories only: a symlink could point a pod's read-only mount anywhere), copied into
`.staging/`, then renamed into `live/` (the old copy moved aside first, so a reader never sees a
half-written adapter). Adapters no longer wanted are moved out of `live/` and deleted. One
adapter's bad files fail that adapter only. The verdict is one JSON line on stdout and in the
termination message: `{"staged": N, "removed": M, "failed": {"<name>": "<why>"}}`. The kubelet
keeps 4 KiB of it, so failures past about 3.5 KB are only counted, in `more`. Only a disk it
cannot write exits 1, so the Job tries again.
"""

import contextlib
import json
import os
import shutil
import sys
from pathlib import Path

CONFIG = "adapter_config.json"
WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")
MAX_CONFIG_BYTES = 1 << 20
MAX_FILES = 10_000
MAX_WHY = 160
MAX_LISTED_BYTES = 3500


class BadAdapter(Exception):  # noqa: N818 - the adapter is what is bad, not a failure of ours
    """The adapter's files are not what a PEFT LoRA adapter is made of."""


def checked_rank(source: Path, declared: int | None, cap: int | None) -> int:
    """The adapter's rank `r`, from its config, held to the declared rank and the cap."""
    config = source / CONFIG
    if config.is_symlink() or not config.is_file():
        msg = f"{CONFIG} is missing: not a PEFT adapter"
        raise BadAdapter(msg)
    if config.stat().st_size > MAX_CONFIG_BYTES:
        msg = f"{CONFIG} is over 1 MiB"
        raise BadAdapter(msg)
    try:
        parsed = json.loads(config.read_bytes())
    except ValueError as e:
        msg = f"{CONFIG} is not JSON: {e}"
        raise BadAdapter(msg) from e
    rank = parsed.get("r") if isinstance(parsed, dict) else None
    if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
        msg = f"{CONFIG} has no rank r (a whole number of at least 1)"
        raise BadAdapter(msg)
    if declared is not None and rank > declared:
        msg = f"its rank r is {rank}, over the rank {declared} its cache declares (spec.rank)"
        raise BadAdapter(msg)
    if cap is not None and rank > cap:
        msg = f"its rank r is {rank}, over the server's cap of {cap} (adapterRuntime.maxRank)"
        raise BadAdapter(msg)
    if not any((source / w).is_file() and not (source / w).is_symlink() for w in WEIGHTS):
        msg = f"no weights: neither {' nor '.join(WEIGHTS)}"
        raise BadAdapter(msg)
    return rank


def checked_tree(source: Path) -> None:
    """Regular files and directories only, and not too many of them."""
    count = 0
    for root, dirs, files in os.walk(source):
        for name in dirs + files:
            path = Path(root) / name
            count += 1
            if count > MAX_FILES:
                msg = f"more than {MAX_FILES} files"
                raise BadAdapter(msg)
            if path.is_symlink():
                msg = f"{path.relative_to(source)} is a symbolic link"
                raise BadAdapter(msg)
            if not (path.is_dir() or path.is_file()):
                msg = f"{path.relative_to(source)} is not a regular file"
                raise BadAdapter(msg)


def stage(disk: Path, name: str, source: Path) -> None:
    """Copy `source` into `.staging/`, then swap it into `live/<name>`."""
    staging = disk / ".staging" / f"{name}.{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, staging, symlinks=True)
    for root, dirs, files in os.walk(staging):
        for entry in (*dirs, *files):
            (Path(root) / entry).chmod(0o755 if (Path(root) / entry).is_dir() else 0o644)
    staging.chmod(0o755)
    live = disk / "live" / name
    if live.exists():
        retire(disk, live)
    staging.rename(live)


def retire(disk: Path, live: Path) -> None:
    """Move a live adapter out of sight in one rename, then delete it."""
    trash = disk / ".trash" / f"{live.name}.{os.getpid()}"
    trash.parent.mkdir(parents=True, exist_ok=True)
    live.rename(trash)
    shutil.rmtree(trash, ignore_errors=True)


def sync(disk: Path, wanted: list[dict[str, object]], cap: int | None) -> dict[str, object]:
    """Stage what changed, remove what is no longer wanted; the verdict."""
    (disk / "live").mkdir(parents=True, exist_ok=True)
    (disk / "live").chmod(0o755)
    markers = disk / ".staged"
    markers.mkdir(exist_ok=True)
    failed: dict[str, str] = {}
    staged = 0
    names = set()
    for adapter in wanted:
        name, key = str(adapter["name"]), str(adapter["key"])
        declared = adapter.get("rank")
        names.add(name)
        marker = markers / name
        live = disk / "live" / name
        if live.is_dir() and marker.is_file() and marker.read_text() == key:
            staged += 1
            continue
        source = Path(str(adapter["source"]))
        try:
            checked_rank(source, declared if isinstance(declared, int) else None, cap)
            checked_tree(source)
        except BadAdapter as e:
            failed[name] = str(e)[:MAX_WHY]
            continue
        marker.unlink(missing_ok=True)
        stage(disk, name, source)
        marker.write_text(key)
        staged += 1
    removed = 0
    for live in sorted((disk / "live").iterdir()):
        if live.name not in names or live.name in failed:
            if live.is_dir() and not live.is_symlink():
                retire(disk, live)
            else:
                live.unlink()
            (markers / live.name).unlink(missing_ok=True)
            removed += 1
    listed: dict[str, str] = {}
    for name, why in sorted(failed.items()):
        if len(json.dumps({**listed, name: why})) > MAX_LISTED_BYTES:
            break
        listed[name] = why
    verdict: dict[str, object] = {"staged": staged, "removed": removed, "failed": listed}
    if len(failed) > len(listed):
        verdict["more"] = len(failed) - len(listed)
    return verdict


def main() -> int:
    """Sync the disk; the verdict goes to stdout and the termination message."""
    disk = Path(sys.argv[1])
    wanted = json.loads(os.environ.get("AIM_ADAPTERS") or "[]")
    cap_text = os.environ.get("AIM_ADAPTER_MAX_RANK") or ""
    try:
        verdict = sync(disk, wanted, int(cap_text) if cap_text else None)
        code = 0
    except OSError as e:
        verdict, code = {"error": f"the adapter disk: {e}"[:1000]}, 1
    line = json.dumps(verdict)
    sys.stdout.write(line + "\n")
    with contextlib.suppress(OSError):  # not in a pod: stdout is enough
        Path(os.environ.get("AIM_TERMINATION_LOG", "/dev/termination-log")).write_text(line)
    return code


if __name__ == "__main__":
    sys.exit(main())
