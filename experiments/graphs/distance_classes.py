#!/usr/bin/env python3
"""Writes a graph file with a routing table: every shortest path, deadlock-free by distance classes.

Usage: python3 distance_classes.py nsfnet14.txt > nsfnet14_distance_classes.txt

Reads a graph file (docs/graph.md: `router`, `link` and `root` lines), copies it, and appends a
`route` line for every router u and destination router t with terminals (u != t): the
neighbours v of u one hop closer to t (every shortest next hop, so the engine may take any free
one), each with `class D - 1 - dist(v, t)`, D the network's diameter. Along any route the
distance to the destination falls by one per hop, so the class rises by one per hop: no
channel waits on a channel of its own class or a lower one, the channel-dependency graph is
acyclic, and `runner` accepts the table without an escape channel. It needs D classes, so
`virtual_channels >= D`.
"""

import sys
from collections import deque


def read(path):
    """The file's text, its routers (name, terminals) in order, and its links."""
    text = open(path, encoding="utf-8").read()
    routers, links = [], []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words[:1] == ["router"]:
            routers.append((words[1], int(words[3])))
        elif words[:1] == ["link"]:
            links.append((words[1], words[2]))
    return text, routers, links


def main():
    text, routers, links = read(sys.argv[1])
    neighbours = {name: [] for name, _ in routers}
    for a, b in links:
        neighbours[a].append(b)
        neighbours[b].append(a)
    # Distances to every router, by breadth-first search from it.
    dist = {}
    for t, _ in routers:
        d = {t: 0}
        queue = deque([t])
        while queue:
            u = queue.popleft()
            for v in neighbours[u]:
                if v not in d:
                    d[v] = d[u] + 1
                    queue.append(v)
        dist[t] = d
    diameter = max(max(d.values()) for d in dist.values())
    out = [text.rstrip("\n"), ""]
    out.append(f"# Routing table written by distance_classes.py: every shortest next hop, in")
    out.append(f"# class D - 1 - dist(next, destination) with diameter D = {diameter}.")
    for t, terminals in routers:
        if terminals == 0:
            continue
        for u, _ in routers:
            if u == t:
                continue
            for v in neighbours[u]:
                if dist[t][v] == dist[t][u] - 1:
                    out.append(f"route {u} {t} {v} class {diameter - 1 - dist[t][v]}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
