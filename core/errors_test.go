package core

import (
	"errors"
	"fmt"
	"testing"
)

// TestRetryable: Retryable marks an error (seen through wrapping) and
// leaves no error as none.
func TestRetryable(t *testing.T) {
	if err := Retryable(nil); err != nil {
		t.Fatalf("Retryable(nil) = %v", err)
	}
	base := errors.New("throttled")
	err := fmt.Errorf("step: %w", Retryable(base))
	if !IsRetryable(err) || !errors.Is(err, base) || err.Error() != "step: throttled" || IsRetryable(base) {
		t.Fatalf("%v: retryable %v, wraps the cause %v", err, IsRetryable(err), errors.Is(err, base))
	}
}
