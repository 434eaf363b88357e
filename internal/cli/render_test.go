package cli

import "testing"

// TestCostLine renders result.cost, naming the unpriced models, and
// nothing when the runtime priced nothing.
func TestCostLine(t *testing.T) {
	if got := costLine(nil); got != "" {
		t.Fatalf("no cost: %q", got)
	}
	got := costLine(&runCost{TotalUSD: 0.0123, ModelUSD: 0.012, AWSUSD: 0.0003, Unpriced: []string{"scripted/demo"}})
	if want := " · cost: $0.012300 (model $0.012000, AWS $0.000300); unpriced: scripted/demo"; got != want {
		t.Fatalf("costLine = %q, want %q", got, want)
	}
}
