package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/internal/lambdastream/runtimetest"
	"github.com/baton-agents/baton/internal/sse"
)

// TestBinaryOnTheRuntimeAPI builds this function's binary and runs it
// against a fake Lambda Runtime API on 127.0.0.1, on the embedded stores:
// the stream route is runtimetest.Posted as a response stream in API Gateway's format,
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
	rt := runtimetest.New(t)
	const token = "tok-acme-lambda-1"
	fn := startFunction(t, bin, rt, "AWS_LAMBDA_RUNTIME_API="+rt.Addr(), "BATON_STORES=memory", "BATON_DEV_TOKENS=acme="+token,
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

		// Last-Event-ID after that event of the finished run: a streamed
		// 204 with no body, so an EventSource stops reconnecting.
		last := evs[len(evs)-2].ID
		ev := proxyEvent("GET", "/v1/runs/"+runID+"/stream", token, "")
		ev.Headers["Last-Event-ID"] = last
		p = fn.invoke(t, ev)
		var pre struct {
			StatusCode int `json:"statusCode"`
		}
		dec := json.NewDecoder(bytes.NewReader(p.Body))
		if err := dec.Decode(&pre); err != nil || pre.StatusCode != 204 || !bytes.Equal(p.Body[dec.InputOffset():], make([]byte, 8)) {
			t.Fatalf("resumed after %s: %q (%v)", last, p.Body, err)
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
func buffered(t *testing.T, p runtimetest.Posted, status int) map[string]any {
	t.Helper()
	if p.Kind != "response" || p.Header.Get("Lambda-Runtime-Function-Response-Mode") != "" {
		t.Fatalf("not a buffered response: %s %v %q", p.Kind, p.Header, p.Body)
	}
	var resp events.APIGatewayProxyResponse
	dec := json.NewDecoder(bytes.NewReader(p.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		t.Fatalf("not a proxy response %q: %v", p.Body, err)
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

// streamed checks a response streamed to API Gateway — runtimetest.Posted with
// Lambda-Runtime-Function-Response-Mode: streaming, chunked, its body a
// JSON prelude, exactly eight NUL bytes and the body — and returns the
// prelude and the body.
func streamed(t *testing.T, p runtimetest.Posted) (prelude, string) {
	t.Helper()
	if p.Kind != "response" || p.Header.Get("Lambda-Runtime-Function-Response-Mode") != "streaming" || !p.Chunked ||
		p.Header.Get("Content-Type") != "application/vnd.awslambda.http-integration-response" {
		t.Fatalf("not a streamed response: %s chunked=%v %v %q", p.Kind, p.Chunked, p.Header, p.Body)
	}
	if v := p.Trailer.Get("Lambda-Runtime-Function-Error-Type"); v != "" {
		t.Fatalf("the stream failed: %s %v", v, p.Trailer)
	}
	var pre prelude
	dec := json.NewDecoder(bytes.NewReader(p.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pre); err != nil {
		t.Fatalf("no JSON prelude in %q: %v", p.Body, err)
	}
	rest := p.Body[dec.InputOffset():]
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

// function is the binary running on the fake runtime.
type function struct {
	rt     *runtimetest.Runtime
	exited chan struct{}
	stderr *lockedBuffer
	n      int
}

func startFunction(t *testing.T, bin string, rt *runtimetest.Runtime, env ...string) *function {
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
// runtimetest.Posted for it.
func (fn *function) invoke(t *testing.T, ev events.APIGatewayProxyRequest) runtimetest.Posted {
	t.Helper()
	return fn.rt.Invoke(t, ev, time.Now().Add(15*time.Minute), fn.exited)
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
