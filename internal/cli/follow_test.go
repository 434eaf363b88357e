package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFollowGivesUpOnEmptyStreams: a server that keeps closing the run's
// stream without an event makes follow pause between reconnects and give
// up after maxEmptyReconnects, instead of reconnecting in a tight loop;
// a stream that brings an event resets the count.
func TestFollowGivesUpOnEmptyStreams(t *testing.T) {
	var pauses []int
	old := reconnectPause
	reconnectPause = func(n int) time.Duration { pauses = append(pauses, n); return time.Millisecond }
	t.Cleanup(func() { reconnectPause = old })
	var streams atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if streams.Add(1) == 3 { // the third stream brings one event
			_, _ = w.Write([]byte("id: 1\nevent: turn_started\ndata: {\"seq\":1,\"type\":\"turn_started\",\"turn\":1,\"data\":{}}\n\n"))
		}
	}))
	defer srv.Close()
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HTTP: srv.Client()}
	c := &client{base: srv.URL, token: "t", http: srv.Client()}
	err := follow(context.Background(), c, env, runView{RunID: "r-1"}, followOptions{noInput: true})
	if err == nil || !strings.Contains(err.Error(), "closed 11 times in a row") {
		t.Fatalf("follow = %v, want it to give up", err)
	}
	// Two empty streams, one with an event (the count restarts), then
	// maxEmptyReconnects+1 empty ones.
	if got := int(streams.Load()); got != 3+maxEmptyReconnects+1 {
		t.Fatalf("%d streams, want %d", got, 3+maxEmptyReconnects+1)
	}
	if len(pauses) != 2+maxEmptyReconnects || pauses[0] != 1 || pauses[1] != 2 || pauses[2] != 1 {
		t.Fatalf("pauses %v", pauses)
	}
}

// TestFollowEndsOnNoContent: a reconnect answered 204 (the run finished
// with nothing after the last event seen) ends the follow with the run
// view read from the API, and its status's exit code.
func TestFollowEndsOnNoContent(t *testing.T) {
	var streams, views atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/runs/r-1/stream":
			if streams.Add(1) == 1 { // the first stream closes after one event
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte("id: 1\nevent: run_started\ndata: {\"seq\":1,\"type\":\"run_started\",\"data\":{}}\n\n"))
				return
			}
			if r.Header.Get("Last-Event-ID") != "1" {
				t.Errorf("reconnect with Last-Event-ID %q", r.Header.Get("Last-Event-ID"))
			}
			w.WriteHeader(http.StatusNoContent)
		case "/v1/runs/r-1":
			views.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"run_id":"r-1","status":"completed","result":{"final_content":"Done."}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, HTTP: srv.Client()}
	c := &client{base: srv.URL, token: "t", http: srv.Client()}
	if err := follow(context.Background(), c, env, runView{RunID: "r-1"}, followOptions{noInput: true}); err != nil {
		t.Fatalf("follow = %v\n%s", err, out.String())
	}
	if streams.Load() != 2 || views.Load() != 1 || !strings.Contains(out.String(), "completed") {
		t.Fatalf("%d streams, %d views; output:\n%s", streams.Load(), views.Load(), out.String())
	}
}

// TestLoginChecksTheToken: login saves a profile only when the API
// accepts the token.
func TestLoginChecksTheToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer good-token-1" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":"unauthorized","message":"the token is not valid"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"runs":[],"next_cursor":null}`))
	}))
	defer srv.Close()
	home := t.TempDir()
	env, out, errOut := testEnv(map[string]string{"HOME": home})
	env.HTTP = srv.Client()
	if code := Main(context.Background(), []string{"login", "--url", srv.URL, "--token", "bad-token-1"}, env); code != ExitError || !strings.Contains(errOut.String(), "refused the token, nothing saved: unauthorized") {
		t.Fatalf("a refused token: exit %d, %q", code, errOut.String())
	}
	if _, err := env.readProfile(); err == nil {
		if p, _ := env.readProfile(); p.Token != "" {
			t.Fatalf("a refused token was saved: %+v", p)
		}
	}
	if code := Main(context.Background(), []string{"login", "--url", srv.URL, "--token", "good-token-1"}, env); code != ExitOK || !strings.Contains(out.String(), "saved") {
		t.Fatalf("a good token: exit %d, %q %q", code, out.String(), errOut.String())
	}
	if p, err := env.readProfile(); err != nil || p.Token != "good-token-1" {
		t.Fatalf("profile %+v %v", p, err)
	}
}
