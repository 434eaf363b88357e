package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/local"
	"github.com/baton-agents/baton/internal/worker"
)

// Runtime names.
const (
	rtInProcess = "in-process"
	rtMemory    = "memory"
	rtEmulators = "emulators"
)

// Step classes: the first step of a session reads the transcript once
// (the worker's cache is cold), the final model turn sends no next step.
const (
	classFirst  = "first"
	classSteady = "steady"
	classFinal  = "final"
)

// stepSample is what one step cost.
type stepSample struct {
	Kind  string
	Class string
	Wall  time.Duration
	CPU   time.Duration
	// Ops are the operations of the step itself; ESM those of receiving
	// and deleting its message (the event source mapping's work).
	Ops map[string]opStat
	ESM map[string]opStat
	// Delivery says how the step reached its worker: its own message
	// (queued) or continued after the previous step in the same
	// invocation (chained). HandsOff is set on the last step of an
	// invocation: the one that sends the run's next step, if any.
	// Invocations is 1 on an invocation's first step, 0 on the others.
	Delivery    string
	HandsOff    bool
	Invocations int
	// The step's minimum: the new messages and the run state it must
	// write, the run state it must read, and their capacity units.
	MinBytesW, MinBytesR int64
	MinWCU, MinRCU       float64
	// Extra records the commit writes beyond the minimum.
	Events, ToolResults, Audit int
	ExtraWCUEst                float64
}

// Deliveries: a step received in its own message, or continued in the
// invocation that committed the step before it.
const (
	deliveryQueued  = "queued"
	deliveryChained = "chained"
)

// kindName is the row label of a step kind, class and delivery.
func kindName(kind, class, delivery string) string {
	var notes []string
	if class != classSteady {
		notes = append(notes, class)
	}
	if delivery == deliveryChained {
		notes = append(notes, delivery)
	}
	if len(notes) == 0 {
		return kind
	}
	return kind + " (" + strings.Join(notes, ", ") + ")"
}

// cpuNow is the process's CPU time (user + system) so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func randomID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// ---- in process ----

// mark is a step boundary of the in-process runner: the start of a model
// or tool call.
type mark struct {
	kind string
	wall time.Time
	cpu  time.Duration
}

type marker struct {
	mu    sync.Mutex
	marks []mark
}

func (m *marker) mark(kind string) {
	c, t := cpuNow(), time.Now()
	m.mu.Lock()
	m.marks = append(m.marks, mark{kind: kind, wall: t, cpu: c})
	m.mu.Unlock()
}

// runInProcess runs the workload with core.Runner, the floor. A step is
// measured from the start of its model or tool call to the start of the
// next one (the last step to the runner's return): its I/O, its Apply and
// the next step's Plan.
func runInProcess(ctx context.Context, reg *agents.Registry, tools core.ToolExecutor, w workload) ([]stepSample, error) {
	a, _ := reg.Get(agentSlug)
	cfg, err := a.RunConfig(agents.Overrides{Model: w.spec()})
	if err != nil {
		return nil, fmt.Errorf("in-process %s: %w", w, err)
	}
	mk := &marker{}
	model := models()
	rn := &core.Runner{
		Machine: core.NewMachine(core.SystemClock{}),
		Model: modelFunc(func(ctx context.Context, r core.ModelRequest) (core.ModelReply, error) {
			mk.mark(string(core.StepModelTurn))
			return model.Complete(ctx, r)
		}),
		Tools: core.ToolExecutorFunc(func(ctx context.Context, c core.ToolCall) (any, error) {
			mk.mark(string(core.StepToolCall))
			return tools.Execute(ctx, c)
		}),
	}
	run, err := rn.Start(ctx, core.StartInput{RunID: randomID("r"), SessionID: randomID("s"), Config: cfg, Messages: userMessage()})
	if err != nil {
		return nil, fmt.Errorf("in-process %s: %w", w, err)
	}
	end := mark{wall: time.Now(), cpu: cpuNow()}
	if err := w.check(string(run.State.Status), run.Transcript); err != nil {
		return nil, fmt.Errorf("in-process: %w", err)
	}
	marks := append(mk.marks, end)
	out := make([]stepSample, 0, len(marks)-1)
	for i := 0; i+1 < len(marks); i++ {
		class := classSteady
		switch {
		case i == 0:
			class = classFirst
		case i+2 == len(marks):
			class = classFinal
		}
		out = append(out, stepSample{Kind: marks[i].kind, Class: class,
			Wall: marks[i+1].wall.Sub(marks[i].wall), CPU: marks[i+1].cpu - marks[i].cpu})
	}
	if len(out) != w.steps() {
		return nil, fmt.Errorf("in-process %s: %d steps, want %d", w, len(out), w.steps())
	}
	return out, nil
}

