package durable

import (
	"testing"
	"time"
)

// TestDueSlot checks the due-index rounding: never later than the due
// time, less than a quarter of the stall timeout earlier, and the same
// for the commits of one quarter.
func TestDueSlot(t *testing.T) {
	stall := 2 * time.Minute
	base := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{0, time.Millisecond, 29 * time.Second, 30 * time.Second, 31*time.Second + 7*time.Millisecond, 95 * time.Second} {
		due := base.Add(d)
		got := dueSlot(due, stall)
		if got.After(due) || due.Sub(got) >= stall/4 {
			t.Errorf("dueSlot(%v) = %v: want at most %v earlier, never later", due, got, stall/4)
		}
	}
	if a, b := dueSlot(base.Add(31*time.Second), stall), dueSlot(base.Add(59*time.Second), stall); !a.Equal(b) {
		t.Errorf("two commits of one quarter got due slots %v and %v", a, b)
	}
	if got := dueSlot(base.Add(time.Nanosecond), 0); !got.Equal(base.Add(time.Nanosecond)) {
		t.Errorf("without a stall timeout the due time changed: %v", got)
	}
}
