package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/httpapi"
	"github.com/baton-agents/baton/internal/sse"
)

// parseSSE reads a whole stream.
func parseSSE(t *testing.T, s string) ([]sse.Event, int) {
	t.Helper()
	r := sse.NewReader(strings.NewReader(s))
	evs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("stream %q: %v", s, err)
	}
	return evs, r.Comments
}

// stream opens the stream route through API.Stream and reads it whole.
func (e *env) stream(t *testing.T, runID, token string, hdr map[string]string) (events.APIGatewayProxyResponse, []sse.Event) {
	t.Helper()
	req := events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/v1/runs/" + runID + "/stream", Headers: map[string]string{"Authorization": "Bearer " + token}}
	for k, v := range hdr {
		req.Headers[k] = v
	}
	resp, body := e.api.Stream(context.Background(), req)
	if body == nil {
		return resp, nil
	}
	var b strings.Builder
	flushes := 0
	if err := body(context.Background(), &b, func() { flushes++ }); err != nil {
		t.Fatal(err)
	}
	evs, _ := parseSSE(t, b.String())
	if len(evs) > 0 && flushes == 0 {
		t.Fatal("the stream never flushed")
	}
	return resp, evs
}

func TestStreamOfARun(t *testing.T) {
	e := newEnv(t)
	st, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"mail bob"}],"model":{"provider":"scripted","turns":[
		{"tool_calls":[{"id":"c1","name":"ability/echo","parameters":{"x":1}}]},
		{"tool_calls":[{"id":"c2","name":"ability/send_email","parameters":{"to":"bob"}}]},
		{"content":"sent"}]}}`, nil)
	if st != 202 {
		t.Fatalf("start: %d %v", st, v)
	}
	runID := v["run_id"].(string)
	e.pump(t)

	// Another tenant: 404 before any stream starts; no token: 401.
	if resp, body := e.stream(t, runID, "tok-globex-1", nil); body != nil || resp.StatusCode != 404 {
		t.Fatalf("another tenant: %d %q", resp.StatusCode, resp.Body)
	}
	if resp, body := e.stream(t, runID, "nope", nil); body != nil || resp.StatusCode != 401 {
		t.Fatalf("bad token: %d", resp.StatusCode)
	}
	if resp, body := e.stream(t, runID, "tok-acme-123", map[string]string{"Last-Event-ID": "x"}); body != nil || resp.StatusCode != 400 {
		t.Fatalf("bad Last-Event-ID: %d", resp.StatusCode)
	}

	// Paused for approval: every committed event, then end with the view.
	resp, evs := e.stream(t, runID, "tok-acme-123", nil)
	if resp.StatusCode != 200 || resp.Headers["Content-Type"] != "text/event-stream" {
		t.Fatalf("stream response %d %v", resp.StatusCode, resp.Headers)
	}
	_, ev, _ := e.do(t, "GET", "/v1/runs/"+runID+"/events?limit=1000", "tok-acme-123", "", nil)
	stored := ev["events"].([]any)
	if len(evs) != len(stored)+1 {
		t.Fatalf("%d stream events for %d stored events", len(evs), len(stored))
	}
	for i, s := range stored {
		want, _ := json.Marshal(s)
		var got any
		_ = json.Unmarshal([]byte(evs[i].Data), &got)
		gotJSON, _ := json.Marshal(got)
		m := s.(map[string]any)
		if evs[i].ID != strconv.FormatInt(int64(m["seq"].(float64)), 10) || evs[i].Event != m["type"] || string(gotJSON) != string(want) {
			t.Fatalf("event %d: %+v, want %s", i, evs[i], want)
		}
	}
	end := evs[len(evs)-1]
	var view map[string]any
	if err := json.Unmarshal([]byte(end.Data), &view); err != nil || end.Event != "end" || end.ID != "" || end.Retry != 5000 || view["status"] != "approval_required" {
		t.Fatalf("last event %+v", end)
	}

	// Resume after the third event: exactly the rest.
	_, rest := e.stream(t, runID, "tok-acme-123", map[string]string{"Last-Event-ID": evs[2].ID})
	if len(rest) != len(evs)-3 || rest[0].ID != evs[3].ID {
		t.Fatalf("resumed after %s: %d events from %s; want %d from %s", evs[2].ID, len(rest), rest[0].ID, len(evs)-3, evs[3].ID)
	}
	// A reconnect after the last event of the paused run: 204 and no
	// stream (an EventSource stops), through both integrations; CORS
	// headers as on every answer.
	resp, rest = e.stream(t, runID, "tok-acme-123", map[string]string{"Last-Event-ID": evs[len(evs)-2].ID})
	if resp.StatusCode != 204 || rest != nil || resp.Body != "" {
		t.Fatalf("resumed after the last event: %d %+v", resp.StatusCode, rest)
	}
	if st, body, _ := e.doRaw(t, "/v1/runs/"+runID+"/stream?after="+evs[len(evs)-2].ID); st != 204 || body != "" {
		t.Fatalf("buffered, resumed after the last event: %d %q", st, body)
	}

	// Approve; the stream after the pause ends with the completed view.
	actions := view["pending"].(map[string]any)["actions"].([]any)
	actionID := actions[0].(map[string]any)["action_id"].(string)
	if st, b, _ := e.do(t, "POST", "/v1/runs/"+runID+"/approvals/"+actionID, "tok-acme-123", `{"decision":"accept"}`, nil); st != 202 {
		t.Fatalf("approve: %d %v", st, b)
	}
	e.pump(t)
	_, rest = e.stream(t, runID, "tok-acme-123", map[string]string{"Last-Event-ID": evs[len(evs)-2].ID})
	last := rest[len(rest)-1]
	if len(rest) < 2 || last.Event != "end" || !strings.Contains(last.Data, `"status":"completed"`) {
		t.Fatalf("after approval: %+v", rest)
	}
	if resp, _ := e.stream(t, runID, "tok-acme-123", map[string]string{"Last-Event-ID": rest[len(rest)-2].ID}); resp.StatusCode != 204 {
		t.Fatalf("reconnect to the completed run: %d", resp.StatusCode)
	}

	// The buffered integration serves the same stream in one response.
	st2, _, buffered := e.doRaw(t, "/v1/runs/"+runID+"/stream?after="+evs[2].ID)
	got, _ := parseSSE(t, buffered.Body)
	if st2 != 200 || buffered.Headers["Content-Type"] != "text/event-stream" || len(got) != len(rest)+len(evs)-3-1 || got[len(got)-1].Event != "end" {
		t.Fatalf("buffered stream: %d %v %d events", st2, buffered.Headers, len(got))
	}
	// children takes 1 or 0 (true or false); anything else is the
	// client's mistake.
	if st, body, _ := e.doRaw(t, "/v1/runs/"+runID+"/stream?children=yes"); st != 400 || !strings.Contains(body, "children must be 1 or 0") {
		t.Fatalf("children=yes: %d %s", st, body)
	}
	if st, _, _ := e.doRaw(t, "/v1/runs/"+runID+"/stream?children=1"); st != 200 {
		t.Fatalf("children=1: %d", st)
	}
	if !httpapi.IsStream("GET", "/v1/runs/r-1/stream") || httpapi.IsStream("POST", "/v1/runs/r-1/stream") || httpapi.IsStream("GET", "/v1/runs/r-1") {
		t.Fatal("IsStream")
	}
}

// doRaw is a GET through Handle whose body is not JSON.
func (e *env) doRaw(t *testing.T, path string) (int, string, events.APIGatewayProxyResponse) {
	t.Helper()
	p, query, _ := strings.Cut(path, "?")
	req := events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: p, Headers: map[string]string{"authorization": "Bearer tok-acme-123"}, QueryStringParameters: map[string]string{}}
	if k, v, ok := strings.Cut(query, "="); ok {
		req.QueryStringParameters[k] = v
	}
	resp, err := e.api.Handle(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Body, resp
}

// startTwoTurns starts a run whose scripted model calls ability/echo,
// then answers; its steps are not performed yet.
func (e *env) startTwoTurns(t *testing.T) string {
	t.Helper()
	st, v, _ := e.do(t, "POST", "/v1/runs", "tok-acme-123", `{"agent":"demo","messages":[{"role":"user","content":"echo"}],"model":{"provider":"scripted","turns":[
		{"content":"Hello","tool_calls":[{"id":"c1","name":"ability/echo","parameters":{"x":1}}]},
		{"content":"world"}]}}`, nil)
	if st != 202 {
		t.Fatalf("start: %d %v", st, v)
	}
	return v["run_id"].(string)
}

// openStream follows a run's stream in the background; done receives
// the stream's error when it ends.
func (e *env) openStream(runID string) (*sse.Reader, <-chan error) {
	_, body := e.api.Stream(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/v1/runs/" + runID + "/stream",
		Headers: map[string]string{"Authorization": "Bearer tok-acme-123"}})
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- body(context.Background(), pw, func() {}); _ = pw.Close() }()
	return sse.NewReader(pr), done
}

// TestStreamInterleavesTokenDeltas: the stream writes the delta batches
// of the turn in flight as token and thinking events without ids, holds
// the deltas of a later turn until the events of the turn before are
// out, and ends as before.
func TestStreamInterleavesTokenDeltas(t *testing.T) {
	e := newEnv(t)
	runID := e.startTwoTurns(t)
	put := func(turn, index int, deltas ...core.TokenDelta) {
		t.Helper()
		b := core.DeltaBatch{RunID: runID, Pos: core.DeltaPos{Turn: turn, Attempt: 1, Batch: index}, Index: index, Deltas: deltas, ExpiresAt: e.clock.T.Add(time.Minute)}
		if err := e.eng.Deltas.PutDeltas(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	put(1, 0, core.TokenDelta{Kind: core.DeltaThinking, Text: "hmm"}, core.TokenDelta{Kind: core.DeltaToken, Text: "Hel"})
	put(1, 2, core.TokenDelta{Kind: core.DeltaToken, Text: "lo"})
	put(2, 0, core.TokenDelta{Kind: core.DeltaToken, Text: "world"})

	r, done := e.openStream(runID)
	next := func() sse.Event {
		t.Helper()
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("stream ended early: %v", err)
		}
		return ev
	}
	var got []sse.Event
	for len(got) < 5 { // run_started, turn_started, …: read until the turn-1 deltas are out
		got = append(got, next())
		if n := len(got); got[n-1].Event == "token" && strings.Contains(got[n-1].Data, `"lo"`) {
			break
		}
	}
	e.pump(t)
	for got[len(got)-1].Event != "end" {
		got = append(got, next())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var deltas []string
	lastTurn1Event, world := -1, -1
	for i, ev := range got {
		if ev.Event == "token" || ev.Event == "thinking" {
			if ev.ID != "" {
				t.Fatalf("delta with an id: %+v", ev)
			}
			deltas = append(deltas, ev.Event+" "+ev.Data)
			if strings.Contains(ev.Data, `"world"`) {
				world = i
			}
			continue
		}
		if strings.Contains(ev.Data, `"turn":1`) && ev.Event != "end" {
			lastTurn1Event = i
		}
	}
	want := []string{`thinking {"turn":1,"delta":"hmm","index":0}`, `token {"turn":1,"delta":"Hel","index":1}`, `token {"turn":1,"delta":"lo","index":2}`, `token {"turn":2,"delta":"world","index":0}`}
	if strings.Join(deltas, "\n") != strings.Join(want, "\n") {
		t.Fatalf("deltas:\n%s\nwant:\n%s", strings.Join(deltas, "\n"), strings.Join(want, "\n"))
	}
	if world < lastTurn1Event {
		t.Fatalf("a turn-2 delta (event %d) came before the last turn-1 event (%d): %+v", world, lastTurn1Event, got)
	}
	if !strings.Contains(got[len(got)-1].Data, `"status":"completed"`) {
		t.Fatalf("end: %+v", got[len(got)-1])
	}
}

// TestStreamStartsATurnBeforeItsTokens: a turn's turn_started is
// committed with its reply, after its tokens were streamed; the stream
// still never shows a turn's tokens before that turn's start. The turn in
// flight gets a turn_started without an id (at: its model call's start,
// the delta batch's attempt) before its first token, and the committed
// turn_started later comes as a bare id (it moves Last-Event-ID and
// dispatches nothing), so each turn starts exactly once.
func TestStreamStartsATurnBeforeItsTokens(t *testing.T) {
	e := newEnv(t)
	runID := e.startTwoTurns(t)
	callStart := e.clock.T.Add(-1500 * time.Millisecond).Truncate(time.Millisecond)
	put := func(turn int, text string) {
		t.Helper()
		b := core.DeltaBatch{RunID: runID, Pos: core.DeltaPos{Turn: turn, Attempt: callStart.UnixMilli()}, Deltas: []core.TokenDelta{{Kind: core.DeltaToken, Text: text}}, ExpiresAt: e.clock.T.Add(time.Minute)}
		if err := e.eng.Deltas.PutDeltas(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	put(1, "Hello")
	put(2, "world")

	r, done := e.openStream(runID)
	var got []sse.Event
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("stream ended early: %v (%+v)", err, got)
		}
		got = append(got, ev)
		if ev.Event == "token" {
			break // turn 1 is in flight: its reply is not committed yet
		}
	}
	n := len(got)
	if n < 2 || got[n-2].Event != "turn_started" || got[n-2].ID != "" {
		t.Fatalf("the turn in flight's token without its start before it: %+v", got)
	}
	var start core.Event
	if err := json.Unmarshal([]byte(got[n-2].Data), &start); err != nil || start.Turn != 1 || !start.At.Equal(callStart) || start.Seq != 0 {
		t.Fatalf("the start of turn 1: %s (%v)", got[n-2].Data, err)
	}
	e.pump(t)
	for got[len(got)-1].Event != "end" {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("stream ended early: %v", err)
		}
		got = append(got, ev)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	starts, bareIDs := map[int]int{}, 0
	for i, ev := range got {
		switch {
		case ev.Event == "" && ev.Data == "":
			bareIDs++
		case ev.Event == "turn_started":
			var s core.Event
			_ = json.Unmarshal([]byte(ev.Data), &s)
			starts[s.Turn]++
		case ev.Event == "token":
			var tok struct{ Turn int }
			_ = json.Unmarshal([]byte(ev.Data), &tok)
			if starts[tok.Turn] != 1 {
				t.Fatalf("event %d: a token of turn %d before its start: %+v", i, tok.Turn, got)
			}
		}
	}
	// Turn 1 was in flight (a start, then its committed turn_started as a
	// bare id); turn 2 was committed by the time the stream read it (its
	// committed turn_started, then its tokens) or, when the stream woke
	// between the steps, in flight like turn 1.
	if starts[1] != 1 || starts[2] != 1 || bareIDs < 1 || bareIDs > 2 {
		t.Fatalf("starts %v, bare ids %d: %+v", starts, bareIDs, got)
	}
	// The committed turn_started events keep their seq on the events
	// route, and their time is the model call's start when the worker
	// knows it (here the clock is fixed, so it is the commit's).
	_, evs, _ := e.do(t, "GET", "/v1/runs/"+runID+"/events?limit=100", "tok-acme-123", "", nil)
	ids := map[string]bool{}
	for _, ev := range got {
		if ev.ID != "" {
			ids[ev.ID] = true
		}
	}
	for _, raw := range evs["events"].([]any) {
		m := raw.(map[string]any)
		if seq := strconv.Itoa(int(m["seq"].(float64))); !ids[seq] {
			t.Fatalf("event %s (%s) never reached the stream's cursor: %+v", seq, m["type"], got)
		}
	}
}
