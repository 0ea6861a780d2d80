"""`aim-wake-responder`: the answer a waking request gets when its service is not up in time.

A service at `minReplicas: 0` is woken by its first request, which the KEDA HTTP add-on's
interceptor holds until the predictor's pod is ready. Past the platform's `wakeTimeout` the
interceptor would answer a bare 502 that clients do not retry; instead it fails the request over
(its HTTPScaledObject's `coldStartTimeoutFailoverRef`) to this small server, which answers every
request `503 Service Unavailable` with `Retry-After` and an OpenAI-style error body, which
OpenAI clients retry by themselves. It ships in the function's image, and the platform runs it
once per cluster (package/wake-responder.yaml).

- `answer`: what to say, as bytes, from the request's head (pure).
- `serve`: the asyncio server, bounded in header size, body drained, connections and time.
- `main`: the command line.
"""
