package durable

import "time"

// SetHeartbeatTimer replaces the timer that paces a step's heartbeats.
func SetHeartbeatTimer(e *Runner, after func(time.Duration) <-chan time.Time) { e.after = after }
