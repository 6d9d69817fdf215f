#!/usr/bin/env python3
"""An M/D/1 channel model of wormhole switching, for runner's external method protocol.

Reads one request (JSON) on standard input and prints one response (JSON) on standard output,
as docs/external.md describes; standard library only.

The model is the textbook approximation, not one of runner's published models: a message of
M flits crosses D hops on average (uniform traffic, minimal routes); each hop costs
1 + router_delay cycles for the header, the tail arrives M - 1 cycles after the header, and at
each hop the header waits for the channel as in an M/D/1 queue whose service time is the M
cycles a message holds a channel; a message also waits at its source as in an M/D/1 queue of
service time M. Virtual channels and blocking across hops are ignored, so the latency is
optimistic near saturation.

kind: model       the closed form (Pollaczek-Khinchine: W = rho M / (2 (1 - rho))).
kind: simulation  the same two queues simulated with the request's seed (Lindley's recursion
                  over `options.messages` arrivals, default 20000), batch means for the
                  interval: a seeded stochastic evaluator whose replications runner aggregates.

Anything else (fat-trees, other switching, non-uniform traffic, broadcasts, faults, random
message lengths) is `unsupported`, with the reason.
"""

import json
import math
import random
import sys


def unsupported(reason):
    return {"status": "unsupported", "detail": reason}


def average_distance(s):
    """Mean hops between a source and a uniform destination, and channels per node."""
    k, n, topology = s["radix"], s["dimensions"], s["topology"]
    if topology == "torus":
        per_dimension = k / 4.0 if k % 2 == 0 else (k * k - 1) / (4.0 * k)
        channels = 2.0 * n
    elif topology == "mesh":
        per_dimension = (k * k - 1) / (3.0 * k)
        channels = 2.0 * n * (k - 1) / k
    elif topology == "hypercube":
        per_dimension = 0.5
        channels = float(n)
    else:
        return None
    nodes = float(s["nodes"])
    distance = n * per_dimension  # over every destination, the source included
    if s["traffic"] == "uniform":
        distance *= nodes / (nodes - 1.0)
    return distance, channels


def md1_wait(rho, service):
    return rho * service / (2.0 * (1.0 - rho))


def simulated_wait(rng, arrival_rate, service, messages):
    """Mean wait of an M/D/1 queue by Lindley's recursion, with 10 batch means."""
    wait, waits = 0.0, []
    for _ in range(messages):
        waits.append(wait)
        gap = rng.expovariate(arrival_rate)
        wait = max(0.0, wait + service - gap)
    batches = 10
    size = len(waits) // batches
    means = [sum(waits[i * size:(i + 1) * size]) / size for i in range(batches)]
    return sum(waits) / len(waits), means


def evaluate(request):
    s = request["scenario"]
    if s["switching"] != "wormhole":
        return unsupported(f"{s['switching']} switching (this model is for wormhole only)")
    if s["traffic"] not in ("uniform", "uniform_with_self"):
        return unsupported(f"{s['traffic']} traffic (this model assumes uniform destinations)")
    if s["broadcast_fraction"] > 0 or s["fault_rate"] > 0:
        return unsupported("broadcasts and faulty nodes are outside this model")
    if s["message_length_second_moment"] is not None:
        return unsupported("random message lengths (the channel's service time is fixed)")
    shape = average_distance(s)
    if shape is None:
        return unsupported(f"the {s['topology']} topology")
    distance, channels = shape
    m = float(s["message_length"])
    rate = float(request["rate"])
    hop = 1.0 + s["router_delay"]
    zero_load = distance * hop + m - 1.0
    channel_rate = rate * distance / channels
    rho_channel = channel_rate * m
    rho_source = rate * m
    utilisation = {"channel_utilisation": rho_channel, "source_utilisation": rho_source}
    if rho_channel >= 1.0 or rho_source >= 1.0:
        return {
            "status": "saturated",
            "detail": f"channel utilisation {rho_channel:.3f}, source {rho_source:.3f}: at or past 1",
            "hops": distance,
            "channel_rate": channel_rate,
            "intermediates": dict(utilisation, zero_load_latency=zero_load),
        }
    response = {
        "status": "ok",
        "hops": distance,
        "channel_rate": channel_rate,
        "throughput": rate,
    }
    if request["kind"] == "model":
        per_hop = md1_wait(rho_channel, m) if rho_channel > 0 else 0.0
        source = md1_wait(rho_source, m) if rho_source > 0 else 0.0
        extra = {}
    else:
        seed = request["seed"]
        messages = int(request["options"].get("messages", 20000))
        rng = random.Random(seed)
        if rate > 0:
            per_hop, hop_batches = simulated_wait(rng, channel_rate, m, messages)
            source, source_batches = simulated_wait(rng, rate, m, messages)
        else:
            per_hop, hop_batches, source, source_batches = 0.0, [0.0] * 10, 0.0, [0.0] * 10
        batches = [zero_load + distance * h + w for h, w in zip(hop_batches, source_batches)]
        mean = sum(batches) / len(batches)
        sd = math.sqrt(sum((b - mean) ** 2 for b in batches) / (len(batches) - 1))
        response["latency_ci95"] = 2.262157163 * sd / math.sqrt(len(batches))  # t(0.975, 9)
        response["messages_measured"] = messages
        extra = {"latency_batches": float(len(batches)), "latency_batch_mean": mean,
                 "latency_batch_sd": sd}
    network = zero_load + distance * per_hop
    response["latency"] = network + source
    response["network_latency"] = network
    response["source_wait"] = source
    response["intermediates"] = dict(utilisation, zero_load_latency=zero_load,
                                     contention_per_hop=per_hop, **extra)
    return response


def main():
    request = json.load(sys.stdin)
    print(f"md1_channel: {request['method']} task {request['task_id'][:12]} at rate "
          f"{request['rate']}", file=sys.stderr)
    json.dump(evaluate(request), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
