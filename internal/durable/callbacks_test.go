package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/notify"
	"github.com/baton-agents/baton/toolsig"
)

const callbackSecret = "cb-secret-0123456789"

// post is one request the callback receiver got.
type post struct {
	key    string
	status int
	body   []byte
}

// receiver is a callback endpoint that verifies each request's
// signature with toolsig and answers status(n) to the n-th request
// (0-based).
type receiver struct {
	t      *testing.T
	mu     sync.Mutex
	posts  []post
	status func(n int) int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := toolsig.Verify([]byte(callbackSecret), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), body, time.Now()); err != nil {
		rc.t.Errorf("callback signature: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	rc.mu.Lock()
	status := http.StatusNoContent
	if rc.status != nil {
		status = rc.status(len(rc.posts))
	}
	rc.posts = append(rc.posts, post{key: r.Header.Get(toolsig.HeaderIdempotencyKey), status: status, body: body})
	rc.mu.Unlock()
	w.WriteHeader(status)
}

func (rc *receiver) got() []post {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]post(nil), rc.posts...)
}

// withCallbacks rebuilds h's runner with a callback sender whose every
// request reaches rc (whatever the URL's host), giving up after attempts.
func withCallbacks(t *testing.T, h *harness, rc *receiver, attempts int) {
	t.Helper()
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}}
	remote := executors.NewRemote(executors.Options{HTTPClient: client, Getenv: func(k string) string {
		if k == "CALLBACK_SECRET" {
			return callbackSecret
		}
		return ""
	}})
	wh, err := notify.NewWebhooks(context.Background(), remote, h.eng.Agents.CallbackSigners(), nil)
	if err != nil {
		t.Fatal(err)
	}
	h.opts.Callbacks = wh
	h.opts.Limits.CallbackAttempts = attempts
	h.eng = durable.New(h.opts)
}

func withCallback(req *durable.StartRequest) {
	req.Overrides.Callback = &agents.CallbackRequest{URL: "http://hooks.example.com/baton", Events: []string{"paused", "finished"}}
}

var emailCall = call("c1", "ability/send_email", map[string]any{"to": "a@example.com", "api_key": "sk-secret"})

// A run paused for approval, then finished after accept, gets exactly one
// signed POST per event, its body the notification's detail and its
// Idempotency-Key the event id.
func TestCallbackPausedThenFinished(t *testing.T) {
	h := newHarness(t, nil)
	rc := &receiver{t: t}
	withCallbacks(t, h, rc, 3)
	id := h.start(t, scripted(turn("", emailCall), turn("Sent it.")), withCallback)
	h.pump(t)
	h.decide(t, id, "accept")
	h.pump(t)
	got := rc.got()
	bus := h.notes.sent()
	if len(got) != 2 || len(bus) != 2 {
		t.Fatalf("posts %d, bus notifications %d", len(got), len(bus))
	}
	for i, ev := range []string{"paused", "finished"} {
		d := detail(t, bus[i])
		if d.Event != ev || got[i].key != d.EventID || string(got[i].body) != string(bus[i].Detail) {
			t.Fatalf("post %d: key %q body %s, want the %s notification %s", i, got[i].key, got[i].body, ev, bus[i].Detail)
		}
	}
	if !strings.Contains(string(got[0].body), core.RedactedValue) || strings.Contains(string(got[0].body), "sk-secret") {
		t.Fatalf("paused body not redacted: %s", got[0].body)
	}
	if un := h.unsent(t); len(un) != 0 {
		t.Fatalf("unsent after delivery: %+v", un)
	}
	// The sweeper sends nothing again.
	h.clock.T = h.clock.T.Add(time.Hour)
	if _, err := h.eng.Sweep(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.got()); n != 2 {
		t.Fatalf("posts after a sweep: %d", n)
	}
}

// A failed POST is sent again by the sweeper after the back-off, with the
// same Idempotency-Key and body.
func TestCallbackRetry(t *testing.T) {
	h := newHarness(t, nil)
	rc := &receiver{t: t, status: func(n int) int {
		if n == 0 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}}
	withCallbacks(t, h, rc, 3)
	h.start(t, scripted(turn("", emailCall), turn("Sent it.")), withCallback)
	h.pump(t)
	un := h.unsent(t)
	if len(rc.got()) != 1 || len(un) != 1 || un[0].Callback == nil || un[0].Callback.Attempts != 1 || un[0].Callback.LastStatus != 503 {
		t.Fatalf("after a failed POST: posts %d, unsent %+v", len(rc.got()), un)
	}
	// Not before the back-off.
	if _, err := h.eng.Sweep(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.got()); n != 1 {
		t.Fatalf("posts before the back-off: %d", n)
	}
	h.clock.T = h.clock.T.Add(time.Minute)
	if _, err := h.eng.Sweep(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	got := rc.got()
	// The stored record is canonical JSON: the same detail, keys sorted.
	if len(got) != 2 || got[1].key != got[0].key || !sameJSON(got[1].body, got[0].body) || !strings.HasSuffix(got[0].key, ":paused") {
		t.Fatalf("retry: %+v", got)
	}
	if un := h.unsent(t); len(un) != 0 {
		t.Fatalf("unsent after the retry: %+v", un)
	}
}

// A receiver that keeps failing gets CallbackAttempts POSTs; then the run
// gets a callback_failed event (no secret in it) and the record leaves
// the unsent list. A finished run gets its event too.
func TestCallbackGivesUp(t *testing.T) {
	h := newHarness(t, nil)
	rc := &receiver{t: t, status: func(int) int { return http.StatusInternalServerError }}
	withCallbacks(t, h, rc, 3)
	id := h.start(t, scripted(turn("Done.")), withCallback)
	h.pump(t)
	for i := 0; i < 5; i++ {
		h.clock.T = h.clock.T.Add(2 * time.Hour)
		if _, err := h.eng.Sweep(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	}
	got := rc.got()
	if len(got) != 3 {
		t.Fatalf("posts: %d, want 3", len(got))
	}
	if un := h.unsent(t); len(un) != 0 {
		t.Fatalf("unsent after giving up: %+v", un)
	}
	evs, err := h.eng.Events(context.Background(), "acme", id, 0, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	var failed []core.Event
	for _, e := range evs {
		if e.Type == core.EventCallbackFailed {
			failed = append(failed, e)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("callback_failed events: %+v", failed)
	}
	b, _ := json.Marshal(failed[0].Data)
	d := failed[0].Fields()
	if d["event_id"] != got[0].key || d["event"] != "finished" || fmt.Sprint(d["attempts"]) != "3" || fmt.Sprint(d["last_status"]) != "500" || strings.Contains(string(b), callbackSecret) {
		t.Fatalf("callback_failed: %s", b)
	}
	rec, err := h.eng.Get(context.Background(), "acme", id)
	if err != nil || rec.State.Status != core.StatusCompleted {
		t.Fatalf("run after giving up: %v %v", rec.State.Status, err)
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