// modelFunc adapts a function to core.ModelProvider.
type modelFunc func(context.Context, core.ModelRequest) (core.ModelReply, error)

// Complete calls f.
func (f modelFunc) Complete(ctx context.Context, r core.ModelRequest) (core.ModelReply, error) {
	return f(ctx, r)
}

// ---- distributed ----

// distRuntime is the distributed runtime on one pair of adapters, wired
// by internal/app.
type distRuntime struct {
	name string
	app  *app.App
	// store and queue are the app's ports (the pump receives from queue).
	store durable.Store
	queue core.StepReceiver
	log   *slog.Logger
	// wait is the receive wait of the pump when the queue looks empty.
	wait time.Duration
	// table and queueURL name the emulators' resources.
	table, queueURL string
}

// newDist wires the distributed runtime of cfg's stores with the
// benchmark's agent, tool and model (deps.Model, by default the
// workload's models, enabled for requests to the API as well).
func newDist(ctx context.Context, name string, cfg app.Config, deps app.Deps, log *slog.Logger, wait time.Duration) (*distRuntime, error) {
	cfg.Agents.JSON, cfg.ExecuteTools, cfg.Stores.Visibility = agentsJSON, true, visibility
	cfg.Providers = []string{benchProvider, core.ProviderScripted}
	if deps.Model == nil {
		deps.Model = models()
	}
	deps.Log = log
	if deps.ToolHandlers == nil {
		deps.ToolHandlers = map[string]app.ToolHandler{"blob": blobHandler}
	}
	a, err := app.Build(ctx, cfg, deps)
	if err != nil {
		return nil, fmt.Errorf("%s runtime: %w", name, err)
	}
	return &distRuntime{name: name, app: a, store: a.Store, queue: a.Steps, log: log, wait: wait, table: a.Stores.Table, queueURL: a.Stores.QueueURL}, nil
}

// newRunner wires a fresh engine (an empty transcript cache: a worker
// that has not served the session yet).
func (d *distRuntime) newRunner() *durable.Runner { return d.app.NewRunner() }

// runResult is one run of the workload on a distributed runtime.
type runResult struct {
	Samples []stepSample
	// Reload is what a worker with a cold cache pays to read the whole
	// transcript at the end of the run.
	Reload opStat
	// Start is what creating the run cost (not a step).
	Start map[string]opStat
	// EmptyReceives counts receives that found no message while the run
	// was unfinished.
	EmptyReceives int
	// Retried counts failed receives, steps and deletes (each retried).
	Retried int
	// Cost is the run's result.cost at its end.
	Cost *core.RunCost
}

// start creates a run of w on a new session.
func (d *distRuntime) start(ctx context.Context, eng *durable.Runner, w workload) (core.RunRecord, error) {
	snap, err := eng.Start(ctx, tenant, durable.StartRequest{Agent: agentSlug, SessionID: randomID("s"), Messages: userMessage(),
		Overrides: agents.Overrides{Model: w.spec()}})
	return snap.RunRecord, err
}

