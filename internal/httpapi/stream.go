package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/wait"
)

// Stream limits: a comment line at least every keepAliveEvery keeps
// proxies from closing an idle stream; a stream ends after
// maxStreamDuration (API Gateway's limit for a streamed response), and
// the client reconnects with Last-Event-ID.
const (
	keepAliveEvery    = 15 * time.Second
	maxStreamDuration = 15 * time.Minute
	streamPage        = 100
)

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
// resumes after that event.
func (a *API) Stream(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, StreamBody) {
	r := &request{APIGatewayProxyRequest: req}
	runID, after, err := a.openStream(ctx, r)
	if err != nil {
		status, body, hdr := a.fail(ctx, r, err, nil)
		resp := events.APIGatewayProxyResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(body)}
		for k, v := range hdr {
			resp.Headers[k] = v
		}
		return resp, nil
	}
	resp := events.APIGatewayProxyResponse{StatusCode: http.StatusOK, Headers: streamHeaders()}
	return resp, func(ctx context.Context, w io.Writer, flush func()) error {
		return a.stream(ctx, r.tenant, runID, after, w, flush, maxStreamDuration)
	}
}

// IsStream reports whether a request is for the stream route, which a
// server able to stream (baton dev, a streaming Lambda integration) sends
// to Stream instead of Handle.
func IsStream(method, path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	_, ok := match([]string{"v1", "runs", "{}", "stream"}, segs)
	return ok && method == http.MethodGet
}

func streamHeaders() map[string]string {
	return map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
}

// openStream checks a stream request: route, token, run id, cursor, and
// that the run is the tenant's.
func (a *API) openStream(ctx context.Context, r *request) (string, int64, error) {
	if !IsStream(r.HTTPMethod, r.Path) {
		return "", 0, errf(http.StatusNotFound, "route_not_found", "no stream route for %s %s", r.HTTPMethod, r.Path)
	}
	runID := strings.Split(strings.Trim(r.Path, "/"), "/")[2]
	if err := a.authenticate(ctx, r, ScopeRunsRead); err != nil {
		return "", 0, err
	}
	p, err := a.streamParams(ctx, r, runID)
	return runID, p, err
}

// streamParams checks the run id and reads the resume cursor: the
// Last-Event-ID header, else ?after=.
func (a *API) streamParams(ctx context.Context, r *request, runID string) (int64, error) {
	if err := checkRunID(runID); err != nil {
		return 0, err
	}
	after, _, err := pageParams(r)
	if err != nil {
		return 0, err
	}
	if h := strings.TrimSpace(r.header("Last-Event-ID")); h != "" {
		n, err := strconv.ParseInt(h, 10, 64)
		if err != nil || n < 0 {
			return 0, errf(http.StatusBadRequest, "invalid_parameter", "Last-Event-ID must be an event seq, got %q", h)
		}
		after = n
	}
	if _, err := a.Runner.Get(ctx, r.tenant, runID); err != nil {
		return 0, err
	}
	return after, nil
}

// getStream is the stream route behind the buffered integration (Handle):
// it writes the stream into the response for at most MaxWait, after which
// the client reconnects with Last-Event-ID, as it would after any
// disconnect.
func (a *API) getStream(ctx context.Context, r *request, p []string) (int, any, error) {
	after, err := a.streamParams(ctx, r, p[0])
	if err != nil {
		return 0, nil, err
	}
	var buf bytes.Buffer
	if err := a.stream(ctx, r.tenant, p[0], after, &buf, func() {}, a.Config.MaxWait); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, rawBody{headers: streamHeaders(), body: buf.Bytes()}, nil
}

// rawBody is a handler result sent as is, not as JSON.
type rawBody struct {
	headers map[string]string
	body    []byte
}

