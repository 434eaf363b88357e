package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agui"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/runspec"
	"github.com/baton-agents/baton/internal/runstream"
)

// A stream ends after
// maxStreamDuration (API Gateway's limit for a streamed response), and
// the client reconnects with Last-Event-ID.
const maxStreamDuration = 15 * time.Minute

// endRetry is the reconnection time (ms) the end event asks for: a client
// that reconnects after end anyway (an EventSource does) waits this long,
// then gets the events of a run that moved on meanwhile (a pause
// answered elsewhere) or a 204 that stops it.
const endRetry = 5000

// errStreamDone: a reconnect to a run that has finished or paused, with
// no event after the client's cursor. It is answered 204 No Content, the
// HTML standard's way to stop an EventSource reconnecting.
var errStreamDone = errors.New("httpapi: the run's stream has nothing more")

// StreamBody writes an authorized stream to w, calling flush after each
// event, until the run finishes or pauses, the stream's time is up, or
// ctx ends.
type StreamBody = func(ctx context.Context, w io.Writer, flush func()) error

// Stream serves GET /v1/runs/{run_id}/stream as a live server-sent event
// stream. It authenticates and checks the run first: a failure is an
// ordinary JSON error response and a nil body. Otherwise the response
// carries the stream's headers and body writes the events: each
// committed lifecycle event as "id: <seq>", "event: <type>", "data:
// <the event's JSON>", and a final "event: end" whose data is the run
// view, once the run has finished or paused. Last-Event-ID (or ?after=)
// resumes after that event; a resume of a finished or paused run with
// nothing after it is a 204 and no stream.
func (a *API) Stream(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, StreamBody) {
	r := newRequest(req)
	var body StreamBody
	var err error
	if _, ok := match(a2aRoute, strings.Split(strings.Trim(r.Path, "/"), "/")); ok && r.HTTPMethod == http.MethodPost {
		var resp events.APIGatewayProxyResponse
		resp, body, err = a.streamA2A(ctx, r)
		if err == nil {
			a.corsHeaders(r, resp.Headers)
			return resp, body
		}
	} else {
		body, err = a.openStream(ctx, r)
	}
	if errors.Is(err, errStreamDone) {
		resp := events.APIGatewayProxyResponse{StatusCode: http.StatusNoContent, Headers: map[string]string{"Cache-Control": "no-cache"}}
		a.corsHeaders(r, resp.Headers)
		return resp, nil
	}
	if err != nil {
		status, body, hdr := a.fail(ctx, r, err, nil)
		resp := events.APIGatewayProxyResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(body)}
		for k, v := range hdr {
			resp.Headers[k] = v
		}
		a.corsHeaders(r, resp.Headers)
		return resp, nil
	}
	resp := events.APIGatewayProxyResponse{StatusCode: http.StatusOK, Headers: streamHeaders()}
	a.corsHeaders(r, resp.Headers)
	return resp, body
}

// Streamed routes: the run's event stream, the AG-UI route (and the A2A
// JSON-RPC route, a2a.go).
var (
	streamRoute = []string{"v1", "runs", "{}", "stream"}
	aguiRoute   = []string{"v1", "agents", "{}", "agui"}
)

