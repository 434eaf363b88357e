//go:build e2e

package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOpenPendingCap: on each store, a model turn asks 100 client-tool
// calls at once. The run opens 64 requests (core.MaxOpenPending) and
// gives each call beyond a too_many_pending result, so every commit fits
// DynamoDB's transaction (without the cap, a commit holding more than 94
// open items was refused by the store, and its step retried until it was
// dead-lettered); once the 64 are answered the run completes with a
// result for every call.
func TestOpenPendingCap(t *testing.T) {
	const calls, open = 100, 64
	eachStore(t, func(t *testing.T, args []string) {
		d := startDev(t, args)
		var cs []string
		for i := 1; i <= calls; i++ {
			cs = append(cs, fmt.Sprintf(`{"id":"c%d","name":"client/get_calendar","parameters":{"day":"d%d"}}`, i, i))
		}
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"plan"}],"parallel_tool_calls":true,`+clientTools+`,
			"model":{"provider":"scripted","turns":[{"tool_calls":[`+strings.Join(cs, ",")+`]},{"content":"All answered."}]}}`)

		// Every call is mediated: 64 open requests, the rest answered.
		var reqs []any
		deadline := time.Now().Add(90 * time.Second)
		for {
			v := d.call(t, "GET", "/v1/runs/"+id, tokAcme, "").body
			reqs, _ = v["pending"].(map[string]any)["tool_requests"].([]any)
			if v["status"] == "runtime_tool_pending" && len(reqs) == open {
				break
			}
			if len(reqs) > open || time.Now().After(deadline) {
				t.Fatalf("status %v with %d open requests, want runtime_tool_pending with %d", v["status"], len(reqs), open)
			}
			time.Sleep(200 * time.Millisecond)
		}
		for _, r := range reqs {
			req := r.(map[string]any)["request_id"].(string)
			if r := d.call(t, "POST", "/v1/runs/"+id+"/tool-results", tokAcme, `{"request_id":"`+req+`","success":true,"result":"free"}`); r.status != 202 {
				t.Fatalf("submit %s: %d %v", req, r.status, r.body)
			}
		}
		v := d.waitStatus(t, id)
		if v["status"] != "completed" || result(v)["final_content"] != "All answered." {
			t.Fatalf("run ended %v: %v", v["status"], v["error"])
		}
		answered, refused := 0, 0
		for id, m := range checkPaired(t, transcript(t, d, id)) {
			switch c, _ := m["content"].(string); {
			case c == "free":
				answered++
			case strings.Contains(c, "approvals and client-tool requests waiting, the most it may have open at once"):
				refused++
			default:
				t.Errorf("call %s: unexpected tool result %q", id, c)
			}
		}
		if answered != open || refused != calls-open {
			t.Fatalf("%d answered and %d refused tool results, want %d and %d", answered, refused, open, calls-open)
		}
	})
}
