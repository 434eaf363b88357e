package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/internal/providers"
)

var update = flag.Bool("update", false, "rewrite the golden request files in testdata/")

// Exchange is one recorded response.
type Exchange struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    json.RawMessage   `json:"body,omitempty"`
	// Text, when set, is served instead of Body (an HTML error page).
	Text string `json:"text,omitempty"`
	// File, when set, names a file in testdata/ served as the body as
	// it is: a recorded text/event-stream body.
	File string `json:"file,omitempty"`
	// Frames, when set, are served as the body encoded as an AWS event
	// stream (application/vnd.amazon.eventstream).
	Frames []Frame `json:"frames,omitempty"`
	// Truncate cuts this many bytes off the end of the body: a stream
	// whose connection dropped.
	Truncate int `json:"truncate,omitempty"`
	// Golden, when set, names the golden request of this exchange
	// (testdata/<golden>.request.json) instead of the case's.
	Golden string `json:"golden,omitempty"`
}

// Fixture is the content of testdata/<case>.json.
type Fixture struct {
	Comment   string     `json:"comment,omitempty"`
	Exchanges []Exchange `json:"exchanges"`
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Server replays one fixture.
type Server struct {
	URL string

	mu       sync.Mutex
	requests []Request
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Replay starts a server for testdata/<name>.json. Every request's body
// must equal testdata/<name>.request.json; check, when not nil, asserts
// more (path, headers). At the end of the test every exchange must have
// been served.
func Replay(t *testing.T, name string, check func(t *testing.T, r Request)) *Server {
	t.Helper()
	var fx Fixture
	raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	s := &Server{}
	var served int
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := Request{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		n := served
		served++
		s.mu.Unlock()
		if n >= len(fx.Exchanges) {
			t.Errorf("%s: unexpected request %d (the fixture has %d exchanges)", name, n+1, len(fx.Exchanges))
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		ex := fx.Exchanges[n]
		golden := name
		if ex.Golden != "" {
			golden = ex.Golden
		}
		goldenPath := filepath.Join("testdata", golden+".request.json")
		got, err := Canonical(body)
		if err != nil {
			t.Errorf("%s: request %d body is not JSON: %v\n%s", name, n+1, err, body)
		} else if *update && (n == 0 || ex.Golden != "") {
			if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
				t.Errorf("write golden: %v", err)
			}
		} else if want, err := os.ReadFile(goldenPath); err != nil {
			t.Errorf("%s: read golden request (run with -update to create it): %v", name, err)
		} else if wantC, err := Canonical(want); err != nil {
			t.Errorf("%s: golden request is not JSON: %v", name, err)
		} else if !bytes.Equal(got, wantC) {
			t.Errorf("%s: request %d body differs from %s (run with -update to accept)\n got: %s\nwant: %s", name, n+1, goldenPath, got, wantC)
		}
		if r.Method != http.MethodPost {
			t.Errorf("%s: method %s, want POST", name, r.Method)
		}
		if check != nil {
			check(t, req)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		for k, v := range ex.Headers {
			w.Header().Set(k, v)
		}
		payload, err := ex.payload()
		if err != nil {
			t.Errorf("%s: exchange %d: %v", name, n+1, err)
		}
		w.WriteHeader(ex.Status)
		_, _ = w.Write(payload)
	})
	srv := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if served < len(fx.Exchanges) && !t.Failed() {
			t.Errorf("%s: %d of %d exchanges were served", name, served, len(fx.Exchanges))
		}
	})
	s.URL = srv.URL
	return s
}

// payload is the body the exchange serves.
func (ex Exchange) payload() ([]byte, error) {
	var b []byte
	var err error
	switch {
	case ex.Text != "":
		b = []byte(ex.Text)
	case ex.File != "":
		b, err = os.ReadFile(filepath.Join("testdata", ex.File))
	case len(ex.Frames) > 0:
		b, err = EncodeFrames(ex.Frames)
	default:
		b = ex.Body
	}
	if err != nil {
		return nil, err
	}
	if ex.Truncate > len(b) {
		return nil, fmt.Errorf("truncate %d bytes of a %d-byte body", ex.Truncate, len(b))
	}
	return b[:len(b)-ex.Truncate], nil
}

// Canonical re-encodes JSON with sorted keys and two-space indentation,
// keeping numbers as written.
func Canonical(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Sleeps records the backoff delays of a retry policy instead of
// sleeping.
type Sleeps struct {
	mu sync.Mutex
	D  []time.Duration
}

// Sleep records d and returns at once.
func (s *Sleeps) Sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.D = append(s.D, d)
	return nil
}

// Delays returns the recorded delays.
func (s *Sleeps) Delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.D...)
}

// Policy is a fast, deterministic retry policy: it records its sleeps in
// s and its jitter always picks the upper bound.
func Policy(s *Sleeps) providers.RetryPolicy {
	return providers.RetryPolicy{
		Sleep:  s.Sleep,
		Jitter: func(max time.Duration) time.Duration { return max },
	}.WithDefaults()
}
