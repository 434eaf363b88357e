//go:build e2e

package tests

import "testing"

// esResult is what tests/agui/eventsource.mjs prints.
type esResult struct {
	Ends          int    `json:"ends"`
	Requests      int    `json:"requests"`
	Statuses      []int  `json:"statuses"`
	ClosedAfterMs *int64 `json:"closedAfterMs"`
	ReadyState    int    `json:"readyState"`
}

// followWithEventSource follows a run's stream with the npm eventsource
// package for at most seconds.
func followWithEventSource(t *testing.T, d *dev, runID string, seconds int) esResult {
	t.Helper()
	var r esResult
	runNode(t, "agui/eventsource.mjs", map[string]any{"url": d.base + "/v1/runs/" + runID + "/stream", "token": tokAcme, "seconds": seconds}, &r)
	return r
}

// TestEventSourceStops: a standard EventSource (npm eventsource) on a
// finished run, and on a paused one, receives end once and stops: its
// reconnect after end gets 204, and it makes no further request.
func TestEventSourceStops(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) {
		d := startDev(t, args)
		done := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"hello"}]}}`)
		paused := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"plan"}],`+clientTools+`,"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"client/get_calendar","parameters":{"day":"monday"}}]},{"content":"Monday is free."}]}}`)
		for name, id := range map[string]string{"finished": done, "paused": paused} {
			t.Run(name, func(t *testing.T) {
				d.waitStatus(t, id)
				r := followWithEventSource(t, d, id, 15)
				if r.Ends != 1 || r.ClosedAfterMs == nil || *r.ClosedAfterMs > 10000 || r.ReadyState != 2 {
					t.Fatalf("want end once and the EventSource closed within 10 s: %+v", r)
				}
				if len(r.Statuses) != 2 || r.Statuses[0] != 200 || r.Statuses[1] != 204 {
					t.Fatalf("want one stream and one reconnect answered 204: %+v", r)
				}
			})
		}
	})
}
