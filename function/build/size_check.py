"""Prints the size in bytes of a model source and leaves it in the termination message.

Run by the size-check Job in the download image (python3 with huggingface_hub and boto3, as in
KServe's storage-initializer): `python3 -c <this file> <sourceUri>`. The function cannot read
logs, so the result travels back in the Pod's status, like discovery's.
"""

import json
import os
import sys
from pathlib import Path


def hugging_face(repo: str) -> int:
    """Total size of a Hugging Face model repository's files."""
    from huggingface_hub import HfApi  # noqa: PLC0415 - only in the download image

    info = HfApi(token=os.environ.get("HF_TOKEN") or None).model_info(repo, files_metadata=True)
    return sum(f.size or 0 for f in info.siblings or [])


def s3(path: str) -> int:
    """Total size of the objects under an S3 prefix (AWS_ENDPOINT_URL for other stores)."""
    import boto3  # noqa: PLC0415 - only in the download image

    bucket, _, prefix = path.partition("/")
    client = boto3.client("s3", endpoint_url=os.environ.get("AWS_ENDPOINT_URL") or None)
    total = 0
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        total += sum(item["Size"] for item in page.get("Contents", []))
    return total


def main(uri: str) -> None:
    """Measure `uri`, print the result and write it to the termination message."""
    scheme, _, rest = uri.partition("://")
    size = hugging_face(rest) if scheme == "hf" else s3(rest)
    if size <= 0:
        sys.exit(f"{uri}: found nothing to download (0 bytes)")
    result = json.dumps({"sizeBytes": size})
    print(result)  # noqa: T201 - also in the log, for kubectl logs
    Path(os.environ.get("AIM_TERMINATION_LOG", "/dev/termination-log")).write_text(result)


if __name__ == "__main__":
    main(sys.argv[1])
