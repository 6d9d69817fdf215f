#!/usr/bin/env python3
"""BookSim 2 as an external evaluator of runner (docs/external.md, docs/booksim.md).

Reads one request (JSON) on standard input, translates its scenario into a BookSim 2
configuration, runs BookSim, and prints one response (JSON) on standard output; standard
library only. BookSim's own output goes to standard error, which runner keeps in the task's
log file.

    python3 booksim.py [--binary PATH] [--print-config] [--parse FILE] < request.json

--binary PATH    the booksim executable (default: $BOOKSIM, else `booksim` on PATH)
--print-config   print the BookSim configuration the request translates to, and stop
--parse FILE     read BookSim's output from FILE instead of running it (for tests)
--config-out DIR also write the configuration to DIR/<task id>.cfg (for tests)

What it translates (anything else is `unsupported`, with the reason):
- topology: torus and mesh (k, n), as BookSim's `torus` and `mesh` with one node per router;
  the balanced dragonfly (a = 2p, h = p) as `dragonflynew` (k = p, n = 1) with `min` routing,
  which needs runner's `minimal` with `vc_classes: one_per_class` (BookSim's local hops before
  the global hop on VC 0, the rest on VC 1), `channel_latency: 10` and
  `global_channel_latency: 100` (BookSim's fixed channel latencies) and `group_shift` or
  `uniform_with_self` traffic (`bad_dragon`, `uniform`), and runner's `ugal_booksim` with 3
  VCs as BookSim's `ugal` (`ugal_dragonflynew`); runner's `ugal` (UGAL-L) is another UGAL and
  is not translated.
  Tori get `use_noc_latency = 0`: BookSim's default gives a torus's channels a latency of 2
  cycles (a folded layout), runner's channels take one cycle by default.
- channel_latency: 1 (or unset), and on a torus also 2 (BookSim's `use_noc_latency = 1`);
  BookSim's mesh and torus have no other channel latency.
- the router pipeline: `router_delay` 1, `vc_allocation_delay` 1, `switch_delay` 2 and
  `credit_delay` 1 are BookSim's default pipeline exactly (route computation; VC allocation,
  the switch allocated the cycle after; switch allocation and traversal, which every flit
  crosses after its credit has gone back; a credit seen upstream the cycle after its link
  delivers it), and `router_delay` 0 with the same others is `routing_delay = 0`
  (docs/booksim.md). Without the pipeline knobs, `router_delay` 4 (or 3) runs BookSim's
  defaults (or `routing_delay = 0`) with the same per-hop header latency but a shorter credit
  loop and no pipeline for body flits (below). Other combinations are refused.
- switching: wormhole (BookSim has no virtual cut-through).
- packet_size: unset, or at least message_length (a message of one packet).
- request-reply traffic (`reply_length`, `outstanding_requests`): not translated (BookSim's
  `use_read_write` has read and write requests of two sizes each).
- vc_reallocation: `drained` (runner's default) as `wait_for_tail_credit = 1`, `tail_sent` as
  BookSim's default `wait_for_tail_credit = 0` (not with `duato`: BookSim would reallocate
  min_adapt's adaptive VCs early too, which runner refuses, as Duato's condition needs).
- routing: `dimension_order` as `dim_order` (on a torus only with runner's default dateline
  `per_traversal` and tie `random`, which are BookSim's: the VC class is fixed per ring
  traversal, half the VCs each, so V must be even; a tie is broken at random per message and
  dimension); `duato` on a mesh as `min_adapt` (VC 0 the dimension-order escape, VCs 1..V-1
  minimal adaptive; V >= 2); `duato` on a torus with V = 3 as `min_adapt` with 4 VCs
  (BookSim's torus `min_adapt` uses VCs 0 and 1 as the dateline escape classes and VC 3 as the
  one adaptive VC; VC 2 is used by injection channels only, so the network has runner's three).
- virtual_channels, buffer_depth (`vc_buf_size`), message_length (`packet_size`, fixed).
- router_delay without the pipeline knobs: BookSim's input-queued router has a per-hop header
  latency of 5 cycles with its default pipeline (routing, VC allocation, switch allocation,
  switch traversal, link), runner's is then 1 + router_delay, so router_delay 4 runs BookSim's
  defaults and 3 runs it with `routing_delay = 0`. With `injection: channel` runner charges the injection channel, the
  source router's pipeline and the ejection channel as BookSim does, and the zero-load
  latencies agree; with `injection: parallel` (runner's default) BookSim's is runner's plus a
  constant (6 and 5 cycles), whatever the distance. BookSim always has its terminal channels.
- input_speedup: `s` as BookSim's `input_speedup = s`; unset (runner's unlimited) as V.
- switch_allocator: `islip` as BookSim's `sw_allocator = islip` (its default) with
  `alloc_iters` = switch_allocator_iterations (1 when unset); `greedy` (runner's default, a
  maximal matching BookSim has no allocator for) is run with BookSim's default iSLIP all the
  same, which loses matches under load (docs/router.md).
- vc_allocator: `islip` as BookSim's `vc_allocator = islip` (its default); `sequential`
  (runner's default, a header never loses a free VC to a conflict) is run with BookSim's
  iSLIP all the same.
- ejection: `interleaved` only (BookSim ejects one flit per cycle, interleaving packets).
- traffic: `uniform_with_self` as BookSim's `uniform` (which includes the source: runner's
  `uniform` does not, and is refused), `transpose`, `bit_complement` (`bitcomp`),
  `bit_reverse` (`bitrev`), `tornado`, `neighbor`.
- injection: BookSim's Bernoulli process (a packet per node and cycle with probability
  `rate`). A `bernoulli` scenario maps exactly; a `poisson` one (runner's default) is run
  with BookSim's Bernoulli process, which has the same rate and, at rates far below one
  packet per cycle, nearly the same arrivals (docs/booksim.md).
- rate: packets per node per cycle (`injection_rate`, `injection_rate_uses_flits = 0`).
- measure: `latency` as `sim_type = latency` (BookSim stops when its average latency exceeds
  `latency_thres`: the row is `saturated`), `throughput` as `sim_type = throughput`.

What it reports, in runner's conventions:
- latency = BookSim's packet latency (creation to the tail's ejection, runner's `latency`);
  network_latency = BookSim's network latency (from the head's injection);
  source_wait = their difference; latency_max = BookSim's maximum packet latency;
- hops = BookSim's hops minus one (BookSim counts the routers a packet visits, runner the
  links it crosses);
- throughput = accepted packets per node per cycle (min and max over nodes), flit_throughput
  likewise in flits; cycles = BookSim's simulated cycles.
- status: `ok`; `saturated` when BookSim calls the simulation unstable (latency mode) or when
  it accepted less than was offered by more than 2% and more than sampling noise (three
  standard deviations of the window's packet count; throughput mode: then, as in runner's
  throughput mode, the latency columns are left empty and the throughput columns are the
  result).

Method options (`options` in the spec, all optional): `sample_period` (cycles per BookSim
sample period, default 5000), `warmup_periods` (default 3), `max_samples` (default 10),
`latency_thres` (default 500) and `config`, an object of further BookSim settings written
verbatim (`{vc_allocator: separable_input_first}`); they override the translation.
"""

