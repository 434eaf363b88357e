package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
)

// The load run (make load): many runs of many tenants at once, started
// through the HTTP API with each tenant's own token, carried to the end
// by pollers that stand in for the worker Lambda's event source mapping
// (each receives batches, invokes the worker's handler — the Lambda's own
// code, chaining included — and deletes what did not fail). Every request
// to DynamoDB and SQS is counted; the tool is a real handler that counts
// its executions per run and call id; at the end every run must have its
// expected status and final answer, every tool call must have run exactly
// once, and each tenant's active-run count must be back to 0.

// loadConfig is a load run's size.
type loadConfig struct {
	Runs    int `json:"runs"`
	Tenants int `json:"tenants"`
	// Turns and ResultBytes shape each run (workload): Turns tool calls,
	// so 2×Turns+1 steps.
	Turns       int `json:"turns"`
	ResultBytes int `json:"result_bytes"`
	// Pollers stand in for concurrent worker instances, each with its
	// own runner (transcript cache); Starters send the start requests.
	Pollers  int `json:"pollers"`
	Starters int `json:"starters"`
	// Batch is the event source mapping's batch size.
	Batch int `json:"batch"`
	// Deadline bounds the run.
	Deadline time.Duration `json:"-"`
}

func defaultLoad() loadConfig {
	return loadConfig{Runs: 1000, Tenants: 50, Turns: 2, ResultBytes: 100, Pollers: 8, Starters: 4, Batch: 10, Deadline: 15 * time.Minute}
}

// loadResult is what a load run measured.
type loadResult struct {
	Runtime string     `json:"runtime"`
	Config  loadConfig `json:"config"`
	// Runs and Steps are what completed; Seconds the wall time from the
	// first start request to the last run's final commit.
	Runs         int     `json:"runs_completed"`
	Steps        int     `json:"steps"`
	Seconds      float64 `json:"seconds"`
	StartSeconds float64 `json:"start_seconds"`
	RunsPerSec   float64 `json:"runs_per_second"`
	StepsPerSec  float64 `json:"steps_per_second"`
	// StepMS: from a run's previous commit (its first step: from the
	// start request) to the step's commit — queueing, delivery and the
	// step itself. RunMS: from the start request to the final commit.
	// StartMS: the start request. InvocationMS: one handler invocation.
	StepMS       dist `json:"step_ms"`
	RunMS        dist `json:"run_ms"`
	StartMS      dist `json:"start_request_ms"`
	InvocationMS dist `json:"invocation_ms"`
	// Invocations of the worker's handler, the steps each ran (more than
	// its records when steps are chained), and the receives that found
	// nothing (the pollers' idle polls).
	Invocations   int     `json:"invocations"`
	StepsPerInvoc float64 `json:"steps_per_invocation"`
	EmptyReceives int     `json:"empty_receives"`
	// Lost counts runs that did not end with their expected status,
	// transcript and final answer; Doubled the tool calls executed more
	// than once, Missing those never executed; WrongTenant the executions
	// whose tenant was not the run's. ActiveLeft sums the tenants'
	// active-run counts at the end (0: none leaked).
	Lost           int      `json:"lost"`
	LostWhy        []string `json:"lost_examples,omitempty"`
	ToolExecutions int      `json:"tool_executions"`
	ToolCalls      int      `json:"tool_calls_expected"`
	Doubled        int      `json:"doubled"`
	Missing        int      `json:"missing"`
	WrongTenant    int      `json:"wrong_tenant"`
	ActiveLeft     int      `json:"active_runs_left"`
	ActiveChecked  bool     `json:"active_runs_checked"`
	Retried        int      `json:"retried"`
	// Worker, ESM and API are the requests counted: the worker's
	// (steps), the event source mapping's (receive, delete) and the
	// API's (start requests: token lookup, rate limit, run creation).
	Worker map[string]opStat `json:"worker_requests"`
	ESM    map[string]opStat `json:"esm_requests"`
	API    map[string]opStat `json:"api_requests"`
}

// toolLedger counts the tool's executions per run and call id.
type toolLedger struct {
	mu     sync.Mutex
	calls  map[string]int
	tenant map[string]string // run id → tenant of its executions
	wrong  int
}

