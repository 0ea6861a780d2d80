"""Template auto-selection: stages filter with reasons, a preference order ranks, ties surface."""

from __future__ import annotations

from typing import Any

from function.rules.selection import Candidate, Stage, Wanted, select


def cand(name: str, **kw: Any) -> Candidate:
    fields: dict[str, Any] = {
        "namespaced": True,
        "status": "Available",
        "type": "optimized",
        "gpu": "MI300X",
        "gpu_count": 1,
        "metric": "latency",
        "precision": "fp8",
    }
    fields.update(kw)
    return Candidate(name=name, **fields)


def chosen(*candidates: Candidate, **kw: Any) -> str | None:
    c = select(candidates, **kw).chosen
    return c.name if c else None


def test_preference_order_type_then_gpu_then_metric_then_precision() -> None:
    """Candidates rank by type, then GPU, then metric, then precision."""
    assert chosen(cand("prev", type="preview"), cand("opt")) == "opt"
    assert chosen(cand("a", gpu="MI250X"), cand("b", gpu="MI325X")) == "b"
    assert chosen(cand("t", metric="throughput"), cand("l")) == "l"
    assert chosen(cand("fp16", precision="fp16"), cand("fp8")) == "fp8"
    # GPU outranks precision: an fp16 MI325X profile beats an fp8 MI300X one.
    assert chosen(cand("a"), cand("b", gpu="MI325X", precision="fp16")) == "b"


def test_namespace_candidates_shadow_cluster_ones() -> None:
    """A team template beats an equal catalog template."""
    result = select([cand("c", namespaced=False, gpu="MI355X"), cand("n", precision="fp32")])
    assert result.chosen is not None
    assert result.chosen.name == "n"
    assert [(r.stage, r.why) for r in result.rejected] == [
        (Stage.SCOPE, "a namespace template of the model is eligible")
    ]


def test_a_tie_selects_nothing_and_names_the_tied() -> None:
    """A tie chooses nothing and names the tied candidates."""
    result = select([cand("a"), cand("b"), cand("c", precision="fp16")])
    assert result.chosen is None
    assert [c.name for c in result.tied] == ["a", "b"]


def test_every_rejection_has_a_reason() -> None:
    """Every rejected candidate carries the reason a user would act on."""
    result = select(
        [
            cand("busy", status="Progressing"),
            cand("raw", type="unoptimized"),
            cand("slow", metric="throughput"),
        ],
        wanted=Wanted(metric="LATENCY"),
    )
    assert result.chosen is None
    assert {r.candidate.name: r.why for r in result.rejected} == {
        "busy": "not Available (status Progressing)",
        "raw": "unoptimized profile; set spec.template.allowUnoptimized to allow it",
        "slow": "metric throughput is not the overridden LATENCY",
    }


def test_overrides_match_gpu_by_normalised_name_and_count() -> None:
    """Overrides match GPUs however their names are written, and by count."""
    cands = [cand("a", gpu="mi300x", gpu_count=2), cand("b", gpu="MI325X", gpu_count=2)]
    assert chosen(*cands, wanted=Wanted(gpu="MI-300X")) == "a"
    assert chosen(*cands, wanted=Wanted(gpu_count=4)) is None
    # A candidate that pins no GPU model is not excluded by a GPU override.
    assert chosen(cand("any", gpu=None), wanted=Wanted(gpu="MI325X")) == "any"


def test_sticky_choice_survives_a_better_newcomer() -> None:
    """A running service is not moved to a newly better template."""
    cands = [cand("old", precision="fp16"), cand("new")]
    assert chosen(*cands, sticky="old") == "old"
    assert chosen(*cands, sticky="gone") == "new"
    # ...but not once it stops being Available.
    assert chosen(cand("old", status="Failed"), cand("new"), sticky="old") == "new"


def test_unoptimized_allowed_on_request() -> None:
    """Unoptimized profiles are candidates only when allowed."""
    assert chosen(cand("raw", type=None), allow_unoptimized=True) == "raw"
    assert chosen(cand("raw", type=None)) is None


def test_radeon_templates_rank_below_instinct_and_are_picked_by_their_box_name() -> None:
    """As the AIM operator ranks them: any Instinct GPU before a Radeon one; an override naming
    the Radeon AI PRO R9700 as its box does selects the R9700 template."""
    r9700, w7900 = cand("r9700", gpu="R9700"), cand("w7900", gpu="W7900")
    assert chosen(r9700, cand("mi210", gpu="MI210")) == "mi210"
    assert chosen(r9700, w7900, wanted=Wanted(gpu="AMD Radeon AI PRO R9700")) == "r9700"
    assert chosen(r9700, w7900, wanted=Wanted(gpu="Radeon PRO W7900")) == "w7900"


def test_a_cpu_profile_is_described_as_cpu_not_any_gpu() -> None:
    """Selection messages describe a CPU candidate (a profile of no GPU) as CPU; a candidate
    whose profile says nothing of GPUs is still any GPU."""
    assert cand("cpu", gpu=None, gpu_count=0).describe() == "optimized, CPU, latency, fp8"
    assert cand("open", gpu=None, gpu_count=None).describe() == "optimized, any GPU, latency, fp8"
