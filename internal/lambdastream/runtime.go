package lambdastream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Runtime API names (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html).
const (
	apiVersion          = "2018-06-01"
	headerRequestID     = "Lambda-Runtime-Aws-Request-Id"
	headerDeadline      = "Lambda-Runtime-Deadline-Ms"
	headerFunctionARN   = "Lambda-Runtime-Invoked-Function-Arn"
	headerTraceID       = "Lambda-Runtime-Trace-Id"
	headerTenantID      = "Lambda-Runtime-Aws-Tenant-Id"
	headerResponseMode  = "Lambda-Runtime-Function-Response-Mode"
	headerErrorType     = "Lambda-Runtime-Function-Error-Type"
	headerErrorBody     = "Lambda-Runtime-Function-Error-Body"
	responseModeStream  = "streaming"
	contentTypeJSON     = "application/json"
	errTypeHandler      = "Baton.HandlerError"
	errTypeStream       = "Baton.StreamError"
	errTypePanic        = "Baton.Panic"
	errTypeInvalidEvent = "Baton.InvalidEvent"
)

// Response answers one invocation: the buffered Payload, or, when Stream
// is set, a streamed response of ContentType.
type Response struct {
	// Payload is the buffered response (JSON), sent when Stream is nil.
	Payload []byte
	// ContentType is the streamed response's content type.
	ContentType string
	// Stream writes the streamed response to w; flush sends what was
	// written so far. Its error, once the stream has started, is reported
	// in the response's error trailers.
	Stream func(ctx context.Context, w io.Writer, flush func()) error
}

// Handler answers one invocation's payload. Its error is reported to
// Lambda as a function error (POST …/error), before anything was sent.
type Handler func(ctx context.Context, payload []byte) (Response, error)

// Start runs the invocation loop against the Runtime API of
// AWS_LAMBDA_RUNTIME_API, with AWS_LAMBDA_MAX_CONCURRENCY loops side by
// side (Lambda Managed Instances; one otherwise), logging the invocation
// errors it reports to log (nil: slog.Default()). It returns only when the
// Runtime API fails or a handler panicked; the process should then exit.
func Start(h Handler, log *slog.Logger) error {
	addr := strings.TrimSpace(os.Getenv("AWS_LAMBDA_RUNTIME_API"))
	if addr == "" {
		return errors.New("AWS_LAMBDA_RUNTIME_API is not set: this binary runs in AWS Lambda (use baton dev or baton invoke locally)")
	}
	r := New(addr)
	r.Log = log
	return r.Run(context.Background(), h, lambdacontext.MaxConcurrency())
}

// Runtime is a client of one Runtime API.
type Runtime struct {
	// Log gets the invocation errors reported to Lambda (nil:
	// slog.Default()).
	Log    *slog.Logger
	base   string
	client *http.Client
}

// New returns a client of the Runtime API at addr (host:port).
func New(addr string) *Runtime {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // the Runtime API is local: never through a proxy
	return &Runtime{base: "http://" + addr + "/" + apiVersion + "/runtime/invocation/", client: &http.Client{Transport: t}}
}

func (r *Runtime) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

// Run serves invocations with h in concurrency loops (at least one) until
// ctx ends or one of them fails; it returns the first failure.
func (r *Runtime) Run(ctx context.Context, h Handler, concurrency int) error {
	if concurrency <= 1 {
		return r.loop(ctx, h, true)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancel(r.loop(ctx, h, false))
		}()
	}
	wg.Wait()
	return context.Cause(ctx)
}

func (r *Runtime) loop(ctx context.Context, h Handler, setTraceEnv bool) error {
	for {
		inv, err := r.next(ctx)
		if err != nil {
			return err
		}
		if setTraceEnv {
			// As the managed runtimes do: the AWS SDK reads the trace id
			// from the environment.
			_ = os.Setenv("_X_AMZN_TRACE_ID", inv.traceID)
		}
		if err := r.serve(ctx, inv, h); err != nil {
			return err
		}
	}
}

// invocation is one event from GET …/next.
type invocation struct {
	id, functionARN, traceID, tenantID, deadline string
	payload                                      []byte
}

func (r *Runtime) next(ctx context.Context) (invocation, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"next", nil)
	if err != nil {
		return invocation{}, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return invocation{}, fmt.Errorf("runtime API: next invocation: %w", err)
	}
	defer resp.Body.Close()
	payload, err := io.ReadAll(resp.Body)
	if err != nil {
		return invocation{}, fmt.Errorf("runtime API: read the next invocation: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return invocation{}, fmt.Errorf("runtime API: next invocation: status %d: %s", resp.StatusCode, bytes.TrimSpace(payload))
	}
	inv := invocation{id: resp.Header.Get(headerRequestID), functionARN: resp.Header.Get(headerFunctionARN),
		traceID: resp.Header.Get(headerTraceID), tenantID: resp.Header.Get(headerTenantID), deadline: resp.Header.Get(headerDeadline), payload: payload}
	if inv.id == "" {
		return invocation{}, fmt.Errorf("runtime API: next invocation without %s", headerRequestID)
	}
	return inv, nil
}

