#!/usr/bin/env python3
# Independent check of an `oracle match` PGN with python-chess: every game parses, every move
# is legal, the tags are present, PlyCount matches, and games that ended by the rules
# ("normal") end in a position that python-chess also calls finished, with the same result.
# Usage: play_validate_pgn.py GAMES.pgn [EXPECTED_GAMES]
import sys

import chess
import chess.pgn

TAGS = ["Event", "Site", "Date", "Round", "White", "Black", "Result", "TimeControl", "Termination", "PlyCount"]


def main():
    path = sys.argv[1]
    expected = int(sys.argv[2]) if len(sys.argv) > 2 else None
    problems, games, plies, terminations = [], 0, 0, {}
    with open(path, encoding="utf-8") as handle:
        while True:
            game = chess.pgn.read_game(handle)
            if game is None:
                break
            games += 1
            where = f"game {games} (Round {game.headers.get('Round')})"
            for error in game.errors:
                problems.append(f"{where}: {error}")
            for tag in TAGS:
                if tag not in game.headers:
                    problems.append(f"{where}: missing tag {tag}")
            if "FEN" in game.headers and game.headers.get("SetUp") != "1":
                problems.append(f"{where}: FEN without SetUp")
            board = game.board()
            count = 0
            for move in game.mainline_moves():
                if move not in board.legal_moves:
                    problems.append(f"{where}: illegal move {move} in {board.fen()}")
                    break
                board.push(move)
                count += 1
            plies += count
            if str(count) != game.headers.get("PlyCount"):
                problems.append(f"{where}: PlyCount {game.headers.get('PlyCount')} but {count} moves")
            termination = game.headers.get("Termination")
            terminations[termination] = terminations.get(termination, 0) + 1
            result = game.headers.get("Result")
            if termination == "normal":
                outcome = board.outcome(claim_draw=True)
                if outcome is None:
                    problems.append(f"{where}: 'normal' end but python-chess sees no game end")
                elif outcome.result() != result:
                    problems.append(f"{where}: result {result} but python-chess says {outcome.result()} ({outcome.termination})")
            elif result not in ("1-0", "0-1", "1/2-1/2"):
                problems.append(f"{where}: result {result}")
    if expected is not None and games != expected:
        problems.append(f"{games} games, expected {expected}")
    print(f"python-chess {chess.__version__}: {games} games, {plies} plies, terminations {terminations}")
    for problem in problems:
        print("PROBLEM:", problem)
    print("OK: every game re-validates" if not problems else f"FAILED: {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
