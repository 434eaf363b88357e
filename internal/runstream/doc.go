// Package runstream follows a run live for the streaming edges (the SSE
// stream route in internal/httpapi and the AG-UI route in internal/agui):
// it polls the runner for the run's committed lifecycle events and the
// token deltas of its model turns, hands them to a Sink in the order a
// client must see them, and ends when the run finishes or pauses. It
// keeps no run state of its own: every poll reads the runner.
package runstream