func newToolLedger() *toolLedger {
	return &toolLedger{calls: map[string]int{}, tenant: map[string]string{}}
}

// handler is the load run's tool: blobHandler, counted.
func (l *toolLedger) handler(ctx context.Context, call core.ToolCall) (any, error) {
	l.mu.Lock()
	l.calls[call.RunID+"/"+call.ToolCallID]++
	if t, ok := l.tenant[call.RunID]; ok && t != call.Tenant {
		l.wrong++
	}
	l.tenant[call.RunID] = call.Tenant
	l.mu.Unlock()
	return blobHandler(ctx, call)
}

// tally checks the executions of runs' tool calls call_1 … call_turns
// (the workload's ids): all executions, the calls executed more than
// once, those never executed, and the executions of another tenant's.
func (l *toolLedger) tally(runs []string, turns int) (execs, doubled, missing, wrong int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range runs {
		for t := 1; t <= turns; t++ {
			switch n := l.calls[r+"/"+fmt.Sprintf("call_%d", t)]; {
			case n == 0:
				missing++
			case n > 1:
				doubled++
			}
		}
	}
	for _, n := range l.calls {
		execs += n
	}
	return execs, doubled, missing, l.wrong
}

// runClock notes when a run started and when each of its steps
// committed.
type runClock struct {
	tenant  string
	start   time.Time
	commits []time.Time
	final   bool
}

// commitClock is the store of a load run: it notes every successful
// commit of a step (its time, whether it finished the run) and counts it
// for the invocation that made it.
type commitClock struct {
	durable.Store
	mu       sync.Mutex
	runs     map[string]*runClock
	finished atomic.Int64
	last     atomic.Int64 // unix nanoseconds of the last final commit
}

type stepCountKey struct{}

