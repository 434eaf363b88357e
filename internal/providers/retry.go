package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// Retry defaults.
const (
	DefaultMaxAttempts   = 4
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 8 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
	DefaultTimeout       = 120 * time.Second
)

// RetryPolicy bounds the attempts of one model call. The zero value is
// usable: every unset field takes its default.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts, the first included.
	MaxAttempts int
	// BaseDelay and MaxDelay shape the exponential backoff: before retry n
	// the policy sleeps a uniformly random duration in
	// [0, min(MaxDelay, BaseDelay·2^(n-1))] (full jitter).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter caps the Retry-After delay the policy waits for in
	// process; a provider asking for longer ends the in-process retries
	// with a retryable error, and the queue retries the step later.
	MaxRetryAfter time.Duration
	// Timeout bounds each attempt.
	Timeout time.Duration
	// Sleep waits for d or until ctx is done; tests inject a recorder.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a uniformly random duration in [0, max].
	Jitter func(max time.Duration) time.Duration
}

// WithDefaults fills the unset fields.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	if p.Sleep == nil {
		p.Sleep = wait.Sleep
	}
	if p.Jitter == nil {
		p.Jitter = func(max time.Duration) time.Duration {
			if max <= 0 {
				return 0
			}
			return time.Duration(rand.Int64N(int64(max) + 1))
		}
	}
	return p
}

// Do runs op until it succeeds, fails permanently, or the attempts run
// out. Each attempt gets a context bounded by Timeout. An error op returns
// is retried only when it is (or wraps) an *Error marked Transient; any
// other error is returned as is. When the attempts run out, when the
// provider asks to wait longer than MaxRetryAfter, when the backoff would
// outlast ctx's deadline, or when ctx ends, the last error is returned
// wrapped with core.Retryable. Before each wait between attempts Do calls
// the model retry observer ctx carries (core.WithModelRetryObserver) with
// the failed attempt's number, status and code and the wait. An error
// whose code no wait can fix (PermanentCode, such as OpenAI's 429
// insufficient_quota) is returned at once. Do returns the number of
// attempts made.
func (p RetryPolicy) Do(ctx context.Context, log *slog.Logger, provider string, op func(ctx context.Context) error) (int, error) {
	p = p.WithDefaults()
	var last error
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, p.Timeout)
		err := op(actx)
		cancel()
		if err == nil {
			return attempt, nil
		}
		last = err
		if ctx.Err() != nil {
			return attempt, core.Retryable(fmt.Errorf("%s: model call interrupted: %w", provider, err))
		}
		var pe *Error
		if !errors.As(err, &pe) || !pe.Transient || PermanentCode(pe.Code) {
			return attempt, err
		}
		if attempt >= p.MaxAttempts {
			break
		}
		delay := p.Jitter(min(p.MaxDelay, p.BaseDelay<<(attempt-1)))
		if pe.RetryAfter > 0 {
			if pe.RetryAfter > p.MaxRetryAfter {
				return attempt, core.Retryable(fmt.Errorf("%s asked to retry after %s, longer than this process waits: %w", provider, pe.RetryAfter, err))
			}
			delay = pe.RetryAfter
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			return attempt, core.Retryable(fmt.Errorf("%s: no time left to retry: %w", provider, err))
		}
		if log != nil {
			log.WarnContext(ctx, "model call failed; retrying", "provider", provider, "attempt", attempt,
				"status", pe.Status, "code", pe.Code, "request_id", pe.RequestID, "delay", delay.String())
		}
		core.NotifyModelRetry(ctx, core.ModelRetry{Provider: provider, Attempt: attempt, Status: pe.Status, Code: pe.Code, Wait: delay})
		if serr := p.Sleep(ctx, delay); serr != nil {
			return attempt, core.Retryable(fmt.Errorf("%s: model call interrupted: %w", provider, err))
		}
	}
	return p.MaxAttempts, core.Retryable(fmt.Errorf("model call failed after %d attempts: %w", p.MaxAttempts, last))
}

// RetryAfter reads the delay a response asks for from retry-after-ms
// (milliseconds, OpenAI) or Retry-After (seconds or an HTTP date), or
// returns 0.
func RetryAfter(h http.Header) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