// run runs w once, pumping one message at a time like the event source
// mapping with batch size 1, and checks the result.
func (d *distRuntime) run(ctx context.Context, w workload) (runResult, error) {
	var res runResult
	wk := d.newWorker()
	if w.NoChain {
		wk.Chain = worker.ChainLimits{}
	}
	eng := wk.Runner
	sr := newRecorder()
	rec, err := d.start(withRecorder(ctx, sr), eng, w)
	if err != nil {
		return res, fmt.Errorf("%s %s: start: %w", d.name, w, err)
	}
	res.Start = sr.finish()
	runID, sessionID := rec.State.RunID, rec.State.SessionID
	// A step that fails (an emulator that never answers, cut short by
	// callTimeout) is left to come back after the visibility timeout, as
	// the event source mapping would do; the pump waits for it.
	var idleSince time.Time
	for guard := 0; ; guard++ {
		if guard > 4*w.steps()+100+int(visibility/d.wait) {
			return res, fmt.Errorf("%s %s: the queue never drained", d.name, w)
		}
		er := newRecorder()
		ectx := withRecorder(ctx, er)
		rctx, rcancel := context.WithTimeout(ectx, callTimeout)
		ds, err := d.queue.Receive(rctx, 1, 0)
		rcancel()
		if err != nil {
			res.Retried++
			d.log.WarnContext(ctx, "receive failed; trying again", "err", err)
			continue
		}
		if len(ds) == 0 {
			r, err := d.store.LoadRun(ctx, runID)
			if err != nil {
				return res, fmt.Errorf("%s %s: %w", d.name, w, err)
			}
			if core.IsTerminal(r.State.Status) {
				break
			}
			res.EmptyReceives++
			if idleSince.IsZero() {
				idleSince = time.Now()
			}
			if time.Since(idleSince) > visibility+10*time.Second {
				return res, fmt.Errorf("%s %s: run %s is %s but its queue has been empty for %v", d.name, w, runID, r.State.Status, time.Since(idleSince).Round(time.Second))
			}
			time.Sleep(d.wait)
			continue
		}
		idleSince = time.Time{}
		var step core.Step
		if err := json.Unmarshal(ds[0].Body, &step); err != nil || step.RunID != runID {
			d.log.WarnContext(ctx, "dropping a message of another run", "body", string(ds[0].Body))
			_ = d.queue.Delete(ctx, ds[0].ReceiptHandle)
			continue
		}
		inv := newSplitter()
		c0, t0 := cpuNow(), time.Now()
		ok, err := invokeWorker(withRecorder(ctx, inv), wk, ds)
		end, cend := time.Now(), cpuNow()
		if len(ok) == 0 {
			res.Retried++
			d.log.WarnContext(ctx, "step failed; it will be received again", "kind", step.Kind, "seq", step.Seq, "err", err)
		} else {
			dctx, dcancel := context.WithTimeout(ectx, callTimeout)
			err = d.queue.Delete(dctx, ds[0].ReceiptHandle)
			dcancel()
			if err != nil {
				res.Retried++
				d.log.WarnContext(ctx, "delete failed; the step will be received again", "err", err)
			}
		}
		first := len(res.Samples) == 0
		res.Samples = append(res.Samples, invocationSamples([]core.Step{step}, func(int) bool { return first }, invocation{t0, end, c0, cend}, inv, er)...)
	}
	final, err := d.store.LoadRun(ctx, runID)
	if err != nil {
		return res, fmt.Errorf("%s %s: %w", d.name, w, err)
	}
	res.Cost = final.State.Cost
	rr := newRecorder()
	msgs, err := d.store.Messages(withRecorder(ctx, rr), tenant, sessionID, 0, final.State.NextMsgSeq, 0)
	if err != nil {
		return res, fmt.Errorf("%s %s: read transcript: %w", d.name, w, err)
	}
	for _, s := range rr.finish() {
		res.Reload.add(s)
	}
	if err := w.check(string(final.State.Status), msgs); err != nil {
		return res, fmt.Errorf("%s: %w", d.name, err)
	}
	if len(res.Samples) < w.steps() {
		return res, fmt.Errorf("%s %s: %d steps, want %d", d.name, w, len(res.Samples), w.steps())
	}
	return res, nil
}

// invokeTimeout bounds one invocation of the worker's handler. It is
// above the worker's ChainMinRemaining (60 s by default), which a chain
// needs left before it continues with another step.
const invokeTimeout = 5 * time.Minute

// invokeWorker runs received messages through the worker Lambda's
// handler, as the event source mapping invokes it, and returns the
// messages that did not fail (to be deleted) and an error naming how many
// did (to be received again). The invocation's deadline is invokeTimeout
// from now, whatever ctx's (its values are kept).
func invokeWorker(ctx context.Context, wk *worker.Worker, ds []core.ReceivedMessage) ([]core.ReceivedMessage, error) {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), invokeTimeout)
	defer cancel()
	resp, err := wk.Handle(ictx, local.SQSEvent(ds))
	if err == nil && len(resp.BatchItemFailures) > 0 {
		err = fmt.Errorf("%d of %d messages failed", len(resp.BatchItemFailures), len(ds))
	}
	return local.Succeeded(ds, resp), err
}

// newWorker is a worker instance: the app's worker Lambda handler (its
// settings, chaining included) over a runner with an empty transcript
// cache.
func (d *distRuntime) newWorker() *worker.Worker {
	wk := *d.app.Worker
	wk.Runner = d.newRunner()
	return &wk
}

// invocation is when a worker invocation began and ended (wall and this
// process's CPU).
type invocation struct {
	t0, t1 time.Time
	c0, c1 time.Duration
}

