package sim

import (
	"cmp"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	seeds = flag.Int("seeds", 1000, "seeds to run")
	first = flag.Uint64("seed", 1, "the first seed")
	runs  = flag.Int("runs", 0, "runs per seed (0: the default)")
	rate  = flag.Float64("rate", 0, "the chance of a fault per delivery (0: the default)")
	fail  = flag.Float64("callfail", 0, "the chance each store and queue call of a delivery fails, half the time after it took effect")
	mut   = flag.String("mutation", "", "break one guarantee on purpose (skip_intent_claim, ignore_claim_refusal, no_version_fence, send_before_commit, drop_event_on_resume, no_visibility_extension): the battery must fail")
)

// seedOutcome is one seed's check.
type seedOutcome struct {
	seed       uint64
	err        error
	violations []string
	faulty     Result
}

// checkSeed runs seed with and without faults and checks the invariants.
func checkSeed(seed uint64, o Options) seedOutcome {
	clean, err := Run(seed, Options{Runs: o.Runs}, false)
	if err != nil {
		return seedOutcome{seed: seed, err: fmt.Errorf("without faults: %w", err)}
	}
	faulty, err := Run(seed, o, true)
	if err != nil {
		return seedOutcome{seed: seed, err: err, faulty: faulty}
	}
	return seedOutcome{seed: seed, violations: Check(faulty, clean), faulty: faulty}
}

func (s seedOutcome) failed() bool { return s.err != nil || len(s.violations) > 0 }

// shrink looks, for a failing seed, for a smaller failing schedule with
// the same seed: fewer runs, then a lower fault rate.
func shrink(seed uint64, o Options) Options {
	best := o
	n := o.Runs
	if n <= 0 {
		n = 4
	}
	for r := 1; r < n; r++ {
		if checkSeed(seed, Options{Runs: r, FaultRate: o.FaultRate, Mutation: o.Mutation, CallFailRate: o.CallFailRate}).failed() {
			best.Runs = r
			break
		}
	}
	for _, fr := range []float64{0.05, 0.1, 0.2} {
		if o.FaultRate > 0 && fr >= o.FaultRate {
			break
		}
		if checkSeed(seed, Options{Runs: best.Runs, FaultRate: fr, Mutation: o.Mutation, CallFailRate: o.CallFailRate}).failed() {
			best.FaultRate = fr
			break
		}
	}
	return best
}

// replay is the command that replays a schedule.
func replay(seed uint64, o Options) string {
	cmd := fmt.Sprintf("make sim SEED=%d SEEDS=1", seed)
	if o.Runs > 0 {
		cmd += fmt.Sprintf(" RUNS=%d", o.Runs)
	}
	if o.FaultRate > 0 {
		cmd += fmt.Sprintf(" RATE=%g", o.FaultRate)
	}
	if o.CallFailRate > 0 {
		cmd += fmt.Sprintf(" CALLFAIL=%g", o.CallFailRate)
	}
	if o.Mutation != "" {
		cmd += " MUTATION=" + o.Mutation
	}
	return cmd
}

// TestBattery runs -seeds seeds from -seed on every core: each seed's
// workload with faults must end as it does without them and keep every
// invariant of Check. A failing seed prints the command that replays it,
// and the smallest failing schedule the shrinker found. The table of
// what ran is printed at the end (make sim shows it).
func TestBattery(t *testing.T) {
	battery(t, *seeds, Options{Runs: *runs, FaultRate: *rate, Mutation: *mut, CallFailRate: *fail})
}

// TestBatteryUnderFailingCalls: the battery's seeds with a tenth and with
// half of the store and queue calls failing, besides the faults drawn per
// delivery.
func TestBatteryUnderFailingCalls(t *testing.T) {
	for _, r := range []float64{0.1, 0.5} {
		t.Run(fmt.Sprint(r), func(t *testing.T) { battery(t, max(*seeds/10, 1), Options{CallFailRate: r}) })
	}
}

// forkKind is the table's row of the forks the seeds made (fork.go).
const forkKind = "fork"

