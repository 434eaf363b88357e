package lambdastream_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/internal/lambdastream"
	"github.com/baton-agents/baton/internal/lambdastream/runtimetest"
)

// fakeRuntime is the shared fake Runtime API with this package's
// invocation helpers.
type fakeRuntime struct{ *runtimetest.Runtime }

type posted = runtimetest.Posted

func newFakeRuntime(t *testing.T) *fakeRuntime { return &fakeRuntime{runtimetest.New(t)} }

// invoke hands out payload with a deadline an hour away and waits for
// the function's answer.
func (f *fakeRuntime) invoke(t *testing.T, payload any) posted {
	t.Helper()
	return f.invokeBy(t, payload, time.Now().Add(time.Hour))
}

func (f *fakeRuntime) invokeBy(t *testing.T, payload any, deadline time.Time) posted {
	t.Helper()
	return f.Invoke(t, payload, deadline, nil)
}

// run serves invocations with h until the test ends; wait returns Run's
// result.
func run(t *testing.T, f *fakeRuntime, h lambdastream.Handler) (wait func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	rt := lambdastream.New(f.Addr())
	rt.Log = slog.New(slog.DiscardHandler)
	go func() { done <- rt.Run(ctx, h, 1) }()
	var once sync.Once
	var err error
	wait = func() error { once.Do(func() { err = <-done }); return err }
	t.Cleanup(func() { cancel(); _ = wait() })
	return wait
}

func proxyEvent(method, path string) events.APIGatewayProxyRequest {
	return events.APIGatewayProxyRequest{HTTPMethod: method, Path: path, Resource: "/v1/{proxy+}",
		RequestContext: events.APIGatewayProxyRequestContext{RequestID: "apigw-req-1"}}
}

// splitStream splits a streamed HTTP integration response into its
// prelude and body.
func splitStream(t *testing.T, b []byte) (map[string]any, string) {
	t.Helper()
	i := bytes.Index(b, make([]byte, 8))
	if i < 0 {
		t.Fatalf("no 8-NUL delimiter in %q", b)
	}
	var prelude map[string]any
	if err := json.Unmarshal(b[:i], &prelude); err != nil {
		t.Fatalf("prelude %q: %v", b[:i], err)
	}
	return prelude, string(b[i+8:])
}

func checkStreamed(t *testing.T, p posted) {
	t.Helper()
	if p.Kind != "response" || p.Header.Get("Lambda-Runtime-Function-Response-Mode") != "streaming" || !p.Chunked ||
		p.Header.Get("Content-Type") != lambdastream.ContentTypeHTTPIntegration {
		t.Fatalf("not a streamed response: %s chunked=%v %v", p.Kind, p.Chunked, p.Header)
	}
	// net/http moves the declared trailers from the Trailer header to
	// the request's Trailer map.
	for _, k := range []string{"Lambda-Runtime-Function-Error-Type", "Lambda-Runtime-Function-Error-Body"} {
		if _, ok := p.Trailer[k]; !ok {
			t.Fatalf("trailer %s not declared: %v", k, p.Trailer)
		}
	}
}

func sseBody(lines ...string) lambdastream.StreamBody {
	return func(ctx context.Context, w io.Writer, flush func()) error {
		for _, l := range lines {
			if _, err := io.WriteString(w, l); err != nil {
				return nil
			}
			flush()
		}
		return nil
	}
}

