package durable

import "time"

// SetHeartbeatTimer replaces the timer that paces a step's heartbeats.
func SetHeartbeatTimer(e *Runner, after func(time.Duration) <-chan time.Time) { e.after = after }

// SetChangesClock replaces the clock that ages c's waiting channels.
func SetChangesClock(c *Changes, now func() time.Time) { c.now = now }
