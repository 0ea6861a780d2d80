"""Kubernetes objects as Crossplane sends them.

The request and response, lookups, raw reads, Jobs and Pods, claims, owners.
"""