func TestBufferedAndStreamedRoutes(t *testing.T) {
	f := newFakeRuntime(t)
	g := lambdastream.APIGateway{
		Handle: func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
			return events.APIGatewayProxyResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"path":"` + req.Path + `","html":"<b>"}`}, nil
		},
		Stream: func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, lambdastream.StreamBody) {
			if req.Headers["Authorization"] != "Bearer ok" {
				return events.APIGatewayProxyResponse{StatusCode: 401, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"error":{"code":"unauthorized"}}`}, nil
			}
			return events.APIGatewayProxyResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "text/event-stream"}}, sseBody("id: 1\nevent: a\ndata: {}\n\n", "event: end\ndata: {}\n\n")
		},
		IsStream: func(method, path string) bool { return method == "GET" && strings.HasSuffix(path, "/stream") },
	}
	run(t, f, g.Invoke)

	t.Run("buffered route", func(t *testing.T) {
		p := f.invoke(t, proxyEvent("GET", "/v1/runs/r-1"))
		if p.Kind != "response" || p.Header.Get("Lambda-Runtime-Function-Response-Mode") != "" || p.Chunked {
			t.Fatalf("not a buffered response: %s chunked=%v %v", p.Kind, p.Chunked, p.Header)
		}
		var resp events.APIGatewayProxyResponse
		if err := json.Unmarshal(p.Body, &resp); err != nil {
			t.Fatalf("%q: %v", p.Body, err)
		}
		if resp.StatusCode != 200 || resp.Body != `{"path":"/v1/runs/r-1","html":"<b>"}` || !bytes.Contains(p.Body, []byte("<b>")) {
			t.Fatalf("proxy response %s", p.Body)
		}
	})

	t.Run("streamed route", func(t *testing.T) {
		ev := proxyEvent("GET", "/v1/runs/r-1/stream")
		ev.Headers = map[string]string{"Authorization": "Bearer ok"}
		p := f.invoke(t, ev)
		checkStreamed(t, p)
		prelude, body := splitStream(t, p.Body)
		if prelude["statusCode"] != float64(200) {
			t.Fatalf("prelude %v", prelude)
		}
		hdr := prelude["headers"].(map[string]any)
		if hdr["Content-Type"] != "text/event-stream" || hdr["X-Request-Id"] != "apigw-req-1" {
			t.Fatalf("prelude headers %v", hdr)
		}
		if body != "id: 1\nevent: a\ndata: {}\n\nevent: end\ndata: {}\n\n" {
			t.Fatalf("body %q", body)
		}
		if len(p.Trailer.Values("Lambda-Runtime-Function-Error-Type")) != 0 {
			t.Fatalf("error trailer on a good stream: %v", p.Trailer)
		}
	})

	t.Run("streamed route's error response", func(t *testing.T) {
		p := f.invoke(t, proxyEvent("GET", "/v1/runs/r-1/stream"))
		checkStreamed(t, p)
		prelude, body := splitStream(t, p.Body)
		if prelude["statusCode"] != float64(401) || prelude["headers"].(map[string]any)["Content-Type"] != "application/json" {
			t.Fatalf("prelude %v", prelude)
		}
		if body != `{"error":{"code":"unauthorized"}}` {
			t.Fatalf("body %q", body)
		}
	})

	t.Run("not an API Gateway event", func(t *testing.T) {
		for _, payload := range [][]byte{[]byte(`{"Records":[]}`), []byte(`not json`)} {
			p := f.invoke(t, payload)
			if p.Kind != "error" || p.Header.Get("Lambda-Runtime-Function-Error-Type") == "" {
				t.Fatalf("%s: %s %v", payload, p.Kind, p.Header)
			}
			var e map[string]string
			if err := json.Unmarshal(p.Body, &e); err != nil || e["errorMessage"] == "" || e["errorType"] == "" {
				t.Fatalf("error body %q", p.Body)
			}
		}
	})
}

// TestStreamIsSentAsItIsWritten: the body's second part is written only
// once the runtime has received the prelude, so a response held back
// until the stream ends would never complete.
func TestStreamIsSentAsItIsWritten(t *testing.T) {
	f := newFakeRuntime(t)
	gotPrelude := make(chan struct{})
	f.ReadBody = func(_ string, r io.Reader) ([]byte, error) {
		var all []byte
		buf := make([]byte, 1024)
		signalled := false
		for {
			n, err := r.Read(buf)
			all = append(all, buf[:n]...)
			if !signalled && bytes.Contains(all, make([]byte, 8)) {
				close(gotPrelude)
				signalled = true
			}
			if err == io.EOF {
				return all, nil
			}
			if err != nil {
				return all, err
			}
		}
	}
	g := lambdastream.APIGateway{
		Stream: func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, lambdastream.StreamBody) {
			return events.APIGatewayProxyResponse{StatusCode: 200}, func(ctx context.Context, w io.Writer, flush func()) error {
				select {
				case <-gotPrelude:
				case <-ctx.Done():
					return ctx.Err()
				}
				_, err := io.WriteString(w, "after the prelude")
				return err
			}
		},
		IsStream: func(string, string) bool { return true },
	}
	run(t, f, g.Invoke)
	p := f.invoke(t, proxyEvent("GET", "/v1/runs/r-1/stream"))
	checkStreamed(t, p)
	if _, body := splitStream(t, p.Body); body != "after the prelude" {
		t.Fatalf("body %q", body)
	}
}

