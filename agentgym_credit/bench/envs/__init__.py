"""Env fidelity benchmarks: generated ALFWorld games against the real ones, WebShop difficulty against the paper's baselines."""
