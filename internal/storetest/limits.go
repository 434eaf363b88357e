package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// testActiveRuns checks the count of a tenant's unfinished runs under an
// ActiveLimit: a run at the limit is refused and leaves nothing behind,
// a finished or cancelled run frees its place, a write after the finish
// frees nothing, other tenants count on their own, and a create too
// large for one transaction is counted and refused like the others.
func testActiveRuns(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	h.activeLimit = 2
	wantActive := func(tenant string, n int) {
		t.Helper()
		got, err := s.ActiveRuns(h.ctx, tenant)
		if err != nil || got != n {
			t.Fatalf("active runs of %s: %d, %v; want %d", tenant, got, err, n)
		}
	}
	wantActive("tenant-a", 0)
	h.mustStart("r-1", "s-1", config(t, turn("", call("c1", "client/get_calendar", map[string]any{"day": "monday"}))), []any{clientTool("client/get_calendar")}, user("Hi")...)
	h.drive("r-1") // paused on the client tool: still unfinished
	h.mustStart("r-2", "s-2", config(t, turn("Hello.")), nil, user("Hi")...)
	wantActive("tenant-a", 2)

	_, err := h.start("r-3", "s-3", config(t, turn("Hello.")), nil, user("Third")...)
	var tma *core.TooManyActiveError
	if !errors.Is(err, core.ErrTooManyActive) || !errors.As(err, &tma) || tma.Limit != 2 || tma.Tenant != "tenant-a" {
		t.Fatalf("a third run at the limit: got %v, want ErrTooManyActive of tenant-a at 2", err)
	}
	if _, err := s.LoadRun(h.ctx, "r-3"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("the refused run was stored: %v", err)
	}
	wantHead(t, h.head("s-3"), core.SessionHead{NextSeq: 1})
	wantActive("tenant-a", 2)

	other := newHarness(t, s, "tenant-b")
	other.activeLimit = 2
	other.mustStart("r-b1", "s-1", config(t, turn("Hello.")), nil, user("Hi")...)
	wantActive("tenant-b", 1)

	h.drive("r-2")
	if st := h.load("r-2"); st.Status != core.StatusCompleted {
		t.Fatalf("r-2 is %s", st.Status)
	}
	wantActive("tenant-a", 1)
	h.mustStart("r-3", "s-3", config(t, turn("Hello.")), nil, user("Third")...)
	wantActive("tenant-a", 2)
	h.resume("r-1", core.Cancel{Reason: "enough"})
	wantActive("tenant-a", 1)

	// A write after the finish (a failed callback) frees nothing more.
	h.failCallback("r-2", "r-2:3:finished")
	wantActive("tenant-a", 1)

	// Creates of more records than one transaction holds.
	large := make([]string, 120)
	for i := range large {
		large[i] = fmt.Sprintf("message %d", i)
	}
	h.mustStart("r-4", "s-4", config(t, turn("Hello.")), nil, user(large...)...)
	wantActive("tenant-a", 2)
	if _, err := h.start("r-5", "s-5", config(t, turn("Hello.")), nil, user(large...)...); !errors.Is(err, core.ErrTooManyActive) {
		t.Fatalf("a large create at the limit: got %v, want ErrTooManyActive", err)
	}
	if _, err := s.LoadRun(h.ctx, "r-5"); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("the refused large run was stored: %v", err)
	}
	wantHead(t, h.head("s-5"), core.SessionHead{NextSeq: 1})
	if got := h.messages("s-5", 0, 0, 0); len(got) != 0 {
		t.Fatalf("the refused large run left %d messages", len(got))
	}
	wantActive("tenant-a", 2)
	h.drive("r-4")
	h.drive("r-3")
	wantActive("tenant-a", 0)
}

// testTokenBucket checks TakeToken against the token bucket it promises:
// a full bucket gives its burst, then one token per interval, an empty
// bucket says how long until the next, buckets are independent and
// refill while idle.
func testTokenBucket(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	l := core.RateLimit{Rate: 2, Burst: 3}
	take := func(key string, at time.Duration) time.Duration {
		t.Helper()
		wait, err := s.TakeToken(h.ctx, key, t0.Add(at), l)
		if err != nil {
			t.Fatalf("take %s at %v: %v", key, at, err)
		}
		return wait
	}
	for i := range 3 {
		if w := take("tenant#a", 0); w != 0 {
			t.Fatalf("token %d of the burst: wait %v", i+1, w)
		}
	}
	if w := take("tenant#a", 0); w != 500*time.Millisecond {
		t.Fatalf("past the burst: wait %v, want 500ms", w)
	}
	if w := take("tenant#a", 100*time.Millisecond); w != 400*time.Millisecond {
		t.Fatalf("100ms later: wait %v, want 400ms", w)
	}
	if w := take("tenant#b", 0); w != 0 {
		t.Fatalf("another bucket: wait %v", w)
	}
	if w := take("tenant#a", 500*time.Millisecond); w != 0 {
		t.Fatalf("after one interval: wait %v", w)
	}
	if w := take("tenant#a", 500*time.Millisecond); w != 500*time.Millisecond {
		t.Fatalf("right after: wait %v, want 500ms", w)
	}
	for i := range 3 {
		if w := take("tenant#a", 10*time.Second); w != 0 {
			t.Fatalf("token %d after a rest: wait %v", i+1, w)
		}
	}
	if w := take("tenant#a", 10*time.Second); w == 0 {
		t.Fatal("the bucket refilled past its burst")
	}
	if w, err := s.TakeToken(h.ctx, "tenant#a", t0.Add(10*time.Second), core.RateLimit{}); w != 0 || err != nil {
		t.Fatalf("no limit: wait %v, %v", w, err)
	}
}

// testTokenBucketConcurrent takes tokens from one bucket at once: never
// more than the burst is given.
func testTokenBucketConcurrent(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	l := core.RateLimit{Rate: 1, Burst: 5}
	var mu sync.Mutex
	var wg sync.WaitGroup
	taken := 0
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait, err := s.TakeToken(h.ctx, "caller#x", t0, l)
			if err != nil {
				t.Errorf("take: %v", err)
				return
			}
			if wait == 0 {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if taken < 1 || taken > 5 {
		t.Fatalf("%d tokens taken at once from a burst of 5", taken)
	}
}
