package sim

import (
	"flag"
	"fmt"
	"testing"
)

var (
	seeds = flag.Int("seeds", 300, "seeds to run")
	first = flag.Uint64("seed", 1, "the first seed")
)

// TestBattery runs -seeds seeds from -seed: each seed's workload with
// faults must end as it does without them, and keep every invariant of
// Check. A failing seed prints the command that replays it.
func TestBattery(t *testing.T) {
	stats := map[string]int{}
	steps := 0
	for seed := *first; seed < *first+uint64(*seeds); seed++ {
		clean, err := Run(seed, Options{}, false)
		if err != nil {
			t.Fatalf("seed %d without faults: %v\nreplay: make sim SEED=%d SEEDS=1", seed, err, seed)
		}
		faulty, err := Run(seed, Options{}, true)
		if err != nil {
			t.Fatalf("seed %d: %v\nreplay: make sim SEED=%d SEEDS=1", seed, err, seed)
		}
		if v := Check(faulty, clean); len(v) > 0 {
			t.Fatalf("seed %d: %d violation(s):\n%v\nreplay: make sim SEED=%d SEEDS=1", seed, len(v), v, seed)
		}
		for k, n := range faulty.Faults {
			stats[k] += n
		}
		steps += faulty.Steps
	}
	t.Logf("%d seeds, %d scheduler steps; faults: %s", *seeds, steps, fmt.Sprint(stats))
}

// TestBatteryCatchesEachMutation: with each guarantee broken on purpose,
// the battery's default seeds find a violation.
func TestBatteryCatchesEachMutation(t *testing.T) {
	for _, m := range []string{MutSkipIntentClaim, MutNoVersionFence, MutDropEventOnResume, MutNoVisibilityExtension} {
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
