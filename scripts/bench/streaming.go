package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
)

// Token streaming: runs on baton dev's server (app.Serve on 127.0.0.1)
// whose model streams a fixed number of deltas per model turn at a fixed
// pace, each one output token, noting when it emits each; clients start
// runs over HTTP and read GET /v1/runs/{id}/stream, noting when each
// token event arrives. The delay of a token is its arrival minus its
// emission (one process, one clock). On the emulators, the DynamoDB
// requests are attributed by their context and their keys (see
// streamCounters).

// streamPlan is the streaming part's workload.
type streamPlan struct {
	// runs run at once; each has toolTurns tool turns and the answer, so
	// toolTurns+1 streamed model turns.
	runs, toolTurns int
	// deltas per model turn, of chars characters each, one every every.
	deltas, chars int
	every         time.Duration
}

// fullStreamPlan streams about 100 tokens/s, like a real model: 300
// tokens of 4 characters per turn, 3 turns per run, 4 runs at once
// (about 10 s).
func fullStreamPlan() streamPlan {
	return streamPlan{runs: 4, toolTurns: 2, deltas: 300, chars: 4, every: 10 * time.Millisecond}
}

// smokeStreamPlan checks the harness in a fraction of a second.
func smokeStreamPlan() streamPlan {
	return streamPlan{runs: 1, toolTurns: 1, deltas: 20, chars: 4, every: time.Millisecond}
}

// streamDeadline bounds the streaming part on one runtime.
const streamDeadline = 60 * time.Second

// streamGateWait is the longest a model call waits for its run's stream
// to open before streaming anyway.
const streamGateWait = 10 * time.Second

// streamResult is the streaming part on one runtime.
type streamResult struct {
	Runtime       string  `json:"runtime"`
	Runs          int     `json:"runs"`
	Pollers       int     `json:"pollers"`
	ModelTurns    int     `json:"model_turns_per_run"`
	DeltasPerTurn int     `json:"tokens_per_turn"`
	DeltaChars    int     `json:"chars_per_token"`
	EveryMS       float64 `json:"ms_between_tokens"`
	// Tokens were emitted by the model; Received arrived as token events
	// (duplicates not counted), Missing never did.
	Tokens     int `json:"tokens_emitted"`
	Received   int `json:"tokens_received"`
	Missing    int `json:"tokens_missing"`
	Duplicates int `json:"tokens_duplicated,omitempty"`
	// DelayMS is from the model's emission of a token to the client's
	// reading its token event.
	DelayMS dist `json:"delay_ms"`
	// FirstMS is DelayMS of each turn's first token alone: how soon a
	// client sees a turn begin.
	FirstMS dist `json:"first_token_delay_ms"`
	// Seconds is the wall time of the runs; StreamSeconds the sum of the
	// streams' open times (response headers to the end event).
	Seconds       float64 `json:"seconds"`
	StreamSeconds float64 `json:"stream_seconds"`
	// DynamoDB is what the deltas cost on the emulators.
	DynamoDB *streamDynamo `json:"dynamodb,omitempty"`
}

// streamDynamo is the DynamoDB side of streaming.
type streamDynamo struct {
	// Writes are the token batches the workers put.
	Writes opStat `json:"delta_writes"`
	// Reads are the stream's queries by operation; Polls counts its
	// token batch queries (one per poll).
	Reads map[string]opStat `json:"stream_reads"`
	Polls int               `json:"polls"`
	// ReadRCU is the reads' RCU as the endpoint reported them; BilledRCU
	// counts each query reported at 0 RCU as 1, the minimum of a
	// strongly consistent read (every stream query is one).
	ReadRCU   float64 `json:"read_rcu_reported"`
	BilledRCU float64 `json:"read_rcu_billed"`
	// Per 1,000 streamed tokens, and per second of an open stream.
	WritesPer1k   float64 `json:"writes_per_1k_tokens"`
	WCUPer1k      float64 `json:"wcu_per_1k_tokens"`
	WriteUSDPer1k float64 `json:"write_usd_per_1k_tokens"`
	QueriesPerSec float64 `json:"queries_per_stream_second"`
	RCUPerSec     float64 `json:"rcu_per_stream_second"`
	RCUPer1k      float64 `json:"rcu_per_1k_tokens"`
	ReadUSDPer1k  float64 `json:"read_usd_per_1k_tokens"`
}

// tokenKey names one streamed token.
type tokenKey struct {
	run         string
	turn, index int
}

