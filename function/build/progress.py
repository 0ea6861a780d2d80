"""Reports a download's progress into its cache's ConfigMap, and stops a download that stalls.

Run as a native sidecar of the download Job, in the download image (any python3, standard
library only): `python3 -c <this file>`. Every AIM_PROGRESS_INTERVAL_S it sums the sizes of the
files under AIM_PROGRESS_DIR and merge-patches `downloadedBytes`, `grewAt` and `updatedAt` into
the ConfigMap AIM_PROGRESS_CONFIGMAP, with the pod's service account token. The token is mounted
into this container alone, and the account may only patch ConfigMaps of its namespace.
The pod shares its process namespace (to stop a stalled download), so any of its processes could
open the token through `/proc/<this pid>/root`: before anything else this process makes itself
non-dumpable, which the kernel answers by refusing other processes of the same user its `/proc`
files, then writes AIM_PROGRESS_GUARDED, the file the kubelet's startup probe waits for before it
starts the download. Where that cannot be done it never reads the token, and only watches for
stalls.

When the files have not grown for AIM_STALL_AFTER_S, it records `stalled` and stops the download
(the pod shares its process namespace), so the Job's next attempt starts over; the function reads
the ConfigMap and says why the attempt ended. Each attempt's sidecar clears `stalled` when it
starts, so what the ConfigMap says is the latest attempt's. Reporting is best effort: an API
error is printed and tried again, and never stops the download.
"""

import ctypes
import json
import os
import signal
import ssl
import sys
import time
import urllib.request
from pathlib import Path

ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
MAX_FILES = 100000
PR_SET_DUMPABLE = 4  # <linux/prctl.h>
PR_GET_DUMPABLE = 3


def guard() -> bool:
    """Make this process non-dumpable (as ssh-agent does); True once the kernel says it is."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        return bool(libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def measure(root: str) -> int:
    """Bytes under `root` (files only, links not followed), walking at most MAX_FILES entries."""
    total, seen, stack = 0, 0, [root]
    while stack and seen < MAX_FILES:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total


def now() -> str:
    """The time as Kubernetes writes it."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def patch(data: dict[str, str]) -> None:
    """Merge `data` into the ConfigMap's data, as this pod's service account."""
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if ":" in host:
        host = "[" + host + "]"
    namespace, name = os.environ["AIM_PROGRESS_NAMESPACE"], os.environ["AIM_PROGRESS_CONFIGMAP"]
    url = f"https://{host}:{port}/api/v1/namespaces/{namespace}/configmaps/{name}"
    token = (ACCOUNT / "token").read_text().strip()
    request = urllib.request.Request(
        url,
        data=json.dumps({"data": data}).encode(),
        method="PATCH",
        headers={
            "Authorization": "Bearer " + token,
            "Content-Type": "application/merge-patch+json",
        },
    )
    context = ssl.create_default_context(cafile=str(ACCOUNT / "ca.crt"))
    with urllib.request.urlopen(request, context=context, timeout=10) as response:  # noqa: S310
        response.read(1 << 16)


def stop_download() -> None:
    """Stop every process of the download container: all but this one and the pod's pause."""
    me = os.getpid()
    target = os.environ["AIM_PROGRESS_DIR"].encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) in {1, me}:
            continue
        try:
            if target in (proc / "cmdline").read_bytes():
                os.kill(int(proc.name), signal.SIGTERM)
        except (OSError, ValueError):
            continue


def report(data: dict[str, str]) -> None:
    """`patch`, with any failure printed rather than raised."""
    try:
        patch(data)
    except Exception as e:  # noqa: BLE001 - reporting must never stop the download
        sys.stderr.write(f"progress: cannot update the ConfigMap: {e}\n")
        sys.stderr.flush()


def ignore(data: dict[str, str]) -> None:
    """Where the token could not be hidden: it is never read, and nothing is reported."""
    del data


def main() -> None:
    """Report until the pod ends (a native sidecar is stopped after the download)."""
    guarded = guard()
    if not guarded:
        sys.stderr.write("progress: cannot make this process non-dumpable; not reporting\n")
        sys.stderr.flush()
    marker = os.environ.get("AIM_PROGRESS_GUARDED")
    if marker:
        Path(marker).write_text("guarded\n" if guarded else "unguarded\n")
    send = report if guarded else ignore
    root = os.environ["AIM_PROGRESS_DIR"]
    interval = max(float(os.environ.get("AIM_PROGRESS_INTERVAL_S", "10")), 1.0)
    stall_after = max(float(os.environ.get("AIM_STALL_AFTER_S", "600")), interval)
    size, grew_at, grew_clock = measure(root), now(), time.monotonic()
    # A new attempt starts with no stall; the kubelet stops this sidecar after the download,
    # and the last measure is the one that counts.
    send({"downloadedBytes": str(size), "grewAt": grew_at, "updatedAt": grew_at, "stalled": ""})

    def last_word(signum: int, frame: object) -> None:
        del signum, frame
        final = measure(root)
        grew = now() if final != size else grew_at
        send({"downloadedBytes": str(final), "grewAt": grew, "updatedAt": now()})
        sys.exit(0)

    signal.signal(signal.SIGTERM, last_word)
    while True:
        time.sleep(interval)
        current = measure(root)
        if current != size:
            size, grew_at, grew_clock = current, now(), time.monotonic()
        data = {"downloadedBytes": str(size), "grewAt": grew_at, "updatedAt": now()}
        if time.monotonic() - grew_clock >= stall_after:
            data["stalled"] = (
                f"no growth for {stall_after:.0f}s at {size} bytes; the attempt was stopped"
            )
            send(data)
            stop_download()
            grew_clock = time.monotonic()  # one stop per stall; the Job's next pod starts over
            continue
        send(data)


if __name__ == "__main__":
    main()
