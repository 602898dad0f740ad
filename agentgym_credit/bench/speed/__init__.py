"""Speed benchmarks: envs, collector, estimators, WebShop search and snapshots, the GPU sampler (``benchmarks/speed/``).

Apart from the main job (credit against the truth, training comparisons: :mod:`agentgym_credit.bench`); run each with
``agentgym-credit bench NAME``.
"""
