"""The Pods the kubelet's stand-in reports: the shapes the function reads a Job's result and a
Pod's trouble from (aim_plan/standins/kubelet.py)."""

from __future__ import annotations

from aim_plan.standins import kubelet
from function.kube.jobs import JOB_NAME_LABEL, pod_message, waiting_problem

AT = "2025-01-01T00:00:00Z"
JOB = {
    "metadata": {"name": "discover-x", "namespace": "ns", "uid": "job-uid"},
    "spec": {"template": {"metadata": {"labels": {"aim.silogen.ai/template": "t"}}}},
}
CONTAINER = {"name": "discovery", "image": "ghcr.io/acme/model:1"}


def test_a_jobs_pod_is_found_by_its_job_and_collected_with_it() -> None:
    """The Job controller's Pod carries the template's labels and the Job's name (how the function
    finds it) and is controlled by the Job (how the garbage collector removes it with the Job)."""
    pod = kubelet.job_pod(JOB, "abcde", {"phase": "Pending"})
    meta = pod["metadata"]
    assert meta["name"] == "discover-x-abcde"
    assert meta["labels"] == {"aim.silogen.ai/template": "t", JOB_NAME_LABEL: "discover-x"}
    [owner] = meta["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("Job", "job-uid", True)


def test_an_exited_container_leaves_its_message_in_the_phase_of_its_code() -> None:
    """A failed container's message is read from a Failed Pod, a succeeded one's from a
    Succeeded Pod, with the container's image and the start time the kubelet reports."""
    for code, phase in ((0, "Succeeded"), (1, "Failed")):
        state = kubelet.exited(code, "the result", AT)
        status = kubelet.pod_status([CONTAINER], kubelet.phase_after(code), state, AT)
        pod = kubelet.job_pod(JOB, "abcde", status)
        assert pod_message([pod], "discovery", phase) == "the result"
        assert status["startTime"] == AT
        [entry] = status["containerStatuses"]
        assert (entry["image"], entry["restartCount"]) == ("ghcr.io/acme/model:1", 0)


def test_a_container_that_cannot_start_says_why_and_never_started() -> None:
    """An image the kubelet cannot pull leaves the Pod Pending with the reason the function
    quotes, and no start time."""
    state = kubelet.waiting("ImagePullBackOff", "unauthorized: authentication required")
    status = kubelet.pod_status([CONTAINER], "Pending", state)
    pod = kubelet.job_pod(JOB, "abcde", status)
    problem = waiting_problem([pod], "discovery") or ""
    assert problem.startswith("ImagePullBackOff: unauthorized")
    assert "startTime" not in status
