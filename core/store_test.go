package core

import (
	"testing"
	"time"
)

// TestGCRA: a bucket of Burst tokens refilled at Rate a second; the
// last token of a burst is taken, the next one waits for the refill; a
// Burst under 1 is 1, and a Rate of 0 is no limit.
func TestGCRA(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l := RateLimit{Rate: 2, Burst: 3} // a token every 500 ms
	var tat time.Time
	for i := range 3 {
		next, wait := GCRA(tat, t0, l)
		if wait != 0 {
			t.Fatalf("token %d of the burst: wait %v", i+1, wait)
		}
		if want := t0.Add(time.Duration(i+1) * 500 * time.Millisecond); !next.Equal(want) {
			t.Fatalf("token %d: tat %v, want %v", i+1, next, want)
		}
		tat = next
	}
	if next, wait := GCRA(tat, t0, l); wait != 500*time.Millisecond || !next.Equal(tat) {
		t.Fatalf("past the burst: tat %v wait %v, want the tat kept and 500ms", next, wait)
	}
	if next, wait := GCRA(tat, t0.Add(200*time.Millisecond), l); wait != 300*time.Millisecond || !next.Equal(tat) {
		t.Fatalf("200ms later: wait %v (tat %v)", wait, next)
	}
	if next, wait := GCRA(tat, t0.Add(500*time.Millisecond), l); wait != 0 || !next.Equal(tat.Add(500*time.Millisecond)) {
		t.Fatalf("a refill later: wait %v (tat %v)", wait, next)
	}
	// An old tat is a full bucket: it counts from now.
	if next, wait := GCRA(t0, t0.Add(time.Hour), l); wait != 0 || !next.Equal(t0.Add(time.Hour+500*time.Millisecond)) {
		t.Fatalf("after an hour: tat %v wait %v", next, wait)
	}
	one := RateLimit{Rate: 1}
	next, wait := GCRA(time.Time{}, t0, one)
	if wait != 0 {
		t.Fatalf("burst 0, first token: wait %v", wait)
	}
	if _, wait := GCRA(next, t0, one); wait != time.Second {
		t.Fatalf("burst 0, second token: wait %v, want 1s", wait)
	}
	if next, wait := GCRA(t0.Add(time.Hour), t0, RateLimit{Burst: 1}); wait != 0 || !next.Equal(t0.Add(time.Hour)) {
		t.Fatalf("rate 0: tat %v wait %v", next, wait)
	}
}

// TestDeltaPosBefore: positions sort by turn, then attempt, then batch.
func TestDeltaPosBefore(t *testing.T) {
	ordered := []DeltaPos{{1, 100, 0}, {1, 100, 1}, {1, 200, 0}, {2, 50, 0}, {2, 50, 3}}
	for i, p := range ordered {
		for j, q := range ordered {
			if got := p.Before(q); got != (i < j) {
				t.Errorf("%+v before %+v: %v", p, q, got)
			}
		}
	}
}

// TestWriteActive: under an ActiveLimit, a write of an unfinished run
// takes a place, the one that finishes it frees it (not a write after
// the finish); without a limit neither.
func TestWriteActive(t *testing.T) {
	running, done := RunState{Status: StatusRunning}, RunState{Status: StatusCompleted}
	for _, tc := range []struct {
		w           Write
		takes, free bool
	}{
		{Write{ActiveLimit: 1, Output: Output{State: running}}, true, false},
		{Write{ActiveLimit: 1, Output: Output{State: done}}, false, true},
		{Write{ActiveLimit: 1, Output: Output{State: done}, AfterFinish: true}, false, false},
		{Write{Output: Output{State: running}}, false, false},
		{Write{Output: Output{State: done}}, false, false},
	} {
		if tc.w.TakesActive() != tc.takes || tc.w.FreesActive() != tc.free {
			t.Errorf("limit %d, %s, after finish %v: takes %v frees %v", tc.w.ActiveLimit, tc.w.Output.State.Status, tc.w.AfterFinish, tc.w.TakesActive(), tc.w.FreesActive())
		}
	}
}
