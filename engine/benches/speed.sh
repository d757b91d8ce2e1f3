#!/usr/bin/env bash
# Speed of Coherent next to Stockfish on this machine: perft nodes/s at startpos depth 6 and search
# nodes/s from `bench`, each as a ratio to Stockfish's. Goal (issue 2): both ratios >= 0.5.
#
# Usage: engine/benches/speed.sh [coherent-binary] [stockfish-binary]
# Runs under the shared measurement lock so that it never overlaps another timed measurement.
set -euo pipefail
cd "$(dirname "$0")/../.."
COHERENT=${1:-target/release/coherent}
STOCKFISH=${2:-/usr/games/stockfish}
[ -x "$COHERENT" ] || cargo build --release -p coherent --locked
exec flock /tmp/coherent-measure.lock python3 - "$COHERENT" "$STOCKFISH" <<'PY'
import re, subprocess, sys, time

coherent, stockfish = sys.argv[1], sys.argv[2]

def uci_perft(binary, depth=6):
    """Time `go perft N` over UCI from the command to the node total (start-up excluded)."""
    p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    p.stdin.write("uci\nisready\n"); p.stdin.flush()
    while p.stdout.readline().strip() != "readyok":
        pass
    t = time.perf_counter()
    p.stdin.write(f"go perft {depth}\n"); p.stdin.flush()
    nodes = None
    while nodes is None:
        line = p.stdout.readline()
        if not line:
            raise SystemExit(f"{binary}: no perft total")
        m = re.match(r"Nodes searched: (\d+)", line.strip())
        if m:
            nodes = int(m.group(1))
    elapsed = time.perf_counter() - t
    p.stdin.write("quit\n"); p.stdin.flush(); p.wait()
    return nodes, nodes / elapsed

def bench_nps(cmd, pattern):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    text = out.stdout + out.stderr
    return int(re.findall(pattern, text)[-1])

c_nodes, c_perft = uci_perft(coherent)
s_nodes, s_perft = uci_perft(stockfish)
assert c_nodes == s_nodes == 119060324, (c_nodes, s_nodes)
c_bench = bench_nps([coherent, "bench"], r"\d+ nodes (\d+) nps")
s_bench = bench_nps([stockfish, "bench"], r"Nodes/second\s*:\s*(\d+)")
print(f"perft 6 startpos: coherent {c_perft/1e6:8.1f} Mnps  stockfish {s_perft/1e6:8.1f} Mnps  ratio {c_perft/s_perft:.2f}")
print(f"bench search:     coherent {c_bench/1e6:8.3f} Mnps  stockfish {s_bench/1e6:8.3f} Mnps  ratio {c_bench/s_bench:.2f}")
PY