import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Default BookSim sampling: long enough to measure saturation within about 1%.
DEFAULTS = {"sample_period": 5000, "warmup_periods": 3, "max_samples": 10, "latency_thres": 500.0}

TRAFFIC = {
    "uniform_with_self": "uniform",
    "transpose": "transpose",
    "bit_complement": "bitcomp",
    "bit_reverse": "bitrev",
    "tornado": "tornado",
    "neighbor": "neighbor",
}

# Scenario fields that must hold their neutral value for BookSim to express the scenario:
# field -> the values accepted (None: the field is null or absent).
NEUTRAL = {
    "switching": ("wormhole",),
    "fault_rate": (0, 0.0, None),
    "broadcast_fraction": (0, 0.0, None),
    "message_length_second_moment": (None,),
    "message_length_distribution": (None, "fixed"),
    "escape_channels": (None,),
    "hotspot_fraction": (None,),
    "reply_length": (None,),
    "outstanding_requests": (None,),
}


class Unsupported(Exception):
    """The scenario has something BookSim (or this adapter) cannot express."""


def translate(request):
    """The BookSim configuration for a request, as an ordered dict of settings."""
    s = request["scenario"]
    for field, accepted in NEUTRAL.items():
        if s.get(field) not in accepted:
            raise Unsupported(f"{field} = {s.get(field)!r} has no BookSim counterpart here")
    topology = s["topology"]
    if topology == "dragonfly":
        cfg = dragonfly(s)
    elif topology not in ("torus", "mesh"):
        raise Unsupported(
            f"the {topology} topology (this adapter translates tori, meshes and dragonflies)"
        )
    else:
        cfg = cube(s)
    v = s["virtual_channels"]
    cfg["vc_buf_size"] = s["buffer_depth"]
    routing = s["routing"]
    reallocation = s.get("vc_reallocation") or "drained"
    if reallocation == "tail_sent" and routing == "duato":
        raise Unsupported(
            "vc_reallocation = tail_sent with duato (BookSim reallocates min_adapt's adaptive VCs "
            "once the tail is sent too; runner keeps them drained, as Duato's condition needs)"
        )
    cfg["wait_for_tail_credit"] = 0 if reallocation == "tail_sent" else 1
    router(s, cfg)
    speedup = s.get("input_speedup")
    cfg["input_speedup"] = v if speedup is None else speedup
    return traffic_and_run(request, s, cfg)