// serve answers one invocation. It returns an error only when the
// process should stop: the Runtime API failed, or the handler panicked.
func (r *Runtime) serve(ctx context.Context, inv invocation, h Handler) error {
	ms, err := strconv.ParseInt(inv.deadline, 10, 64)
	if err != nil {
		return r.fail(inv, errTypeInvalidEvent, fmt.Errorf("invalid %s %q", headerDeadline, inv.deadline))
	}
	ctx, cancel := context.WithDeadline(ctx, time.UnixMilli(ms))
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: inv.id, InvokedFunctionArn: inv.functionARN, TenantID: inv.tenantID})
	resp, err := call(func() (Response, error) { return h(ctx, inv.payload) })
	var p *panicError
	switch {
	case errors.As(err, &p):
		if ferr := r.fail(inv, errTypePanic, p); ferr != nil {
			return ferr
		}
		return fmt.Errorf("the handler panicked: %w", p)
	case err != nil:
		return r.fail(inv, errTypeHandler, err)
	case resp.Stream == nil:
		return r.post(url.PathEscape(inv.id)+"/response", contentTypeJSON, nil, bytes.NewReader(resp.Payload), nil)
	}
	return r.stream(ctx, inv, resp)
}

// call runs f, turning a panic into a *panicError.
func call(f func() (Response, error)) (resp Response, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{msg: fmt.Sprintf("panic: %v\n%s", v, debug.Stack())}
		}
	}()
	return f()
}

// panicError is a recovered panic: the process reports it and exits, as
// the managed runtimes do, since its state may be broken.
type panicError struct{ msg string }

func (p *panicError) Error() string { return p.msg }

// stream posts resp.Stream's output as a streamed response. The stream
// writes through a buffer into a pipe the POST reads, so each flush is one
// chunk on the wire. A failure after the stream started closes the pipe
// with a streamFailure, which the POST's body turns into the error
// trailers (in the transport's goroutine, after the body, as HTTP/1.1
// wants them).
func (r *Runtime) stream(ctx context.Context, inv invocation, resp Response) error {
	pr, pw := io.Pipe()
	body := &trailingBody{r: pr, trailer: http.Header{headerErrorType: nil, headerErrorBody: nil}}
	posted := make(chan error, 1)
	go func() {
		hdr := http.Header{headerResponseMode: {responseModeStream}}
		posted <- r.post(url.PathEscape(inv.id)+"/response", resp.ContentType, hdr, body, body.trailer)
	}()
	bw := bufio.NewWriterSize(pw, 32<<10)
	_, err := call(func() (Response, error) {
		return Response{}, resp.Stream(ctx, bw, func() { _ = bw.Flush() })
	})
	if err == nil {
		if err = bw.Flush(); errors.Is(err, io.ErrClosedPipe) {
			err = nil // the POST ended first; its error is reported below
		}
	}
	var p *panicError
	switch {
	case errors.As(err, &p):
		r.log().Error("the stream panicked", "request_id", inv.id, "err", p)
		_ = pw.CloseWithError(streamFailure{errTypePanic, p})
	case err != nil:
		r.log().Error("the stream failed", "request_id", inv.id, "err", err)
		_ = pw.CloseWithError(streamFailure{errTypeStream, err})
	default:
		_ = pw.Close()
	}
	if perr := <-posted; perr != nil {
		return perr
	}
	if p != nil {
		return fmt.Errorf("the stream panicked: %w", p)
	}
	return nil
}

// streamFailure ends a streamed body with error trailers.
type streamFailure struct {
	typ string
	err error
}

func (f streamFailure) Error() string { return f.err.Error() }

// trailingBody reads a streamed response and sets its error trailers when
// it ends with a streamFailure.
type trailingBody struct {
	r       io.Reader
	trailer http.Header
}

func (b *trailingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	var f streamFailure
	if errors.As(err, &f) {
		b.trailer.Set(headerErrorType, f.typ)
		b.trailer.Set(headerErrorBody, base64.StdEncoding.EncodeToString(errorPayload(f.typ, f.err)))
		return n, io.EOF
	}
	return n, err
}

// fail reports an invocation error before any response was sent.
func (r *Runtime) fail(inv invocation, typ string, err error) error {
	r.log().Error("invocation failed", "request_id", inv.id, "error_type", typ, "err", err)
	return r.post(url.PathEscape(inv.id)+"/error", contentTypeJSON, http.Header{headerErrorType: {typ}}, bytes.NewReader(errorPayload(typ, err)), nil)
}

func errorPayload(typ string, err error) []byte {
	b, _ := json.Marshal(map[string]string{"errorType": typ, "errorMessage": err.Error()})
	return b
}

// post sends a response or an error. A streamed body (trailer set) goes
// chunked on a connection closed afterwards, as the Runtime API asks.
func (r *Runtime) post(path, contentType string, hdr http.Header, body io.Reader, trailer http.Header) error {
	req, err := http.NewRequest(http.MethodPost, r.base+path, body)
	if err != nil {
		return err
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", contentType)
	if trailer != nil {
		req.ContentLength = -1 // chunked
		req.Trailer = trailer
		req.Close = true
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("runtime API: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("runtime API: POST %s: status %d: %s", path, resp.StatusCode, bytes.TrimSpace(msg))
	}
	return nil
}
