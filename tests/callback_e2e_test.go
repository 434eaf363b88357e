//go:build e2e

package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/toolsig"
)

const e2eCallbackSecret = "e2e-callback-secret-42"

// callbackPost is one signed POST the callback receiver verified.
type callbackPost struct {
	key    string
	detail map[string]any
}

// callbackReceiver is a run callback's endpoint: it verifies each POST's
// signature with toolsig and records it.
type callbackReceiver struct {
	t     *testing.T
	mu    sync.Mutex
	posts []callbackPost
}

func (c *callbackReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := toolsig.Verify([]byte(e2eCallbackSecret), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), body, time.Now()); err != nil {
		c.t.Errorf("callback signature: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var d map[string]any
	if err := json.Unmarshal(body, &d); err != nil {
		c.t.Errorf("callback body: %v", err)
	}
	c.mu.Lock()
	c.posts = append(c.posts, callbackPost{key: r.Header.Get(toolsig.HeaderIdempotencyKey), detail: d})
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// await waits until the receiver holds n posts and returns them.
func (c *callbackReceiver) await(t *testing.T, n int) []callbackPost {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		got := slices.Clone(c.posts)
		c.mu.Unlock()
		if len(got) >= n {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%d callback posts, want %d", len(c.posts), n)
	return nil
}

// callbackAgents writes an agents file: testdata's agents plus "hooked",
// the e2e agent with a callback to url.
func callbackAgents(t *testing.T, url string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/agents.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Agents []map[string]any `json:"agents"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.Agents {
		if a["slug"] == "e2e" {
			h := map[string]any{}
			for k, v := range a {
				h[k] = v
			}
			h["slug"] = "hooked"
			h["callback"] = map[string]any{"url": url, "secret_env": "E2E_CALLBACK_SECRET", "events": []string{"paused", "finished"}}
			f.Agents = append(f.Agents, h)
			break
		}
	}
	path := filepath.Join(t.TempDir(), "agents.json")
	out, _ := json.Marshal(f)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCallbackEndToEnd: a run of an agent with a callback that pauses for
// approval gets exactly one signed paused POST (Idempotency-Key = the
// event id, the action's preview redacted), then one finished POST after
// accept, on each store; a caller's callback to an agent that does not
// allow it is a 400 override_not_allowed.
func TestCallbackEndToEnd(t *testing.T) {
	t.Setenv("E2E_CALLBACK_SECRET", e2eCallbackSecret)
	eachStore(t, func(t *testing.T, args []string) {
		rcv := &callbackReceiver{t: t}
		srv := httptest.NewServer(rcv)
		defer srv.Close()
		args = slices.Clone(args)
		args[slices.Index(args, "--agents")+1] = callbackAgents(t, srv.URL+"/hook")
		d := startDev(t, args)

		r := d.call(t, "POST", "/v1/runs", tokAcme, `{"agent":"hooked","messages":[{"role":"user","content":"hi"}],"callback":{"url":"https://hooks.example.com/x"}}`)
		if r.status != 400 || r.body["error"].(map[string]any)["code"] != "override_not_allowed" {
			t.Fatalf("caller callback: %d %v", r.status, r.body)
		}

		id := start(t, d, `{"agent":"hooked","messages":[{"role":"user","content":"mail ann"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"ability/send_email","parameters":{"to":"ann@example.com","password":"hunter2"}}]},{"content":"Sent to Ann."}]}}`)
		if v := d.waitStatus(t, id); v["status"] != "approval_required" {
			t.Fatalf("%v", v)
		}
		got := rcv.await(t, 1)
		p := got[0].detail
		if len(got) != 1 || p["event"] != "paused" || p["run_id"] != id || p["status"] != "approval_required" || got[0].key != p["event_id"] {
			t.Fatalf("paused posts: %+v", got)
		}
		act := p["pending"].(map[string]any)["actions"].([]any)[0].(map[string]any)
		params := act["preview"].(map[string]any)["parameters"].(map[string]any)
		if params["to"] != "ann@example.com" || params["password"] != "[redacted]" {
			t.Fatalf("paused action: %+v", act)
		}

		r = d.call(t, "POST", "/v1/runs/"+id+"/approvals/"+act["action_id"].(string), tokAcme, `{"decision":"accept"}`)
		if r.status != 202 {
			t.Fatalf("accept: %d %v", r.status, r.body)
		}
		if v := d.waitStatus(t, id); v["status"] != "completed" {
			t.Fatalf("%v", v)
		}
		got = rcv.await(t, 2)
		f := got[1].detail
		if len(got) != 2 || f["event"] != "finished" || f["final_content"] != "Sent to Ann." || got[1].key != f["event_id"] || got[1].key == got[0].key {
			t.Fatalf("posts after accept: %+v", got)
		}
	})
}
