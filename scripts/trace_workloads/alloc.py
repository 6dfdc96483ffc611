# SPDX-License-Identifier: MIT
# The python3 workload `make bench` records (scripts/trace_bench.sh) and the
# recorder overhead is measured on (docs/TRACE.md): dictionary updates of
# lists of floats (many small and mid-size blocks, resized lists), then the
# sort of their string forms. Seeded: every run makes the same calls.
import random
random.seed(1)
d = {}
for i in range(200000):
    k = random.randrange(20000)
    d[k] = [random.random() for _ in range(random.randrange(1, 30))]
    if i % 7 == 0:
        d.pop(random.randrange(20000), None)
s = sorted(str(v) for v in d.values())
print(len(s))
