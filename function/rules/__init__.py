"""Pure rules the composers share.

Names, labels, merges, quantities, selection, GPUs, discovery and cache results, runtime config
resolution, and the vocabulary of conditions.
"""
