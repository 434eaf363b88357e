// Package runtimetest is a fake Lambda Runtime API on 127.0.0.1, for the
// tests of the runtime loop (internal/lambdastream) and of the built API
// function (functions/api): it hands out invocations on GET …/next and
// records what the function posts back to …/{id}/response or …/{id}/error,
// streamed responses included.
package runtimetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Posted is what the function sent for one invocation.
type Posted struct {
	ID, Kind string // Kind: response or error
	Header   http.Header
	Chunked  bool
	Body     []byte
	Trailer  http.Header
}

// Runtime is the fake Runtime API.
type Runtime struct {
	srv     *httptest.Server
	events  chan invocation
	results chan Posted
	closed  chan struct{}
	// ReadBody reads a posted body (default io.ReadAll); tests replace it
	// to watch a streamed body arrive.
	ReadBody func(id string, r io.Reader) ([]byte, error)

	mu sync.Mutex
	n  int
}

type invocation struct {
	id       string
	deadline time.Time
	payload  []byte
}

// New starts a Runtime, stopped when the test ends.
func New(t *testing.T) *Runtime {
	t.Helper()
	f := &Runtime{events: make(chan invocation, 10), results: make(chan Posted, 10), closed: make(chan struct{}),
		ReadBody: func(_ string, r io.Reader) ([]byte, error) { return io.ReadAll(r) }}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() { close(f.closed); f.srv.Close() })
	return f
}

// Addr is the value of AWS_LAMBDA_RUNTIME_API.
func (f *Runtime) Addr() string { return strings.TrimPrefix(f.srv.URL, "http://") }

func (f *Runtime) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/2018-06-01/runtime/invocation/")
	switch {
	case !ok:
		http.NotFound(w, r)
	case r.Method == http.MethodGet && rest == "next":
		select {
		case inv := <-f.events:
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:baton-api")
			w.Header().Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
			_, _ = w.Write(inv.payload)
		case <-f.closed:
			http.Error(w, "closed", http.StatusGone)
		case <-r.Context().Done():
		}
	case r.Method == http.MethodPost:
		id, kind, _ := strings.Cut(rest, "/")
		body, err := f.ReadBody(id, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		f.results <- Posted{ID: id, Kind: kind, Header: r.Header.Clone(), Chunked: len(r.TransferEncoding) == 1 && r.TransferEncoding[0] == "chunked",
			Body: body, Trailer: r.Trailer.Clone()}
	default:
		http.NotFound(w, r)
	}
}

// Invoke hands out payload (bytes, or a value encoded as JSON) with the
// given deadline and returns what the function posted for it. It fails
// the test if gone (may be nil) is closed first — the function exited —
// or no answer comes within two minutes (a safety net, not a timing
// assertion).
func (f *Runtime) Invoke(t *testing.T, payload any, deadline time.Time, gone <-chan struct{}) Posted {
	t.Helper()
	f.mu.Lock()
	f.n++
	id := fmt.Sprintf("req-%d", f.n)
	f.mu.Unlock()
	b, ok := payload.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(payload); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case f.events <- invocation{id: id, deadline: deadline, payload: b}:
	case <-gone:
		t.Fatalf("the function exited before %s", id)
	}
	select {
	case p := <-f.results:
		if p.ID != id {
			t.Fatalf("answer for %s, want %s", p.ID, id)
		}
		return p
	case <-gone:
		t.Fatalf("the function exited before answering %s", id)
	case <-time.After(2 * time.Minute):
		t.Fatalf("no answer to %s", id)
	}
	return Posted{}
}