// invocationSamples splits an invocation of the worker into the samples
// of the steps it ran: the steps of its messages (queued, in the batch's
// order: steps) and those it continued after the last one in the same
// invocation (chained), each from the previous commit (the first: from
// the invocation's start) to its own commit, the last to the
// invocation's end (its send included). The event source mapping's
// receive and delete and the invocation itself are counted on the first.
// first says whether a message's step is its run's first. When a message
// failed the steps cannot be matched to the messages, and nothing is
// returned.
func invocationSamples(steps []core.Step, first func(i int) bool, inv invocation, sp, esm *recorder) []stepSample {
	parts := sp.steps()
	n := len(parts)
	for n > 0 && parts[n-1].committed == nil {
		n-- // a step that failed before its commit
	}
	if n < len(steps) {
		return nil
	}
	var out []stepSample
	from, cfrom := inv.t0, inv.c0
	kind := ""
	for i, r := range parts[:n] {
		if r.committed == nil {
			return nil
		}
		to, cto := r.committedAt, r.committedCPU
		last := i == n-1
		if last {
			to, cto = inv.t1, inv.c1
		}
		queued := i < len(steps)
		if queued {
			kind = string(steps[i].Kind)
		}
		s := sample(kind, queued && first(i), to.Sub(from), cto-cfrom, r)
		// A message's step that is not the batch's last sends its
		// successor: only the last one's may be chained.
		s.Delivery, s.HandsOff = deliveryQueued, last || i < len(steps)-1
		if !queued {
			s.Delivery = deliveryChained
		}
		if i == 0 {
			s.ESM, s.Invocations = esm.finish(), 1
		}
		out = append(out, s)
		from, cfrom = to, cto
		// The next chained step is the one this commit held (or, with
		// no lease, the one step it scheduled).
		if held, ok := r.committed.State.HeldStep(); ok {
			kind = string(held.Kind)
		} else if next := r.committed.Next; len(next) == 1 {
			kind = string(next[0].Kind)
		}
	}
	return out
}

// sample turns a step's recorder into its sample, with its minimum.
func sample(kind string, first bool, wall, cpu time.Duration, r *recorder) stepSample {
	s := stepSample{Kind: kind, Class: classSteady, Wall: wall, CPU: cpu, Ops: r.finish()}
	if first {
		s.Class = classFirst
	}
	if out := r.committed; out != nil {
		if core.IsTerminal(out.State.Status) {
			s.Class = classFinal
		}
		st := stateBytes(out.State)
		s.MinBytesW = st
		s.MinWCU = 2 * kb1(st+stateItemOverhead)
		for _, m := range out.Messages {
			n := jsonSize(m)
			s.MinBytesW += n
			s.MinWCU += 2 * kb1(n+recordItemOverhead)
		}
		s.Events, s.ToolResults, s.Audit = len(out.Events), len(out.ToolResults), len(out.Audit)
		if len(out.Events) > 0 {
			// One step record holds the step's events, results and audit.
			s.ExtraWCUEst += 2 * kb1(jsonSize(out.Events)+jsonSize(out.ToolResults)+jsonSize(out.Audit)+recordItemOverhead)
		}
		if core.IsTerminal(out.State.Status) {
			s.ExtraWCUEst += 2 // the session head, written by the finishing commit
		}
	}
	if kind == string(core.StepToolCall) {
		s.MinWCU++ // the intent claim: one item under 1 KB
	}
	if st := r.loaded; st != nil {
		s.MinBytesR = stateBytes(*st)
		s.MinRCU = kb4(s.MinBytesR + stateItemOverhead)
	}
	return s
}

// Item size estimates (DynamoDB counts attribute names and values): the
// run item carries keys, a dozen scalar attributes and the state blob; a
// record item carries keys, a part count, a writer nonce and the data.
const (
	stateItemOverhead  = 220
	recordItemOverhead = 90
)

// stateBytes is the run state as stored, without its configuration (which
// never changes after Start and is kept in its own item).
func stateBytes(st core.RunState) int64 {
	st.Config = core.RunConfig{}
	b, err := core.MarshalState(st)
	if err != nil {
		return 0
	}
	return int64(len(b))
}

// kb1 is DynamoDB's write unit count of an item: 1 per started KB.
func kb1(n int64) float64 { return float64((n + 1023) / 1024) }

// kb4 is the strongly consistent read unit count: 1 per started 4 KB.
func kb4(n int64) float64 { return float64((n + 4095) / 4096) }

// minOps is the documented minimum of a step: read the run state, claim
// the intent (tool calls), commit once, send the next step (not after the
// final turn); the first step of a session also reads its transcript
// once.
//
// A chained step (continued in the invocation that committed the step
// before it) reads nothing: it reuses the committed state and the
// worker's cache. A step sends only when it hands off (the last step of
// its invocation, not the final turn); one that chains on sends nothing.
func minOps(kind, class, delivery string, handsOff bool) map[string]int {
	m := map[string]int{opStateRead: 1, opCommit: 1, opEnqueue: 1}
	if kind == string(core.StepToolCall) {
		m[opIntentClaim] = 1
	}
	if class == classFinal || !handsOff {
		delete(m, opEnqueue)
	}
	if delivery == deliveryChained {
		delete(m, opStateRead)
	} else if class == classFirst {
		m[opTranscriptRead] = 1
	}
	return m
}