// IsStream reports whether a request is for a streamed route (GET
// /v1/runs/{run_id}/stream, POST /v1/agents/{agent}/agui, POST
// /a2a/{agent}), which a server
// able to stream (baton dev, a streaming Lambda integration) sends to
// Stream instead of Handle.
func IsStream(method, path string) bool {
	if rest, ok := strings.CutPrefix(path, IAMPrefix+"/"); ok {
		path = "/" + rest
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	_, run := match(streamRoute, segs)
	_, agui := match(aguiRoute, segs)
	_, a2a := match(a2aRoute, segs)
	return run && method == http.MethodGet || (agui || a2a) && method == http.MethodPost
}

func streamHeaders() map[string]string {
	return map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
}

// openStream checks a stream request (route, token, body or run and
// cursor) and returns the stream's body.
func (a *API) openStream(ctx context.Context, r *request) (StreamBody, error) {
	if !IsStream(r.HTTPMethod, r.Path) {
		return nil, errf(http.StatusNotFound, "route_not_found", "no stream route for %s %s", r.HTTPMethod, r.Path)
	}
	segs := strings.Split(strings.Trim(r.Path, "/"), "/")
	if r.HTTPMethod == http.MethodPost {
		if err := a.authenticate(ctx, r, ScopeRunsWrite); err != nil {
			return nil, err
		}
		body, err := a.readBody(r)
		if err != nil {
			return nil, err
		}
		return a.agui().Open(ctx, r.tenant, r.principal(), segs[2], body, maxStreamDuration)
	}
	runID := segs[2]
	if err := a.authenticate(ctx, r, ScopeRunsRead); err != nil {
		return nil, err
	}
	after, children, err := a.streamParams(ctx, r, runID)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, w io.Writer, flush func()) error {
		return a.stream(ctx, r.tenant, runID, after, children, w, flush, maxStreamDuration)
	}, nil
}

// agui is the AG-UI adapter over this API's runner.
func (a *API) agui() agui.Handler {
	return agui.Handler{Runner: a.Runner, Validator: runspec.Validator{Agents: a.Runner.Agents, Providers: a.Config.Providers}, Log: a.Log}
}

// postAGUI is the AG-UI route behind the buffered integration (Handle):
// the stream is written into the response for at most MaxWait.
func (a *API) postAGUI(ctx context.Context, r *request, p []string) (int, any, error) {
	body, err := a.agui().Open(ctx, r.tenant, r.principal(), p[0], r.body, a.Config.MaxWait)
	if err != nil {
		return 0, nil, err
	}
	var buf bytes.Buffer
	if err := body(ctx, &buf, func() {}); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, rawBody{headers: streamHeaders(), body: buf.Bytes()}, nil
}

// streamParams checks the run id and reads the resume cursor (the
// Last-Event-ID header, else ?after=) and ?children= (1: add the child
// runs' events). A cursor at the run's last event of a run that has
// finished or paused is errStreamDone.
func (a *API) streamParams(ctx context.Context, r *request, runID string) (int64, bool, error) {
	if err := checkRunID(runID); err != nil {
		return 0, false, err
	}
	after, _, err := pageParams(r)
	if err != nil {
		return 0, false, err
	}
	children := false
	switch v, _ := r.query("children"); v {
	case "", "0", "false":
	case "1", "true":
		children = true
	default:
		return 0, false, errf(http.StatusBadRequest, "invalid_query", "children must be 1 or 0, got %q", v)
	}
	if h := strings.TrimSpace(r.header("Last-Event-ID")); h != "" {
		n, err := strconv.ParseInt(h, 10, 64)
		if err != nil || n < 0 {
			return 0, false, errf(http.StatusBadRequest, "invalid_parameter", "Last-Event-ID must be an event seq, got %q", h)
		}
		after = n
	}
	snap, err := a.Runner.Get(ctx, r.tenant, runID)
	if err != nil {
		return 0, false, err
	}
	if after > 0 && after >= snap.State.NextEventSeq-1 && runstream.Ends(snap.State.Status) {
		return 0, false, errStreamDone
	}
	return after, children, nil
}

// getStream is the stream route behind the buffered integration (Handle):
// it writes the stream into the response for at most MaxWait, after which
// the client reconnects with Last-Event-ID, as it would after any
// disconnect.
func (a *API) getStream(ctx context.Context, r *request, p []string) (int, any, error) {
	after, children, err := a.streamParams(ctx, r, p[0])
	if errors.Is(err, errStreamDone) {
		return http.StatusNoContent, rawBody{headers: map[string]string{"Cache-Control": "no-cache"}}, nil
	}
	if err != nil {
		return 0, nil, err
	}
	var buf bytes.Buffer
	if err := a.stream(ctx, r.tenant, p[0], after, children, &buf, func() {}, a.Config.MaxWait); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, rawBody{headers: streamHeaders(), body: buf.Bytes()}, nil
}

