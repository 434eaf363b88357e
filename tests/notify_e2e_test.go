//go:build e2e

package tests

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

// notifyReceiver is a local stand-in for an EventBridge rule's target:
// it records the entries baton dev POSTs to --notify-url.
type notifyReceiver struct {
	mu     sync.Mutex
	events []notifyEvent
}

type notifyEvent struct {
	Source     string         `json:"source"`
	DetailType string         `json:"detail-type"`
	Detail     map[string]any `json:"detail"`
}

func (n *notifyReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var e notifyEvent
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	n.events = append(n.events, e)
	n.mu.Unlock()
}

// of returns the run's notifications received so far.
func (n *notifyReceiver) of(runID string) []notifyEvent {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []notifyEvent
	for _, e := range n.events {
		if e.Detail["run_id"] == runID {
			out = append(out, e)
		}
	}
	return out
}

// await waits until the run has n notifications.
func (n *notifyReceiver) await(t *testing.T, runID string, want int) []notifyEvent {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if got := n.of(runID); len(got) >= want {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("run %s: %d notifications, want %d", runID, len(n.of(runID)), want)
	return nil
}

// TestNotificationsEndToEnd: a run that pauses for approval produces
// exactly one paused notification at the --notify-url receiver, with the
// action's redacted preview, then one finished notification after
// accept, on each store.
func TestNotificationsEndToEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) {
		rcv := &notifyReceiver{}
		srv := httptest.NewServer(rcv)
		defer srv.Close()
		d := startDev(t, append(args, "--notify-url", srv.URL+"/events"))
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"mail ann"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"ability/send_email","parameters":{"to":"ann@example.com","password":"hunter2"}}]},{"content":"Sent to Ann."}]}}`)
		v := d.waitStatus(t, id)
		if v["status"] != "approval_required" {
			t.Fatalf("%v", v)
		}
		got := rcv.await(t, id, 1)
		if len(got) != 1 {
			t.Fatalf("notifications after the pause: %+v", got)
		}
		p := got[0]
		if p.Source != "baton" || p.DetailType != "Baton Run Paused" || p.Detail["status"] != "approval_required" || p.Detail["event"] != "paused" ||
			p.Detail["tenant"] != "acme" || p.Detail["agent"] != "e2e" || p.Detail["event_id"] == "" {
			t.Fatalf("paused: %+v", p)
		}
		acts := p.Detail["pending"].(map[string]any)["actions"].([]any)
		act := acts[0].(map[string]any)
		params := act["preview"].(map[string]any)["parameters"].(map[string]any)
		if len(acts) != 1 || act["tool_name"] != "ability/send_email" || params["to"] != "ann@example.com" || params["password"] != "[redacted]" || act["expires_at"] == "" {
			t.Fatalf("paused action: %+v", act)
		}
		if act["action_id"] != pending(v, "actions", "action_id") {
			t.Fatalf("action id %v, view %v", act["action_id"], pending(v, "actions", "action_id"))
		}

		r := d.call(t, "POST", "/v1/runs/"+id+"/approvals/"+act["action_id"].(string), tokAcme, `{"decision":"accept"}`)
		if r.status != 202 {
			t.Fatalf("accept: %d %v", r.status, r.body)
		}
		if v = d.waitStatus(t, id); v["status"] != "completed" {
			t.Fatalf("%v", v)
		}
		got = rcv.await(t, id, 2)
		if len(got) != 2 {
			t.Fatalf("notifications after accept: %+v", got)
		}
		f := got[1]
		if f.DetailType != "Baton Run Finished" || f.Detail["status"] != "completed" || f.Detail["final_content"] != "Sent to Ann." || f.Detail["usage"] == nil || f.Detail["event_id"] == p.Detail["event_id"] {
			t.Fatalf("finished: %+v", f)
		}
	})
}

// TestNotificationSurvivesACrash: baton dev is killed (SIGKILL) after it
// committed a pause and while it is publishing the notification; a new
// baton dev on the same table delivers it once its sweeper runs, with
// the same event id. Needs the emulators: embedded stores do not survive
// a restart.
func TestNotificationSurvivesACrash(t *testing.T) {
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") == "" || os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("needs baton dev on the emulators: embedded stores do not survive a restart by design")
	}
	var (
		mu       sync.Mutex
		received []notifyEvent
		crashed  = make(chan struct{})
		first    = make(chan struct{}, 1)
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e notifyEvent
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		received = append(received, e)
		n := len(received)
		mu.Unlock()
		if n == 1 {
			// The first delivery never completes: baton dev is killed
			// while it waits for this answer.
			first <- struct{}{}
			<-crashed
			http.Error(w, "gone", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	defer close(crashed)
	args := append(devArgs(t), "--notify-url", srv.URL+"/events")
	d := startDev(t, args)
	id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"mail ann"}],"model":{"provider":"scripted","turns":[
		{"tool_calls":[{"id":"c1","name":"ability/send_email","parameters":{"to":"ann@example.com"}}]},{"content":"Sent."}]}}`)
	select {
	case <-first:
	case <-time.After(time.Minute):
		t.Fatal("no notification was attempted")
	}
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()

	d2 := startDev(t, args)
	defer d2.stop(t)
	deadline := time.Now().Add(90 * time.Second)
	for {
		mu.Lock()
		n := len(received)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	got := append([]notifyEvent(nil), received...)
	mu.Unlock()
	if len(got) != 2 || got[0].Detail["run_id"] != id || got[1].Detail["event_id"] != got[0].Detail["event_id"] || got[1].DetailType != "Baton Run Paused" {
		t.Fatalf("deliveries %+v", got)
	}
	// The crash lost nothing of the run either.
	if v := d2.waitStatus(t, id); v["status"] != "approval_required" {
		t.Fatalf("%v", v)
	}
}
