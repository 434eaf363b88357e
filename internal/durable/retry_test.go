package durable

import (
	"fmt"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// TestRetryAt: a failed outbox record's backoff after each failed
// attempt: CallbackBackoff, doubling per attempt, at most an hour, however
// many attempts; the record's time is that much on, less NotifyAfter
// (the sweeper lists a record NotifyAfter after its time).
func TestRetryAt(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		backoff  time.Duration // CallbackBackoff; 0 is the default, 30s
		attempts int
		want     time.Duration
	}{
		{0, 1, 30 * time.Second},
		{0, 2, time.Minute},
		{0, 3, 2 * time.Minute},
		{0, 4, 4 * time.Minute},
		{0, 5, 8 * time.Minute},
		{0, 6, 16 * time.Minute},
		{0, 7, 32 * time.Minute},
		{0, 8, time.Hour}, // 64m, capped
		{0, 9, time.Hour},
		{0, 30, time.Hour}, // 30s<<29 overflows int64 nanoseconds
		{0, 64, time.Hour},
		{0, 1000, time.Hour},
		{time.Second, 1, time.Second},
		{time.Second, 12, 2048 * time.Second},
		{time.Second, 13, time.Hour}, // 4096s, capped
		{45 * time.Minute, 1, 45 * time.Minute},
		{45 * time.Minute, 2, time.Hour},
		{time.Hour, 1, time.Hour},
		{2 * time.Hour, 1, time.Hour}, // a configured backoff over the cap
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("backoff %v attempt %d", tc.backoff, tc.attempts), func(t *testing.T) {
			e := &Runner{Limits: Limits{CallbackBackoff: tc.backoff}.withDefaults(), Clock: &core.FixedClock{T: t0}}
			at, backoff := e.retryAt(tc.attempts)
			if backoff != tc.want {
				t.Fatalf("backoff %v, want %v", backoff, tc.want)
			}
			if want := t0.Add(tc.want - 30*time.Second); !at.Equal(want) {
				t.Fatalf("time %v, want %v (the backoff less NotifyAfter)", at, want)
			}
		})
	}
}
