"""The problem of bench_measures.make_problem, repeated here because bench_measures imports the
peer libraries at import time (not installed on the device machine); keep the two identical."""
import numpy as np
SCALE, TEMPERATURE = 5.0, 1.5
def make_problem(n, k, seed=0, scale=SCALE, temperature=TEMPERATURE):
    rng = np.random.default_rng(seed)
    logits = scale * rng.standard_normal((n, k))
    logits -= logits.max(axis=1, keepdims=True)
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    Q = np.exp(logits / temperature, out=logits)
    Q /= Q.sum(axis=1, keepdims=True)
    cdf = np.cumsum(Q, axis=1, out=Q)
    y = np.minimum((cdf < rng.random(n)[:, None]).sum(axis=1), k - 1)
    return y, P
