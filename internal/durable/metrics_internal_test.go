package durable

import (
	"testing"
	"time"
)

// TestMilliseconds: durations go into the EMF metrics (unit
// Milliseconds) as milliseconds, to the microsecond.
func TestMilliseconds(t *testing.T) {
	for d, want := range map[time.Duration]float64{0: 0, 1500 * time.Microsecond: 1.5, 2 * time.Second: 2000, 999 * time.Nanosecond: 0} {
		if got := ms(d); got != want {
			t.Errorf("ms(%v) = %v, want %v", d, got, want)
		}
	}
}