// streamModel is the workload's model (loopModel's tool calls and
// answer) streaming each turn's content as plan.deltas tokens when the
// call streams, once its run's stream is open: a real model's time to
// its first token gives a client that opens the stream right after the
// start as much time.
type streamModel struct {
	plan streamPlan

	mu      sync.Mutex
	emitted map[tokenKey]time.Time
	gates   map[string]chan struct{}
}

func newStreamModel(p streamPlan) *streamModel {
	return &streamModel{plan: p, emitted: map[tokenKey]time.Time{}, gates: map[string]chan struct{}{}}
}

// gate is the channel closed once runID's stream is open.
func (m *streamModel) gate(runID string) chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.gates[runID]
	if !ok {
		g = make(chan struct{})
		m.gates[runID] = g
	}
	return g
}

// opened lets runID's model calls stream.
func (m *streamModel) opened(runID string) {
	g := m.gate(runID)
	m.mu.Lock()
	defer m.mu.Unlock()
	select {
	case <-g:
	default:
		close(g)
	}
}

// text is a turn's content: deltas × chars printable characters.
func (m *streamModel) text() string { return blob(m.plan.deltas * m.plan.chars) }

// Complete streams the turn's content, then returns it with the tool
// call or answer of loopModel.
func (m *streamModel) Complete(ctx context.Context, req core.ModelRequest) (core.ModelReply, error) {
	reply, err := loopModel{}.Complete(ctx, req)
	if err != nil {
		return reply, err
	}
	text := m.text()
	reply.Content = text
	reply.Usage = map[string]any{"prompt_tokens": json.Number("20"), "completion_tokens": json.Number(strconv.Itoa(m.plan.deltas))}
	if !core.StreamsTokens(ctx) {
		return reply, nil
	}
	select {
	case <-m.gate(req.RunID):
	case <-time.After(streamGateWait):
	case <-ctx.Done():
		return core.ModelReply{}, ctx.Err()
	}
	tick := time.NewTicker(m.plan.every)
	defer tick.Stop()
	for i := 0; i < m.plan.deltas; i++ {
		if i > 0 {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return core.ModelReply{}, ctx.Err()
			}
		}
		k := tokenKey{req.RunID, req.Turn, i}
		m.mu.Lock()
		if _, ok := m.emitted[k]; !ok {
			m.emitted[k] = time.Now()
		}
		m.mu.Unlock()
		core.EmitToken(ctx, core.TokenDelta{Kind: core.DeltaToken, Text: text[i*m.plan.chars : (i+1)*m.plan.chars]})
	}
	return reply, nil
}

// streamCounters attributes the DynamoDB requests of a served runtime:
// those made while serving an HTTP request (their context carries the
// net/http server's local address) to api, the others (the pollers'
// steps, the sweeper, setup) to background.
type streamCounters struct {
	api, background *recorder
}

func newStreamCounters() *streamCounters {
	return &streamCounters{api: newRecorder(), background: newRecorder()}
}

func (c *streamCounters) pick(ctx context.Context) *recorder {
	if ctx.Value(http.LocalAddrContextKey) != nil {
		return c.api
	}
	return c.background
}

// streamReadOps are the stream's DynamoDB reads, all queries: each poll
// reads the run state and its token batches, and its events when there
// are new ones; the end event's view reads the events and tool records
// (and the transcript, unless cached). The start's requests (token,
// session head, idempotency record, create) are GetItem and writes.
var streamReadOps = []string{opStateRead, opDeltaRead, opEventRead, opToolRecordRead, opTranscriptRead, "dynamodb:Query"}

