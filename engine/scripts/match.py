#!/usr/bin/env python3
"""Small match driver for Coherent (python-chess): games at X+Y seconds between two UCI engines.

Openings are a few random legal plies (seeded), each played twice with colours swapped. Rules and
legality come from python-chess. Reports wins/draws/losses of engine 1, crashes, illegal moves and
time losses per engine. Example:

    engine/scripts/match.py --engine1 target/release/coherent --engine2 /usr/games/glaurung \
        --option2 Threads=1 --games 200 --tc 1+0.01 --concurrency 2
"""
import argparse
import math
import random
import sys
import threading
import time

import chess
import chess.engine
import chess.pgn


def parse_options(pairs):
    opts = {}
    for p in pairs or []:
        k, _, v = p.partition("=")
        opts[k] = int(v) if v.lstrip("-").isdigit() else v
    return opts


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.w = self.d = self.l = 0
        self.faults = {1: {"crash": 0, "illegal": 0, "time": 0}, 2: {"crash": 0, "illegal": 0, "time": 0}}
        # Moves that overran the clock but stayed within --margin (not losses; reported for honesty).
        self.overruns = {1: 0, 2: 0}
        self.games = []


def open_engine(cmd, options):
    eng = chess.engine.SimpleEngine.popen_uci(cmd.split())
    if options:
        eng.configure(options)
    return eng


def play_game(engines, cmds, options, white_is_1, opening, base, inc, margin, game_id, overruns):
    """Play one game; returns (result string from engine 1's view: 'w'/'d'/'l', fault, termination, pgn)."""
    board = chess.Board()
    for m in opening:
        board.push(m)
    clocks = [base, base]  # indexed by colour: 0 white, 1 black
    idx = {chess.WHITE: 1 if white_is_1 else 2, chess.BLACK: 2 if white_is_1 else 1}
    fault = None
    termination = "normal"
    while not board.is_game_over(claim_draw=True) and board.ply() < 600:
        side = board.turn
        who = idx[side]
        eng = engines[who]
        limit = chess.engine.Limit(white_clock=clocks[0], black_clock=clocks[1], white_inc=inc, black_inc=inc)
        t = time.perf_counter()
        try:
            res = eng.play(board, limit, game=game_id)
        except chess.engine.EngineTerminatedError:
            fault, termination = (who, "crash"), f"engine {who} crashed"
            engines[who] = open_engine(cmds[who], options[who])
            break
        except (chess.engine.EngineError, chess.IllegalMoveError, ValueError) as e:
            fault, termination = (who, "illegal"), f"engine {who} illegal move ({e})"
            break
        spent = time.perf_counter() - t
        ci = 0 if side == chess.WHITE else 1
        clocks[ci] -= spent
        if clocks[ci] < 0:
            overruns[who] += 1
        if clocks[ci] + margin < 0:
            fault, termination = (who, "time"), f"engine {who} lost on time (spent {spent:.3f} s, clock {clocks[ci]:.3f} s, ply {board.ply()})"
            break
        clocks[ci] += inc
        if res.move is None or res.move not in board.legal_moves:
            fault, termination = (who, "illegal"), f"engine {who} illegal move {res.move}"
            break
        board.push(res.move)
    if fault:
        loser_is_1 = fault[0] == 1
        r = "l" if loser_is_1 else "w"
    else:
        outcome = board.outcome(claim_draw=True)
        if outcome is None or outcome.winner is None:
            r = "d"
        else:
            r = "w" if idx[outcome.winner] == 1 else "l"
        termination = outcome.termination.name.lower() if outcome else "ply limit"
    game = chess.pgn.Game.from_board(board)
    game.headers["White"] = cmds[idx[chess.WHITE]]
    game.headers["Black"] = cmds[idx[chess.BLACK]]
    game.headers["Termination"] = termination
    res_white = {"w": "1-0" if white_is_1 else "0-1", "l": "0-1" if white_is_1 else "1-0", "d": "1/2-1/2"}[r]
    game.headers["Result"] = res_white
    return r, fault, termination, str(game)


def worker(args, jobs, stats, cmds, options):
    engines = {1: open_engine(cmds[1], options[1]), 2: open_engine(cmds[2], options[2])}
    try:
        while True:
            with stats.lock:
                if not jobs:
                    return
                n, white_is_1, opening = jobs.pop(0)
            r, fault, term, pgn = play_game(
                engines, cmds, options, white_is_1, opening, args.base, args.inc, args.margin, n, stats.overruns
            )
            with stats.lock:
                if r == "w":
                    stats.w += 1
                elif r == "d":
                    stats.d += 1
                else:
                    stats.l += 1
                if fault:
                    stats.faults[fault[0]][fault[1]] += 1
                stats.games.append(pgn)
                done = stats.w + stats.d + stats.l
                print(f"game {done}/{args.games}: {r} ({term})  +{stats.w} ={stats.d} -{stats.l}", flush=True)
    finally:
        for e in engines.values():
            try:
                e.quit()
            except Exception:
                pass


def elo(score):
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine1", required=True)
    ap.add_argument("--engine2", required=True)
    ap.add_argument("--option1", action="append", help="UCI option for engine 1, NAME=VALUE")
    ap.add_argument("--option2", action="append", help="UCI option for engine 2, NAME=VALUE")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--tc", default="1+0.01", help="base+increment in seconds")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--plies", type=int, default=8, help="random opening plies")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--margin", type=float, default=0.0, help="seconds of clock tolerance before a time loss")
    ap.add_argument("--pgn", help="write all games here")
    args = ap.parse_args()
    args.base, args.inc = (float(x) for x in args.tc.split("+"))
    rng = random.Random(args.seed)
    jobs = []
    for pair in range((args.games + 1) // 2):
        while True:
            b = chess.Board()
            for _ in range(args.plies):
                moves = list(b.legal_moves)
                if not moves:
                    break
                b.push(rng.choice(moves))
            if not b.is_game_over() and b.ply() == args.plies:
                break
        opening = list(b.move_stack)
        jobs.append((2 * pair, True, opening))
        if 2 * pair + 1 < args.games:
            jobs.append((2 * pair + 1, False, opening))
    cmds = {1: args.engine1, 2: args.engine2}
    options = {1: parse_options(args.option1), 2: parse_options(args.option2)}
    stats = Stats()
    threads = [threading.Thread(target=worker, args=(args, jobs, stats, cmds, options)) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    n = stats.w + stats.d + stats.l
    score = (stats.w + 0.5 * stats.d) / max(n, 1)
    print(f"\n{args.engine1} vs {args.engine2} at {args.tc}, {n} games")
    print(f"W/D/L (engine 1): {stats.w}/{stats.d}/{stats.l}  score {100 * score:.1f}%  Elo {elo(score):+.0f}")
    for who in (1, 2):
        f = stats.faults[who]
        print(
            f"engine {who} faults: crashes {f['crash']}, illegal moves {f['illegal']}, time losses {f['time']}"
            f" (moves past zero on the clock but within the {args.margin:g} s margin: {stats.overruns[who]})"
        )
    if args.pgn:
        with open(args.pgn, "w") as fh:
            fh.write("\n\n".join(stats.games) + "\n")
    sys.exit(0)


if __name__ == "__main__":
    main()