func TestStreamFailureIsReportedInTrailers(t *testing.T) {
	f := newFakeRuntime(t)
	g := lambdastream.APIGateway{
		Stream: func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, lambdastream.StreamBody) {
			return events.APIGatewayProxyResponse{StatusCode: 200}, func(ctx context.Context, w io.Writer, flush func()) error {
				_, _ = io.WriteString(w, "id: 1\n\n")
				flush()
				return errors.New("the store failed")
			}
		},
		IsStream: func(string, string) bool { return true },
	}
	run(t, f, g.Invoke)
	p := f.invoke(t, proxyEvent("GET", "/v1/runs/r-1/stream"))
	checkStreamed(t, p)
	if _, body := splitStream(t, p.Body); body != "id: 1\n\n" {
		t.Fatalf("body %q", body)
	}
	if p.Trailer.Get("Lambda-Runtime-Function-Error-Type") != "Baton.StreamError" {
		t.Fatalf("trailers %v", p.Trailer)
	}
	b, err := base64.StdEncoding.DecodeString(p.Trailer.Get("Lambda-Runtime-Function-Error-Body"))
	if err != nil || !strings.Contains(string(b), "the store failed") {
		t.Fatalf("error body %q %v", b, err)
	}
}

func TestDeadlines(t *testing.T) {
	f := newFakeRuntime(t)
	got := make(chan time.Time, 1)
	g := lambdastream.APIGateway{
		Handle: func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
			dl, _ := ctx.Deadline()
			got <- dl
			return events.APIGatewayProxyResponse{StatusCode: 200}, nil
		},
		Stream: func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, lambdastream.StreamBody) {
			return events.APIGatewayProxyResponse{StatusCode: 200}, func(ctx context.Context, w io.Writer, flush func()) error {
				dl, _ := ctx.Deadline()
				got <- dl
				return nil
			}
		},
		IsStream:     func(method, path string) bool { return strings.HasSuffix(path, "/stream") },
		StreamMargin: 7 * time.Second,
	}
	run(t, f, g.Invoke)
	deadline := time.UnixMilli(time.Now().Add(time.Hour).UnixMilli())

	f.invokeBy(t, proxyEvent("GET", "/v1/runs/r-1/stream"), deadline)
	if dl := <-got; !dl.Equal(deadline.Add(-7 * time.Second)) {
		t.Errorf("stream deadline %v, want the invocation's %v less the margin", dl, deadline)
	}
	f.invokeBy(t, proxyEvent("GET", "/v1/runs/r-1"), deadline)
	if dl := <-got; !dl.Before(deadline.Add(-30 * time.Minute)) {
		t.Errorf("buffered deadline %v: not bounded by API Gateway's timeout", dl)
	}

	// A stream whose invocation has less time left than the margin ends
	// at once, cleanly: the client reconnects.
	p := f.invokeBy(t, proxyEvent("GET", "/v1/runs/r-1/stream"), time.Now().Add(3*time.Second))
	checkStreamed(t, p)
	if dl := <-got; time.Until(dl) > 0 {
		t.Errorf("the stream's deadline %v has not passed", dl)
	}
	if p.Trailer.Get("Lambda-Runtime-Function-Error-Type") != "" {
		t.Errorf("trailers %v", p.Trailer)
	}
}

func TestPanicIsReportedAndStops(t *testing.T) {
	f := newFakeRuntime(t)
	wait := run(t, f, func(ctx context.Context, payload []byte) (lambdastream.Response, error) { panic("boom") })
	p := f.invoke(t, []byte(`{}`))
	if p.Kind != "error" || p.Header.Get("Lambda-Runtime-Function-Error-Type") != "Baton.Panic" || !strings.Contains(string(p.Body), "boom") {
		t.Fatalf("%s %v %s", p.Kind, p.Header, p.Body)
	}
	if err := wait(); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("Run: %v", err)
	}
}

func TestStartNeedsTheRuntimeAPI(t *testing.T) {
	t.Setenv("AWS_LAMBDA_RUNTIME_API", "")
	if err := lambdastream.Start(nil, nil); err == nil || !strings.Contains(err.Error(), "AWS_LAMBDA_RUNTIME_API") {
		t.Fatalf("Start: %v", err)
	}
}

func TestStreamPanicIsReportedAndStops(t *testing.T) {
	f := newFakeRuntime(t)
	g := lambdastream.APIGateway{
		Stream: func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, lambdastream.StreamBody) {
			return events.APIGatewayProxyResponse{StatusCode: 200}, func(ctx context.Context, w io.Writer, flush func()) error { panic("mid-stream") }
		},
		IsStream: func(string, string) bool { return true },
	}
	wait := run(t, f, g.Invoke)
	p := f.invoke(t, proxyEvent("GET", "/v1/runs/r-1/stream"))
	checkStreamed(t, p)
	if p.Trailer.Get("Lambda-Runtime-Function-Error-Type") != "Baton.Panic" {
		t.Fatalf("trailers %v", p.Trailer)
	}
	if err := wait(); err == nil || !strings.Contains(err.Error(), "mid-stream") {
		t.Fatalf("Run: %v", err)
	}
}
