#!/usr/bin/env python3
"""Writes a synthetic Poisson message trace in runner's trace format (docs/traces.md).

Every node sends Poisson arrivals at RATE messages per cycle to a uniformly chosen other
node, M flits long, over CYCLES cycles; the rows are in order of time. The committed
experiments/traces/poisson_8x8.csv was made with

    python3 experiments/traces/poisson_trace.py > experiments/traces/poisson_8x8.csv

(the standard library only; the seed is fixed, so the output is the same on every machine
running the same Python's `random`, which has been stable since Python 3.2).
"""

import random
import sys

NODES = 64          # an 8x8 torus
RATE = 0.01         # messages per node per cycle
LENGTH = 16         # flits per message
CYCLES = 25_000     # recorded cycles
SEED = 24


def main() -> None:
    rng = random.Random(SEED)
    out = sys.stdout
    out.write("# runner trace (docs/traces.md): Poisson, 64 nodes, 0.01 messages/node/cycle, "
              "16 flits, uniform destinations; made by experiments/traces/poisson_trace.py\n")
    out.write("cycle,source,destination,length\n")
    # The superposition of the nodes' Poisson processes: one stream of rate NODES * RATE whose
    # arrivals pick their source uniformly; an arrival at time x is recorded at cycle floor(x).
    time = rng.expovariate(NODES * RATE)
    while time < CYCLES:
        source = rng.randrange(NODES)
        destination = rng.randrange(NODES - 1)
        if destination >= source:
            destination += 1
        out.write(f"{int(time)},{source},{destination},{LENGTH}\n")
        time += rng.expovariate(NODES * RATE)


if __name__ == "__main__":
    main()
