"""A Hugging Face Hub mirror on the node's address (a test machine cannot reach the Hub).

It answers what huggingface_hub asks of the Hub, as the Hub answers it, for the model cache's
Jobs: the size check and the verification (`HfApi.model_info`) and the storage initializer's
download (kserve-storage's `snapshot_download` into a local directory):

- `GET /api/models/<repo>[/revision/<rev>]`: the repository's commit (`sha`) and its files; with
  `blobs=true`, each file's size, git blob id and, for the weights (LFS), sha256.
- `HEAD` and `GET /<repo>/resolve/<rev>/<file>`: the file, with `X-Repo-Commit` and an `ETag`
  (the blob id; for LFS files `X-Linked-Etag`, the sha256, and `X-Linked-Size`). The Hub sends
  LFS downloads on to its CDN; a mirror, like this one, serves them itself.

A private repository, and one that does not exist, answer 401 with `X-Error-Code: RepoNotFound`
unless the request carries `Authorization: Bearer <token>`, as the Hub does for a repository the
token cannot see; huggingface_hub reads that as RepositoryNotFoundError. A revision is `main` or
the repository's commit.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import re
import threading
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

TOKEN: Final = "hf_mirror_token_of_the_tests"  # noqa: S105 - the mirror's, nothing else's
STALL_SENT: Final = 1024
"""What a repository that stalls sends of a file before it stops."""


@dataclass(frozen=True)
class Repo:
    """A repository: the files it serves, and how it misbehaves."""

    files: Mapping[str, bytes]
    private: bool = False
    corrupt: bool = False
    """It lists the hashes of other bytes than it serves (a proxy that corrupts them)."""
    stalls: bool = False
    """It sends the first `STALL_SENT` bytes of a file, then nothing until the mirror stops."""

    def commit(self, name: str) -> str:
        """The repository's one commit."""
        return hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()

    def sibling(self, path: str) -> dict[str, Any]:
        """A file as the repository's info lists it with `blobs=true`: its size, git blob id,
        and for the weights (LFS) sha256."""
        size = len(self.files[path])
        data = self.files[path] + (b"!" if self.corrupt else b"")
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
        entry: dict[str, Any] = {"rfilename": path, "size": size, "blobId": blob}
        if path.endswith(".safetensors"):
            sha = hashlib.sha256(data).hexdigest()
            entry["lfs"] = {"sha256": sha, "size": size, "pointerSize": 134}
        return entry


FILES: Final = {"config.json": b'{"architectures": ["Small"]}', "model.safetensors": b"\x00" * 4096}
ADAPTER_FILES: Final = {
    "adapter_config.json": json.dumps({"r": 8, "peft_type": "LORA"}).encode(),
    "adapter_model.safetensors": b"\x07" * 2048,
}
"""A LoRA adapter of rank 8, as PEFT saves one."""
QWEN_FILES: Final = {
    "config.json": b'{"architectures": ["Qwen3ForCausalLM"]}',
    "model.safetensors": b"\x00" * 4096,
}
"""A stand-in for Qwen/Qwen3-32B's weights, under the name AMD's image serves (its engine is a
stand-in too, and only checks that a config.json is where the runtime points)."""
REPOS: Final = {
    "Org/Small": Repo(FILES, private=True),
    "Qwen/Qwen3-32B": Repo(QWEN_FILES),
    "Org/Custom-7B": Repo(FILES),
    "Org/Small-Tone-LoRA": Repo(ADAPTER_FILES),
    "Org/Corrupt": Repo(FILES, corrupt=True),
    "Org/Stall": Repo({"model.safetensors": b"\x00" * (1 << 20)}, stalls=True),
}
_API: Final = re.compile(r"/api/models/(?P<repo>[^/]+/[^/]+)(?:/revision/(?P<rev>[^/]+))?")
_RESOLVE: Final = re.compile(r"/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)")


class HubMirror(http.server.ThreadingHTTPServer):
    """The mirror's server: `REPOS`, and an event that ends the stalled transfers."""

    def __init__(self, ip: str) -> None:
        """Listen on `ip`, on a free port."""
        super().__init__((ip, 0), _Handler)
        self.stopping = threading.Event()


