"""yin_numpy_chain.py V T SEED -- the chain of Yin, Chen, Huang & Wang 2024
(App. F) drawn with numpy's legacy generator, the reference that
`simdec gen --rng numpy-mt19937` must reproduce (tests/test_gen_numpy.c).
Prints the draft's T*V*V entries, then the target's, one per line, in C
order, each row divided by its sum (17 significant digits)."""
import sys

import numpy as np

V, T, seed = (int(a) for a in sys.argv[1:4])
np.random.seed(seed)
draft = np.random.rand(T, V, V)
target = np.random.rand(T, V, V)
for m in (draft, target):
    m = m / m.sum(axis=2, keepdims=True)
    for x in m.ravel():
        print(repr(float(x)))