// Commit notes a successful commit.
func (c *commitClock) Commit(ctx context.Context, w core.Write) error {
	err := c.Store.Commit(ctx, w)
	if err != nil {
		return err
	}
	now := time.Now()
	st := w.Output.State
	c.mu.Lock()
	rc := c.clock(st.RunID)
	rc.commits = append(rc.commits, now)
	final := core.IsTerminal(st.Status) && !rc.final
	if final {
		rc.final = true
	}
	c.mu.Unlock()
	if final {
		c.finished.Add(1)
		c.last.Store(now.UnixNano())
	}
	if n, ok := ctx.Value(stepCountKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
	return nil
}

// clock returns the run's clock, made on first use; c.mu is held.
func (c *commitClock) clock(runID string) *runClock {
	rc, ok := c.runs[runID]
	if !ok {
		rc = &runClock{}
		c.runs[runID] = rc
	}
	return rc
}

// started notes a run's start request.
func (c *commitClock) started(runID, tenant string, at time.Time) {
	c.mu.Lock()
	rc := c.clock(runID)
	rc.start, rc.tenant = at, tenant
	c.mu.Unlock()
}

// opTotals adds up operation totals under a lock.
type opTotals struct {
	mu  sync.Mutex
	ops map[string]opStat
}

func (t *opTotals) add(ops map[string]opStat) {
	t.mu.Lock()
	if t.ops == nil {
		t.ops = map[string]opStat{}
	}
	addOps(t.ops, ops)
	t.mu.Unlock()
}

// loadTenant is a tenant's name; loadToken its token.
func loadTenant(i int) string { return fmt.Sprintf("load-%02d", i) }
func loadToken(i int) string  { return fmt.Sprintf("tok-load-%04d-bench", i) }

// newLoadRuntime wires the runtime of a load run: memory, or the
// emulators when o names them; the returned cleanup deletes the
// emulators' table and queue.
func newLoadRuntime(ctx context.Context, o options, cfg loadConfig, ledger *toolLedger) (*distRuntime, *commitClock, core.LimitStore, func(), error) {
	clock := &commitClock{runs: map[string]*runClock{}}
	var limits core.LimitStore
	memory := o.ddbEndpoint == "" || o.sqsEndpoint == ""
	deps := app.Deps{
		ToolHandlers: map[string]app.ToolHandler{"blob": ledger.handler},
		WrapStore: func(s durable.Store) durable.Store {
			limits, _ = s.(core.LimitStore)
			clock.Store = &observedStore{Store: s, count: memory}
			return clock
		},
	}
	tune := func(c *app.Config) {
		// High enough never to refuse a start, so that the active-run
		// count (a hot item per tenant) is kept by every create and
		// finish, as in a deployment with the limit on.
		c.Limits.MaxActiveRuns = cfg.Runs + 1
	}
	if memory {
		deps.WrapQueue = func(q app.Queue) app.Queue { return countedQueue{inner: q} }
		c := memoryConfig()
		tune(&c)
		d, err := newDist(ctx, rtMemory, c, deps, o.log, 0)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		return d, clock, limits, func() {}, nil
	}
	d, cleanup, err := emulatorRuntime(ctx, o, false, deps, tune)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return d, clock, limits, cleanup, nil
}

// loadRun runs cfg on the memory runtime or the emulators (o's
// endpoints) and checks every run.
func loadRun(ctx context.Context, o options, cfg loadConfig, progress func(string, ...any)) (*loadResult, error) {
	w := workload{Turns: cfg.Turns, ResultBytes: cfg.ResultBytes}
	ledger := newToolLedger()
	d, clock, limits, cleanup, err := newLoadRuntime(ctx, o, cfg, ledger)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	for i := 0; i < cfg.Tenants; i++ {
		if err := d.app.PutToken(ctx, app.Token{Token: loadToken(i), Tenant: loadTenant(i)}); err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
	}
	res := &loadResult{Runtime: d.name, Config: cfg}
	var (
		workerOps, esmOps, apiOps opTotals
		mu                        sync.Mutex
		invocMS, stepsPerInvoc    []float64
		startMS                   []float64
		retried, emptyReceives    atomic.Int64
		failed                    error
	)
	pctx, cancel := context.WithTimeout(ctx, cfg.Deadline)
	defer cancel()
	fail := func(err error) {
		mu.Lock()
		if failed == nil {
			failed = err
		}
		mu.Unlock()
		cancel()
	}
	wait := 50 * time.Millisecond
	if d.name == rtEmulators {
		wait = time.Second
	}
	var pollersDone sync.WaitGroup
	for p := 0; p < cfg.Pollers; p++ {
		wk := d.newWorker()
		pollersDone.Add(1)
		go func() {
			defer pollersDone.Done()
			for pctx.Err() == nil {
				esm := newRecorder()
				rctx, rcancel := context.WithTimeout(withRecorder(pctx, esm), wait+callTimeout)
				ds, err := d.queue.Receive(rctx, cfg.Batch, wait)
				rcancel()
				if err != nil || len(ds) == 0 {
					if err != nil && pctx.Err() == nil {
						retried.Add(1)
					}
					if err == nil {
						emptyReceives.Add(1)
					}
					esmOps.add(esm.finish())
					continue
				}
				inv := newRecorder()
				steps := new(atomic.Int64)
				ictx := context.WithValue(withRecorder(pctx, inv), stepCountKey{}, steps)
				t0 := time.Now()
				ok, _ := invokeWorker(ictx, wk, ds)
				took := time.Since(t0)
				retried.Add(int64(len(ds) - len(ok)))
				for _, m := range ok {
					dctx, dcancel := context.WithTimeout(withRecorder(context.WithoutCancel(pctx), esm), callTimeout)
					if err := d.queue.Delete(dctx, m.ReceiptHandle); err != nil {
						retried.Add(1)
					}
					dcancel()
				}
				workerOps.add(inv.finish())
				esmOps.add(esm.finish())
				mu.Lock()
				invocMS = append(invocMS, ms(took))
				stepsPerInvoc = append(stepsPerInvoc, float64(steps.Load()))
				mu.Unlock()
			}
		}()
	}

	// The starts: Starters senders, run i for tenant i mod Tenants.
	t0 := time.Now()
	next := atomic.Int64{}
	var startersDone sync.WaitGroup
	type started struct{ runID, tenant string }
	runs := make([]started, cfg.Runs)
	body, err := json.Marshal(map[string]any{"agent": agentSlug, "messages": userMessage(), "model": w.spec()})
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	for s := 0; s < cfg.Starters; s++ {
		startersDone.Add(1)
		go func() {
			defer startersDone.Done()
			for pctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= cfg.Runs {
					return
				}
				ten := i % cfg.Tenants
				r := newRecorder()
				at := time.Now()
				runID, err := startRun(withRecorder(pctx, r), d, loadToken(ten), body)
				took := time.Since(at)
				apiOps.add(r.finish())
				if err != nil {
					fail(fmt.Errorf("load: start run %d (tenant %s): %w", i, loadTenant(ten), err))
					return
				}
				clock.started(runID, loadTenant(ten), at)
				runs[i] = started{runID, loadTenant(ten)}
				mu.Lock()
				startMS = append(startMS, ms(took))
				mu.Unlock()
			}
		}()
	}
	startersDone.Wait()
	res.StartSeconds = time.Since(t0).Seconds()
	progress("load: %d runs of %d tenants started in %.1f s", cfg.Runs, cfg.Tenants, res.StartSeconds)
	lastReport := time.Now()
	for clock.finished.Load() < int64(cfg.Runs) && pctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		if time.Since(lastReport) > 15*time.Second {
			lastReport = time.Now()
			progress("load: %d of %d runs finished", clock.finished.Load(), cfg.Runs)
		}
	}
	finishedAll := clock.finished.Load() >= int64(cfg.Runs)
	// Let the pollers take what is left (nothing, when every run
	// finished: a final step sends nothing), then stop them.
	cancel()
	pollersDone.Wait()
	if failed != nil {
		return nil, failed
	}
	end := time.Unix(0, clock.last.Load())
	if !finishedAll {
		end = time.Now()
	}
	res.Seconds = end.Sub(t0).Seconds()

	// Verification, unattributed (not counted).
	for _, r := range runs {
		if r.runID == "" {
			res.Lost++
			continue
		}
		if why := checkLoadRun(ctx, d, w, r.runID, r.tenant); why != "" {
			res.Lost++
			if len(res.LostWhy) < 5 {
				res.LostWhy = append(res.LostWhy, why)
			}
		}
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.runID
	}
	res.ToolCalls = cfg.Runs * cfg.Turns
	res.ToolExecutions, res.Doubled, res.Missing, res.WrongTenant = ledger.tally(ids, cfg.Turns)
	if limits != nil {
		res.ActiveChecked = true
		for i := 0; i < cfg.Tenants; i++ {
			n, err := limits.ActiveRuns(ctx, loadTenant(i))
			if err != nil {
				return nil, fmt.Errorf("load: %w", err)
			}
			res.ActiveLeft += n
		}
	}

	// Figures.
	clock.mu.Lock()
	var stepMS, runMS []float64
	for _, r := range runs {
		rc := clock.runs[r.runID]
		if rc == nil {
			continue
		}
		prev := rc.start
		for _, c := range rc.commits {
			stepMS = append(stepMS, ms(c.Sub(prev)))
			prev = c
		}
		res.Steps += len(rc.commits)
		if rc.final {
			res.Runs++
			runMS = append(runMS, ms(rc.commits[len(rc.commits)-1].Sub(rc.start)))
		}
	}
	clock.mu.Unlock()
	res.StepMS, res.RunMS, res.StartMS, res.InvocationMS = distOf(stepMS), distOf(runMS), distOf(startMS), distOf(invocMS)
	res.Invocations = len(invocMS)
	if res.Invocations > 0 {
		res.StepsPerInvoc = float64(res.Steps) / float64(res.Invocations)
	}
	if res.Seconds > 0 {
		res.RunsPerSec = float64(res.Runs) / res.Seconds
		res.StepsPerSec = float64(res.Steps) / res.Seconds
	}
	res.EmptyReceives = int(emptyReceives.Load())
	res.Retried = int(retried.Load())
	res.Worker, res.ESM, res.API = workerOps.ops, esmOps.ops, apiOps.ops
	if !finishedAll {
		return res, fmt.Errorf("load: %d of %d runs finished within %v", clock.finished.Load(), cfg.Runs, cfg.Deadline)
	}
	return res, nil
}

