package local

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
)

// APIHandler is the API Lambda's handler.
type APIHandler func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// StreamHandler serves a streamed route: either a complete (error)
// response and a nil body, or the stream's status and headers and a body
// that writes the stream, calling flush after each event.
type StreamHandler func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, func(ctx context.Context, w io.Writer, flush func()) error)

// Streams routes the requests a streamed handler serves.
type Streams struct {
	Match   func(method, path string) bool
	Handler StreamHandler
}

// bodyTimeout bounds how long a request's body may take to arrive
// (API Gateway gives up on a client that stops sending as well).
var bodyTimeout = 30 * time.Second

// WorkerHandler is the worker Lambda's handler.
type WorkerHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Proxy translates HTTP requests into API Gateway proxy events and the
// handler's responses back, as API Gateway does. Bodies are read up to
// maxBody+1 bytes, so the handler sees and rejects an oversized one.
// Requests streams matches are served by its handler, flushing the
// response after each event (streams may be zero: nothing is streamed).
//
// Paths under /iam/ are the routes API Gateway authorizes with AWS_IAM:
// with iam set, a request there must carry a valid SigV4 signature (else
// 403, as API Gateway answers) and reaches the handler with the caller in
// its request context.
//
// A body not received within bodyTimeout is answered 408 and its
// connection closed, so stalled uploads do not hold connections (and
// file descriptors) open; the deadline is lifted once the body is in, so
// a response streams as long as it needs.
func Proxy(api APIHandler, streams Streams, maxBody int, iam *SigV4) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
		body, err := io.ReadAll(io.LimitReader(r.Body, int64(maxBody)+1))
		_ = rc.SetReadDeadline(time.Time{})
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("the request body did not arrive within %s", bodyTimeout), http.StatusRequestTimeout)
			return
		}
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		req := proxyRequest(r, body)
		if proxy, ok := strings.CutPrefix(r.URL.Path, "/iam/"); ok && iam != nil {
			key, arn, err := iam.Verify(r, body)
			if err != nil {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Amzn-Errortype", "IncompleteSignatureException")
				w.WriteHeader(http.StatusForbidden)
				b, _ := json.Marshal(map[string]string{"message": err.Error()})
				_, _ = w.Write(b)
				return
			}
			req.Resource, req.PathParameters = "/iam/{proxy+}", map[string]string{"proxy": proxy}
			req.RequestContext.ResourcePath = req.Resource
			req.RequestContext.Identity.UserArn, req.RequestContext.Identity.AccessKey, req.RequestContext.Identity.Caller = arn, key, arn
		}
		if streams.Match != nil && streams.Match(r.Method, r.URL.Path) {
			resp, stream := streams.Handler(r.Context(), req)
			writeHead(w, resp)
			if stream == nil {
				_, _ = io.WriteString(w, resp.Body)
				return
			}
			flush := func() {}
			if f, ok := w.(http.Flusher); ok {
				flush = f.Flush
				flush() // the headers, at once
			}
			_ = stream(r.Context(), w, flush)
			return
		}
		resp, _ := api(r.Context(), req)
		writeHead(w, resp)
		_, _ = io.WriteString(w, resp.Body)
	})
}

// proxyRequest is the API Gateway proxy event of r.
func proxyRequest(r *http.Request, body []byte) events.APIGatewayProxyRequest {
	req := events.APIGatewayProxyRequest{
		Path: r.URL.Path, HTTPMethod: r.Method,
		Headers: map[string]string{}, MultiValueHeaders: map[string][]string{},
		QueryStringParameters: map[string]string{}, MultiValueQueryStringParameters: map[string][]string{},
		RequestContext: events.APIGatewayProxyRequestContext{RequestID: core.RandomIDs{}.NewID("req"), Stage: "dev", HTTPMethod: r.Method, Path: r.URL.Path},
	}
	// Paths under /v1/ come in on the greedy /v1/{proxy+} resource, as
	// behind API Gateway; any other path routes on itself.
	if proxy, ok := strings.CutPrefix(r.URL.Path, "/v1/"); ok && proxy != "" {
		req.Resource, req.PathParameters = "/v1/{proxy+}", map[string]string{"proxy": proxy}
	}
	for k, vs := range r.Header {
		req.Headers[k] = vs[0]
		req.MultiValueHeaders[k] = vs
	}
	// API Gateway passes the Host and the scheme the client used (an
	// A2A agent card names its absolute URL from them).
	req.Headers["Host"], req.RequestContext.DomainName = r.Host, r.Host
	if _, ok := req.Headers["X-Forwarded-Proto"]; !ok && r.TLS == nil {
		req.Headers["X-Forwarded-Proto"] = "http"
	}
	for k, vs := range r.URL.Query() {
		req.QueryStringParameters[k] = vs[0]
		req.MultiValueQueryStringParameters[k] = vs
	}
	if utf8.Valid(body) {
		req.Body = string(body)
	} else {
		req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return req
}

func writeHead(w http.ResponseWriter, resp events.APIGatewayProxyResponse) {
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(resp.StatusCode)
}

// Poll behaves like the Lambda SQS event source mapping until ctx ends:
// it receives batches, invokes the worker, and deletes the messages that
// did not fail; failed ones reappear after the visibility timeout and go
// to the dead-letter queue after the maximum receives.
func Poll(ctx context.Context, rcv core.StepReceiver, worker WorkerHandler, log *slog.Logger) {
	for ctx.Err() == nil {
		ds, err := rcv.Receive(ctx, 10, time.Second)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("receive steps", "err", err)
				time.Sleep(time.Second)
			}
			continue
		}
		if len(ds) == 0 {
			continue
		}
		resp, _ := worker(ctx, SQSEvent(ds))
		for _, d := range Succeeded(ds, resp) {
			if err := rcv.Delete(context.WithoutCancel(ctx), d.ReceiptHandle); err != nil {
				log.Warn("delete step message", "message_id", d.MessageID, "err", err)
			}
		}
	}
}

