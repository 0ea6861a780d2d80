"""The AIM composition function: turns AIM objects into the Kubernetes objects that serve them.

Its packages are layers; each imports only the layers below it (tests/unit/repo/test_layers.py
checks every import, those inside functions and `TYPE_CHECKING` blocks too):

    api < rules < errors, settings < build < registry < kube < compose < server, responder

- `api`: the AIM API's types (the XRDs are generated from them) and `Manifest`, the plain form in
  which every layer passes Kubernetes objects.
- `rules`: the AIM rules as pure functions of API values (naming, selection, merging, conditions
  and their `Condition` values); they import nothing of function/ but `api`, and of the world
  only the standard library and pure libraries (pydantic, jsonpath-ng).
- `errors`, `settings`: two modules of their own: the user-facing errors that name a spec field
  (rules return values instead of raising them) and the command-line settings.
- `build`: one builder per Kubernetes kind, from decided values to manifests.
- `registry`: reading registries (inspection, listing), and model source filters as registry
  questions.
- `kube`: the Kubernetes side of a call: observed objects, lookups, Jobs, transitions, and the
  composer contract (`kube/contract.py`).
- `compose`: one composer per AIM kind, and the runtime config lookup they share.
- `server`: the gRPC server, its workers and metrics; nothing imports it.
- `responder`: `aim-wake-responder`, a program of its own in the same image: the 503 with
  `Retry-After` that a request held past its service's wake timeout gets.
"""
