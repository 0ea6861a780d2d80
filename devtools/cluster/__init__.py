"""A small Kubernetes for the end-to-end tier.

A control plane, a node, a client, a PKI, a registry, and stand-ins for the controllers that
cannot run here.
"""
