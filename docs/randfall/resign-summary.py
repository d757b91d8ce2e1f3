#!/usr/bin/env python3
"""Tables of the resign-rule measurement from the PGN files `oracle match --pgn-out` wrote.

For each rule: wins, draws and losses of the candidate, its pairs (the two games of one starting
position) by score, the games ended by the resign rule and who resigned, the other
adjudications. Then game by game (same position, same colours; at a fixed node count the engines
play the same moves until a rule ends one of the games): what became under every other rule of
each game the first rule ended by resignation. Usage:

    python3 docs/randfall/resign-summary.py --candidate candidate \\
        one-sided=OUT/one-sided.pgn two-sided=OUT/two-sided.pgn no-resign=OUT/no-resign.pgn

Needs python-chess. GPL-3.0-or-later.
"""

import argparse
import collections

import chess.pgn


def games(path):
    """The games of a PGN file, keyed by (starting FEN, White's name), with their ending."""
    found = {}
    with open(path, encoding="utf-8") as pgn:
        while (game := chess.pgn.read_game(pgn)) is not None:
            # The reason is the last comment; python-chess joins it to the last move's.
            reason = " ".join(game.end().comment.split())
            key = (game.headers["FEN"], game.headers["White"])
            if key in found:
                raise SystemExit(f"{path}: two games from {key[0]} with {key[1]} as White")
            found[key] = {
                "white": game.headers["White"],
                "black": game.headers["Black"],
                "result": game.headers["Result"],
                "termination": game.headers["Termination"],
                "reason": reason,
                "moves": [m.uci() for m in game.mainline_moves()],
            }
    return found


def score_for(game, name):
    """1, ½ or 0 for the engine `name`."""
    if game["result"] == "1/2-1/2":
        return 0.5
    white_won = game["result"] == "1-0"
    return 1.0 if white_won == (game["white"] == name) else 0.0


def resigned(game):
    """The name of the engine that resigned by adjudication, or None."""
    if game["reason"].endswith("White resigns (adjudication)"):
        return game["white"]
    if game["reason"].endswith("Black resigns (adjudication)"):
        return game["black"]
    return None


def reason(game):
    """The game's end as the oracle wrote it, without the last move's score."""
    return game["reason"].rsplit("s ", 1)[-1] if game["termination"] == "adjudication" else ""


def summary(label, found, candidate):
    outcome = collections.Counter(score_for(g, candidate) for g in found.values())
    by_resign = collections.Counter(
        "candidate" if resigned(g) == candidate else "predecessor"
        for g in found.values()
        if resigned(g)
    )
    other = collections.Counter(
        reason(g) for g in found.values() if g["termination"] == "adjudication" and not resigned(g)
    )
    pairs = collections.defaultdict(float)
    for (fen, _white), game in found.items():
        pairs[fen] += score_for(game, candidate)
    pentanomial = [sum(1 for p in pairs.values() if p == k / 2) for k in range(5)]
    resigns = sum(by_resign.values())
    print(
        f"{label}: {len(found)} games, candidate +{outcome[1.0]} ={outcome[0.5]} -{outcome[0.0]}"
        f" (score {sum(s * n for s, n in outcome.items()):.1f}), pairs by the candidate's score"
        f" 0..2 {pentanomial}; resign adjudications {resigns} (candidate resigned"
        f" {by_resign['candidate']}, predecessor {by_resign['predecessor']}); other"
        f" adjudications: {dict(other) or 'none'}"
    )


def follow(first_label, first, second_label, second, candidate):
    """What became under the second rule of the games the first ended by resignation."""
    fates = collections.Counter()
    for key, game in first.items():
        loser = resigned(game)
        if loser is None:
            continue
        later = second[key]
        common = min(len(game["moves"]), len(later["moves"]))
        if later["moves"][:common] != game["moves"][:common]:
            fates["(the games diverged before either ended)"] += 1
        who = "candidate" if loser == candidate else "predecessor"
        result = {1.0: "won", 0.5: "drew", 0.0: "lost"}[score_for(later, loser)]
        fates[f"{who} resigned, played on: resigner {result}"] += 1
    print(f"games {first_label} ended by resignation, under {second_label}:")
    for fate, count in sorted(fates.items()):
        print(f"  {fate}: {count}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidate", required=True, help="the candidate's name in the PGN")
    parser.add_argument("runs", nargs="+", metavar="LABEL=PGN")
    args = parser.parse_args()
    loaded = [(label, games(path)) for label, path in (run.split("=", 1) for run in args.runs)]
    for label, found in loaded:
        summary(label, found, args.candidate)
    (first_label, first), others = loaded[0], loaded[1:]
    for label, found in others:
        if found.keys() != first.keys():
            raise SystemExit(f"{first_label} and {label} did not play the same positions and colours")
        follow(first_label, first, label, found, args.candidate)


if __name__ == "__main__":
    main()