class _Handler(http.server.BaseHTTPRequestHandler):
    server: HubMirror
    body = True
    """Whether the answer has a body (not for HEAD)."""
    # HTTP/1.1, as the Hub speaks it: huggingface_hub keeps its connections.
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        """The API and the files."""
        self.body = True
        self._answer()

    def do_HEAD(self) -> None:
        """A file's metadata, without the file: what the download asks first."""
        self.body = False
        self._answer()

    def log_message(self, *_: object) -> None:
        """Quiet."""

    def _answer(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        if api := _API.fullmatch(path):
            repo = self._repo(api["repo"], api["rev"])
            if repo is None:
                return
            blobs = urllib.parse.parse_qs(url.query).get("blobs", [""])[0].lower() == "true"
            siblings = [repo.sibling(f) if blobs else {"rfilename": f} for f in repo.files]
            info = {
                "id": api["repo"],
                "modelId": api["repo"],
                "sha": repo.commit(api["repo"]),
                "private": repo.private,
                "siblings": siblings,
            }
            self._send(200, json.dumps(info).encode())
        elif resolve := _RESOLVE.fullmatch(path):
            repo = self._repo(resolve["repo"], resolve["rev"])
            if repo is not None:
                self._file(resolve["repo"], repo, resolve["path"])
        else:
            self._send(404, b"Not Found")

    def _repo(self, name: str, revision: str | None) -> Repo | None:
        """The repository, or None once the Hub's refusal is sent."""
        repo = REPOS.get(name)
        token = self.headers.get("Authorization") == f"Bearer {TOKEN}"
        if repo is None or (repo.private and not token):
            # The Hub answers alike for a repository that does not exist and one the token
            # cannot see, so that neither is revealed.
            self._refuse(401, "RepoNotFound", "Repository not found")
            return None
        if revision not in {None, "main", repo.commit(name)}:
            self._refuse(404, "RevisionNotFound", f"Invalid rev id: {revision}")
            return None
        return repo

    def _file(self, name: str, repo: Repo, path: str) -> None:
        if path not in repo.files:
            self._refuse(404, "EntryNotFound", f"{path} does not exist on main")
            return
        data, listed = repo.files[path], repo.sibling(path)
        headers = {"X-Repo-Commit": repo.commit(name), "ETag": f'"{listed["blobId"]}"'}
        if "lfs" in listed:
            sha = listed["lfs"]["sha256"]
            headers.update({"ETag": f'"{sha}"', "X-Linked-Etag": f'"{sha}"'})
            headers["X-Linked-Size"] = str(len(data))
        if not (repo.stalls and self.body):
            self._send(200, data, headers)
            return
        # A Hub that stops sending halfway: some bytes, then nothing until the mirror stops.
        self._head(200, len(data), headers)
        self.wfile.write(data[:STALL_SENT])
        self.wfile.flush()
        self.server.stopping.wait(timeout=300)
        self.close_connection = True

    def _refuse(self, status: int, code: str, message: str) -> None:
        headers = {"X-Error-Code": code, "X-Error-Message": message}
        self._send(status, json.dumps({"error": message}).encode(), headers)

    def _send(self, status: int, data: bytes, headers: Mapping[str, str] | None = None) -> None:
        self._head(status, len(data), headers or {})
        if self.body:
            self.wfile.write(data)

    def _head(self, status: int, length: int, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()


@contextlib.contextmanager
def hugging_face_mirror(ip: str) -> Iterator[str]:
    """The mirror on `ip` (pods reach the node's address) while the context lasts; its endpoint
    URL, for `HF_ENDPOINT`."""
    mirror = HubMirror(ip)
    threading.Thread(target=mirror.serve_forever, daemon=True).start()
    try:
        yield f"http://{ip}:{mirror.server_port}"
    finally:
        mirror.stopping.set()
        mirror.shutdown()
        mirror.server_close()
