"""The typed views aim-migrate reads manifests through (aim_migrate/objects.py)."""

from __future__ import annotations

from pydantic import JsonValue

from aim_migrate.objects import Head, mapping_at, owner_refs
from function.rules.text import MAX_WORD


def test_a_head_reads_ill_typed_fields_as_empty_and_cuts_long_strings() -> None:
    """A manifest from anyone: a kind that is a number, metadata that is a list, a name past
    the bound read as empty or cut, so a report names `(no kind)` rather than failing."""
    head = Head.read({"apiVersion": "aim.eai.amd.com/v1alpha2", "kind": 7, "metadata": ["x"]})
    assert head == Head(api_version="aim.eai.amd.com/v1alpha2")
    assert (head.group, head.version) == ("aim.eai.amd.com", "v1alpha2")
    assert head.describe() == "(no kind)/(no name)"
    long_name = Head.read({"kind": "AIMModel", "metadata": {"name": "n" * (MAX_WORD + 5)}})
    assert len(long_name.name) == MAX_WORD
    assert Head.read("not a mapping") == Head()


def test_a_core_api_version_has_no_version_within_a_group() -> None:
    """`v1` names no group: its group part is the whole string, as `is_aim` compares it."""
    head = Head.read({"apiVersion": "v1", "kind": "ConfigMap"})
    assert (head.group, head.version) == ("v1", "")


def test_owner_refs_skip_entries_that_are_no_objects_and_read_a_bounded_list() -> None:
    """Owner references are named in one warning line: entries that are not mappings are
    skipped and at most 64 are read."""
    refs = owner_refs([{"kind": "AIMClusterModelSource", "name": "hub"}, "junk", {"kind": 3}])
    assert [(r.kind, r.name) for r in refs] == [("AIMClusterModelSource", "hub"), ("", "")]
    assert len(owner_refs([{"kind": "K", "name": "n"}] * 100)) == 64
    assert owner_refs("not a list") == ()


def test_mapping_at_returns_the_mapping_itself_for_editing_in_place() -> None:
    """Rules edit what they reach: the mapping returned is the manifest's own; a value that is
    no mapping reads as none."""
    doc: dict[str, JsonValue] = {"spec": {"routing": {"enabled": True}, "model": "m"}}
    routing = mapping_at(doc, "spec", "routing")
    assert routing is not None
    routing["enabled"] = False
    assert doc == {"spec": {"routing": {"enabled": False}, "model": "m"}}
    assert mapping_at(doc, "spec", "model") is None
