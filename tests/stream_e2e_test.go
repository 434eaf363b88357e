//go:build e2e

package tests

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-agents/baton/internal/sse"
)

// openStream opens GET /v1/runs/{id}/stream; events come on the channel
// as they are read, which closes when the stream ends.
func openStream(t *testing.T, d *dev, runID, lastEventID string) <-chan sse.Event {
	t.Helper()
	return openStreamQuery(t, d, runID, "", lastEventID)
}

// openStreamQuery is openStream with a query string (such as children=1).
func openStreamQuery(t *testing.T, d *dev, runID, query, lastEventID string) <-chan sse.Event {
	t.Helper()
	url := d.base + "/v1/runs/" + runID + "/stream"
	if query != "" {
		url += "?" + query
	}
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokAcme)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	// Do returns once the headers arrive: the server flushes them at once.
	resp, err := (&http.Client{Timeout: 90 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %v", resp.StatusCode, resp.Header)
	}
	out := make(chan sse.Event, 100)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		r := sse.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			out <- ev
		}
	}()
	return out
}

// readAll reads a stream until it ends (or a minute passes).
func readAll(t *testing.T, ch <-chan sse.Event) []sse.Event {
	t.Helper()
	var evs []sse.Event
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatalf("the stream did not end; got %+v", evs)
		}
	}
}

func endStatus(t *testing.T, evs []sse.Event) string {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Event != "end" {
		t.Fatalf("the stream did not end with end: %+v", evs)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(evs[len(evs)-1].Data), &v); err != nil {
		t.Fatal(err)
	}
	return v["status"].(string)
}

// storeModes are baton dev's argument lists for each store it can run
// on here: embedded stores always, and DynamoDB Local + fauxqs when the
// emulators are configured (as make test does).
func storeModes(t *testing.T) map[string][]string {
	t.Helper()
	modes := map[string][]string{"embedded": {"dev", "--addr", "127.0.0.1:0", "--agents", "testdata/agents.json", "--visibility-timeout", "5s"}}
	if os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT") != "" && os.Getenv("BATON_TEST_SQS_ENDPOINT") != "" {
		modes["emulators"] = devArgs(t)
	}
	return modes
}

// eachStore runs fn as one subtest per store mode, with baton dev's
// arguments for it; the test starts baton dev itself, so it is skipped
// against a deployed stack (BATON_E2E_BASE_URL).
func eachStore(t *testing.T, fn func(t *testing.T, args []string)) {
	t.Helper()
	if os.Getenv("BATON_E2E_BASE_URL") != "" {
		t.Skip("starts baton dev itself, with arguments of its own")
	}
	for mode, args := range storeModes(t) {
		t.Run(mode, func(t *testing.T) { fn(t, args) })
	}
}

// committed keeps a stream's committed events (those with an id) and its
// end.
func committed(evs []sse.Event) []sse.Event {
	var out []sse.Event
	for _, ev := range evs {
		if ev.ID != "" || ev.Event == "end" {
			out = append(out, ev)
		}
	}
	return out
}

// TestStreamEndToEnd follows runs over baton dev's HTTP server, on each
// store: the first model turn streams its text in chunks and then calls a
// slow server tool; the first token and the tool_call event arrive while
// the tool is still running (it blocks for at least a second, and until
// the test has seen both); Last-Event-ID resumes with exactly the
// remaining committed events; and a run that pauses for approval ends
// its stream with end and approval_required.
func TestStreamEndToEnd(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) { streamEndToEnd(t, args) })
}

