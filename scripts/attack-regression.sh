#!/usr/bin/env bash
# The attacks of each adversarial review as regression tests, shown to bite: every test of a
# round must pass with this tree's oracle and fail with an oracle from before that round's
# hardening.
#   scripts/attack-regression.sh OLD_ORACLE_BINARY [OLD_TREE] [TEST…]
#   ROUND=2 …   issue 12's attacks; the old oracle from before cfd0192
#   ROUND=4 …   the review of issue 46's fixes; the old oracle from 2571c3d
#   ROUND=5 …   engines that play another program's moves; the old oracle from cc52fd9
#   ROUND=7 …   a build's output, a root crate's manifest, an audit's seed, a chart's games,
#               a build's ambient inputs; the old oracle from 38c2efa
#   ROUND=8 …   a binary that reads the register's records; any old oracle from before bb04389
#   ROUND=9 …   a binary that prints its build date, a register entry that is a link; the old
#               oracle from bb04389
#   ROUND=3 …   issue 46's (the default); the old oracle from 7337505 (eab8ae5 is the same oracle), e.g.
#               git worktree add /tmp/old eab8ae5 && cargo build --manifest-path /tmp/old/Cargo.toml -p oracle
#               scripts/attack-regression.sh /tmp/old/target/debug/oracle
# The tests are compiled from this tree; for the second run a private mount namespace puts
# OLD_ORACLE_BINARY where the tests find the oracle (cargo's CARGO_BIN_EXE_oracle) and, with
# OLD_TREE, that tree's .github/ where the workflow policy test reads the workflows. Nothing
# outside the namespace changes. Needs `unshare --mount` (root or CAP_SYS_ADMIN).
# A test failing against the old oracle for a reason other than the attack (a flag or a file
# format it does not know) shows nothing: read the reason printed for each one.
# Exit 0 when every test passed now and failed then, 1 otherwise, 2 on bad usage.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: attack-regression.sh OLD_ORACLE_BINARY [OLD_TREE] [TEST…]" >&2
  exit 2
fi
old_oracle=$1
old_tree=${2:-}
shift $(($# < 2 ? $# : 2))
if [[ ! -x $old_oracle ]]; then
  echo "attack-regression: $old_oracle is not an executable" >&2
  exit 2
fi
if [[ -n $old_tree && ! -d $old_tree/.github ]]; then
  echo "attack-regression: $old_tree has no .github/" >&2
  exit 2
fi
old_oracle=$(realpath "$old_oracle")
root=$(git rev-parse --show-toplevel)
cd "$root"

# Each attack of issue 12 (and the hostile inputs that used to panic) by its test's path in the
# integration test binary (oracle/tests/main.rs).
round_2=(
  play::a_candidate_cannot_kill_stop_or_overwrite_its_opponent
  play::merge_refuses_forged_shards_naming_file_and_field
  verify::bind::a_poisoned_build_cache_is_detected_and_never_used
  verify::shards::a_forged_shard_is_refused_naming_file_and_field
  verify::resolve::root_build_files_and_engine_build_hooks_are_refused_at_step_1
  verify::bind::a_binding_profile_without_a_sandbox_stops_before_building
  verify::stages::a_predecessor_disconnect_voids_the_stage
  verify::out_dir::an_out_dir_that_is_not_utf8_is_refused_before_any_build
  register_append::append_refuses_what_does_not_belong_in_the_register
  register_append::a_sharded_gewinn_accepted_below_walds_bound_is_appended_verified_and_replayed
  register::verify_and_replay_refuse_bounds_narrowed_beyond_any_overshoot
  register::replay_catches_a_statistic_that_does_not_follow_from_the_counts
  register::verify_and_replay_name_counts_and_looks_out_of_range
  workflows::write_jobs_read_only_artifacts_their_run_made_without_candidate_code
  workflows::tokens_are_read_only_except_in_the_named_write_jobs_on_main
  workflows::no_credentials_persist_and_no_secret_reaches_a_step
)
round_3=(
  register::verify_with_nothing_to_verify_is_bad_input
  play::an_overlong_line_is_a_malformed_line_that_loses
  verify::resolve::a_build_script_key_spelled_with_an_escape_is_refused_at_step_1
  build::a_blob_past_the_file_bound_is_refused_before_it_is_inflated
  register::verify_refuses_an_entry_file_past_the_record_bound
  play::merge_refuses_a_shard_whose_pgn_does_not_show_its_pairs
  verify::shards::a_shard_claiming_pairs_its_pgn_does_not_show_is_refused
  play::an_engine_that_never_joins_its_search_threads_plays_its_games_out
  play::no_engine_remembers_a_game_in_the_next_one
  play::thinking_in_a_ping_is_charged
  verify::stages::a_candidate_that_faults_past_the_limit_is_abgelehnt_not_void
  verify::stages::a_candidate_that_searches_more_than_told_is_faulted
  build::a_build_cannot_compile_a_host_file_into_the_binary
)
# The fourth review, of issue 46's fixes (old oracle: main before the trust-four merge).
round_4=(
  verify::resolve::a_proc_macro_by_crate_type_is_refused_at_step_1
  verify::stages::a_candidate_that_waits_in_its_setup_to_search_more_is_faulted
)
# The fifth review: the host's programs in an engine's or a build's sight (old oracle: cc52fd9).
round_5=(
  play::an_engine_cannot_hand_its_games_to_a_program_of_the_host
  engine_contract::a_build_that_yields_a_script_is_refused
  build::a_build_cannot_compile_a_program_installed_on_the_host
)
# The seventh round: what a build leaves, what an audit draws, what a chart shows (old oracle:
# 38c2efa).
round_7=(
  engine_contract::a_build_whose_output_links_to_a_host_program_is_refused
  engine_contract::a_build_that_embeds_the_machine_name_is_not_reproducible
  init::a_cargo_engine_is_the_cargo_kind
  verify::verdict::an_entrys_games_replay_move_for_move_and_a_changed_move_is_named
  register_site::a_measurement_is_drawn_beside_the_claimed_line
)
# After the seventh round: a build given the register's records (old oracle: before bb04389).
round_8=(
  engine_contract::a_build_never_sees_the_registers_records
)
# 2026-12-08: an entry landed a day after its engine (a build that prints `__DATE__` took the
# commit's time), a register entry that is a link (old oracle: bb04389).
round_9=(
  engine_contract::a_build_never_sees_the_registers_records
  register::verify_refuses_an_entry_that_is_a_link
)
tests=("$@")
if [[ ${#tests[@]} -eq 0 ]]; then
  case ${ROUND:-3} in
    2) tests=("${round_2[@]}") ;;
    3) tests=("${round_3[@]}") ;;
    4) tests=("${round_4[@]}") ;;
    5) tests=("${round_5[@]}") ;;
    7) tests=("${round_7[@]}") ;;
    8) tests=("${round_8[@]}") ;;
    9) tests=("${round_9[@]}") ;;
    *)
      echo "attack-regression: ROUND must be 2, 3, 4, 5, 7, 8 or 9, got '${ROUND}'" >&2
      exit 2
      ;;
  esac
