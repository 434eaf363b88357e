package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/internal/sse"
)

// TestBinaryOnTheRuntimeAPI builds this function's binary and runs it
// against a fake Lambda Runtime API on 127.0.0.1, on the embedded stores:
// the stream route is posted as a response stream in API Gateway's format,
// every other route as the ordinary buffered proxy response.
func TestBinaryOnTheRuntimeAPI(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build the binary:", err)
	}
	bin := filepath.Join(t.TempDir(), "bootstrap")
	build := exec.Command(goTool, "build", "-tags", "lambda.norpc", "-trimpath", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	agents, err := filepath.Abs("../../tests/testdata/agents.json")
	if err != nil {
		t.Fatal(err)
	}
	rt := newFakeRuntime(t)
	const token = "tok-acme-lambda-1"
	fn := startFunction(t, bin, rt, "AWS_LAMBDA_RUNTIME_API="+rt.addr(), "BATON_STORES=memory", "BATON_DEV_TOKENS=acme="+token,
		"BATON_AGENTS_FILE="+agents, "BATON_PROVIDERS=scripted", "LOG_LEVEL=warn")

	// A buffered route: an ordinary proxy response.
	start := fn.invoke(t, proxyEvent("POST", "/v1/runs", token, `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"hello"}]}}`))
	run := buffered(t, start, 202)
	runID, _ := run["run_id"].(string)
	if runID == "" || run["status"] != "queued" {
		t.Fatalf("run %v", run)
	}
	// No worker runs here: cancel the run, so that its stream ends.
	if v := buffered(t, fn.invoke(t, proxyEvent("POST", "/v1/runs/"+runID+"/cancel", token, `{}`)), 202); v["status"] != "cancelled" {
		t.Fatalf("cancel: %v", v)
	}
	if v := buffered(t, fn.invoke(t, proxyEvent("GET", "/v1/runs/"+runID, token, "")), 200); v["status"] != "cancelled" {
		t.Fatalf("get: %v", v)
	}

	t.Run("the stream route streams", func(t *testing.T) {
		p := fn.invoke(t, proxyEvent("GET", "/v1/runs/"+runID+"/stream", token, ""))
		prelude, body := streamed(t, p)
		if prelude.StatusCode != 200 || prelude.Headers["Content-Type"] != "text/event-stream" {
			t.Fatalf("prelude %+v", prelude)
		}
		evs := parseSSE(t, body)
		types := map[string]bool{}
		for _, ev := range evs {
			types[ev.Event] = true
		}
		if len(evs) < 2 || evs[len(evs)-1].Event != "end" || !types["run_started"] || !types["cancelled"] {
			t.Fatalf("events %+v", evs)
		}
		var end map[string]any
		if err := json.Unmarshal([]byte(evs[len(evs)-1].Data), &end); err != nil || end["run_id"] != runID || end["status"] != "cancelled" {
			t.Fatalf("end %s: %v", evs[len(evs)-1].Data, err)
		}

		// Last-Event-ID resumes after that event: only the end is left.
		last := evs[len(evs)-2].ID
		ev := proxyEvent("GET", "/v1/runs/"+runID+"/stream", token, "")
		ev.Headers["Last-Event-ID"] = last
		_, body = streamed(t, fn.invoke(t, ev))
		if evs := parseSSE(t, body); len(evs) != 1 || evs[0].Event != "end" {
			t.Fatalf("resumed after %s: %+v", last, evs)
		}
	})

	t.Run("an auth failure on the stream route is a streamed 401", func(t *testing.T) {
		prelude, body := streamed(t, fn.invoke(t, proxyEvent("GET", "/v1/runs/"+runID+"/stream", "tok-wrong-000000", "")))
		if prelude.StatusCode != 401 || prelude.Headers["Content-Type"] != "application/json" {
			t.Fatalf("prelude %+v", prelude)
		}
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != "unauthorized" {
			t.Fatalf("body %q: %v", body, err)
		}
	})

	t.Run("an unknown run on the stream route is a streamed 404", func(t *testing.T) {
		prelude, _ := streamed(t, fn.invoke(t, proxyEvent("GET", "/v1/runs/r-00000000000000000000000001/stream", token, "")))
		if prelude.StatusCode != 404 {
			t.Fatalf("prelude %+v", prelude)
		}
	})

	t.Run("a buffered error stays a proxy response", func(t *testing.T) {
		v := buffered(t, fn.invoke(t, proxyEvent("GET", "/v1/runs/"+runID, "tok-wrong-000000", "")), 401)
		if e, _ := v["error"].(map[string]any); e["code"] != "unauthorized" {
			t.Fatalf("%v", v)
		}
	})
}

func proxyEvent(method, path, token, body string) events.APIGatewayProxyRequest {
	return events.APIGatewayProxyRequest{
		Resource: "/v1/{proxy+}", Path: path, HTTPMethod: method, Body: body,
		Headers:        map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"},
		PathParameters: map[string]string{"proxy": strings.TrimPrefix(path, "/v1/")},
		RequestContext: events.APIGatewayProxyRequestContext{RequestID: "apigw-1", Stage: "dev", HTTPMethod: method, Path: "/dev" + path},
	}
}