func streamEndToEnd(t *testing.T, args []string) {
	release := make(chan struct{})
	var released, finished atomic.Bool
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Second)
		<-release
		finished.Store(true)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"in_stock":3}`)
	}))
	defer tool.Close()
	defer func() {
		if !released.Load() {
			close(release)
		}
	}()
	const env = "BATON_E2E_STREAM_TOOL_SECRET"
	t.Setenv(env, "stream-tool-secret-"+randomSuffix()+randomSuffix())
	d := startDev(t, withAgentsFile(args, writeHTTPToolAgents(t, tool.URL, env)))

	t.Run("tokens and events arrive while the tool runs; resume", func(t *testing.T) {
		const text = "Let me check the stock of A-1 for you."
		id := start(t, d, `{"agent":"e2e-http","messages":[{"role":"user","content":"stock?"}],"model":{"provider":"scripted","options":{"chunk_chars":4,"chunk_delay":"20ms"},"turns":[
			{"content":"`+text+`","tool_calls":[{"id":"call_a","name":"inventory/check_stock","parameters":{"sku":"A-1"}}]},{"content":"In stock."}]}}`)
		ch := openStream(t, d, id, "")
		var evs []sse.Event
		firstToken := -1
		timeout := time.After(time.Minute)
		for len(evs) == 0 || evs[len(evs)-1].Event != "tool_call" {
			select {
			case ev, ok := <-ch:
				if !ok {
					t.Fatalf("the stream ended before the tool call: %+v", evs)
				}
				if ev.Event == "token" && firstToken < 0 {
					firstToken = len(evs)
				}
				evs = append(evs, ev)
			case <-timeout:
				t.Fatalf("no tool_call event while the tool runs; got %+v", evs)
			}
		}
		// The tool is still blocked: the token and the event came live,
		// before it finished and before the run completed.
		if finished.Load() || firstToken < 0 {
			t.Fatalf("first token at %d, tool finished %v: %+v", firstToken, finished.Load(), evs)
		}
		var streamed strings.Builder
		chunks := 0
		for _, ev := range evs {
			if ev.Event != "token" {
				continue
			}
			var tok struct {
				Turn  int    `json:"turn"`
				Delta string `json:"delta"`
				Index int    `json:"index"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &tok); err != nil || ev.ID != "" || tok.Turn != 1 || tok.Index != chunks {
				t.Fatalf("token event %+v (%v)", ev, err)
			}
			streamed.WriteString(tok.Delta)
			chunks++
		}
		if chunks < 5 || streamed.String() != text {
			t.Fatalf("%d chunks streamed %q before the tool call", chunks, streamed.String())
		}
		released.Store(true)
		close(release)
		evs = committed(append(evs, readAll(t, ch)...))
		if st := endStatus(t, evs); st != "completed" {
			t.Fatalf("stream ended with %s", st)
		}
		for i := 1; i < len(evs)-1; i++ {
			a, _ := strconv.Atoi(evs[i-1].ID)
			b, _ := strconv.Atoi(evs[i].ID)
			if b != a+1 {
				t.Fatalf("ids not consecutive: %+v", evs)
			}
		}
		r := d.call(t, "GET", "/v1/runs/"+id+"/events?after="+evs[2].ID+"&limit=1000", tokAcme, "")
		want := r.body["events"].([]any)
		resumed := readAll(t, openStream(t, d, id, evs[2].ID))
		if endStatus(t, resumed) != "completed" || len(resumed) != len(want)+1 || len(want) != len(evs)-4 {
			t.Fatalf("resumed after %s: %d events, want %d and end", evs[2].ID, len(resumed), len(evs)-4)
		}
		for i, w := range want {
			m := w.(map[string]any)
			// A turn the live stream saw in flight has its committed
			// turn_started there as a bare id; the resumed stream, after
			// the run finished, sends it whole.
			live := evs[i+3]
			bare := live.Event == "" && live.Data == "" && resumed[i].Event == "turn_started" && live.ID == resumed[i].ID
			if resumed[i].ID != strconv.Itoa(int(m["seq"].(float64))) || resumed[i].Event != m["type"] || resumed[i] != live && !bare {
				t.Fatalf("resumed event %d: %+v, want %v", i, resumed[i], m)
			}
		}
	})

	t.Run("a pause for approval ends the stream", func(t *testing.T) {
		d := startDev(t, args) // the e2e agent, whose send_email needs approval
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"mail ann"}],"model":{"provider":"scripted","turns":[
			{"tool_calls":[{"id":"c1","name":"ability/send_email","parameters":{"to":"ann@example.com"}}]},{"content":"Done."}]}}`)
		evs := readAll(t, openStream(t, d, id, ""))
		if st := endStatus(t, evs); st != "approval_required" || evs[len(evs)-2].Event != "approval_required" {
			t.Fatalf("ended with %s after %+v", st, evs[len(evs)-2])
		}
	})
}

// TestStreamTurnStartsBeforeItsTokens: on the live stream of a
// three-turn run whose turns stream slowly, each turn's turn_started
// comes before its first token, exactly once; every committed event's
// seq reaches the stream's cursor (a turn_started announced before its
// tokens comes again as a bare id); and the committed turn_started is
// stamped when the model call began: no later than the turn's reply.
func TestStreamTurnStartsBeforeItsTokens(t *testing.T) {
	eachStore(t, func(t *testing.T, args []string) {
		d := startDev(t, args)
		id := start(t, d, `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","options":{"chunk_chars":3,"chunk_delay":"60ms"},"turns":[
			{"content":"Looking it up.","tool_calls":[{"id":"c1","name":"ability/echo","parameters":{"text":"a"}}]},
			{"content":"Checking again.","tool_calls":[{"id":"c2","name":"ability/echo","parameters":{"text":"b"}}]},
			{"content":"All done here."}]}}`)
		evs := readAll(t, openStream(t, d, id, ""))
		if endStatus(t, evs) != "completed" {
			t.Fatalf("stream %+v", evs)
		}
		starts := map[int]int{}
		ids := map[string]bool{}
		for i, ev := range evs {
			if ev.ID != "" {
				ids[ev.ID] = true
			}
			var data struct{ Turn int }
			_ = json.Unmarshal([]byte(ev.Data), &data)
			switch ev.Event {
			case "turn_started":
				starts[data.Turn]++
			case "token":
				if starts[data.Turn] != 1 {
					t.Fatalf("event %d: a token of turn %d before its turn_started: %+v", i, data.Turn, evs)
				}
			}
		}
		if starts[1] != 1 || starts[2] != 1 || starts[3] != 1 {
			t.Fatalf("turn starts %v: %+v", starts, evs)
		}
		stored := d.call(t, "GET", "/v1/runs/"+id+"/events?limit=1000", tokAcme, "").body["events"].([]any)
		replyAt := map[int]string{}
		for _, raw := range stored {
			m := raw.(map[string]any)
			if !ids[strconv.Itoa(int(m["seq"].(float64)))] {
				t.Fatalf("event %v never reached the stream's cursor", m)
			}
			if data, _ := m["data"].(map[string]any); m["type"] == "messages_updated" && data["reason"] == "model_reply" {
				replyAt[int(m["turn"].(float64))] = m["at"].(string)
			}
		}
		for _, raw := range stored {
			m := raw.(map[string]any)
			if m["type"] != "turn_started" {
				continue
			}
			started, _ := time.Parse(time.RFC3339Nano, m["at"].(string))
			replied, _ := time.Parse(time.RFC3339Nano, replyAt[int(m["turn"].(float64))])
			// A turn streams five chunks 60 ms apart: its call began at
			// least 250 ms before its reply was committed.
			if !started.Before(replied.Add(-250 * time.Millisecond)) {
				t.Fatalf("turn_started %v is not the model call's start (reply at %s)", m, replied)
			}
		}
	})
}
