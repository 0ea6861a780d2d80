"""A model download image's entrypoint, as KServe's storage-initializer image has one.

Not imported here: `devtools.cluster.aimimage.storage_initializer_image` installs this file, with
a shebang for the image's `python3`, at the path KServe's image names as its ENTRYPOINT
(`ENTRYPOINT` in aimimage; tests/unit/repo/test_download_image.py holds it to KServe's
Dockerfile). Run with `<sourceUri> <destination>` pairs, as a model cache's download Job runs a
download image, it hands them to `kserve_storage.Storage.download_files`, the package that image
is built around, which fetches `hf://`, `s3://`, `gs://` and the other schemes it knows.

Exits 2 on arguments that are not pairs and 1 when a download fails, its last line saying why:
the Job's container falls back to its log's tail for the termination message the function
quotes.
"""

import sys
from collections.abc import Sequence

USAGE = "usage: initializer-entrypoint SOURCE_URI DESTINATION [SOURCE_URI DESTINATION ...]\n"


def main(args: Sequence[str]) -> int:
    """Download each source into its destination, in order; the exit code."""
    if not args or len(args) % 2:
        sys.stderr.write(USAGE)
        return 2
    # Only in the image (the download-image group of pyproject.toml).
    from kserve_storage import Storage  # noqa: PLC0415
    from kserve_storage.logging import configure_logging  # noqa: PLC0415

    configure_logging()
    sources, destinations = list(args[0::2]), list(args[1::2])
    try:
        Storage.download_files(sources, destinations)
    except Exception as e:  # noqa: BLE001 - every failure ends the attempt, said in words
        sys.stderr.write(f"storage-initializer: {type(e).__name__}: {e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