// stream writes the run's events after after to w until the run finishes
// or pauses (then "end" with the run view), max passes or ctx ends,
// interleaving the token deltas of the run's model turns from the turn in
// flight when it starts. Each poll reads the run, then its new delta
// batches up to the turn in flight, then its new events up to the run it
// read. A turn's deltas are all written before its reply is committed
// (durable's publisher), so they come out before the events of that
// reply: each batch is written before the first event of a later turn,
// or of its own turn but for turn_started and model_retry (committed
// before and during the model call). It reads the store sparingly: at
// once, then backing off from 100 ms to 1 s while nothing happens.
func (a *API) stream(ctx context.Context, tenant, runID string, after int64, w io.Writer, flush func(), max time.Duration) error {
	start := time.Now()
	lastWrite := start
	delay := 100 * time.Millisecond
	var cursor *core.DeltaPos
	for {
		snap, err := a.Runner.Get(ctx, tenant, runID)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if cursor == nil {
			cursor = &core.DeltaPos{Turn: snap.State.Turn + 1}
		}
		batches := a.deltaBatches(ctx, runID, snap.State.Turn+1, cursor)
		evs, err := a.Runner.Store.Events(ctx, runID, after, snap.State.NextEventSeq, streamPage)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wrote := 0
		for _, ev := range evs {
			// The deltas of a turn go before the events of its reply:
			// every event of the turn but its turn_started and
			// model_retry, which are committed before or during the call.
			for len(batches) > 0 && (batches[0].Pos.Turn < ev.Turn || batches[0].Pos.Turn == ev.Turn && ev.Type != core.EventTurnStarted && ev.Type != core.EventModelRetry) {
				if wrote, err = writeBatch(w, batches[0], wrote); err != nil || wrote < 0 {
					return err
				}
				batches = batches[1:]
			}
			b, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, b); err != nil {
				return nil // the client went away
			}
			after = ev.Seq
		}
		for _, b := range batches {
			if wrote, err = writeBatch(w, b, wrote); err != nil || wrote < 0 {
				return err
			}
		}
		if len(evs) > 0 || wrote > 0 {
			flush()
			lastWrite, delay = time.Now(), 100*time.Millisecond
		}
		if len(evs) == streamPage {
			continue
		}
		if streamEnds(snap.State.Status) {
			return a.writeEnd(ctx, snap, w, flush)
		}
		now := time.Now()
		if now.Sub(start) >= max {
			return nil
		}
		if now.Sub(lastWrite) >= keepAliveEvery {
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			flush()
			lastWrite = now
		}
		pause := min(delay, keepAliveEvery-now.Sub(lastWrite), max-now.Sub(start))
		if err := wait.Sleep(ctx, pause); err != nil {
			return nil
		}
		delay = min(delay*2, time.Second)
	}
}

// tokenData is the data of a streamed "token" or "thinking" event: the
// delta's turn, its text and its index among the deltas of the turn's
// model call (a retried call streams again from index 0).
type tokenData struct {
	Turn  int    `json:"turn"`
	Delta string `json:"delta"`
	Index int    `json:"index"`
}

// deltaBatches reads the delta batches at or after cursor of turns up to
// lastTurn and moves cursor past them. Without a delta store it reads
// nothing; a failed read is logged and skipped: deltas are best effort
// (events are not).
func (a *API) deltaBatches(ctx context.Context, runID string, lastTurn int, cursor *core.DeltaPos) []core.DeltaBatch {
	if a.Runner.Deltas == nil {
		return nil
	}
	batches, err := a.Runner.Deltas.Deltas(ctx, runID, *cursor, a.Runner.Clock.Now(), streamPage)
	if err != nil {
		if ctx.Err() == nil {
			a.Log.WarnContext(ctx, "stream: reading token deltas failed", "run_id", runID, "err", err)
		}
		return nil
	}
	for i, b := range batches {
		if b.Pos.Turn > lastTurn {
			batches = batches[:i]
			break
		}
		*cursor = b.Pos
		cursor.Batch++
	}
	return batches
}

// writeBatch writes a batch's deltas as "token" and "thinking" events
// without ids (they are ephemeral) and returns wrote plus their count, or
// -1 when the client went away.
func writeBatch(w io.Writer, b core.DeltaBatch, wrote int) (int, error) {
	for i, d := range b.Deltas {
		data, err := json.Marshal(tokenData{Turn: b.Pos.Turn, Delta: d.Text, Index: b.Index + i})
		if err != nil {
			return wrote, err
		}
		kind := core.DeltaToken
		if d.Kind == core.DeltaThinking {
			kind = core.DeltaThinking
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, data); err != nil {
			return -1, nil
		}
		wrote++
	}
	return wrote, nil
}

// streamEnds: a finished run, or one paused for a client tool or an
// approval, ends its stream.
func streamEnds(s core.RunStatus) bool {
	return core.IsTerminal(s) || s == core.StatusRuntimeToolPending || s == core.StatusApprovalRequired
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
	if _, err := fmt.Fprintf(w, "event: end\ndata: %s\n\n", b); err != nil {
		return nil
	}
	flush()
	return nil
}
