package executors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/toolsig"
)

const testSecret = "tOpSeCrEt-http-executor-0123456789"

var testCall = core.ToolCall{RunID: "r-1", SessionID: "s-1", Agent: "a", Turn: 1, ToolCallID: "call_1", ToolName: "ability/lookup",
	Parameters: map[string]any{"q": "<café & co>", "n": json.Number("12345678901234567890")}, IdempotencyKey: "r-1:call_1",
	Declaration: core.ToolDeclaration{Name: "ability/lookup"}}

// recorded is one request seen by a test tool endpoint.
type recorded struct {
	header http.Header
	body   []byte
	verify error
}

type toolServer struct {
	*httptest.Server
	reqs callLog[recorded]
}

func (s *toolServer) requests() []recorded { return s.reqs.all() }

// newToolServer serves respond on 127.0.0.1, recording and verifying
// every request with the toolsig helper.
func newToolServer(t *testing.T, respond http.HandlerFunc) *toolServer {
	t.Helper()
	s := &toolServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		err := toolsig.Verify([]byte(testSecret), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), b, time.Now())
		s.reqs.add(recorded{header: r.Header.Clone(), body: b, verify: err})
		respond(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func newHTTP(t *testing.T, url string, mod func(*HTTPConfig)) *HTTP {
	t.Helper()
	c := HTTPConfig{URL: url, Secret: []byte(testSecret)}
	if mod != nil {
		mod(&c)
	}
	h, err := NewHTTP("ability/lookup", c)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// noSecret fails the test when the secret appears in any string form of
// the values.
func noSecret(t *testing.T, vals ...any) {
	t.Helper()
	for _, v := range vals {
		b, _ := json.Marshal(v)
		s := fmt.Sprint(v) + string(b)
		if err, ok := v.(error); ok && err != nil {
			s += err.Error()
		}
		if strings.Contains(s, testSecret) {
			t.Fatalf("the secret leaked: %s", s)
		}
	}
}

func TestHTTPRequestIsSignedAndKeyed(t *testing.T) {
	srv := newToolServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"answer": 42, "big": 12345678901234567890}`)
	})
	fixed := time.Now().Add(-time.Minute).Truncate(time.Second)
	h := newHTTP(t, srv.URL+"/lookup", func(c *HTTPConfig) { c.Now = func() time.Time { return fixed } })
	out, err := h.Execute(context.Background(), testCall)
	if err != nil {
		t.Fatal(err)
	}
	res := core.NormalizeToolOutput(testCall.Declaration, out, err)
	if !res.Success || fmt.Sprint(res.Result) != "map[answer:42 big:12345678901234567890]" {
		t.Fatalf("result %+v", res)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.verify != nil {
		t.Fatalf("signature does not verify with toolsig: %v", r.verify)
	}
	if got := r.header.Get("Idempotency-Key"); got != "r-1:call_1" {
		t.Fatalf("Idempotency-Key %q", got)
	}
	if got := r.header.Get("X-Baton-Timestamp"); got != fmt.Sprint(fixed.Unix()) {
		t.Fatalf("X-Baton-Timestamp %q, want %d", got, fixed.Unix())
	}
	if got := r.header.Get("Content-Type"); got != "application/json" {
		t.Fatalf("Content-Type %q", got)
	}
	want := `{"tool_name":"ability/lookup","tool_call_id":"call_1","run_id":"r-1","session_id":"s-1","parameters":{"n":12345678901234567890,"q":"<café & co>"}}`
	if string(r.body) != want {
		t.Fatalf("body\n got %s\nwant %s", r.body, want)
	}
	if err := toolsig.Verify([]byte("wrong"), r.header.Get("X-Baton-Timestamp"), r.header.Get("X-Baton-Signature"), r.body, time.Now()); !errors.Is(err, toolsig.ErrMismatch) {
		t.Fatalf("another secret verified: %v", err)
	}
	for name := range r.header {
		if strings.Contains(r.header.Get(name), testSecret) {
			t.Fatalf("header %s carries the secret", name)
		}
	}
}

func TestHTTPIdempotencyKeyFallback(t *testing.T) {
	srv := newToolServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) })
	call := testCall
	call.IdempotencyKey = ""
	call.Parameters = nil
	if _, err := newHTTP(t, srv.URL, nil).Execute(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	r := srv.requests()[0]
	if r.header.Get("Idempotency-Key") != "r-1:call_1" || !strings.HasSuffix(string(r.body), `"parameters":{}}`) {
		t.Fatalf("key %q body %s", r.header.Get("Idempotency-Key"), r.body)
	}
}

func TestHTTPOutcomes(t *testing.T) {
	big := strings.Repeat("x", 2048)
	cases := []struct {
		name     string
		respond  http.HandlerFunc
		wantOK   bool
		wantType string
		wantErr  []string // substrings of the result's error
		result   string
	}{
		{"object result", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"a":1}`) }, true, "", nil, "map[a:1]"},
		{"non-object result", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `["a","b"]`) }, true, "", nil, "[a b]"},
		{"empty 204", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, true, "", nil, "<nil>"},
		{"result envelope success", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"success":true,"result":{"id":7},"metadata":{"source":"x"}}`)
		}, true, "", nil, "map[id:7]"},
		{"result envelope failure keeps its type", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"success":false,"error":"no such user","error_type":"not_found"}`)
		}, false, "not_found", []string{"no such user"}, ""},
		{"500 names the status and an excerpt", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "database\n\tdown "+testSecret, http.StatusInternalServerError)
		}, false, ErrTypeHTTPStatus, []string{"HTTP 500 Internal Server Error", "database down [redacted]"}, ""},
		{"404 with a long body is trimmed", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, big)
		}, false, ErrTypeHTTPStatus, []string{"HTTP 404 Not Found", strings.Repeat("x", 300) + "…"}, ""},
		{"redirect is not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusTemporaryRedirect)
		}, false, ErrTypeHTTPStatus, []string{"HTTP 307"}, ""},
		{"oversized with Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(len(big)+2))
			io.WriteString(w, `"`+big+`"`)
		}, false, ErrTypeResponseTooLarge, []string{"larger than the 1024-byte limit"}, ""},
		{"oversized chunked", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `"`)
			w.(http.Flusher).Flush()
			io.WriteString(w, big+`"`)
		}, false, ErrTypeResponseTooLarge, []string{"1024-byte limit"}, ""},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "OK done") }, false, ErrTypeInvalidResponse, []string{"not JSON: OK done"}, ""},
		{"trailing garbage", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"a":1} {"b":2}`) }, false, ErrTypeInvalidResponse, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newToolServer(t, c.respond)
			h := newHTTP(t, srv.URL+"/tool?token=query-credential", func(hc *HTTPConfig) { hc.MaxResponseBytes = 1024 })
			out, err := h.Execute(context.Background(), testCall)
			if err != nil {
				t.Fatalf("error %v, want a result", err)
			}
			res := core.NormalizeToolOutput(testCall.Declaration, out, nil)
			if res.Success != c.wantOK || res.ErrorType != c.wantType {
				t.Fatalf("result %+v", res)
			}
			for _, s := range c.wantErr {
				if !strings.Contains(res.Error, s) {
					t.Fatalf("error %q does not contain %q", res.Error, s)
				}
			}
			if c.wantOK && fmt.Sprint(res.Result) != c.result {
				t.Fatalf("result %v, want %s", res.Result, c.result)
			}
			if strings.Contains(res.Error, "query-credential") {
				t.Fatalf("the URL query leaked: %s", res.Error)
			}
			if c.wantType == ErrTypeHTTPStatus && !strings.Contains(fmt.Sprint(res.Metadata), "http_status") {
				t.Fatalf("metadata %v", res.Metadata)
			}
			noSecret(t, out, res)
			if len(srv.requests()) != 1 {
				t.Fatalf("%d requests, want 1", len(srv.requests()))
			}
		})
	}
}

func TestHTTPTimeoutIsAnExecutorError(t *testing.T) {
	release := make(chan struct{})
	srv := newToolServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	h := newHTTP(t, "http://user:"+testSecret+"@"+strings.TrimPrefix(srv.URL, "http://")+"/slow", func(c *HTTPConfig) { c.Timeout = 150 * time.Millisecond })
	start := time.Now()
	out, err := h.Execute(context.Background(), testCall)
	if err == nil || out != nil {
		t.Fatalf("out %v err %v, want an error", out, err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("timeout not enforced: %s", time.Since(start))
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 150ms") || !strings.Contains(err.Error(), srv.URL+"/slow") {
		t.Fatalf("err = %v", err)
	}
	res := core.NormalizeToolOutput(testCall.Declaration, out, err)
	if res.Success || res.ErrorType != core.ErrTypeExecutorException {
		t.Fatalf("result %+v", res)
	}
	noSecret(t, err, res)
	if strings.Contains(err.Error(), "user:") {
		t.Fatalf("user info leaked: %v", err)
	}
}

func TestHTTPTransportErrors(t *testing.T) {
	srv := newToolServer(t, func(w http.ResponseWriter, r *http.Request) {})
	url := srv.URL
	srv.Close()
	h := newHTTP(t, url+"/gone", nil)
	_, err := h.Execute(context.Background(), testCall)
	if err == nil || strings.Contains(err.Error(), "timed out") || !strings.Contains(err.Error(), "POST "+url+"/gone") {
		t.Fatalf("closed server: %v", err)
	}
	noSecret(t, err)

	// A caller's cancellation is not reported as the tool's timeout.
	srv2 := newToolServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err = newHTTP(t, srv2.URL, nil).Execute(ctx, testCall)
	if err == nil || strings.Contains(err.Error(), "timed out") || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestNewHTTPValidates(t *testing.T) {
	for _, c := range []struct {
		url, secret, want string
	}{
		{"ftp://example.com/x", "s", "http or https"},
		{"file:///etc/passwd", "s", "http or https"},
		{"http://", "s", "no host"},
		{"http://exa mple.com/", "s", "not a valid URL"},
		{"https://example.com/x", "", "secret is required"},
	} {
		_, err := NewHTTP("t/x", HTTPConfig{URL: c.url, Secret: []byte(c.secret)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.url, err, c.want)
		}
	}
	h, err := NewHTTP("t/x", HTTPConfig{URL: "https://example.com/x", Secret: []byte("s")})
	if err != nil || h.timeout != DefaultTimeout || h.max != DefaultMaxResponseBytes {
		t.Fatalf("defaults: %+v %v", h, err)
	}
}

// TestHTTPCall: Call sends any JSON body, signed, with the
// Idempotency-Key header only when a key is given, and reports a failed
// answer as a *Failure.
func TestHTTPCall(t *testing.T) {
	status := http.StatusOK
	srv := newToolServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, `{"allow":true}`)
	})
	h := newHTTP(t, srv.URL, nil)
	raw, err := h.Call(context.Background(), []byte(`{"stage":"tool"}`), "")
	if err != nil || string(raw) != `{"allow":true}` {
		t.Fatalf("Call = %s, %v", raw, err)
	}
	if _, err := h.Call(context.Background(), []byte(`{}`), "r-1:c-1:hook"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 2 || string(reqs[0].body) != `{"stage":"tool"}` || reqs[0].verify != nil || reqs[1].verify != nil {
		t.Fatalf("requests %+v", reqs)
	}
	if k := reqs[0].header.Values(toolsig.HeaderIdempotencyKey); len(k) != 0 {
		t.Fatalf("Idempotency-Key without a key: %q", k)
	}
	if k := reqs[1].header.Get(toolsig.HeaderIdempotencyKey); k != "r-1:c-1:hook" {
		t.Fatalf("Idempotency-Key = %q", k)
	}
	status = http.StatusBadGateway
	_, err = h.Call(context.Background(), []byte(`{}`), "")
	var f *Failure
	if !errors.As(err, &f) || f.Type != ErrTypeHTTPStatus || f.Metadata["http_status"] != http.StatusBadGateway {
		t.Fatalf("err = %#v", err)
	}
}
