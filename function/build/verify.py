"""Checks a finished download against the checksums its source publishes; prints the verdict.

Run by the download Job after the download, in the download image (python3 with
huggingface_hub, as KServe's storage-initializer carries it): `python3 -c <this file>
<sourceUri> <directory>`. The verdict is one JSON line on stdout and in the termination message,
which is how it reaches the function (it cannot read logs):

- `hf://org/repo`: every file the Hub lists must be there with the Hub's hash: the sha256 of LFS
  files (the weights), the git blob id (sha1) of the others. `{"method": "huggingface-sha256",
  "files": N, "bytes": B}`.
- other sources publish no checksum the download can be held to: `{"method": "none", ...}`.
- AIM_CHECKSUMS (JSON, sha256 by path, from the cache's `spec.checksums`) are checked too, for
  any source: `sha256` joins the method (`huggingface-sha256+sha256`).

A mismatch or a missing file prints `{"error": ...}` naming the file and exits 1, so the Job's
next attempt downloads again.
"""

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path

CHUNK = 1 << 20


def sha256(path: Path) -> str:
    """The file's sha256, as the Hub gives it for LFS files."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def git_blob(path: Path) -> str:
    """The id git gives the file's contents: sha1 of `blob <size>`, a NUL, and the contents."""
    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def hugging_face(repo: str, root: Path) -> dict[str, object]:
    """Every file of the repository, checked against the Hub's hashes."""
    from huggingface_hub import HfApi  # noqa: PLC0415 - only in the download image

    info = HfApi(token=os.environ.get("HF_TOKEN") or None).model_info(repo, files_metadata=True)
    files, total = 0, 0
    for sibling in info.siblings or []:
        path = root / sibling.rfilename
        if not path.is_file():
            msg = f"{sibling.rfilename} is missing from the volume"
            raise ValueError(msg)
        lfs = sibling.lfs
        expected = getattr(lfs, "sha256", None) if lfs is not None else None
        if expected:
            found = sha256(path)
        elif sibling.blob_id:
            expected, found = sibling.blob_id, git_blob(path)
        else:
            continue  # the Hub gave no hash for it: nothing to hold it to
        if found != expected:
            msg = f"checksum mismatch: {sibling.rfilename} is {found}, the Hub says {expected}"
            raise ValueError(msg)
        files += 1
        total += path.stat().st_size
    return {"method": "huggingface-sha256", "files": files, "bytes": total}


def given(root: Path) -> dict[str, object] | None:
    """The files the user gave a sha256 for (AIM_CHECKSUMS), checked; None when none were."""
    wanted = json.loads(os.environ.get("AIM_CHECKSUMS") or "{}")
    files, total = 0, 0
    for name, expected in sorted(wanted.items()):
        path = root / name
        if ".." in Path(name).parts or not path.is_file():
            msg = f"{name} (spec.checksums) is missing from the volume"
            raise ValueError(msg)
        found = sha256(path)
        if found != expected:
            msg = f"checksum mismatch: {name} is {found}, spec.checksums says {expected}"
            raise ValueError(msg)
        files += 1
        total += path.stat().st_size
    return {"method": "sha256", "files": files, "bytes": total} if files else None


def combined(source: dict[str, object], user: dict[str, object] | None) -> dict[str, object]:
    """The source's verdict with the user's checksums added to it."""
    if user is None:
        return source
    if source.get("method") == "none":
        return user
    count = int(str(source.get("files", 0))) + int(str(user["files"]))
    size = int(str(source.get("bytes", 0))) + int(str(user["bytes"]))
    return {"method": f"{source['method']}+sha256", "files": count, "bytes": size}


def main() -> int:
    """Check the download; the verdict goes to stdout and the termination message."""
    uri, root = sys.argv[1], Path(sys.argv[2])
    scheme, _, rest = uri.partition("://")
    try:
        if scheme == "hf":
            source: dict[str, object] = hugging_face(rest.split("@", 1)[0], root)
        else:
            source = {"method": "none", "reason": f"{scheme}:// publishes no checksums"}
        verdict = combined(source, given(root))
        code = 0
    except Exception as e:  # noqa: BLE001 - every failure is the verdict, in words
        verdict, code = {"error": str(e)[:1000]}, 1
    line = json.dumps(verdict)
    sys.stdout.write(line + "\n")
    with contextlib.suppress(OSError):  # not in a pod: stdout is enough
        Path(os.environ.get("AIM_TERMINATION_LOG", "/dev/termination-log")).write_text(line)
    return code


if __name__ == "__main__":
    sys.exit(main())