// SQSEvent is the event the Lambda event source mapping delivers for
// received messages ds.
func SQSEvent(ds []core.ReceivedMessage) events.SQSEvent {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(ds))}
	for i, d := range ds {
		ev.Records[i] = events.SQSMessage{MessageId: d.MessageID, ReceiptHandle: d.ReceiptHandle, Body: string(d.Body),
			Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(d.ReceiveCount), "MessageGroupId": d.Group, "MessageDeduplicationId": d.DedupID}}
	}
	return ev
}

// Succeeded lists the messages of ds the handler's response did not
// report as failed: those the event source mapping deletes.
func Succeeded(ds []core.ReceivedMessage, resp events.SQSEventResponse) []core.ReceivedMessage {
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var out []core.ReceivedMessage
	for _, d := range ds {
		if !failed[d.MessageID] {
			out = append(out, d)
		}
	}
	return out
}

// Options are what Serve runs.
type Options struct {
	Addr    string
	API     APIHandler
	Streams Streams
	MaxBody int
	// IAM verifies the SigV4 requests under /iam/ (nil: none verified).
	IAM      *SigV4
	Worker   WorkerHandler
	Receiver core.StepReceiver
	Pollers  int
	// Intake, when set, handles the intake queue's messages, received
	// from IntakeReceiver by IntakePollers pollers (default 2), as the
	// intake Lambda's event source mapping does; IntakeDir, when its Dir
	// is set, feeds the queue from a folder.
	Intake         WorkerHandler
	IntakeReceiver core.StepReceiver
	IntakePollers  int
	IntakeDir      IntakeDir
	// Sweep runs every SweepEvery (default 2s), as the sweeper Lambda's
	// schedule does.
	Sweep      func(ctx context.Context) error
	SweepEvery time.Duration
	Log        *slog.Logger
	// Ready is called with the server's base URL once it listens.
	Ready func(baseURL string)
	// Scheduler, when set, runs until ctx ends: the in-process scheduler
	// that fires schedules (no EventBridge Scheduler here).
	Scheduler func(ctx context.Context)
	// Clock, when set, is served at DevClockPath (--clock-offset).
	Clock *DevClock
}

// Serve serves the API on o.Addr and runs the pollers and the sweep until
// ctx ends, then shuts down gracefully.
func Serve(ctx context.Context, o Options) error {
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Streams end when Serve does: their requests' context is ctx's.
	var handler http.Handler = Proxy(o.API, o.Streams, o.MaxBody, o.IAM)
	if o.Clock != nil {
		mux := http.NewServeMux()
		mux.Handle(DevClockPath, o.Clock)
		mux.Handle("/", handler)
		handler = mux
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	var wg sync.WaitGroup
	for i := 0; i < o.Pollers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); Poll(ctx, o.Receiver, o.Worker, o.Log) }()
	}
	if o.Intake != nil {
		n := o.IntakePollers
		if n <= 0 {
			n = 2
		}
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); Poll(ctx, o.IntakeReceiver, o.Intake, o.Log) }()
		}
	}
	if o.Scheduler != nil {
		wg.Add(1)
		go func() { defer wg.Done(); o.Scheduler(ctx) }()
	}
	if o.IntakeDir.Dir != "" {
		wg.Add(1)
		go func() { defer wg.Done(); o.IntakeDir.Run(ctx) }()
	}
	every := o.SweepEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := o.Sweep(ctx); err != nil && ctx.Err() == nil {
					o.Log.Warn("sweep", "err", err)
				}
			}
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if o.Ready != nil {
		o.Ready("http://" + ln.Addr().String())
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	shutdownCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	_ = srv.Shutdown(shutdownCtx)
	cancel()
	wg.Wait()
	return nil
}
