# SPDX-License-Identifier: MIT
# bench/workloads/alloc.py -- the python3 workload of scripts/workloads.py
# (docs/MALLOC.md, "Workloads"): CPython allocates every object, and its
# own pymalloc passes blocks over 512 bytes (lists' item arrays, dicts'
# tables, long strings) to malloc. Three phases: GCBench-style binary trees
# of small objects (built and dropped), a dictionary of resized lists and
# strings with random deletions, and the sort of a list of strings.
# Seeded: every run makes the same calls.
# usage: alloc.py [scale] (default 1; scripts/workloads.py --quick: 0.1)
import random
import sys


class Node:
    __slots__ = ("left", "right", "payload")

    def __init__(self, left, right, payload):
        self.left = left
        self.right = right
        self.payload = payload


def tree(depth):
    if depth == 0:
        return Node(None, None, b"x" * 24)
    return Node(tree(depth - 1), tree(depth - 1), [depth] * 4)


def count(t):
    return 0 if t is None else 1 + count(t.left) + count(t.right)


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    random.seed(1)
    total = 0
    keep = tree(14)  # long-lived
    for _ in range(max(1, int(8 * scale))):
        total += count(tree(12))
    d = {}
    for i in range(int(150000 * scale)):
        k = random.randrange(30000)
        d[k] = [random.random() for _ in range(random.randrange(1, 60))]
        if i % 5 == 0:
            d[random.randrange(30000)] = "v%d" % i * random.randrange(1, 100)
        if i % 7 == 0:
            d.pop(random.randrange(30000), None)
    s = sorted(str(v) for v in d.values())
    print(total, count(keep), len(s), sum(map(len, s)) % 1000003)


main()
