package httpapi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/httpapi"
)

// TestListRuns: GET /v1/runs lists the tenant's runs newest first, pages
// by next_cursor without repeats, filters by status, never shows another
// tenant's runs, and answers bad queries with 400.
func TestListRuns(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for i := 0; i < 5; i++ {
		e.clock.T = e.clock.T.Add(time.Second)
		st, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", startBody, nil)
		if st != 202 {
			t.Fatalf("start: %d %v", st, v)
		}
		ids = append([]string{v["run_id"].(string)}, ids...)
	}
	e.pump(t)
	if st, _, _ := e.do(t, "POST", "/v1/runs", "tok-globex-1", startBody, nil); st != 202 {
		t.Fatalf("globex start: %d", st)
	}
	var got []string
	cursor := ""
	for page := 0; ; page++ {
		path := "/v1/runs?limit=2"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		st, v, _ := e.do(t, "GET", path, "tok-readonly", "", nil)
		if st != 200 {
			t.Fatalf("page %d: %d %v", page, st, v)
		}
		runs := v["runs"].([]any)
		if len(runs) > 2 {
			t.Fatalf("page %d has %d runs", page, len(runs))
		}
		for _, r := range runs {
			m := r.(map[string]any)
			if m["agent"] != "demo" || m["status"] != "completed" || m["session_id"] == "" || m["created_at"] == "" {
				t.Fatalf("entry %v", m)
			}
			got = append(got, m["run_id"].(string))
		}
		next, _ := v["next_cursor"].(string)
		if next == "" {
			if v["next_cursor"] != nil {
				t.Fatalf("next_cursor %v", v["next_cursor"])
			}
			break
		}
		cursor = next
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Fatalf("runs %v, want %v", got, ids)
	}
	if _, v, _ := e.do(t, "GET", "/v1/runs?status=queued", "tok-acme-123", "", nil); len(v["runs"].([]any)) != 0 {
		t.Fatalf("queued runs of acme: %v", v)
	}
	if _, v, _ := e.do(t, "GET", "/v1/runs?status=queued", "tok-globex-1", "", nil); len(v["runs"].([]any)) != 1 {
		t.Fatalf("queued runs of globex: %v", v)
	}
	for _, tc := range []struct{ query, code string }{
		{"status=done", "invalid_query"}, {"limit=0", "invalid_query"}, {"limit=x", "invalid_query"}, {"cursor=bogus", "invalid_cursor"},
		{"cursor=" + core.EncodeRunCursor("2026-01-01T00:00:00.000000000Z#"+strings.Repeat("r", 2000)), "invalid_cursor"},
		{"cursor=" + core.EncodeRunCursor("2026-01-01T00:00:00.000000000Z#r\x00\xff"), "invalid_cursor"},
	} {
		if st, v, _ := e.do(t, "GET", "/v1/runs?"+tc.query, "tok-acme-123", "", nil); st != 400 || code(v) != tc.code {
			t.Fatalf("%s: %d %v, want 400 %s", tc.query, st, v, tc.code)
		}
	}
	if st, v, _ := e.do(t, "GET", "/v1/runs", "", "", nil); st != 401 {
		t.Fatalf("no token: %d %v", st, v)
	}
}