def dragonfly(s):
    """The topology and routing settings of a dragonfly: BookSim's `dragonflynew` (a = 2p,
    h = p, local channels of 10 cycles and global ones of 100) with `min` or `ugal` routing."""
    p, a, h = s["terminals_per_router"], s["routers_per_group"], s["global_links_per_router"]
    if (a, h) != (2 * p, p):
        raise Unsupported(
            f"a dragonfly with p = {p}, a = {a}, h = {h} (BookSim's dragonflynew is the balanced "
            "one only: a = 2p, h = p)"
        )
    local, globl = s.get("channel_latency") or 1, s.get("global_channel_latency")
    globl = globl or local
    if (local, globl) != (10, 100):
        raise Unsupported(
            f"channel_latency = {local}, global_channel_latency = {globl} (BookSim's "
            "dragonflynew fixes its local channels at 10 cycles and its global ones at 100)"
        )
    routing = s["routing"]
    if routing == "ugal_booksim":
        # BookSim's ugal_dragonflynew asserts exactly 3 VCs (one per phase).
        if s["virtual_channels"] != 3:
            raise Unsupported(
                f"ugal_booksim with virtual_channels = {s['virtual_channels']} (BookSim's "
                "ugal_dragonflynew needs exactly 3)"
            )
        return {
            "topology": "dragonflynew",
            "k": p,
            "n": 1,
            "routing_function": "ugal",
            "num_vcs": 3,
        }
    if routing != "minimal":
        raise Unsupported(
            f"{routing} routing on the dragonfly (BookSim's ugal_dragonflynew is runner's "
            "ugal_booksim, not UGAL-L: an intermediate router, 1 x the minimal queue against "
            "2 x the other plus 30; this adapter translates minimal and ugal_booksim)"
        )
    if s.get("vc_classes") != "one_per_class":
        raise Unsupported(
            "vc_classes = spread on the dragonfly (BookSim's min_dragonflynew puts the local hops "
            "before the global hop on VC 0 and the rest on VC 1: vc_classes one_per_class)"
        )
    return {
        "topology": "dragonflynew",
        "k": p,
        "n": 1,
        "routing_function": "min",
        "num_vcs": s["virtual_channels"],
    }


