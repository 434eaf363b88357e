//go:build e2e

package tests

import (
	"strconv"
	"testing"
	"time"
)

// TestLimitsEndToEnd: on baton dev with per-tenant limits, a tenant past
// its burst gets 429 rate_limited with Retry-After and is served again
// after waiting that long; another tenant is not affected. With an
// active-run cap, the next run is refused with 429 too_many_active_runs
// while one is paused, and starts once it finished.
func TestLimitsEndToEnd(t *testing.T) { eachStore(t, limitsEndToEnd) }

func limitsEndToEnd(t *testing.T, args []string) {
	t.Run("rate", func(t *testing.T) {
		d := startDev(t, append(append([]string(nil), args...), "--tenant-rate", "1/s", "--tenant-burst", "3"))
		var limited resp
		for i := 0; i < 20; i++ {
			r := d.call(t, "GET", "/v1/runs", tokGlobex, "")
			if r.status == 429 {
				limited = r
				break
			}
			if r.status != 200 {
				t.Fatalf("request %d: %d %v", i+1, r.status, r.body)
			}
			if i >= 5 {
				t.Fatalf("request %d served past a burst of 3 at 1/s", i+1)
			}
		}
		if errCode(limited) != "rate_limited" || limited.header.Get("Retry-After") == "" {
			t.Fatalf("past the burst: %d %v Retry-After %q", limited.status, limited.body, limited.header.Get("Retry-After"))
		}
		if r := d.call(t, "GET", "/v1/runs", tokAcme, ""); r.status != 200 {
			t.Fatalf("another tenant: %d %v", r.status, r.body)
		}
		secs, err := strconv.Atoi(limited.header.Get("Retry-After"))
		if err != nil || secs < 1 {
			t.Fatalf("Retry-After %q", limited.header.Get("Retry-After"))
		}
		time.Sleep(time.Duration(secs) * time.Second)
		if r := d.call(t, "GET", "/v1/runs", tokGlobex, ""); r.status != 200 {
			t.Fatalf("after Retry-After: %d %v", r.status, r.body)
		}
	})
	t.Run("active_runs", func(t *testing.T) {
		d := startDev(t, append(append([]string(nil), args...), "--tenant-max-active", "1"))
		paused := `{"agent":"e2e","messages":[{"role":"user","content":"look it up"}],
		  "tools":[{"name":"client/lookup","description":"Look up.","parameters":{"type":"object"}}],
		  "model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"c1","name":"client/lookup","parameters":{}}]},{"content":"Done."}]}}`
		first := start(t, d, paused)
		if v := d.waitStatus(t, first); v["status"] != "runtime_tool_pending" {
			t.Fatalf("first run: %v", v["status"])
		}
		plain := `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"Hello."}]}}`
		r := d.call(t, "POST", "/v1/runs", tokAcme, plain)
		if r.status != 429 || errCode(r) != "too_many_active_runs" {
			t.Fatalf("second run at the cap: %d %v", r.status, r.body)
		}
		if r := d.call(t, "POST", "/v1/runs", tokGlobex, plain); r.status != 202 {
			t.Fatalf("another tenant: %d %v", r.status, r.body)
		}
		if r := d.call(t, "POST", "/v1/runs/"+first+"/cancel", tokAcme, `{}`); r.status/100 != 2 || r.body["status"] != "cancelled" {
			t.Fatalf("cancel: %d %v", r.status, r.body)
		}
		second := start(t, d, plain)
		if v := d.waitStatus(t, second); v["status"] != "completed" {
			t.Fatalf("second run after the first finished: %v", v)
		}
		if r := d.call(t, "POST", "/v1/runs", tokAcme, plain); r.status != 202 {
			t.Fatalf("a third run after the second completed: %d %v", r.status, r.body)
		}
	})
}
