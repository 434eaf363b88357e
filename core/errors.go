package core

import (
	"errors"
	"fmt"
)

// Errors shared by core and its adapters. Adapters translate SDK errors
// into these at their boundary.
var (
	ErrNotFound       = errors.New("not found")
	ErrConflict       = errors.New("conflict")
	ErrLockHeld       = errors.New("lock held")
	ErrStaleStep      = errors.New("stale step")
	ErrTerminal       = errors.New("run is finished")
	ErrExpired        = errors.New("pending item expired")
	ErrNothingToApply = errors.New("nothing to apply")
	ErrInvalidInput   = errors.New("invalid input")
	// ErrTooManyActive: the tenant has as many unfinished runs as the
	// write's ActiveLimit allows.
	ErrTooManyActive = errors.New("too many active runs")
)

// TooManyActiveError is ErrTooManyActive with the tenant and its limit.
type TooManyActiveError struct {
	Tenant string
	Limit  int
}

func (e *TooManyActiveError) Error() string {
	return fmt.Sprintf("%v: tenant %s has %d unfinished runs, its limit", ErrTooManyActive, e.Tenant, e.Limit)
}

func (e *TooManyActiveError) Unwrap() error { return ErrTooManyActive }

type retryable struct{ err error }

func (r retryable) Error() string { return r.err.Error() }
func (r retryable) Unwrap() error { return r.err }

// Retryable marks err as transient: the step that saw it may be retried.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return retryable{err}
}

// IsRetryable reports whether err (or an error it wraps) was marked
// Retryable.
func IsRetryable(err error) bool {
	var r retryable
	return errors.As(err, &r)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}