def cube(s):
    """The topology and routing settings of a torus or a mesh."""
    topology = s["topology"]
    k, n, v = s["radix"], s["dimensions"], s["virtual_channels"]
    if s.get("vc_classes") not in (None, "spread"):
        raise Unsupported(f"vc_classes = {s.get('vc_classes')} (the dragonfly's only)")
    cfg = {"topology": topology, "k": k, "n": n}
    latency = s.get("channel_latency") or 1
    if topology == "torus" and latency in (1, 2):
        cfg["use_noc_latency"] = latency - 1
    elif latency != 1:
        raise Unsupported(
            f"channel_latency = {latency} on a {topology} (BookSim's {topology} channels take "
            + ("1 or 2 cycles)" if topology == "torus" else "1 cycle)")
        )

    routing = s["routing"]
    if routing == "dimension_order":
        cfg["routing_function"] = "dim_order"
        if topology == "torus":
            if s.get("dateline") not in (None, "per_traversal") or s.get("tie_break") not in (
                None,
                "random",
            ):
                raise Unsupported(
                    "dateline/tie_break other than per_traversal/random (BookSim's dim_order "
                    "fixes the VC class per ring traversal and breaks ties at random)"
                )
            if v % 2:
                raise Unsupported(
                    f"virtual_channels = {v} on a torus (BookSim's dim_order gives each "
                    "dateline class half the VCs: V must be even)"
                )
        cfg["num_vcs"] = v
    elif routing == "duato":
        cfg["routing_function"] = "min_adapt"
        if topology == "mesh":
            if v < 2:
                raise Unsupported("duato with one VC (min_adapt needs an escape and an adaptive VC)")
            cfg["num_vcs"] = v
        else:
            if v != 3:
                raise Unsupported(
                    f"duato with virtual_channels = {v} on a torus (BookSim's min_adapt on a "
                    "torus has exactly two escape VCs and one adaptive VC: V = 3)"
                )
            cfg["num_vcs"] = 4
    else:
        raise Unsupported(f"{routing} routing (this adapter translates dimension_order and duato)")
    return cfg


def router(s, cfg):
    """The router's settings: the pipeline and the allocators."""
    delay = s["router_delay"]
    knobs = ("vc_allocation_delay", "switch_delay", "credit_delay")
    pipeline = tuple(s.get(k) or 0 for k in knobs)
    if pipeline == (1, 2, 1) and delay in (0, 1):
        # BookSim's pipeline exactly: routing_delay (1 by default), VC allocation, then switch
        # allocation and traversal; the credit seen a cycle after its link delivers it.
        if delay == 0:
            cfg["routing_delay"] = 0
    elif pipeline == (0, 0, 0) and delay in (3, 4):
        # No pipeline in runner: the header's 5 cycles per hop (4 with routing_delay = 0).
        if delay == 3:
            cfg["routing_delay"] = 0
    else:
        raise Unsupported(
            f"router_delay = {delay}, vc_allocation_delay = {pipeline[0]}, switch_delay = "
            f"{pipeline[1]}, credit_delay = {pipeline[2]} (BookSim's default pipeline is "
            "router_delay 1 (0 with routing_delay = 0), vc_allocation_delay 1, switch_delay 2, "
            "credit_delay 1; without the pipeline knobs, router_delay 4 or 3)"
        )
    if s.get("switch_allocator") == "islip":
        cfg["sw_allocator"] = "islip"
        cfg["alloc_iters"] = s.get("switch_allocator_iterations") or 1
    if s.get("vc_allocator") == "islip":
        cfg["vc_allocator"] = "islip"


