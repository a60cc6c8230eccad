#!/usr/bin/env python3
"""Context switches and CPU time per call of a stdio MCP server, one call in flight.

    python3 bench/switches.py SERVER [ARGS...]     # e.g. target/release/bench-junction-echo stdio

Spawns the server on pipes, completes the handshake, sends 1,000 warm-up `tools/call`s
of `echo`, then 20,000 more one at a time, and reads the server's own counters from
/proc/PID/task/*/status (voluntary and involuntary switches) and /proc/PID/stat (CPU).
"""
import glob
import json
import os
import subprocess
import sys
import time

CALLS = 20000


def main():
    cmd = sys.argv[1:]
    if not cmd:
        sys.exit(__doc__)
    server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, bufsize=0)

    def call(message):
        server.stdin.write((json.dumps(message) + "\n").encode())
        return server.stdout.readline()

    def switches():
        voluntary = involuntary = 0
        for status in glob.glob(f"/proc/{server.pid}/task/*/status"):
            for line in open(status):
                if line.startswith("voluntary_ctxt_switches"):
                    voluntary += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches"):
                    involuntary += int(line.split()[1])
        return voluntary, involuntary

    def cpu_ticks():
        fields = open(f"/proc/{server.pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime

    call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "switches", "version": "0"}}})
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    echo = {"name": "echo", "arguments": {"message": "m"}}
    for i in range(1, 1001):
        call({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": echo})
    (v0, n0), c0, t0 = switches(), cpu_ticks(), time.time()
    for i in range(1001, 1001 + CALLS):
        answer = call({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": echo})
        if b"Echo: m" not in answer:
            sys.exit(f"wrong answer: {answer!r}")
    elapsed = time.time() - t0
    (v1, n1), c1 = switches(), cpu_ticks()
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    print(f"{CALLS / elapsed:.0f} req/s, switches per call: voluntary {(v1 - v0) / CALLS:.2f}, "
          f"involuntary {(n1 - n0) / CALLS:.2f}; CPU per call {(c1 - c0) * tick_us / CALLS:.1f} us")
    server.kill()


if __name__ == "__main__":
    main()