// battery checks n seeds from -seed on every core and logs the table.
func battery(t *testing.T, n int, o Options) {
	next := make(chan uint64)
	out := make(chan seedOutcome)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range next {
				out <- checkSeed(seed, o)
			}
		}()
	}
	go func() {
		for seed := *first; seed < *first+uint64(n); seed++ {
			next <- seed
		}
		close(next)
		wg.Wait()
		close(out)
	}()
	var failed []seedOutcome
	faults := map[string]int{}
	steps, runCount := 0, 0
	ends := map[string]map[string]int{}
	for r := range out {
		if r.failed() {
			failed = append(failed, r)
			continue
		}
		for k, n := range r.faulty.Faults {
			faults[k] += n
		}
		steps += r.faulty.Steps
		runCount += len(r.faulty.Runs)
		for run, o := range r.faulty.Runs {
			kind := r.faulty.Kinds[run]
			if _, ok := r.faulty.Forks[run]; ok {
				kind = forkKind
			}
			if ends[kind] == nil {
				ends[kind] = map[string]int{}
			}
			ends[kind][string(o.Status)]++
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n| seeds | runs | scheduler steps | violations |\n|---|---|---|---|\n| %d | %d | %d | %d |\n\n| fault | injected |\n|---|---|\n", n, runCount, steps, len(failed))
	total := 0
	for _, k := range FaultKinds {
		fmt.Fprintf(&table, "| %s | %d |\n", k, faults[k])
		total += faults[k]
	}
	fmt.Fprintf(&table, "| all | %d |\n\n| workload | runs | ended |\n|---|---|---|\n", total)
	for _, kind := range append(RunKinds[:len(RunKinds):len(RunKinds)], forkKind) {
		var n int
		var parts []string
		for _, st := range Keys(ends[kind]) {
			n += ends[kind][st]
			parts = append(parts, fmt.Sprintf("%s %d", st, ends[kind][st]))
		}
		fmt.Fprintf(&table, "| %s | %d | %s |\n", cmp.Or(kind, "answered"), n, strings.Join(parts, ", "))
	}
	t.Log(table.String())
	if len(failed) == 0 && n >= 20 && len(ends[forkKind]) == 0 {
		t.Fatalf("none of %d seeds forked a run", n)
	}
	if len(failed) == 0 {
		return
	}
	low := failed[0]
	for _, f := range failed {
		if f.seed < low.seed {
			low = f
		}
	}
	small := shrink(low.seed, o)
	t.Fatalf("%d seed(s) failed; seed %d: %v %v\nreplay: %s\nsmallest failing schedule found: %s", len(failed), low.seed, low.err, low.violations, replay(low.seed, o), replay(low.seed, small))
}

// TestBatteryCatchesEachMutation: with each guarantee broken on purpose,
// the battery's default seeds find a violation.
func TestBatteryCatchesEachMutation(t *testing.T) {
	for _, m := range []string{MutSkipIntentClaim, MutIgnoreClaimRefusal, MutNoVersionFence, MutSendBeforeCommit, MutDropEventOnResume, MutNoVisibilityExtension, MutVersionFollowsDefault, MutForkForgetsTheRecord, MutChainWithoutLease} {
		t.Run(m, func(t *testing.T) {
			for seed := uint64(1); seed <= uint64(*seeds); seed++ {
				clean, err := Run(seed, Options{}, false)
				if err != nil {
					t.Fatal(err)
				}
				faulty, err := Run(seed, Options{Mutation: m}, true)
				if v := Check(faulty, clean); err != nil || len(v) > 0 {
					t.Logf("caught by seed %d: %v %v", seed, err, v)
					return
				}
			}
			t.Fatalf("%d seeds did not catch %s", *seeds, m)
		})
	}
}

// TestSeedReplays: a seed's execution is the same every time, faults and
// all, so a failing seed replays.
func TestSeedReplays(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a, err1 := Run(seed, Options{}, true)
		b, err2 := Run(seed, Options{}, true)
		if err1 != nil || err2 != nil || a.Steps != b.Steps || fmt.Sprint(a.Faults) != fmt.Sprint(b.Faults) || fmt.Sprint(a.Seen) != fmt.Sprint(b.Seen) || fmt.Sprint(a.Executions) != fmt.Sprint(b.Executions) {
			t.Fatalf("seed %d ran differently: %d/%d steps, %v / %v (%v, %v)", seed, a.Steps, b.Steps, a.Faults, b.Faults, err1, err2)
		}
	}
}

// TestShrink: a failing seed whose failure is not in its last run
// shrinks to a schedule with fewer runs that still fails, and the replay
// command names it; one whose failure needs every run stays as it is.
// (A workload's first runs are the same whatever its length, so only a
// failure in an earlier run can shrink.)
func TestShrink(t *testing.T) {
	o := Options{Mutation: MutSkipIntentClaim}
	failing := 0
	for seed := uint64(1); seed <= 200; seed++ {
		if !checkSeed(seed, o).failed() {
			continue
		}
		failing++
		small := shrink(seed, o)
		if small.Runs == 0 {
			continue // no shorter schedule fails
		}
		if small.Runs < 1 || small.Runs >= 4 || !checkSeed(seed, small).failed() {
			t.Fatalf("seed %d shrank to %+v", seed, small)
		}
		if cmd := replay(seed, small); !strings.Contains(cmd, fmt.Sprintf("SEED=%d SEEDS=1 RUNS=%d", seed, small.Runs)) {
			t.Fatalf("replay %q", cmd)
		}
		return
	}
	t.Fatalf("%d seeds failed under the mutation and none shrank", failing)
}

// TestChildRunWorkload: the workloads call the helper agent (a child
// run, which charges once): under faults its charge runs once per call,
// the parent's usage holds the child's, and the seed passes.
func TestChildRunWorkload(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		faulty, err := Run(seed, Options{}, true)
		if err != nil {
			t.Fatal(err)
		}
		var children []string
		for k, n := range faulty.Executions {
			if strings.Contains(k, ">") {
				children = append(children, k)
				if n != 1 {
					t.Fatalf("seed %d: the helper's charge %s ran %d times", seed, k, n)
				}
			}
		}
		if len(children) == 0 {
			continue
		}
		withChild := false
		for _, r := range faulty.Runs {
			withChild = withChild || r.ChildUsage != (usage{})
		}
		if !withChild {
			t.Fatalf("seed %d: child runs charged (%v) but no parent counted a child's usage", seed, children)
		}
		if v := checkSeed(seed, Options{}); v.failed() {
			t.Fatalf("seed %d: %+v", seed, v)
		}
		return
	}
	t.Fatal("no seed of 50 started a child run")
}