// rawBody is a handler result sent as is, not as JSON.
type rawBody struct {
	headers map[string]string
	body    []byte
}

// stream writes the run's events after after to w as server-sent
// events until the run finishes or pauses (then "end" with the run view),
// max passes or ctx ends; runstream decides what comes when.
func (a *API) stream(ctx context.Context, tenant, runID string, after int64, children bool, w io.Writer, flush func(), max time.Duration) error {
	return runstream.Follower{Runner: a.Runner, Log: a.Log, Children: children}.Follow(ctx, tenant, runID, after, max, &sseSink{a: a, w: w, flush: flush})
}

// sseSink writes a followed run as the stream route's server-sent events.
type sseSink struct {
	a     *API
	w     io.Writer
	flush func()
}

// Event writes a committed event with its seq as the id, and the start
// of a turn in flight (Seq 0) without an id, as tokens are.
func (s *sseSink) Event(_ context.Context, ev core.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if ev.Seq == 0 {
		_, err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", ev.Type, b)
	} else {
		_, err = fmt.Fprintf(s.w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, b)
	}
	if err != nil {
		return runstream.ErrGone
	}
	return nil
}

// ChildEvent writes a committed event of a child run (children=1) with
// its run's id and without an id line: the stream's cursor is the run's
// own.
func (s *sseSink) ChildEvent(_ context.Context, runID string, ev core.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	id, _ := json.Marshal(runID)
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: {\"run_id\":%s,%s\n\n", ev.Type, id, b[1:]); err != nil {
		return runstream.ErrGone
	}
	return nil
}

// Announced writes the id of a committed turn_started whose start the
// client already got, and nothing else: by the HTML standard an id
// without data moves the client's Last-Event-ID and dispatches no event.
func (s *sseSink) Announced(_ context.Context, ev core.Event) error {
	if _, err := fmt.Fprintf(s.w, "id: %d\n\n", ev.Seq); err != nil {
		return runstream.ErrGone
	}
	return nil
}

func (s *sseSink) Deltas(_ context.Context, b core.DeltaBatch) error { return writeBatch(s.w, b) }

func (s *sseSink) Flush() { s.flush() }

func (s *sseSink) KeepAlive() error {
	if _, err := io.WriteString(s.w, ": keep-alive\n\n"); err != nil {
		return runstream.ErrGone
	}
	return nil
}

func (s *sseSink) End(ctx context.Context, snap durable.Snapshot) error {
	return s.a.writeEnd(ctx, snap, s.w, s.flush)
}

// tokenData is the data of a streamed "token" or "thinking" event: the
// delta's turn, its text and its index among the deltas of the turn's
// model call (a retried call streams again from index 0).
type tokenData struct {
	Turn  int    `json:"turn"`
	Delta string `json:"delta"`
	Index int    `json:"index"`
}

// writeBatch writes a batch's deltas as "token" and "thinking" events
// without ids (they are ephemeral).
func writeBatch(w io.Writer, b core.DeltaBatch) error {
	for i, d := range b.Deltas {
		data, err := json.Marshal(tokenData{Turn: b.Pos.Turn, Delta: d.Text, Index: b.Index + i})
		if err != nil {
			return err
		}
		kind := core.DeltaToken
		if d.Kind == core.DeltaThinking {
			kind = core.DeltaThinking
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, data); err != nil {
			return runstream.ErrGone
		}
	}
	return nil
}

func (a *API) writeEnd(ctx context.Context, snap durable.Snapshot, w io.Writer, flush func()) error {
	v, err := a.Runner.View(ctx, snap, a.Config.MaxViewBytes)
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "retry: %d\nevent: end\ndata: %s\n\n", endRetry, b); err != nil {
		return nil
	}
	flush()
	return nil
}
