"""The GPU stand-ins put into AMD's AIM images (devtools/cluster/vllm_standin.py,
amdsmi_standin.py), checked here where no AMD source is needed: the image tests that use them
skip on a clone without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from devtools.cluster import amdsmi_standin, vllm_standin
from devtools.tools import free_port, port_open


def test_flags_are_read_as_vllms_parser_reads_them() -> None:
    """A bare flag has no values, a flag takes every value up to the next, underscores are
    dashes (AMD's profiles write `distributed_executor_backend`)."""
    argv = ["--model", "/m", "--async-scheduling", "--distributed_executor_backend", "mp",
            "--served-model-name", "a", "b"]  # fmt: skip
    assert vllm_standin.parse(argv) == {
        "model": ["/m"],
        "async-scheduling": [],
        "distributed-executor-backend": ["mp"],
        "served-model-name": ["a", "b"],
    }


def _start(tmp_path: Path, model: Path, port: int) -> subprocess.Popen[str]:
    script = Path(vllm_standin.__file__)
    argv = [sys.executable, str(script), "--model", str(model), "--port", str(port),
            "--served-model-name", "Org/M"]  # fmt: skip
    return subprocess.Popen(argv, cwd=tmp_path, stderr=subprocess.PIPE, text=True)


def test_without_weights_it_refuses_to_start(tmp_path: Path) -> None:
    """Like vLLM, no config.json where --model points is exit code 2: a served answer proves the
    weights were found where AMD's runtime pointed."""
    proc = _start(tmp_path, tmp_path / "absent", free_port())
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "config.json" in err


def _call(port: int, path: str, body: object | None = None) -> tuple[int, object]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310
            return int(response.status), json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_it_serves_the_names_it_was_given_and_records_its_launch(tmp_path: Path) -> None:
    """With weights it answers chat completions for its served name, vLLM's 404 for another,
    and tells the launch (argv, working directory) it was started with."""
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "config.json").write_text("{}")
    port = free_port()
    proc = _start(tmp_path, tmp_path / "weights", port)
    try:
        deadline = time.monotonic() + 20
        while not port_open(port):
            assert proc.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.05)
        chat = {"messages": [{"role": "user", "content": "hi"}]}
        assert _call(port, "/v1/chat/completions", {**chat, "model": "Org/M"})[0] == 200
        status, refused = _call(port, "/v1/chat/completions", {**chat, "model": "Other"})
        assert (status, refused["type"]) == (404, "NotFoundError")  # type: ignore[index]
        _, launch = _call(port, "/stand-in/launch")
        assert launch["argv"][:2] == ["--model", str(tmp_path / "weights")]  # type: ignore[index]
        assert launch["cwd"] == str(tmp_path)  # type: ignore[index]
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_the_smi_stand_in_reports_the_gpus_it_is_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """One handle per device id given, idle and with its memory free, as AMD's runtime reads
    them; none given is no GPU."""
    monkeypatch.setenv(amdsmi_standin.VARIABLE, "74a1, 0x74a5")
    handles = amdsmi_standin.amdsmi_get_processor_handles()
    assert [amdsmi_standin.amdsmi_get_gpu_asic_info(h)["device_id"] for h in handles] == [
        "0x74a1",
        "0x74a5",
    ]
    usage = amdsmi_standin.amdsmi_get_gpu_vram_usage(handles[0])
    assert usage["vram_used"] == 0 < usage["vram_total"]
    assert amdsmi_standin.amdsmi_get_gpu_activity(handles[0])["gfx_activity"] == 0
    monkeypatch.delenv(amdsmi_standin.VARIABLE)
    assert amdsmi_standin.amdsmi_get_processor_handles() == []
    assert os.environ.get(amdsmi_standin.VARIABLE) is None
