"""Stands in for vLLM's OpenAI server in AMD's AIM images, where no GPU can run the real one.

AMD's runtime ends its `serve` by exec'ing `python3 -m vllm.entrypoints.openai.api_server --model
<path> <the profile's engine arguments> --port N --served-model-name <id>`; this module is
installed at that name (devtools/cluster/amdimage.py adds it to the image) and is the only part
of serving that is not AMD's. Standard library only, as it runs in the image's Python.

Like vLLM it refuses to start (exit code 2) unless `--model` is a directory with a `config.json`,
so a test that gets an answer knows the weights were found where the runtime pointed. It serves
`/health`, `/v1/models` and `/v1/chat/completions` (404 for a model it does not serve, as vLLM
does), and `GET /stand-in/launch`: the arguments, working directory, user and the environment
the runtime launched it with, for the test to compare with the profile.
"""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Final

MAX_BODY: Final = 1 << 20
ENV_PREFIXES: Final = ("AIM_", "VLLM_", "HSA_", "HIP_", "GPU_", "HF_", "PYTORCH_")


def parse(argv: list[str]) -> dict[str, list[str]]:
    """`--flag [values...]` pairs, as vLLM's parser reads them (a bare flag has no values)."""
    flags: dict[str, list[str]] = {}
    current: list[str] | None = None
    for arg in argv:
        if arg.startswith("--"):
            current = flags.setdefault(arg[2:].replace("_", "-"), [])
        elif current is not None:
            current.append(arg)
    return flags


def launch_record(argv: list[str]) -> dict[str, object]:
    """What the runtime launched: arguments, directory, user, and the environment that matters."""
    return {
        "argv": argv,
        "cwd": str(Path.cwd()),
        "uid": os.getuid(),
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)},
    }


class StandIn(BaseHTTPRequestHandler):
    """Answers as vLLM's OpenAI server does, for the names in `served`."""

    served: tuple[str, ...] = ()
    model: str = ""
    record: dict[str, object] = {}  # noqa: RUF012 - set once per server, by `handler`

    def _send(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        """Health, the models served, and the launch record."""
        if self.path == "/health":
            self._send(200, {})
        elif self.path == "/v1/models":
            listed = [{"id": n, "object": "model", "root": self.model} for n in self.served]
            self._send(200, {"object": "list", "data": listed})
        elif self.path == "/stand-in/launch":
            self._send(200, self.record)
        else:
            self._send(404, {"detail": "Not Found"})

    def do_POST(self) -> None:
        """A chat completion for a served name; vLLM's 404 for any other."""
        length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
        try:
            asked = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            asked = {}
        name = asked.get("model") if isinstance(asked, dict) else None
        if self.path != "/v1/chat/completions":
            self._send(404, {"detail": "Not Found"})
        elif name not in self.served:
            error = {"message": f"The model `{name}` does not exist.", "code": 404}
            self._send(404, {"object": "error", "type": "NotFoundError", **error})
        else:
            message = {"role": "assistant", "content": f"stand-in vLLM serving {self.model}"}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            self._send(200, {"object": "chat.completion", "model": name, "choices": [choice]})

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        """Quiet, as vLLM is with its access log disabled."""


def handler(served: list[str], model: str, record: dict[str, object]) -> type[StandIn]:
    """The request handler of a server for `served` names of the weights at `model`."""
    return type("Handler", (StandIn,), {"served": tuple(served), "model": model, "record": record})


def main() -> None:
    """Check the weights as vLLM would, then serve until killed."""
    argv = sys.argv[1:]
    flags = parse(argv)
    model = (flags.get("model") or [""])[0]
    if not (Path(model) / "config.json").is_file():
        print(f"stand-in vLLM: no config.json in --model {model!r}", file=sys.stderr)
        sys.exit(2)
    served = flags.get("served-model-name") or [model]
    port = int((flags.get("port") or ["8000"])[0])
    server = ThreadingHTTPServer(("0.0.0.0", port), handler(served, model, launch_record(argv)))  # noqa: S104 - a pod's server
    print(f"stand-in vLLM serving {served} from {model} on :{port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