// startRun starts a run through the HTTP API with a tenant's token and
// returns its id.
func startRun(ctx context.Context, d *distRuntime, token string, body []byte) (string, error) {
	resp, err := d.app.API.Handle(ctx, events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/v1/runs",
		Headers: map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}, Body: string(body)})
	if err != nil {
		return "", err
	}
	if resp.StatusCode != 202 {
		return "", fmt.Errorf("POST /v1/runs: %d %s", resp.StatusCode, resp.Body)
	}
	var out struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &out); err != nil || out.RunID == "" {
		return "", fmt.Errorf("POST /v1/runs: no run id in %s", resp.Body)
	}
	return out.RunID, nil
}

// checkLoadRun says what is wrong with a finished run ("" when nothing):
// its tenant, status, transcript and final answer.
func checkLoadRun(ctx context.Context, d *distRuntime, w workload, runID, tenant string) string {
	rec, err := d.store.LoadRun(ctx, runID)
	if err != nil {
		return fmt.Sprintf("run %s: %v", runID, err)
	}
	if rec.Tenant != tenant {
		return fmt.Sprintf("run %s: tenant %q, want %q", runID, rec.Tenant, tenant)
	}
	msgs, err := d.store.Messages(ctx, tenant, rec.State.SessionID, 0, rec.State.NextMsgSeq, 0)
	if err != nil {
		return fmt.Sprintf("run %s: %v", runID, err)
	}
	if err := w.check(string(rec.State.Status), msgs); err != nil {
		return fmt.Sprintf("run %s: %v", runID, err)
	}
	return ""
}

