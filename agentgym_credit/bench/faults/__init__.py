"""Fault benchmarks: killed writes, killed workers, damaged and planted cache files (``benchmarks/faults/reliability.md``)."""