// streaming runs the streaming part on the in-memory stores and, when
// configured, on the emulators.
func streaming(ctx context.Context, o options, progress func(string, ...any)) ([]streamResult, error) {
	p := fullStreamPlan()
	if o.smoke {
		p = smokeStreamPlan()
	}
	var out []streamResult
	m := newStreamModel(p)
	mem, err := newDist(ctx, rtMemory, memoryConfig(), app.Deps{Model: core.ModelRouter{benchProvider: m}, WrapQueue: singleReceives}, o.log, 0)
	if err != nil {
		return nil, err
	}
	r, err := streamOn(ctx, rtMemory, mem.app, m)
	if err != nil {
		return nil, err
	}
	out = append(out, r)
	progress("streaming: memory, %d tokens: delay p50 %.0f ms", r.Tokens, r.DelayMS.P50)
	if o.smoke || o.ddbEndpoint == "" || o.sqsEndpoint == "" {
		return out, nil
	}
	// baton dev wakes a stream on its own writes; the API Lambda, whose
	// run writers are other processes, polls.
	for _, mode := range []struct {
		runtime    string
		oneProcess bool
	}{{rtEmulators, true}, {rtEmulatorsPolling, false}} {
		m := newStreamModel(p)
		c := newStreamCounters()
		err = withEmulators(ctx, o, mode.oneProcess, app.Deps{Model: core.ModelRouter{benchProvider: m}, WrapQueue: singleReceives, InstrumentAWS: instrumentWith(c.pick)}, func(emu *distRuntime) error {
			r, err := streamOn(ctx, mode.runtime, emu.app, m)
			if err != nil {
				return err
			}
			r.DynamoDB = c.dynamo(r)
			out = append(out, r)
			progress("streaming: %s, %d tokens: delay p50 %.0f ms, %d delta writes", mode.runtime, r.Tokens, r.DelayMS.P50, r.DynamoDB.Writes.Calls)
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// rtEmulatorsPolling is the streaming part's emulators runtime whose
// streams poll the table, as the API Lambda's do.
const rtEmulatorsPolling = "emulators, polling"

// singleReceives makes the local pollers receive one message at a time,
// as an event source mapping with batch size 1 does: batches of several
// runs' steps would run their model turns one after the other.
func singleReceives(q app.Queue) app.Queue { return oneByOne{q} }

type oneByOne struct{ app.Queue }

// Receive receives at most one message.
func (q oneByOne) Receive(ctx context.Context, _ int, wait time.Duration) ([]core.ReceivedMessage, error) {
	return q.Queue.Receive(ctx, 1, wait)
}

// dynamo sums up the counted requests of r's runs.
func (c *streamCounters) dynamo(r streamResult) *streamDynamo {
	d := &streamDynamo{Writes: c.background.finish()[opDeltaWrite], Reads: map[string]opStat{}}
	var reads opStat
	for op, s := range c.api.finish() {
		if contains(streamReadOps, op) {
			d.Reads[op] = s
			reads.add(s)
		}
	}
	d.Polls = d.Reads[opDeltaRead].Calls
	per1k := safeDiv(1000, float64(r.Tokens))
	d.WritesPer1k = float64(d.Writes.Calls) * per1k
	d.WCUPer1k = d.Writes.WCU * per1k
	d.WriteUSDPer1k = d.WCUPer1k * priceWRU
	d.ReadRCU, d.BilledRCU = reads.RCU, reads.RCU+float64(reads.ZeroRCUQueries)
	d.QueriesPerSec = safeDiv(float64(reads.Calls), r.StreamSeconds)
	d.RCUPerSec = safeDiv(d.BilledRCU, r.StreamSeconds)
	d.RCUPer1k = d.BilledRCU * per1k
	d.ReadUSDPer1k = d.RCUPer1k * priceRRU
	return d
}

// streamOn serves a, starts the plan's runs over HTTP at once, reads
// their streams to the end and measures the tokens' delays.
func streamOn(ctx context.Context, runtime string, a *app.App, m *streamModel) (streamResult, error) {
	p := m.plan
	res := streamResult{Runtime: runtime, Runs: p.runs, Pollers: 2 * p.runs, ModelTurns: p.toolTurns + 1, DeltasPerTurn: p.deltas, DeltaChars: p.chars, EveryMS: ms(p.every)}
	ctx, cancel := context.WithTimeout(ctx, streamDeadline)
	defer cancel()
	token := app.NewToken("bench")
	if err := a.PutToken(ctx, app.Token{Token: token, Tenant: tenant}); err != nil {
		return res, err
	}
	base, stop, err := serve(ctx, a, res.Pollers)
	if err != nil {
		return res, err
	}
	defer stop()
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()

	began := time.Now()
	streams := make([]streamRead, p.runs)
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			streams[i] = streamRun(ctx, client, base, token, m)
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(began).Seconds()

	var delays, firsts []float64
	arrived := map[tokenKey]time.Time{}
	for _, s := range streams {
		if s.err != nil {
			return res, fmt.Errorf("streaming (%s): %w", res.Runtime, s.err)
		}
		res.StreamSeconds += s.open.Seconds()
		res.Duplicates += s.duplicates
		for k, t := range s.tokens {
			arrived[k] = t.at
		}
		if err := s.check(m); err != nil {
			return res, fmt.Errorf("streaming (%s): %w", res.Runtime, err)
		}
	}
	m.mu.Lock()
	for k, at := range m.emitted {
		res.Tokens++
		if got, ok := arrived[k]; ok {
			res.Received++
			delays = append(delays, ms(got.Sub(at)))
			if k.index == 0 {
				firsts = append(firsts, ms(got.Sub(at)))
			}
		} else {
			res.Missing++
		}
	}
	m.mu.Unlock()
	if want := p.runs * (p.toolTurns + 1) * p.deltas; res.Tokens != want {
		return res, fmt.Errorf("streaming (%s): the model emitted %d tokens, want %d (did the runs stream?)", res.Runtime, res.Tokens, want)
	}
	if res.Received == 0 {
		return res, fmt.Errorf("streaming (%s): no token event arrived", res.Runtime)
	}
	res.DelayMS, res.FirstMS = distOf(delays), distOf(firsts)
	return res, nil
}

// serve runs a's local server, pollers and sweeper on 127.0.0.1 until
// stop, which waits for them to end.
func serve(ctx context.Context, a *app.App, pollers int) (string, func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- a.Serve(ctx, app.ServeOptions{Addr: "127.0.0.1:0", Pollers: pollers, Ready: func(u string) { ready <- u }})
	}()
	select {
	case base := <-ready:
		return base, func() { cancel(); <-done }, nil
	case err := <-done:
		cancel()
		return "", nil, fmt.Errorf("serve: %w", err)
	}
}

// arrival is a token event as the client read it.
type arrival struct {
	at    time.Time
	delta string
}

// streamRead is what a client read from one run's stream.
type streamRead struct {
	runID      string
	tokens     map[tokenKey]arrival
	duplicates int
	status     string
	open       time.Duration
	err        error
}

// check verifies a run: it completed, and every token event carries the
// text the model emitted at its turn and index.
func (s streamRead) check(m *streamModel) error {
	if s.status != core.StatusCompleted {
		return fmt.Errorf("run %s ended %q, want %q", s.runID, s.status, core.StatusCompleted)
	}
	text := m.text()
	for k, a := range s.tokens {
		if k.index < 0 || k.index >= m.plan.deltas || a.delta != text[k.index*m.plan.chars:(k.index+1)*m.plan.chars] {
			return fmt.Errorf("run %s: token %d of turn %d is %q, not what the model emitted", s.runID, k.index, k.turn, a.delta)
		}
	}
	return nil
}

// streamRun starts a run over HTTP, opens its stream at once and reads
// it to its end event, noting when each token event arrives; the run's
// model streams once the first event has arrived.
func streamRun(ctx context.Context, client *http.Client, base, token string, m *streamModel) streamRead {
	s := streamRead{tokens: map[tokenKey]arrival{}}
	body, err := json.Marshal(map[string]any{
		"agent":    agentSlug,
		"messages": []map[string]string{{"role": string(core.RoleUser), "content": userMessage()[0].Content}},
		"model":    workload{Turns: m.plan.toolTurns, ResultBytes: 100}.spec(),
	})
	if err != nil {
		s.err = err
		return s
	}
	var view struct {
		RunID string `json:"run_id"`
	}
	if s.err = call(ctx, client, http.MethodPost, base+"/v1/runs", token, body, http.StatusAccepted, func(r io.Reader) error {
		return json.NewDecoder(r).Decode(&view)
	}); s.err != nil {
		return s
	}
	s.runID = view.RunID
	defer m.opened(s.runID) // never leave a model call waiting
	s.err = call(ctx, client, http.MethodGet, base+"/v1/runs/"+s.runID+"/stream", token, nil, http.StatusOK, func(r io.Reader) error {
		opened := time.Now()
		defer func() { s.open = time.Since(opened) }()
		return readEvents(r, func(event, data string, at time.Time) error {
			m.opened(s.runID)
			switch event {
			case core.DeltaToken, core.DeltaThinking:
				var d struct {
					Turn  int    `json:"turn"`
					Delta string `json:"delta"`
					Index int    `json:"index"`
				}
				if err := json.Unmarshal([]byte(data), &d); err != nil {
					return fmt.Errorf("%s event %q: %w", event, data, err)
				}
				k := tokenKey{s.runID, d.Turn, d.Index}
				if _, dup := s.tokens[k]; dup {
					s.duplicates++
					return nil
				}
				s.tokens[k] = arrival{at: at, delta: d.Delta}
			case "end":
				var v struct {
					Status string `json:"status"`
				}
				if err := json.Unmarshal([]byte(data), &v); err != nil {
					return fmt.Errorf("end event %q: %w", data, err)
				}
				s.status = v.Status
				return errEndOfStream
			}
			return nil
		})
	})
	if s.err == nil && s.status == "" {
		s.err = fmt.Errorf("run %s: the stream closed without an end event", s.runID)
	}
	return s
}

// call makes a request with the bearer token and hands the response body
// to read if the status is want.
func call(ctx context.Context, client *http.Client, method, url, token string, body []byte, want int, read func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, url, resp.StatusCode, want, b)
	}
	return read(resp.Body)
}

// errEndOfStream stops readEvents after the end event.
var errEndOfStream = errors.New("end of stream")

// readEvents parses a server-sent event stream, calling f with each
// event's type and data and the time its data line was read, until f
// returns errEndOfStream (nil is returned), another error, or the body
// ends.
func readEvents(r io.Reader, f func(event, data string, at time.Time) error) error {
	br := bufio.NewReader(r)
	event, data, at := "message", "", time.Time{}
	for {
		line, err := br.ReadString('\n')
		now := time.Now()
		if line = strings.TrimRight(line, "\r\n"); line == "" && err == nil {
			if data != "" {
				if ferr := f(event, data, at); errors.Is(ferr, errEndOfStream) {
					return nil
				} else if ferr != nil {
					return ferr
				}
			}
			event, data = "message", ""
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read stream: %w", err)
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			data, at = value, now
		}
	}
}

// ---- report ----

// streamingMarkdown is the report's token streaming section.
func streamingMarkdown(rs []streamResult) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	r0 := rs[0]
	p("## Token streaming\n\n")
	p("Design: while a worker runs a streamed model turn, the provider hands each delta to a publisher that writes a turn's first delta at once and gathers the later ones until a batch holds 18 (DeltaBatchDeltas) or 4 KiB of text (DeltaBatchBytes), or 250 ms passed (DeltaWindow) — an adaptive window, as long as the model takes for 18 tokens — and writes each batch as one short-lived item in the run's partition (one PutItem, sort key DLT#turn#attempt#batch, DynamoDB TTL 10 minutes; a failed write drops the batch, never the step). GET /v1/runs/{id}/stream reads the run state, its new token batches and its new events, at once and then backing off from 100 ms to 1 s while nothing arrives; while a turn's batches come, it reads only the batches, just before the next one is due and then every 15 ms until it is there, with a full read at least every 250 ms (that is the API Lambda's stream, the `emulators, polling` row; `baton dev`, whose API, pollers and sweeper are one process, wakes the stream when that process writes a batch or commits the run instead, on the embedded store as on DynamoDB: the `memory` and `emulators` rows, with a read every second for safety's sake). It writes `event: token` with data {turn, delta, index} before the events of the turn's reply. The committed reply, transcript and events are the same as without streaming and are not counted here.\n\n")
	p("Workload: runs at once: %d, on `baton dev`'s server (app.Serve on 127.0.0.1 with %d pollers receiving one message at a time, and the sweeper), each started with POST /v1/runs and its stream opened right after; model turns per run: %d (%d with a tool call, then the answer), each streaming %d tokens of %d characters, one every %.0f ms (about %.0f tokens/s), once the run's stream has delivered its first event (a real model's time to first token gives a client that long). Delay: from the provider's EmitToken of a token to the client's reading of its token event's data line (one process, one clock), over every token of every run.\n\n",
		r0.Runs, r0.Pollers, r0.ModelTurns, r0.ModelTurns-1, r0.DeltasPerTurn, r0.DeltaChars, r0.EveryMS, 1000/r0.EveryMS)
	p("| runtime | tokens | received | missing | delay p50 ms | p99 ms | max ms | mean ms | first token of a turn p50 ms | p99 ms | runs' wall s |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rs {
		p("| %s | %d | %d | %d | **%.0f** | %.0f | %.0f | %.0f | **%.0f** | %.0f | %.1f |\n", r.Runtime, r.Tokens, r.Received, r.Missing, r.DelayMS.P50, r.DelayMS.P99, r.DelayMS.Max, r.DelayMS.Mean, r.FirstMS.P50, r.FirstMS.P99, r.Seconds)
	}
	p("\nTargets on the emulators (`baton dev`; reported, not asserted): delay p50 ≤ 100 ms and p99 ≤ 250 ms, first token of a turn p50 ≤ 100 ms, ≤ 60 writes and ≤ 200 reads per 1,000 tokens. A token waits for its batch to fill (at 100 tokens/s and 18 a batch, 85 ms on average: the least that ≤ 60 writes per 1,000 tokens allow is 83 ms), the batch's write, then the stream's next read.")
	for _, r := range rs {
		if r.Duplicates > 0 {
			p(" %s: %d token events arrived twice (a retried model call streams again).", r.Runtime, r.Duplicates)
		}
	}
	p("\n\n")
	for _, r := range rs {
		d := r.DynamoDB
		if d == nil {
			continue
		}
		w, per1k := d.Writes, safeDiv(1000, float64(r.Tokens))
		reads := opStat{}
		for _, s := range d.Reads {
			reads.add(s)
		}
		p("### DynamoDB per 1,000 streamed tokens (%s)\n\n", r.Runtime)
		p("Each delta counts as one output token.\n\n")
		p("| | requests | capacity units | $ on demand |\n|---|--:|--:|--:|\n")
		p("| token batch writes (PutItem DLT#…) | %.1f | %.1f WCU | %.7f |\n", d.WritesPer1k, d.WCUPer1k, d.WriteUSDPer1k)
		p("| stream reads (one open stream per run) | %.1f | %.1f RCU | %.7f |\n", float64(reads.Calls)*per1k, d.RCUPer1k, d.ReadUSDPer1k)
		p("| **total** | %.1f | | **%.7f** |\n\n", d.WritesPer1k+float64(reads.Calls)*per1k, d.WriteUSDPer1k+d.ReadUSDPer1k)
		p("Writes: %d PutItem requests for %d tokens (%.1f tokens per batch), items of %.0f B on average by DynamoDB's size rules, %.0f WCU as DynamoDB Local reported them (1 per started KB).\n\n",
			w.Calls, r.Tokens, safeDiv(float64(r.Tokens), float64(w.Calls)), safeDiv(float64(w.ItemBytes), float64(w.Calls)), w.WCU)
		p("Reads: %d polls over %.1f s of open streams: **%.1f queries/s and %.1f RCU/s per open stream**, all strongly consistent (%s). DynamoDB Local reported %.0f RCU, 0 for the %d queries that found nothing; they are counted at 1 RCU each, the least a strongly consistent read is billed (an upper bound if DynamoDB bills an empty query less), %.0f RCU in all. Reads per 1,000 tokens depend on the model's pace (here about %.0f tokens/s per stream), the per-second figures do not.\n\n",
			d.Polls, r.StreamSeconds, d.QueriesPerSec, d.RCUPerSec, readOpsText(d.Reads), d.ReadRCU, reads.ZeroRCUQueries, d.BilledRCU, 1000/r.EveryMS)
		p("How it was counted: the DynamoDB client's middleware (as for the steps) names each request by its keys: a PutItem with sort key DLT#… writes a token batch; a Query of a run's partition reads token batches over DLT#…, events over EVT#…, the run state with begins_with STATE. A request made while serving an HTTP request (its context carries net/http's local address) is the API's; the others are the pollers' and the sweeper's. Stream reads are the API's queries: the run state when the stream opens, each poll's run state and token batches, its events when there are new ones, and the end event's view (events, tool records). Not counted: the starts' requests (token and session head GetItem, create, SQS send), each stream's token lookup (one GetItem per connection), TTL deletions (free), the batches' storage for up to 10 minutes, the SQS, Lambda and API Gateway costs of serving a stream, data transfer. Prices: $%.3f per million write and $%.3f per million read request units (us-east-1, 2025).\n\n", priceWRU*1e6, priceRRU*1e6)
	}
	if len(rs) == 1 {
		p("The emulators were not measured (not configured, or a smoke run): no DynamoDB figures.\n\n")
	}
	return b.String()
}

// readOpsText lists the stream's reads by operation: "DynamoDB Query
// (events) 26 (26 RCU), …".
func readOpsText(ops map[string]opStat) string {
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, op := range names {
		parts = append(parts, fmt.Sprintf("%s %d, %.0f RCU reported", opLabel(rtEmulators, op), ops[op].Calls, ops[op].RCU))
	}
	return strings.Join(parts, "; ")
}
