"""Run N agent steps on a plain memory, for instruction counts under callgrind.

    PYTHONHASHSEED=0 OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind \\
        .venv/bin/python benchmarks/callgrind_step.py TREE N POLICY

TREE is the checkout to import ``solar_core`` from (compare two commits side by side); the
instructions of one step are the difference between N = 1,100 and N = 100, divided by 1,000.
A step: retrieve (k=3), feedback on every third, add; K = 100, d = 384, memory full first.
"""

from __future__ import annotations

import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
from solar_core import SolarMemory  # noqa: E402  (imported from the tree given)

n, policy = int(sys.argv[2]), sys.argv[3]
vectors = np.random.default_rng(0).normal(size=(n + 200, 384)).astype(np.float32)
extra = {"bootstrap": 100} if policy == "solar" else {}
memory = SolarMemory(policy, 100, dim=384, seed=0, **extra)
for i in range(100):
    memory.add(f"w{i}", embedding=vectors[i])
for i in range(n):
    memory.retrieve(embedding=vectors[100 + i], k=3)
    if i % 3 == 0:
        memory.feedback(like=bool(i % 2))
    memory.add(f"s{i}", embedding=vectors[100 + i])
