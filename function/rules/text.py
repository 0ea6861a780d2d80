"""Text from users, registries and pods, cut to what a message can carry."""

from __future__ import annotations


def cut(text: str, most: int) -> str:
    """`text`, or its first `most` characters and `...` when it is longer."""
    return text if len(text) <= most else text[:most] + "..."
