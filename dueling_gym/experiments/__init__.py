"""Experiments: running agents on problems at scale and reporting the results."""
