package wait

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx is done, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Poll calls check until it reports done, the wait is over or ctx is
// done, sleeping between calls from first, doubling up to max. check
// runs at least once; its error ends the poll. Poll returns whether check
// reported done.
func Poll(ctx context.Context, wait, first, max time.Duration, check func() (bool, error)) (bool, error) {
	deadline := time.Now().Add(wait)
	delay := first
	for {
		done, err := check()
		if err != nil || done {
			return done, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		if err := Sleep(ctx, min(delay, left)); err != nil {
			return false, nil
		}
		delay = min(delay*2, max)
	}
}
