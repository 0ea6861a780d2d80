"""Developer tooling: generators and the local render harness. Not shipped in the function image."""