// ---- report ----

// loadOK says whether the load run met its bar: every run completed
// and checked, every tool call executed exactly once, no active run
// left counted.
func (r *loadResult) ok() bool {
	return r.Lost == 0 && r.Doubled == 0 && r.Missing == 0 && r.WrongTenant == 0 && r.ActiveLeft == 0 && r.Runs == r.Config.Runs
}

// loadMarkdown reports a load run.
func loadMarkdown(r *loadResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	c := r.Config
	p("## Load: %d runs over %d tenants (%s)\n\n", c.Runs, c.Tenants, r.Runtime)
	p("Each run: %s (%d steps), started with `POST /v1/runs` and its tenant's token; %d pollers (each its own worker instance: the worker Lambda's handler over a runner with its own cache) receive batches of up to %d, invoke the handler and delete what did not fail; %d start senders. Step latency: from the run's previous commit (the first step: from its start request) to the step's commit, so queueing and delivery included. Run latency: start request to final commit.\n\n",
		workload{Turns: c.Turns, ResultBytes: c.ResultBytes}, 2*c.Turns+1, c.Pollers, c.Batch, c.Starters)
	verdict := "PASS"
	if !r.ok() {
		verdict = "FAIL"
	}
	active := "not checked (the store keeps no count)"
	if r.ActiveChecked {
		active = fmt.Sprintf("%d", r.ActiveLeft)
	}
	p("| runs completed | lost | tool executions | doubled | never executed | other tenant's | active runs left | verdict |\n|--:|--:|--:|--:|--:|--:|--:|---|\n")
	p("| %d of %d | %d | %d of %d calls | %d | %d | %d | %s | **%s** |\n\n", r.Runs, c.Runs, r.Lost, r.ToolExecutions, r.ToolCalls, r.Doubled, r.Missing, r.WrongTenant, active, verdict)
	for _, why := range r.LostWhy {
		p("- lost: %s\n", why)
	}
	p("| seconds | starts took | runs/s | steps | steps/s | step p50 / p99 ms | run p50 / p99 ms | start request p50 / p99 ms | invocations | steps per invocation | invocation p50 / p99 ms | retried |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	p("| %.1f | %.1f s | %.1f | %d | %.1f | %.1f / %.1f | %.0f / %.0f | %.1f / %.1f | %d | %.2f | %.1f / %.1f | %d |\n\n", r.Seconds, r.StartSeconds, r.RunsPerSec, r.Steps, r.StepsPerSec,
		r.StepMS.P50, r.StepMS.P99, r.RunMS.P50, r.RunMS.P99, r.StartMS.P50, r.StartMS.P99, r.Invocations, r.StepsPerInvoc, r.InvocationMS.P50, r.InvocationMS.P99, r.Retried)
	p("Requests counted (%s), total, per step and per run. Worker: the steps' own requests; event source mapping: receives (%d of them found nothing) and deletes; API: the start requests.\n\n", rtLabel(r.Runtime), r.EmptyReceives)
	p("| by | service | operation | requests | per step | per run | WCU | RCU |\n|---|---|---|--:|--:|--:|--:|--:|\n")
	steps, runs := float64(max(r.Steps, 1)), float64(max(r.Runs, 1))
	var total, sqs, ddb, wcu, rcu float64
	for _, part := range []struct {
		name string
		ops  map[string]opStat
	}{{"worker", r.Worker}, {"event source mapping", r.ESM}, {"API", r.API}} {
		for _, op := range sortedOps(part.ops) {
			s := part.ops[op]
			svc := "DynamoDB"
			if isSQS(op) {
				svc = "SQS"
				sqs += float64(s.Calls)
			} else {
				ddb += float64(s.Calls)
			}
			total += float64(s.Calls)
			wcu += s.WCU
			rcu += s.RCU
			p("| %s | %s | %s | %d | %.3f | %.2f | %.0f | %.0f |\n", part.name, svc, opLabel(r.Runtime, op), s.Calls, float64(s.Calls)/steps, float64(s.Calls)/runs, s.WCU, s.RCU)
		}
	}
	p("| **all** | DynamoDB | | %.0f | %.3f | %.2f | %.0f (%.2f a step) | %.0f (%.2f a step) |\n", ddb, ddb/steps, ddb/runs, wcu, wcu/steps, rcu, rcu/steps)
	p("| **all** | SQS | | %.0f | %.3f | %.2f | | |\n", sqs, sqs/steps, sqs/runs)
	p("| **all** | both | | %.0f | %.3f | %.2f | | |\n\n", total, total/steps, total/runs)
	return b.String()
}