def traffic_and_run(request, s, cfg):
    """The traffic, the packets and the run's settings, added to `cfg`; returns it."""
    if s.get("ejection") != "interleaved":
        raise Unsupported(
            f"ejection = {s.get('ejection')} (BookSim ejects one flit per cycle, interleaving "
            "packets: ejection interleaved)"
        )
    traffic = s["traffic"]
    if traffic == "uniform":
        raise Unsupported(
            "uniform traffic without the source (BookSim's uniform includes the source: use "
            "traffic uniform_with_self)"
        )
    patterns = dict(TRAFFIC)
    if cfg["topology"] == "dragonflynew":
        # A random node of the next group: BookSim's bad_dragon (`traffic.cpp`).
        patterns = {"uniform_with_self": "uniform", "group_shift": "bad_dragon"}
    if traffic not in patterns:
        raise Unsupported(f"{traffic} traffic (no BookSim pattern with the same destinations)")
    cfg["traffic"] = patterns[traffic]
    process = s.get("injection_process")
    if process not in (None, "poisson", "bernoulli"):
        raise Unsupported(f"injection_process = {process} (BookSim injects by Bernoulli trials)")
    cfg["injection_process"] = "bernoulli"
    cfg["packet_size"] = s["message_length"]
    packet = s.get("packet_size")
    if packet is not None and packet < s["message_length"]:
        raise Unsupported(
            f"packet_size = {packet} below message_length = {s['message_length']} (BookSim's "
            "packets are runner's messages: it has no message of several packets)"
        )
    cfg["injection_rate"] = request["rate"]
    cfg["injection_rate_uses_flits"] = 0

    measure = request.get("measure") or "latency"
    if measure not in ("latency", "throughput"):
        raise Unsupported(f"measure = {measure}")
    cfg["sim_type"] = measure
    options = request.get("options") or {}
    for key, default in DEFAULTS.items():
        cfg[key] = options.get(key, default)
    seed = request.get("seed")
    cfg["seed"] = 1 if seed is None else seed % (2**31 - 1) + 1
    for key, value in (options.get("config") or {}).items():
        cfg[key] = value
    return cfg


def config_text(cfg):
    """BookSim's configuration syntax: one `key = value;` per line."""
    return "".join(f"{key} = {value};\n" for key, value in cfg.items())


NUMBER = r"(-?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf))"


def parse(text, request):
    """Runner's response from BookSim's output."""
    if "Simulation unstable" in text or "Aborting simulation" in text:
        why = "its average latency exceeded latency_thres"
        if "Too many sample periods" in text:
            why = "its statistics did not converge within max_samples periods"
        return {"status": "saturated", "detail": f"BookSim called the simulation unstable: {why}"}
    marker = "====== Overall Traffic Statistics ======"
    if marker not in text:
        raise ValueError("no 'Overall Traffic Statistics' in BookSim's output")
    overall = text[text.index(marker):]

    def stat(name):
        m = re.search(re.escape(name) + r" average = " + NUMBER, overall)
        if m is None:
            raise ValueError(f"no '{name} average' in BookSim's overall statistics")
        block = overall[m.end():].split("\n", 3)
        low = re.search(r"minimum = " + NUMBER, block[1]) if len(block) > 1 else None
        high = re.search(r"maximum = " + NUMBER, block[2]) if len(block) > 2 else None
        return (
            float(m.group(1)),
            float(low.group(1)) if low else None,
            float(high.group(1)) if high else None,
        )

    plat, plat_min, plat_max = stat("Packet latency")
    nlat, _, _ = stat("Network latency")
    accepted, accepted_min, accepted_max = stat("Accepted packet rate")
    flits, flits_min, flits_max = stat("Accepted flit rate")
    injected, _, _ = stat("Injected packet rate")
    hops, _, _ = stat("Hops")
    cycles = re.search(r"Time taken is (\d+) cycles", text)
    response = {
        "status": "ok",
        "latency": plat,
        "network_latency": nlat,
        "source_wait": plat - nlat,
        "latency_max": plat_max,
        "hops": hops - 1.0,
        "throughput": accepted,
        "throughput_min": accepted_min,
        "throughput_max": accepted_max,
        "flit_throughput": flits,
        "flit_throughput_min": flits_min,
        "flit_throughput_max": flits_max,
        "intermediates": {
            "booksim_injected_packet_rate": injected,
            "booksim_latency_min": plat_min,
            "booksim_hops": hops,
        },
    }
    if cycles:
        response["cycles"] = int(cycles.group(1))
    measure = request.get("measure") or "latency"
    if measure == "throughput" and below_offered(accepted, request, cycles):
        # As runner's throughput mode: past saturation the accepted rate is the result and
        # the latency (of packets waiting in BookSim's unbounded source queues) is left out.
        response["status"] = "saturated"
        response["detail"] = (
            f"accepted {accepted:.5g} of {float(request['rate']):.5g} packets/node/cycle offered"
        )
        for key in ("latency", "network_latency", "source_wait", "latency_max"):
            del response[key]
    for key, value in list(response.items()):
        if isinstance(value, float) and not math.isfinite(value):
            del response[key]
    return response


