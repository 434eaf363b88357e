#!/usr/bin/env bash
# Mutation testing with gremlins (pinned in tools/go.mod) on the packages
# that carry Baton's guarantees. See docs/testing.md.
#
#   scripts/mutate.sh [PKG…]          every mutant of each package (default:
#                                     all of $GUARANTEES); prints efficacy and
#                                     mutator coverage per package, and the
#                                     mutants that lived or were not covered
#   scripts/mutate.sh --ci            what CI runs: internal/auth in full, and
#                                     the mutants on the lines the last commit
#                                     changed (gremlins --diff HEAD~1) in every
#                                     other package it touched (MUTATE_SINCE,
#                                     default HEAD~1, names another commit);
#                                     fails when a package's efficacy is
#                                     under its floor
#
# WORKERS (default 2) mutants are tested at once, each by `go test` of the
# mutant's package, niced. MUTATE_EXCLUDE, a regexp of file paths, leaves
# those files out (a package measured by parts, as docs/testing.md says).
# MUTATE_TIMEOUT_COEFFICIENT replaces the multiple of the tests' first run
# a mutant's build and tests may take (10; 30 for core): raise it on a
# busy machine, where builds slow down and mutants time out spuriously.
# internal/dynamostore and internal/sqsqueue are tested with their
# integration tests (build tag integration) on the emulators: started
# here with scripts/emulators.sh run unless BATON_TEST_DYNAMODB_ENDPOINT
# is already set.
#
# gremlins runs on a snapshot of the tree (git worktree of the working
# tree's state, untracked files included), so that it copies the sources
# and not node_modules, and so that its --diff paths (relative to the
# package, git's diff.relative) match the files it mutates.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

GUARANTEES=(core internal/durable internal/auth internal/dynamostore internal/memstore internal/sqsqueue internal/httpapi internal/a2aserver internal/worker internal/schedules)
# Efficacy floors (percent, as recorded in docs/testing.md, rounded down):
# a run, or a CI diff run, under its package's floor fails.
declare -A FLOOR=(
  [core]=86 [internal/durable]=86 [internal/auth]=95
  [internal/dynamostore]=84 [internal/memstore]=86 [internal/sqsqueue]=98
  [internal/httpapi]=94 [internal/a2aserver]=98 [internal/worker]=92
  [internal/schedules]=96
)
WORKERS="${WORKERS:-2}"

ci=false diff=""
pkgs=()
for a in "$@"; do
  case "$a" in
    --ci) ci=true ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) a="${a#./}"; pkgs+=("${a%/}") ;;
  esac
done

bin="$root/build/gremlins"
go build -C tools -o "$bin" github.com/go-gremlins/gremlins/cmd/gremlins

# The commit the CI run compares with, resolved before the snapshot.
since="${MUTATE_SINCE:-HEAD~1}"
prev=""
if ! git rev-parse -q --git-dir >/dev/null 2>&1; then
  # Not a git checkout: gremlins copies the tree as it is, no --diff.
  snap="$root"
else
  $ci && prev="$(git rev-parse -q --verify "$since^{commit}" || true)"
  snap="$(mktemp -d)/baton"
  cleanup() { git worktree remove --force "$snap" >/dev/null 2>&1 || true; rm -rf "$(dirname "$snap")"; }
  trap cleanup EXIT
  rev="$(git stash create 2>/dev/null || true)"
  git worktree add -q --detach "$snap" "${rev:-HEAD}"
  git ls-files -z -o --exclude-standard -- '*.go' | while IFS= read -r -d '' f; do
    mkdir -p "$snap/$(dirname "$f")" && cp "$f" "$snap/$f"
  done
fi

# reap DIR: every 2 s, stop the compilers, linkers and test binaries
# running under DIR whose go command is gone. gremlins times a mutant out
# by killing its `go test` alone, which leaves what that command started
# running; on a busy machine they slow the next mutants into timeouts of
# their own, and those leave more.
reap() {
  local p pp exe
  while sleep 2; do
    for p in $(pgrep -f -- "$1/" || true); do
      exe="$(ps -o args= -p "$p" 2>/dev/null | awk '{print $1}')" || continue
      case "${exe##*/}" in compile|link|asm|cgo|vet|*.test) ;; *) continue ;; esac
      pp="$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" || continue
      [ "$(ps -o comm= -p "$pp" 2>/dev/null)" = go ] || kill "$p" 2>/dev/null || true
    done
  done
}

needs_emulators() { [ "$1" = internal/dynamostore ] || [ "$1" = internal/sqsqueue ]; }