// sortedOps lists ops's operations in name order.
func sortedOps(ops map[string]opStat) []string {
	out := make([]string, 0, len(ops))
	for op := range ops {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// loadReport is the load run's report file.
type loadReport struct {
	Machine   machineInfo `json:"machine"`
	Load      *loadResult `json:"load"`
	DurationS float64     `json:"duration_s"`
}

// runLoad runs the load run alone (make load), prints its report and,
// with o.out, writes it as Markdown and JSON. Its error means a run was
// lost, a tool call doubled or missed, or the harness failed.
func runLoad(ctx context.Context, o options, cfg loadConfig, stdout io.Writer) error {
	began := time.Now()
	if o.progress == nil {
		o.progress = os.Stderr
	}
	progress := func(format string, args ...any) {
		fmt.Fprintf(o.progress, "[%6.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
	}
	res, err := loadRun(ctx, o, cfg, progress)
	if res == nil {
		return err
	}
	rep := loadReport{Machine: machine(o.repoRoot), Load: res, DurationS: time.Since(began).Seconds()}
	m := rep.Machine
	md := fmt.Sprintf("# Baton load run\n\n| machine | |\n|---|---|\n| CPU | %s, %d cores, %d MB |\n| commit | %s |\n| date | %s |\n| emulators | %s |\n| duration | %.0f s |\n\n", m.CPU, m.Cores, m.MemoryMB, m.Commit, m.Date, m.Emulators, rep.DurationS) + loadMarkdown(res)
	if _, werr := io.WriteString(stdout, md); werr != nil {
		return werr
	}
	if o.out != "" {
		js, jerr := json.MarshalIndent(rep, "", "  ")
		if jerr != nil {
			return jerr
		}
		if _, werr := writeFiles(o.out, "load", m.Commit, md, js); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	if !res.ok() {
		return fmt.Errorf("load: %d lost, %d tool calls doubled, %d never executed, %d of another tenant, %d active runs left", res.Lost, res.Doubled, res.Missing, res.WrongTenant, res.ActiveLeft)
	}
	return nil
}