def below_offered(accepted, request, cycles):
    """Whether BookSim accepted less than was offered, beyond sampling noise: by more than 2%
    and by more than three standard deviations of the packet count the window should have
    seen (at 0.0005 packets/node/cycle an 8x8 network sees a few hundred packets, and 10%
    short is chance). The window is BookSim's run after its warm-up periods."""
    rate = float(request["rate"])
    options = request.get("options") or {}
    warmup = options.get("warmup_periods", DEFAULTS["warmup_periods"]) * options.get(
        "sample_period", DEFAULTS["sample_period"]
    )
    window = max(1, int(cycles.group(1)) - warmup) if cycles else 1
    expected = rate * request["scenario"]["nodes"] * window
    tolerance = max(0.02, 3.0 / math.sqrt(expected)) if expected > 0 else 0.02
    return accepted < rate * (1.0 - tolerance)


def run(binary, cfg):
    """BookSim's standard output for a configuration (echoed to standard error, the log)."""
    with tempfile.TemporaryDirectory(prefix="booksim-") as work:
        path = os.path.join(work, "booksim.cfg")
        with open(path, "w") as out:
            out.write(config_text(cfg))
        done = subprocess.run(
            [binary, path], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    sys.stderr.write(done.stdout)
    # BookSim's main returns -1 (status 255) when the simulation ran to the end and 0 when it
    # called it unstable; its output says which. Anything else is a crash.
    if done.returncode not in (0, 255):
        raise SystemExit(
            f"booksim.py: {binary} exited with status {done.returncode}: {last_line(done.stdout)}"
        )
    return done.stdout


def last_line(text):
    lines = text.strip().splitlines()
    return lines[-1] if lines else "no output"


def main(argv):
    binary, print_config, replay, config_out = None, False, None, None
    args = iter(argv)
    for arg in args:
        if arg == "--binary":
            binary = next(args, None)
        elif arg == "--print-config":
            print_config = True
        elif arg == "--parse":
            replay = next(args, None)
        elif arg == "--config-out":
            config_out = next(args, None)
        else:
            print(f"booksim.py: unknown argument {arg!r}", file=sys.stderr)
            return 2
    request = json.load(sys.stdin)
    try:
        cfg = translate(request)
    except Unsupported as why:
        if print_config:
            print(f"unsupported: {why}")
            return 0
        json.dump({"status": "unsupported", "detail": str(why)}, sys.stdout)
        sys.stdout.write("\n")
        return 0
    if print_config:
        sys.stdout.write(config_text(cfg))
        return 0
    if config_out is not None:
        name = request.get("task_id") or "request"
        with open(os.path.join(config_out, f"{name}.cfg"), "w") as out:
            out.write(config_text(cfg))
    if replay is not None:
        with open(replay) as saved:
            text = saved.read()
    else:
        binary = binary or os.environ.get("BOOKSIM") or shutil.which("booksim")
        if not binary:
            print("booksim.py: no BookSim: pass --binary PATH or set BOOKSIM", file=sys.stderr)
            return 2
        print(f"booksim.py: {request.get('task_id', '')[:12]} with {binary}", file=sys.stderr)
        sys.stderr.write(config_text(cfg))
        text = run(binary, cfg)
    try:
        response = parse(text, request)
    except ValueError as problem:
        raise SystemExit(f"booksim.py: {problem}; BookSim's last line: {last_line(text)}")
    json.dump(response, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