// TestInterrupt: POST /v1/runs/{id}/interrupt ends a paused run
// interrupted with the normalized interrupt in the envelope, closes its
// open call with a failed result, replays under its Idempotency-Key, and
// answers 409 once the run is finished.
func TestInterrupt(t *testing.T) {
	e := newEnv(t)
	body := `{"agent":"demo","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"client/ask","description":"Ask.","parameters":{"type":"object"}}],
	 "model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"c1","name":"client/ask","parameters":{}}]},{"content":"unreachable"}]}}`
	_, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", body, nil)
	id := v["run_id"].(string)
	e.pump(t)
	if st, v, _ := e.do(t, "POST", "/v1/runs/"+id+"/interrupt", "tok-readonly", `{}`, nil); st != 403 {
		t.Fatalf("read-only token: %d %v", st, v)
	}
	if st, v, _ := e.do(t, "POST", "/v1/runs/"+id+"/interrupt", "tok-acme-123", `{"action":"x","bogus":1}`, nil); st != 400 || code(v) != "unknown_field" {
		t.Fatalf("unknown field: %d %v", st, v)
	}
	if st, v, _ := e.do(t, "POST", "/v1/runs/"+id+"/interrupt", "tok-globex-1", `{}`, nil); st != 404 {
		t.Fatalf("other tenant: %d %v", st, v)
	}
	key := map[string]string{"Idempotency-Key": "int-1"}
	ibody := `{"action":"handoff","metadata":{"source":"pager","n":2}}`
	st, v, first := e.do(t, "POST", "/v1/runs/"+id+"/interrupt", "tok-acme-123", ibody, key)
	if st != 202 || v["status"] != "interrupted" {
		t.Fatalf("interrupt: %d %v", st, v)
	}
	res := v["result"].(map[string]any)
	if fmt.Sprint(res["interrupted"]) != "map[action:handoff n:2 reason:interrupted source:pager]" || res["completed"] != false || res["status"] != "interrupted" {
		t.Fatalf("envelope: %v", res)
	}
	msgs := res["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "tool_result" {
		t.Fatalf("the open call was not closed: %v", last)
	}
	_, _, again := e.do(t, "POST", "/v1/runs/"+id+"/interrupt", "tok-acme-123", ibody, key)
	if again.Body != first.Body || again.Headers["Idempotent-Replayed"] != "true" {
		t.Fatalf("replay: %v", again)
	}
	if st, v, _ := e.do(t, "POST", "/v1/runs/"+id+"/interrupt", "tok-acme-123", ``, nil); st != 409 || code(v) != "run_finished" {
		t.Fatalf("finished: %d %v", st, v)
	}
}

// TestRoutePath: the route of a proxy request is its resource with the
// path parameters put in, so a custom domain's base path never reaches
// the router.
func TestRoutePath(t *testing.T) {
	for _, tc := range []struct {
		name, resource, path string
		params               map[string]string
		want                 string
	}{
		{"no resource", "", "/v1/runs", nil, "/v1/runs"},
		{"base path, plain resource", "/v1/runs", "/agents/v1/runs", nil, "/v1/runs"},
		{"base path, greedy", "/v1/{proxy+}", "/agents/v1/runs/r-1/cancel", map[string]string{"proxy": "runs/r-1/cancel"}, "/v1/runs/r-1/cancel"},
		{"base path, run and greedy", "/v1/runs/{run_id}/{proxy+}", "/a/b/v1/runs/r-1/approvals/x", map[string]string{"run_id": "r-1", "proxy": "approvals/x"}, "/v1/runs/r-1/approvals/x"},
		{"missing parameter", "/v1/runs/{run_id}", "/v1/runs/r-2", nil, "/v1/runs/r-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := httpapi.RoutePath(events.APIGatewayProxyRequest{Resource: tc.resource, Path: tc.path, PathParameters: tc.params})
			if got != tc.want {
				t.Fatalf("route %q, want %q", got, tc.want)
			}
		})
	}
}