fi

target=$(cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)
oracle="$target/debug/oracle"
built=$(cargo test -p oracle --no-run --test integration 2>&1 | tee /dev/stderr)
exe=$(sed -n 's|^ *Executable tests/main\.rs (\(.*\))$|\1|p' <<<"$built" | tail -1)
if [[ -z $exe ]]; then
  echo "attack-regression: no integration test executable" >&2
  exit 2
fi
# Relative paths in cargo's output are relative to the workspace root.
[[ $exe = /* ]] || exe="$root/$exe"

failures=0
for entry in "${tests[@]}"; do
  log_now=$(mktemp)
  log_old=$(mktemp)
  if "$exe" --exact "$entry" --test-threads 1 >"$log_now" 2>&1; then now=pass; else now=FAIL; fi
  mounts="mount --bind \"\$0\" \"\$1\""
  if [[ -n $old_tree ]]; then
    mounts+=" && mount --bind \"\$2/.github\" \"\$3/.github\""
  fi
  if unshare --mount sh -c "$mounts && exec \"\$4\" --exact \"\$5\" --test-threads 1" \
    "$old_oracle" "$oracle" "${old_tree:-.}" "$root" "$exe" "$entry" >"$log_old" 2>&1; then
    old=pass
  else
    old=FAIL
  fi
  verdict=ok
  if [[ $now != pass || $old != FAIL ]]; then
    verdict=WRONG
    failures=$((failures + 1))
  fi
  printf '%-6s %-90s now %-4s old %s\n' "$verdict" "$entry" "$now" "$old"
  if [[ $old == FAIL ]]; then
    # The reason: where the old run panicked, the assertion, and its two sides.
    # (`|| true`: a failure without a left/right comparison must not end the script here.)
    { grep -m1 -A1 "panicked at" "$log_old" || true; } | sed 's/^/         old: /' | cut -c1-300
    { grep -m2 -E "^ *(left|right): " "$log_old" || true; } | sed 's/^/         old: /' | cut -c1-300
  fi
  if [[ $now != pass ]]; then
    tail -20 "$log_now" | sed 's/^/         now: /'
  fi
  rm -f "$log_now" "$log_old"
done
exit $((failures > 0))