// buffered checks an ordinary buffered proxy response and returns its
// JSON body.
func buffered(t *testing.T, p posted, status int) map[string]any {
	t.Helper()
	if p.kind != "response" || p.header.Get("Lambda-Runtime-Function-Response-Mode") != "" {
		t.Fatalf("not a buffered response: %s %v %q", p.kind, p.header, p.body)
	}
	var resp events.APIGatewayProxyResponse
	dec := json.NewDecoder(bytes.NewReader(p.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		t.Fatalf("not a proxy response %q: %v", p.body, err)
	}
	if resp.StatusCode != status || resp.Headers["Content-Type"] != "application/json" {
		t.Fatalf("status %d (want %d), headers %v: %s", resp.StatusCode, status, resp.Headers, resp.Body)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &v); err != nil {
		t.Fatalf("body %q: %v", resp.Body, err)
	}
	return v
}

type prelude struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
}

// streamed checks a response streamed to API Gateway — posted with
// Lambda-Runtime-Function-Response-Mode: streaming, chunked, its body a
// JSON prelude, exactly eight NUL bytes and the body — and returns the
// prelude and the body.
func streamed(t *testing.T, p posted) (prelude, string) {
	t.Helper()
	if p.kind != "response" || p.header.Get("Lambda-Runtime-Function-Response-Mode") != "streaming" || !p.chunked ||
		p.header.Get("Content-Type") != "application/vnd.awslambda.http-integration-response" {
		t.Fatalf("not a streamed response: %s chunked=%v %v %q", p.kind, p.chunked, p.header, p.body)
	}
	if v := p.trailer.Get("Lambda-Runtime-Function-Error-Type"); v != "" {
		t.Fatalf("the stream failed: %s %v", v, p.trailer)
	}
	var pre prelude
	dec := json.NewDecoder(bytes.NewReader(p.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pre); err != nil {
		t.Fatalf("no JSON prelude in %q: %v", p.body, err)
	}
	rest := p.body[dec.InputOffset():]
	if len(rest) < 9 || !bytes.Equal(rest[:8], make([]byte, 8)) || rest[8] == 0 {
		t.Fatalf("the prelude is not followed by exactly 8 NUL bytes and a body: %q", rest)
	}
	return pre, string(rest[8:])
}

// parseSSE reads a whole stream, which must end with a complete event.
func parseSSE(t *testing.T, s string) []sse.Event {
	t.Helper()
	evs, err := sse.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil || !strings.HasSuffix(s, "\n\n") {
		t.Fatalf("stream %q: %v", s, err)
	}
	return evs
}

// fakeRuntime is a Lambda Runtime API: GET …/next hands out the events
// sent to invoke, POST …/{id}/response and …/{id}/error report back.
type fakeRuntime struct {
	srv     *httptest.Server
	events  chan invocation
	results chan posted
	closed  chan struct{}
}

type invocation struct {
	id      string
	payload []byte
}

type posted struct {
	id, kind string
	header   http.Header
	chunked  bool
	body     []byte
	trailer  http.Header
}

func newFakeRuntime(t *testing.T) *fakeRuntime {
	t.Helper()
	f := &fakeRuntime{events: make(chan invocation, 1), results: make(chan posted, 1), closed: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(func() { close(f.closed); f.srv.Close() })
	return f
}

func (f *fakeRuntime) addr() string { return strings.TrimPrefix(f.srv.URL, "http://") }

func (f *fakeRuntime) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/2018-06-01/runtime/invocation/")
	switch {
	case !ok:
		http.NotFound(w, r)
	case r.Method == http.MethodGet && rest == "next":
		select {
		case inv := <-f.events:
			w.Header().Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(15*time.Minute).UnixMilli(), 10))
			w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:baton-api")
			w.Header().Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
			_, _ = w.Write(inv.payload)
		case <-f.closed:
			http.Error(w, "closed", http.StatusGone)
		case <-r.Context().Done():
		}
	case r.Method == http.MethodPost:
		id, kind, _ := strings.Cut(rest, "/")
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		f.results <- posted{id: id, kind: kind, header: r.Header.Clone(), chunked: len(r.TransferEncoding) == 1 && r.TransferEncoding[0] == "chunked",
			body: body, trailer: r.Trailer.Clone()}
	default:
		http.NotFound(w, r)
	}
}

// function is the binary running on the fake runtime.
type function struct {
	rt     *fakeRuntime
	exited chan struct{}
	stderr *lockedBuffer
	n      int
}

func startFunction(t *testing.T, bin string, rt *fakeRuntime, env ...string) *function {
	t.Helper()
	cmd := exec.Command(bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BATON_") && !strings.HasPrefix(kv, "AWS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	fn := &function{rt: rt, exited: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = fn.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(fn.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-fn.exited
		if t.Failed() {
			t.Logf("function stderr:\n%s", fn.stderr.String())
		}
	})
	return fn
}

// invoke hands out one API Gateway event and returns what the function
// posted for it.
func (fn *function) invoke(t *testing.T, ev events.APIGatewayProxyRequest) posted {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	fn.n++
	id := fmt.Sprintf("invocation-%d", fn.n)
	select {
	case fn.rt.events <- invocation{id: id, payload: b}:
	case <-fn.exited:
		t.Fatalf("the function exited:\n%s", fn.stderr.String())
	}
	select {
	case p := <-fn.rt.results:
		if p.id != id {
			t.Fatalf("answer for %s, want %s", p.id, id)
		}
		return p
	case <-fn.exited:
		t.Fatalf("the function exited:\n%s", fn.stderr.String())
	case <-time.After(2 * time.Minute): // a safety net, not a timing assertion
		t.Fatalf("no answer to %s %s:\n%s", ev.HTTPMethod, ev.Path, fn.stderr.String())
	}
	return posted{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