# mutate PKG [DIFFREF]: one gremlins run; prints the package's line.
failed=()
mutate() {
  local pkg="$1" ref="${2:-}" out args
  out="$(mktemp)"
  # A mutant's tests time out at coefficient × gremlins' first run of
  # the package's tests, built beforehand so that the figure is the
  # tests' time and a link: core's tests are fast, its build is not.
  local coeff=10
  [ "$pkg" = core ] && coeff=30
  coeff="${MUTATE_TIMEOUT_COEFFICIENT:-$coeff}"
  args=(unleash --workers "$WORKERS" --timeout-coefficient "$coeff" -S lctk
    --exclude-files '(^|/)[a-z]*test/' -o "$out")
  [ -n "$ref" ] && args+=(--diff "$ref")
  [ -n "${MUTATE_EXCLUDE:-}" ] && args+=(--exclude-files "$MUTATE_EXCLUDE")
  # -count=1: gremlins times its mutants' tests by its own first run,
  # which a cached test result would make instant.
  # gremlins' work dirs (and the tests' temporary files) go under a
  # directory of this run, which reap watches.
  local tmp
  tmp="$(mktemp -d)"
  local run=(env TMPDIR="$tmp" GOFLAGS="${GOFLAGS:-} -count=1 -vet=off" GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.relative GIT_CONFIG_VALUE_0=true
    nice -n 10 "$bin" "${args[@]}")
  if needs_emulators "$pkg"; then
    run=("${run[@]}" --tags integration)
    [ -n "${BATON_TEST_DYNAMODB_ENDPOINT:-}" ] || run=("$root/scripts/emulators.sh" run "${run[@]}")
  fi
  echo "== $pkg${ref:+ (lines changed since $ref)}"
  local tags=()
  needs_emulators "$pkg" && tags=(-tags integration)
  (cd "$snap" && go test "${tags[@]}" -cover -count=1 -run '^$' "./$pkg/..." >/dev/null)
  reap "$tmp" &
  local reaper=$!
  if ! (cd "$snap/$pkg" && "${run[@]}" "$snap/$pkg") >"$out.log" 2>&1; then
    kill "$reaper" 2>/dev/null || true; rm -rf "$tmp"
    cat "$out.log"; rm -f "$out" "$out.log"
    echo "mutate: gremlins failed on $pkg" >&2
    exit 1
  fi
  kill "$reaper" 2>/dev/null || true; wait "$reaper" 2>/dev/null || true
  rm -rf "$tmp"
  grep -E 'LIVED|NOT COVERED|TIMED OUT|Killed:|Timed out:|completed in' "$out.log" || true
  rm -f "$out.log"
  # gremlins' own thresholds count a diff run without mutants as 0 %.
  local k l nc eff cov
  read -r k l nc < <(jq -r '"\(.mutants_killed) \(.mutants_lived) \(.mutants_not_covered)"' "$out")
  rm -f "$out"
  if [ $((k + l)) -eq 0 ]; then
    printf 'RESULT %-22s no mutant tested (%s not covered)\n' "$pkg" "$nc"
    return
  fi
  eff=$(awk -v k="$k" -v l="$l" 'BEGIN{printf "%.1f", 100*k/(k+l)}')
  cov=$(awk -v k="$k" -v l="$l" -v n="$nc" 'BEGIN{printf "%.1f", 100*(k+l)/(k+l+n)}')
  printf 'RESULT %-22s efficacy %5s %%  mutator coverage %5s %%  (killed %s, lived %s, not covered %s; floor %s %%)\n' \
    "$pkg" "$eff" "$cov" "$k" "$l" "$nc" "${FLOOR[$pkg]:-0}"
  if awk -v e="$eff" -v f="${FLOOR[$pkg]:-0}" 'BEGIN{exit !(e < f)}'; then
    failed+=("$pkg")
  fi
}

if $ci; then
  mutate internal/auth
  if [ -z "$prev" ]; then
    echo "mutate: no commit $since here (a shallow clone, or no git): the --diff runs are skipped"
  else
    for pkg in "${GUARANTEES[@]}"; do
      [ "$pkg" = internal/auth ] && continue
      # Only packages whose non-test sources the snapshot changed: gremlins
      # takes a diff without a change as leave to mutate the whole package.
      if git -C "$snap" diff --name-only "$prev" -- "$pkg/*.go" | grep -v '_test\.go$' | grep -q .; then
        mutate "$pkg" "$prev"
      fi
    done
  fi
else
  [ ${#pkgs[@]} -gt 0 ] || pkgs=("${GUARANTEES[@]}")
  for pkg in "${pkgs[@]}"; do mutate "$pkg"; done
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "mutate: efficacy under the recorded floor in: ${failed[*]} (docs/testing.md)" >&2
  exit 1
fi