// TestListRunsEntries: a list entry carries the run's title, turns,
// tokens, end and reason; agent, time, top-level and parent filter it;
// the answer's ETag makes an unchanged page a 304 without a body, and a
// changed one a 200 with another ETag.
func TestListRunsEntries(t *testing.T) {
	e := newEnv(t)
	body := `{"agent":"demo","messages":[{"role":"user","content":"Find  the\nrecords"}],"tools":[{"name":"client/ask","description":"Ask.","parameters":{"type":"object"}}],
	 "model":{"provider":"scripted","turns":[{"tool_calls":[{"id":"c1","name":"client/ask","parameters":{}}]},{"content":"unreachable"}]}}`
	_, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", body, nil)
	paused := v["run_id"].(string)
	e.pump(t)
	if st, v, _ := e.do(t, "POST", "/v1/runs/"+paused+"/interrupt", "tok-acme-123", `{"action":"handoff","reason":"a person takes over"}`, nil); st != 202 {
		t.Fatalf("interrupt: %d %v", st, v)
	}
	e.clock.T = e.clock.T.Add(time.Minute)
	_, v, _ = e.do(t, "POST", "/v1/runs", "tok-acme-123", startBody, nil)
	done := v["run_id"].(string)
	e.pump(t)

	st, v, first := e.do(t, "GET", "/v1/runs", "tok-acme-123", "", nil)
	runs := v["runs"].([]any)
	if st != 200 || len(runs) != 2 {
		t.Fatalf("list: %d %v", st, v)
	}
	ended, intr := runs[0].(map[string]any), runs[1].(map[string]any)
	if ended["run_id"] != done || ended["title"] != "hi" || ended["turns"] != 1.0 || ended["ended_at"] == nil || ended["reason"] != nil || ended["parent"] != nil {
		t.Fatalf("the completed run's entry %v", ended)
	}
	if v, _ := ended["agent_version"].(string); !strings.HasPrefix(v, "av_") {
		t.Fatalf("no agent_version: %v", ended)
	}
	if _, ok := ended["total_tokens"].(float64); !ok {
		t.Fatalf("no total_tokens: %v", ended)
	}
	if intr["run_id"] != paused || intr["title"] != "Find the records" || intr["status"] != "interrupted" || intr["reason"] != "a person takes over" {
		t.Fatalf("the interrupted run's entry %v", intr)
	}

	// Conditional reads.
	etag := first.Headers["ETag"]
	if !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
		t.Fatalf("ETag %q", etag)
	}
	st, _, again := e.do(t, "GET", "/v1/runs", "tok-acme-123", "", map[string]string{"If-None-Match": etag})
	if st != 304 || again.Body != "" || again.Headers["ETag"] != etag {
		t.Fatalf("unchanged page: %d %q %v", st, again.Body, again.Headers)
	}
	if st, _, _ := e.do(t, "GET", "/v1/runs", "tok-acme-123", "", map[string]string{"If-None-Match": `W/"other", ` + etag}); st != 304 {
		t.Fatalf("a list of tags naming it: %d", st)
	}
	if st, _, _ := e.do(t, "GET", "/v1/runs?limit=1", "tok-acme-123", "", map[string]string{"If-None-Match": etag}); st != 200 {
		t.Fatalf("another page with the first page's tag: %d", st)
	}
	e.do(t, "POST", "/v1/runs", "tok-acme-123", startBody, nil)
	st, _, changed := e.do(t, "GET", "/v1/runs", "tok-acme-123", "", map[string]string{"If-None-Match": etag})
	if st != 200 || changed.Headers["ETag"] == etag || changed.Body == first.Body {
		t.Fatalf("changed page: %d %v", st, changed.Headers)
	}

	// Filters.
	since := e.clock.T.Format(time.RFC3339)
	for query, want := range map[string]int{
		"agent=demo": 3, "agent=locked": 0, "since=" + since: 2, "until=" + since: 1, "top_level=true": 3, "top_level=false": 3, "parent=" + done: 0,
	} {
		st, v, _ := e.do(t, "GET", "/v1/runs?"+query, "tok-acme-123", "", nil)
		if st != 200 || len(v["runs"].([]any)) != want {
			t.Errorf("%s: %d %v, want %d runs", query, st, v, want)
		}
	}
	for query, want := range map[string]int{
		"since=yesterday": 400, "until=2026-13-01T00:00:00Z": 400, "top_level=yes": 400, "top_level=true&parent=" + done: 400,
		"parent=r-nope": 404,
	} {
		if st, v, _ := e.do(t, "GET", "/v1/runs?"+query, "tok-acme-123", "", nil); st != want {
			t.Errorf("%s: %d %v, want %d", query, st, v, want)
		}
	}
	if st, v, _ := e.do(t, "GET", "/v1/runs?parent="+done, "tok-globex-1", "", nil); st != 404 {
		t.Errorf("another tenant's run as parent: %d %v", st, v)
	}
}
