package providers

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

type sleeps []time.Duration

func (s *sleeps) sleep(_ context.Context, d time.Duration) error { *s = append(*s, d); return nil }

func policy(s *sleeps) RetryPolicy {
	return RetryPolicy{Sleep: s.sleep, Jitter: func(max time.Duration) time.Duration { return max }}
}

func TestDo(t *testing.T) {
	transient := &Error{Provider: "p", Status: 503, Transient: true}
	cases := []struct {
		name      string
		errs      []error
		attempts  int
		retryable bool
		ok        bool
		sleeps    []time.Duration
	}{
		{name: "first try", errs: []error{nil}, attempts: 1, ok: true},
		{name: "transient then ok", errs: []error{transient, transient, nil}, attempts: 3, ok: true,
			sleeps: []time.Duration{500 * time.Millisecond, time.Second}},
		{name: "exhausted", errs: []error{transient, transient, transient, transient}, attempts: 4, retryable: true,
			sleeps: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
		{name: "permanent", errs: []error{&Error{Provider: "p", Status: 400}}, attempts: 1},
		{name: "other error", errs: []error{errors.New("decode")}, attempts: 1},
		{name: "429 insufficient_quota is permanent", errs: []error{&Error{Provider: "p", Status: 429, Code: "insufficient_quota", Transient: true}}, attempts: 1},
		{name: "retry-after honoured", errs: []error{&Error{Provider: "p", Status: 429, Transient: true, RetryAfter: 7 * time.Second}, nil},
			attempts: 2, ok: true, sleeps: []time.Duration{7 * time.Second}},
		{name: "retry-after too long", errs: []error{&Error{Provider: "p", Status: 429, Transient: true, RetryAfter: time.Minute}},
			attempts: 1, retryable: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s sleeps
			i := 0
			var seen []core.ModelRetry
			ctx := core.WithModelRetryObserver(context.Background(), func(r core.ModelRetry) { seen = append(seen, r) })
			n, err := policy(&s).Do(ctx, nil, "p", func(ctx context.Context) error {
				if _, ok := ctx.Deadline(); !ok {
					t.Error("attempt has no deadline")
				}
				e := tc.errs[i]
				i++
				return e
			})
			if n != tc.attempts || i != tc.attempts {
				t.Errorf("attempts %d (ran %d), want %d", n, i, tc.attempts)
			}
			if (err == nil) != tc.ok {
				t.Errorf("err %v, ok want %v", err, tc.ok)
			}
			if core.IsRetryable(err) != tc.retryable {
				t.Errorf("IsRetryable(%v) = %v, want %v", err, core.IsRetryable(err), tc.retryable)
			}
			if len(s) != len(tc.sleeps) {
				t.Fatalf("sleeps %v, want %v", s, tc.sleeps)
			}
			for j := range s {
				if s[j] != tc.sleeps[j] {
					t.Errorf("sleeps %v, want %v", s, tc.sleeps)
				}
			}
			// The observer hears of every wait, before it, with the
			// failed attempt's number, status and code.
			if len(seen) != len(s) {
				t.Fatalf("observer saw %+v, want one per sleep %v", seen, s)
			}
			for j, r := range seen {
				var pe *Error
				errors.As(tc.errs[j], &pe)
				if r.Provider != "p" || r.Attempt != j+1 || r.Status != pe.Status || r.Code != pe.Code || r.Wait != s[j] {
					t.Errorf("retry %d: %+v", j, r)
				}
			}
		})
	}
}

func TestDoBackoffIsCapped(t *testing.T) {
	var s sleeps
	p := policy(&s)
	p.MaxAttempts = 8
	_, _ = p.Do(context.Background(), nil, "p", func(context.Context) error { return &Error{Provider: "p", Status: 500, Transient: true} })
	if s[len(s)-1] != DefaultMaxDelay {
		t.Errorf("last sleep %v, want the cap %v", s[len(s)-1], DefaultMaxDelay)
	}
}

func TestDoFullJitter(t *testing.T) {
	var bounds []time.Duration
	p := RetryPolicy{Sleep: func(context.Context, time.Duration) error { return nil },
		Jitter: func(max time.Duration) time.Duration { bounds = append(bounds, max); return 0 }}
	_, _ = p.Do(context.Background(), nil, "p", func(context.Context) error { return &Error{Provider: "p", Status: 500, Transient: true} })
	if len(bounds) != 3 || bounds[0] != 500*time.Millisecond || bounds[2] != 2*time.Second {
		t.Errorf("jitter bounds %v", bounds)
	}
	d := RetryPolicy{}.WithDefaults()
	for range 100 {
		if j := d.Jitter(time.Second); j < 0 || j > time.Second {
			t.Fatalf("jitter %v out of [0, 1s]", j)
		}
	}
}

func TestDoParentCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var s sleeps
	_, err := policy(&s).Do(ctx, nil, "p", func(context.Context) error {
		cancel()
		return &Error{Provider: "p", Err: context.Canceled, Transient: true}
	})
	if !core.IsRetryable(err) || len(s) != 0 {
		t.Errorf("err %v sleeps %v", err, s)
	}
}

func TestDoDeadlineTooClose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var s sleeps
	n, err := policy(&s).Do(ctx, nil, "p", func(context.Context) error {
		return &Error{Provider: "p", Status: 429, Transient: true, RetryAfter: 5 * time.Second}
	})
	if n != 1 || !core.IsRetryable(err) || !strings.Contains(err.Error(), "no time left") {
		t.Errorf("n %d err %v", n, err)
	}
}

func TestRetryAfter(t *testing.T) {
	cases := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
	}
	for _, tc := range cases {
		if got := RetryAfter(tc.h); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	if got := RetryAfter(http.Header{"Retry-After": {future}}); got < 59*time.Minute {
		t.Errorf("HTTP-date Retry-After = %v", got)
	}
}
