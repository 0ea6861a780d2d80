"""The AIM composition function: turns AIM objects into the Kubernetes objects that serve them."""
