// Package sim is Baton's seeded fault battery: one seed fixes a workload
// of concurrent runs (server tools that are and are not retry-safe,
// client tools, approvals) and a schedule of faults, which the real
// durable runner, worker batch handler, HTTP API and sweeper live
// through on the in-memory stores and queue, under a simulated clock.
// The same workload runs once without faults; the invariants compare the
// two and check what must hold whatever the faults (see Check).
//
// Faults, each drawn per delivery of a step message: a crash after the
// message is received (the run cannot be read), after a tool's intent is
// claimed, after the tool ran but before its result is recorded (the
// commit fails), after the commit lands but before its caller hears of it
// (an ambiguous commit), after the commit but before the next steps are
// sent (they are lost until the sweeper sends them again), and a message
// handled but never acknowledged (delivered again after the visibility
// timeout). Outside inputs (client results, approvals) come through the
// HTTP handlers, with and without idempotency keys, sometimes twice.
package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/app"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/features"
	"github.com/baton-agents/baton/internal/mcptools"
	"github.com/baton-agents/baton/internal/runstream"
)

// Fault kinds.
const (
	FaultLoad       = "crash_after_receive" // the worker reads the run, then dies
	FaultClaim      = "crash_after_claim"   // ClaimIntent lands, its caller fails
	FaultRecord     = "crash_before_record" // the commit fails before writing
	FaultAmbiguous  = "ambiguous_commit"    // the commit writes, its caller fails
	FaultSend       = "crash_before_send"   // the commit lands, the send fails
	FaultNoAck      = "handled_not_acked"   // delivered again after the visibility timeout
	FaultFreeze     = "frozen_past_lease"   // the worker stops before its commit, another handles the step, then it commits
	FaultSlow       = "slow_model_turn"     // a live worker's model call outlasts the visibility timeout three times
	FaultInTool     = "redelivered_in_tool" // a second worker gets the step while the first is inside its tool
	FaultDupInput   = "duplicate_input"     // an outside input sent twice
	FaultReconnect  = "stream_reconnect"    // a stream reader disconnects and resumes with Last-Event-ID
	FaultCallFailed = "store_call_failed"   // a store call fails at Options.CallFailRate
)

// deliveryFaults are the faults drawn for a delivery.
var deliveryFaults = []string{FaultLoad, FaultClaim, FaultRecord, FaultAmbiguous, FaultSend, FaultNoAck, FaultFreeze, FaultSlow, FaultInTool,
	FaultChainCrash, FaultChainFreeze, FaultChainOutlives}

// FaultKinds lists the faults in the order the battery's table prints them.
var FaultKinds = append(append(append([]string{}, deliveryFaults...), FaultDupInput, FaultReconnect, FaultCallFailed), sdkFaults...)

// Mutations: deliberately broken variants of Baton's guarantees, for the
// battery's own test (each must be caught).
const (
	MutSkipIntentClaim   = "skip_intent_claim"    // a tool call is executed without claiming its intent
	MutNoVersionFence    = "no_version_fence"     // a commit overwrites whatever version the run has
	MutDropEventOnResume = "drop_event_on_resume" // a resumed stream loses the first event after its cursor
	// MutNoVisibilityExtension is the worker before it kept its batch
	// hidden: a slow step is delivered again while its worker is alive.
	MutNoVisibilityExtension = "no_visibility_extension"
	// MutSendBeforeCommit sends a commit's next steps before the commit.
	MutSendBeforeCommit = "send_before_commit"
	// MutVersionFollowsDefault: a step runs on the version the default
	// alias names now, not the one its run started on.
	MutVersionFollowsDefault = "version_follows_default"
	// MutIgnoreClaimRefusal executes a tool call whose intent a live
	// worker holds: the store's refusal of the claim is ignored.
	MutIgnoreClaimRefusal = "ignore_claim_refusal"
	// MutForkForgetsTheRecord: the store reads no tool records, so a
	// fork finds nothing its source recorded and runs every call again.
	MutForkForgetsTheRecord = "fork_forgets_the_record"
)

// stallAfter is the runner's stall period (its default).
const stallAfter = 2 * time.Minute

const (
	tenant     = "sim"
	token      = "sim-token-000001"
	visibility = time.Minute
)

// agentsFile is the simulation's agents file: the same tools, the MCP
// server crm at mcpURL (its tool find is discovered, not declared) and
// budgets allowed in requests, on three agents: sim; sim-short, whose
// pending items expire after 3 minutes; and sim-compact, which compacts
// its transcript past 4 messages.
func agentsFile(mcpURL string) string { return agentsFileWith(mcpURL, systemV1) }

// agentsFileWith is the agents file with system as every agent's prompt
// (versions.go publishes a second one).
func agentsFileWith(mcpURL, system string) string {
	// The second version's tools run on handlers of their own, so a step
	// that runs on the wrong version shows (versions.go).
	suffix := ""
	if system == systemV2 {
		suffix = "_v2"
	}
	tools := fmt.Sprintf(`[
  {"name":"ops/lookup","source":"ops","description":"Look something up (retry-safe).","runtime":{"retry_safe":true},"executor":{"type":"go","handler":"lookup%[1]s"}},
  {"name":"ops/charge","source":"ops","description":"Charge a card (not retry-safe).","executor":{"type":"go","handler":"charge%[1]s"}},
  {"name":"ops/email","source":"ops","description":"Send an email (approved first).","action_policy":"preview","executor":{"type":"go","handler":"charge%[1]s"}},
  {"name":"agent/helper","description":"Ask the helper agent (a child run).","executor":{"type":"agent","agent":"sim-helper"}}]`, suffix)
	agent := func(slug, extra string) string {
		return fmt.Sprintf(`{"slug":%q,"system":%q,"model":{"provider":"scripted","model":"sim"},"allow_overrides":["model","parallel_tool_calls","budgets"],"max_turns":12,
 "tools":%s,"mcp_servers":[{"name":"crm","url":%q,"timeout":"10s"}]%s}`, slug, system, tools, mcpURL, extra)
	}
	helper := fmt.Sprintf(`{"slug":"sim-helper","system":%q,"model":{"provider":"scripted","model":"sim","turns":[
  {"content":"helping","tool_calls":[{"id":"h1","name":"ops/charge","parameters":{"amount":1}}],"usage":{"prompt_tokens":%d,"completion_tokens":%d}},
  {"content":"helped","usage":{"prompt_tokens":%d,"completion_tokens":%d}}]},"max_turns":4,
 "tools":[{"name":"ops/charge","source":"ops","description":"Charge a card (not retry-safe).","executor":{"type":"go","handler":"charge%s"}}]}`,
		system, helperTurns[0].Prompt, helperTurns[0].Completion, helperTurns[1].Prompt, helperTurns[1].Completion, suffix)
	return `{"agents":[` + agent("sim", "") + ",\n" + agent("sim-short", `,"pending_ttl":"3m"`) + ",\n" +
		agent("sim-compact", `,"compaction":{"enabled":true,"max_messages":4,"recent_messages":2}`) + ",\n" +
		strings.Replace(agent("sim-memory", `,"memory":{"extraction":{"enabled":true},"recall":{"top_k":3}}`), `"budgets"]`, `"budgets","memory_subject"]`, 1) + ",\n" +
		helper + "]}"
}

// helperTurns are the usage of the helper agent's two turns: a call to
// agent/helper that the child run answered adds them to its parent's
// usage.
var helperTurns = [2]usage{{Prompt: 20, Completion: 4}, {Prompt: 21, Completion: 4}}

// prices is the price table of the scripted model the runs use, in
// dollars per million tokens, with AWS requests free: on the emulators
// the requests a schedule makes depend on its faults, and a cost_usd
// budget must stop a run where it does without them (the metering of
// AWS requests has tests of its own).
const prices = `{"models":{"scripted/sim":{"input":1,"output":2}},
 "aws":{"us-east-1":{"dynamodb_wru":0,"dynamodb_rru":0,"sqs_request":0,"lambda_gb_second":0,"lambda_request":0}}}`

// summaryUsage is what each compaction summary call reports.
var summaryUsage = usage{Prompt: 50, Completion: 5}

// usage is a model call's tokens.
type usage struct{ Prompt, Completion int }

// usd is what usage costs at prices.
func (u usage) usd() float64 { return float64(u.Prompt+2*u.Completion) / 1e6 }

// Options tune a seed's schedule.
type Options struct {
	// Runs is the number of runs per seed (default 4).
	Runs int
	// FaultRate is the chance that a delivery gets a fault (default 0.3).
	FaultRate float64
	// Mutation breaks one guarantee on purpose (Mut…; "" for none).
	Mutation string
	// CallFailRate, when set, makes every store and queue call of a
	// delivery fail with this chance (a commit half the time after it
	// was written), besides the one fault per delivery.
	CallFailRate float64
	// DynamoDBEndpoint and SQSEndpoint, when both set, run the seed on
	// the DynamoDB and SQS adapters against these endpoints (DynamoDB
	// Local and fauxqs), on a table and queues of its own, with SDK
	// errors injected into their clients as faults.
	DynamoDBEndpoint, SQSEndpoint string
}

// Result is what one execution of a seed left behind.
type Result struct {
	Runs   map[string]RunOutcome // by workload index ("r0", "r1", …)
	Faults map[string]int
	Steps  int
	// Executions counts each tool call's executions, and Keys the
	// idempotency keys each was executed with, by run index and call id.
	Executions map[string]int
	Keys       map[string]map[string]bool
	// Seen is each run's stream reader's event seqs, in the order it got
	// them; Violations what the execution itself saw break (a version
	// that went backwards).
	Seen       map[string][]int64
	Violations []string
	// Kinds is each run's kind, and Turns the usage each of its
	// scripted turns reports, by the turn's content (each is unique).
	Kinds map[string]string
	Turns map[string]map[string]usage
	// Forks are the forks the seed made, by index: each one's source's
	// index (fork.go).
	Forks map[string]string
}

// RunOutcome is a run's end.
type RunOutcome struct {
	RunID    string
	Status   core.RunStatus
	Final    string
	Messages []core.Message
	Events   []core.Event
	Results  []core.ToolExecutionResult
	// Usage is the run's usage total, and CostUSD its result.cost's
	// model_usd.
	Usage   usage
	CostUSD float64
	// ChildUsage is what the model calls in the transcripts of its child
	// runs (agent/helper) whose end reached it cost, each counted once.
	ChildUsage usage
}

// workload is the runs a seed starts: each a scripted model's turns, and
// whether the run calls tools in parallel.
type workload []plan

// plan is one run of a workload.
type plan struct {
	turns    []core.ScriptedTurn
	parallel bool
	// kind: "" (answered, left alone); Cancelled, Interrupted or Steered
	// (the simulation cancels, interrupts or steers it once, at a point
	// of its schedule); Expiring (its pauses are never answered: they
	// expire); Budgeted (a token or cost budget stops it before its
	// end); Compacting (its agent compacts the transcript); Remembering
	// (its agent recalls and extracts long-term memories, of a subject of
	// the run's own).
	kind   string
	stream bool // its model streams tokens
	// budget is a Budgeted run's request budgets.
	budget map[string]any
}

// Run kinds.
const (
	Cancelled   = "cancelled"
	Interrupted = "interrupted"
	Steered     = "steered"
	Expiring    = "expiring"
	Budgeted    = "budgeted"
	Compacting  = "compacting"
	Remembering = "remembering"
)

// RunKinds lists the kinds in the order the battery's table prints them
// ("" is a run left alone).
var RunKinds = []string{"", Steered, Cancelled, Interrupted, Expiring, Budgeted, Compacting, Remembering}

func newWorkload(rng *rand.Rand, runs int) workload {
	w := make(workload, runs)
	for i := range w {
		n := 1 + rng.IntN(4)
		if w[i].parallel = rng.IntN(3) == 0; w[i].parallel {
			// Two server tools in one turn, each step in a message group of
			// its own.
			w[i].turns = append(w[i].turns, core.ScriptedTurn{Content: "both at once", ToolCalls: []core.ToolCallRequest{
				{ID: "p1", Name: "ops/lookup", Parameters: map[string]any{"q": "p"}},
				{ID: "p2", Name: "ops/charge", Parameters: map[string]any{"amount": 9}}}})
		}
		for turn := 0; turn < n; turn++ {
			id := fmt.Sprintf("c%d", turn+1)
			var call core.ToolCallRequest
			switch rng.IntN(6) {
			case 5:
				// A child run of the helper agent, which calls ops/charge.
				call = core.ToolCallRequest{ID: id, Name: "agent/helper", Parameters: map[string]any{"task": fmt.Sprintf("help with %d", turn)}}
			case 0:
				call = core.ToolCallRequest{ID: id, Name: "ops/lookup", Parameters: map[string]any{"q": fmt.Sprintf("q%d", turn)}}
			case 1:
				call = core.ToolCallRequest{ID: id, Name: "ops/charge", Parameters: map[string]any{"amount": turn + 1}}
			case 3:
				// Discovered from the MCP server, not declared.
				call = core.ToolCallRequest{ID: id, Name: "mcp/crm/find", Parameters: map[string]any{"q": fmt.Sprintf("q%d", turn)}}
			case 2:
				call = core.ToolCallRequest{ID: id, Name: "client/ask", Parameters: map[string]any{"question": fmt.Sprintf("q%d", turn)}}
			default:
				call = core.ToolCallRequest{ID: id, Name: "ops/email", Parameters: map[string]any{"to": "ann@example.com"}}
			}
			w[i].turns = append(w[i].turns, core.ScriptedTurn{Content: fmt.Sprintf("turn %d", turn+1), ToolCalls: []core.ToolCallRequest{call}})
		}
		w[i].turns = append(w[i].turns, core.ScriptedTurn{Content: fmt.Sprintf("done %d", i)})
		var all usage
		for t := range w[i].turns {
			u := usage{Prompt: 10 + t, Completion: 3}
			w[i].turns[t].Usage = map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion}
			all.Prompt += u.Prompt
			all.Completion += u.Completion
		}
		w[i].kind = RunKinds[rng.IntN(len(RunKinds))]
		if w[i].kind == Budgeted {
			// A ceiling the run reaches before its last turn.
			last := w[i].turns[len(w[i].turns)-1].Usage
			before := usage{Prompt: all.Prompt - int(core.NumberOf(last["prompt_tokens"])), Completion: all.Completion - int(core.NumberOf(last["completion_tokens"]))}
			if rng.IntN(2) == 0 {
				w[i].budget = map[string]any{"total_tokens": before.Prompt + before.Completion}
			} else {
				w[i].budget = map[string]any{"cost_usd": before.usd() * 0.999}
			}
		}
		w[i].stream = rng.IntN(3) == 0
	}
	return w
}

// Run executes seed's workload, with faults when faults is true.
func Run(seed uint64, o Options, faults bool) (Result, error) {
	if o.Runs <= 0 {
		o.Runs = 4
	}
	if o.FaultRate <= 0 {
		o.FaultRate = 0.3
	}
	w := newWorkload(rand.New(rand.NewPCG(seed, 1)), o.Runs)
	s := &sim{rng: rand.New(rand.NewPCG(seed, 2)), faults: faults, rate: o.FaultRate, mutation: o.Mutation, callFailRate: o.CallFailRate,
		res:   Result{Runs: map[string]RunOutcome{}, Faults: map[string]int{}, Executions: map[string]int{}, Keys: map[string]map[string]bool{}, Seen: map[string][]int64{}, Kinds: map[string]string{}, Turns: map[string]map[string]usage{}, Forks: map[string]string{}},
		clock: &core.FixedClock{T: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, index: map[string]string{}, kinds: map[string]string{}, disrupted: map[string]bool{}, versions: map[string]int64{},
		slowIn: make(chan struct{}), slowOut: make(chan struct{}), toolIn: make(chan struct{}), toolOut: make(chan struct{}), inside: map[string]bool{}, extended: make(chan struct{}), resent: map[string]time.Time{}, unacked: map[string]string{}, chain: newChainState()}
	s.publishAt, s.systems = publishAt(seed), map[string]map[string]bool{}
	s.forkSrc, s.models, s.parallel = forkPlan(w), map[string]any{}, map[string]bool{}
	if err := s.build(o); err != nil {
		return Result{}, err
	}
	defer func() { _ = s.a.DeleteResources(context.Background()); s.mcp.CloseClientConnections(); s.mcp.Close() }()
	ctx := context.Background()
	for i, r := range w {
		run := "r" + strconv.Itoa(i)
		s.res.Kinds[run], s.res.Turns[run] = r.kind, map[string]usage{}
		for _, t := range r.turns {
			s.res.Turns[run][t.Content] = usage{Prompt: int(core.NumberOf(t.Usage["prompt_tokens"])), Completion: int(core.NumberOf(t.Usage["completion_tokens"]))}
		}
		if err := s.start(ctx, i, r); err != nil {
			return Result{}, err
		}
	}
	if err := s.loop(ctx); err != nil {
		return s.res, err
	}
	if err := s.collect(ctx); err != nil {
		return s.res, err
	}
	// The readers catch up with the finished runs.
	for _, id := range s.runs {
		for !s.read(ctx, id) {
		}
	}
	return s.res, nil
}

// sim is one execution of a seed.
type sim struct {
	// publishAt is the loop step that publishes a second agents file and
	// moves default to it; systems are the prompts each run's model
	// requests carried, and systemOf each version's (versions.go).
	publishAt    int
	systems      map[string]map[string]bool
	systemOf     map[string]string
	rng          *rand.Rand
	faults       bool
	rate         float64
	mutation     string
	callFailRate float64
	res          Result
	versions     map[string]int64 // the highest version seen of each run
	// frozen is a worker stopped before its commit (FaultFreeze), and
	// resume lets it go on.
	frozen *frozenWorker
	// slow: the model call of the delivery in progress blocks
	// (FaultSlow): slowIn receives when it starts, slowOut lets it end.
	slow            bool
	slowIn, slowOut chan struct{}
	// inTool: the go tool of the delivery in progress blocks
	// (FaultInTool): toolIn receives when it is inside, toolOut lets it
	// return.
	inTool          bool
	toolIn, toolOut chan struct{}
	// inside are the go tool calls executing (run id/call id).
	inside map[string]bool
	// tickCh paces the visibility extensions of the delivery in
	// progress; extended receives after each.
	tickCh   chan time.Time
	extended chan struct{}
	// sweeping is set while the sweeper runs; resent holds when each
	// run's steps were last sent again by it.
	sweeping bool
	resent   map[string]time.Time

	clock *core.FixedClock
	a     *app.App
	raw   app.Queue // the step queue, below the fault wrapper
	// unacked are the messages received and not deleted (by message id:
	// their latest receipt handle): they come back when time passes.
	unacked map[string]string
	// aws arms the SDK faults of the emulator mode.
	aws       *awsFaults
	mcp       *httptest.Server // the MCP server crm
	store     *faultStore
	mu        sync.Mutex
	index     map[string]string // run id → workload index
	kinds     map[string]string // run id → kind
	disrupted map[string]bool   // the runs cancelled or steered already
	runs      []string          // run ids in workload order
	// forkSrc is the workload index of the run the seed forks once it
	// completed (-1: none), forked whether it did; models and parallel
	// are each run's scripted model and parallel_tool_calls (fork.go).
	forkSrc  int
	forked   bool
	models   map[string]any
	parallel map[string]bool
	// chain is what the simulation knows of chained steps (chain.go).
	chain chainState
}

func (s *sim) build(o Options) error {
	stores := app.Stores{Memory: true, Visibility: visibility}
	deps := app.Deps{Features: features.All, Clock: s.clock, IDs: &core.SequentialIDs{}, Log: slog.New(slog.DiscardHandler), Model: s,
		ToolHandlers: map[string]app.ToolHandler{"lookup": s.tool, "charge": s.tool, "lookup_v2": s.toolV2, "charge_v2": s.toolV2},
		WrapStore: func(st durable.Store) durable.Store {
			s.store = &faultStore{Store: st, sim: s, freeze: make(chan struct{}), thaw: make(chan struct{}), rng: rand.New(rand.NewPCG(s.rng.Uint64(), 3))}
			return s.store
		},
		WrapQueue: func(q app.Queue) app.Queue { return &faultQueue{Queue: q, sim: s} }}
	if o.DynamoDBEndpoint != "" && o.SQSEndpoint != "" {
		name := fmt.Sprintf("baton-sim-%d-%d", time.Now().UnixNano(), s.rng.Uint32())
		stores = app.Stores{DynamoDBEndpoint: o.DynamoDBEndpoint, SQSEndpoint: o.SQSEndpoint, CreateResources: true, Table: name, QueueName: name, Visibility: visibility}
		s.aws = &awsFaults{sim: s}
		deps.InstrumentAWS = s.aws.instrument
	}
	pricesFile, err := pricesPath()
	if err != nil {
		return err
	}
	s.mcp = s.mcpServer()
	env := func(k string) (string, bool) {
		if k == "BATON_PRICES" {
			return pricesFile, true
		}
		return "", false
	}
	s.a, err = app.Build(context.Background(), app.Config{Stores: stores, Region: "us-east-1", Env: env,
		Agents: app.Agents{JSON: agentsFile(s.mcp.URL)}, Providers: []string{core.ProviderScripted}, ExecuteTools: true, MaxReceives: 1000,
		// A cap no workload reaches: the store counts the tenant's
		// unfinished runs, which collect checks.
		Limits: app.Limits{MaxActiveRuns: 1 << 30}, Chain: app.Chain{Lease: chainLease}}, deps)
	if err != nil {
		s.mcp.CloseClientConnections()
		s.mcp.Close()
		return err
	}
	s.raw = s.a.Steps.(*faultQueue).Queue
	s.a.Worker.Ticks = s.ticks
	if s.mutation == MutNoVisibilityExtension {
		s.a.Worker.Extender = nil
	}
	s.systemOf = map[string]string{s.a.AgentVersion: systemV1}
	if s.mutation == MutVersionFollowsDefault {
		s.a.Runner.Versions = followDefault{Versions: s.a.Runner.Versions, store: s.a.Store}
	}
	if err := s.a.PutToken(context.Background(), app.Token{Token: adminToken, Tenant: tenant, Scopes: append(app.Scopes(), "agents:manage")}); err != nil {
		return err
	}
	return s.a.PutToken(context.Background(), app.Token{Token: token, Tenant: tenant, Scopes: append(app.Scopes(), core.ScopeMemoriesSubject)})
}

// pricesPath writes the price table to a file once (BATON_PRICES names a
// file) and returns its path.
var pricesPath = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "baton-sim-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "prices.json")
	return path, os.WriteFile(path, []byte(prices), 0o600)
})

// mcpServer is the MCP server crm, on 127.0.0.1: its tool find counts
// its executions and idempotency keys as the go tools do.
func (s *sim) mcpServer() *httptest.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "crm", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "find", Description: "Find a customer record.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			key, _ := req.Params.Meta[mcptools.MetaIdempotencyKey].(string)
			run, call, _ := strings.Cut(key, ":")
			s.executed(run, call, key)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":"mcp/crm/find"}`}}}, nil
		})
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
}

// Complete is the model: the scripted one, blocking while a FaultSlow
// delivery holds it.
func (s *sim) Complete(ctx context.Context, req core.ModelRequest) (core.ModelReply, error) {
	s.mu.Lock()
	slow := s.slow
	s.slow = false
	s.mu.Unlock()
	if slow {
		s.slowIn <- struct{}{}
		<-s.slowOut
	}
	if req.Purpose == core.PurposeTurn {
		s.seenSystem(req.RunID, req.System)
		s.outlive(ctx, req.RunID)
	}
	return core.ScriptedModel{}.Complete(ctx, req)
}

// ticks is the worker's extension ticker: one channel per delivery, which
// the simulation ticks on its clock.
func (s *sim) ticks(time.Duration) (<-chan time.Time, func()) {
	ch := make(chan time.Time)
	s.mu.Lock()
	s.tickCh = ch
	s.mu.Unlock()
	return ch, func() {}
}

// tool is the go handler of the workload's server tools: it counts each
// call's executions and idempotency keys (ran); toolV2 is the second
// agent version's, which notes that a call ran on it (versions.go).
func (s *sim) tool(_ context.Context, c core.ToolCall) (any, error) {
	s.seenSystem(c.RunID, systemV1)
	return s.ran(c)
}

func (s *sim) toolV2(_ context.Context, c core.ToolCall) (any, error) {
	s.seenSystem(c.RunID, systemV2)
	return s.ran(c)
}

// ran counts a go tool's execution and stays inside while a FaultInTool
// delivery holds it.
func (s *sim) ran(c core.ToolCall) (any, error) {
	s.executed(c.RunID, c.ToolCallID, c.IdempotencyKey)
	k := c.RunID + "/" + c.ToolCallID
	s.mu.Lock()
	hold := s.inTool
	s.inTool = false
	if s.inside[k] {
		s.res.Violations = append(s.res.Violations, fmt.Sprintf("%s/%s: %s ran twice at once (a second worker executed it while the first was inside)", s.index[c.RunID], c.ToolCallID, c.ToolName))
	}
	s.inside[k] = true
	s.mu.Unlock()
	if hold {
		s.toolIn <- struct{}{}
		<-s.toolOut
	}
	s.mu.Lock()
	delete(s.inside, k)
	s.mu.Unlock()
	return map[string]any{"ok": c.ToolName}, nil
}

// executed counts an execution of a run's call, with its idempotency key.
func (s *sim) executed(runID, callID, key string) {
	run := s.runIndex(runID)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := run + "/" + callID
	s.res.Executions[k]++
	if s.res.Keys[k] == nil {
		s.res.Keys[k] = map[string]bool{}
	}
	s.res.Keys[k][key] = true
}

// runIndex is a run's workload index ("r0"), or for a child run its
// parent's with the call it answers ("r0>c2").
func (s *sim) runIndex(runID string) string {
	s.mu.Lock()
	run, ok := s.index[runID]
	s.mu.Unlock()
	if ok {
		return run
	}
	rec, err := s.store.Store.LoadRun(context.Background(), runID)
	if err != nil || rec.State.Config.Parent == nil {
		return "?" + runID
	}
	p := rec.State.Config.Parent
	return s.runIndex(p.RunID) + ">" + p.ToolCallID
}

// api calls the HTTP API; key, when set, is sent as Idempotency-Key.
func (s *sim) api(ctx context.Context, method, path, body, key string) (int, map[string]any) {
	return s.call(ctx, token, method, path, body, key)
}

// adminAPI calls the HTTP API with the token that manages agent versions.
func (s *sim) adminAPI(ctx context.Context, method, path, body string) (int, map[string]any) {
	return s.call(ctx, adminToken, method, path, body, "")
}

func (s *sim) call(ctx context.Context, tok, method, path, body, key string) (int, map[string]any) {
	h := map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
	if key != "" {
		h["Idempotency-Key"] = key
	}
	resp, _ := s.a.API.Handle(ctx, events.APIGatewayProxyRequest{HTTPMethod: method, Path: path, Headers: h, Body: body})
	var v map[string]any
	_ = json.Unmarshal([]byte(resp.Body), &v)
	return resp.StatusCode, v
}

func (s *sim) start(ctx context.Context, i int, p plan) error {
	agent, model := "sim", map[string]any{"provider": core.ProviderScripted, "model": "sim", "turns": p.turns}
	switch p.kind {
	case Expiring:
		agent = "sim-short"
	case Remembering:
		agent = "sim-memory"
	case Compacting:
		agent = "sim-compact"
		model["options"] = map[string]any{core.ScriptedSummaryUsage: map[string]any{"prompt_tokens": summaryUsage.Prompt, "completion_tokens": summaryUsage.Completion}}
	}
	if p.stream {
		opts, _ := model["options"].(map[string]any)
		if opts == nil {
			opts = map[string]any{}
		}
		opts[core.ScriptedChunkChars] = 4
		model["options"] = opts
	}
	text := fmt.Sprintf("task %d", i)
	if p.kind == Remembering {
		text = rememberText(i)
	}
	req := map[string]any{"agent": agent, "session_id": fmt.Sprintf("s-%d", i), "parallel_tool_calls": p.parallel,
		"messages": []any{map[string]any{"role": "user", "content": text}},
		"tools":    []any{map[string]any{"name": "client/ask", "description": "Ask the user.", "parameters": map[string]any{"type": "object"}}},
		"model":    model}
	if p.budget != nil {
		req["budgets"] = p.budget
	}
	if p.kind == Remembering {
		req["memory_subject"] = memorySubject(i)
	}
	body, _ := json.Marshal(req)
	st, v := s.api(ctx, "POST", "/v1/runs", string(body), "")
	if st != 202 {
		return fmt.Errorf("start run %d: %d %v", i, st, v)
	}
	id := v["run_id"].(string)
	s.mu.Lock()
	s.index[id] = "r" + strconv.Itoa(i)
	s.mu.Unlock()
	s.runs = append(s.runs, id)
	s.kinds[id] = p.kind
	s.models[id], s.parallel[id] = model, p.parallel
	return nil
}

// maxSteps bounds a seed's schedule.
const maxSteps = 5000

// loop delivers messages, answers pauses, advances the clock and sweeps
// until every run has finished and the queue is empty.
func (s *sim) loop(ctx context.Context) error {
	for step := 0; step < maxSteps; step++ {
		s.res.Steps = step
		s.checkVersions(ctx)
		if step == s.publishAt {
			if err := s.publishVersion(ctx); err != nil {
				return err
			}
		}
		if err := s.forkWhenDone(ctx); err != nil {
			return err
		}
		if id := s.runs[s.rng.IntN(len(s.runs))]; s.rng.IntN(4) == 0 {
			s.read(ctx, id)
		}
		if s.frozen != nil && s.frozen.lapsed && s.rng.IntN(3) == 0 {
			s.thaw()
			continue
		}
		if s.disrupt(ctx) {
			continue
		}
		if s.answerSome(ctx) {
			continue
		}
		if s.deliverOne(ctx) {
			continue
		}
		if s.frozen != nil && s.frozen.lapsed {
			s.thaw()
			continue
		}
		if s.frozen == nil && s.done(ctx) {
			return nil
		}
		if s.frozen != nil {
			// The frozen worker's lease and its message's visibility lapse:
			// another worker gets the step before it commits.
			s.frozen.lapsed = true
		}
		// Nothing is visible: time passes (in-flight messages come back,
		// stalled runs are due), with the sweeper passing every 30 s.
		s.clock.T = s.clock.T.Add(visibility + time.Second)
		s.lapse(ctx)
		for range 6 {
			if err := s.sweep(ctx); err != nil {
				return err
			}
			s.clock.T = s.clock.T.Add(30 * time.Second)
		}
	}
	return fmt.Errorf("not quiescent after %d steps", maxSteps)
}

// lapse makes the messages received and not deleted visible again, as
// the time that passed does (the embedded queue's clock is the
// simulation's; SQS's is not, so their visibility is set to zero).
func (s *sim) lapse(ctx context.Context) {
	for _, h := range s.unacked {
		_ = s.raw.ExtendVisibility(ctx, h, 0)
	}
}

// sweep runs the sweeper, checking that it sends a run's steps again at
// most once per stall period.
func (s *sim) sweep(ctx context.Context) error {
	s.sweeping = true
	s.store.failing(s.callFailRate)
	defer func() { s.sweeping = false; s.store.failing(0) }()
	_, err := s.a.Runner.Sweep(ctx, 100)
	if err != nil && !errors.Is(err, errCrash) {
		return fmt.Errorf("sweep: %w", err)
	}
	if err == nil && s.callFailRate == 0 {
		s.checkLeases()
	}
	return nil // a failed pass is the next one's to finish
}

// resentBySweeper records a resend of run's steps.
func (s *sim) resentBySweeper(run string) {
	now := s.clock.T
	if last, ok := s.resent[run]; ok && now.Sub(last) < stallAfter {
		s.res.Violations = append(s.res.Violations, fmt.Sprintf("%s: the sweeper sent its steps again %s after the last time (stall period %s)", s.index[run], now.Sub(last), stallAfter))
	}
	s.resent[run] = now
}

// done reports whether every run has finished and nothing is queued.
func (s *sim) done(ctx context.Context) bool {
	if len(s.unacked) > 0 {
		return false
	}
	for _, id := range s.runs {
		snap, err := s.a.Runner.Get(ctx, tenant, id)
		if err != nil || !core.IsTerminal(snap.State.Status) {
			return false
		}
		// A completed remembering run's extraction is recorded (its
		// outbox record sends it; the sweeper sends a lost one again).
		if s.kinds[id] == Remembering && snap.State.Status == core.StatusCompleted && !snap.State.Extracted {
			return false
		}
		// Its child runs end too (a parent that ended stops those still
		// running, through its outbox).
		for _, c := range snap.State.Children {
			child, err := s.a.Runner.Get(ctx, tenant, c.RunID)
			if err != nil || !core.IsTerminal(child.State.Status) {
				return false
			}
		}
	}
	return true
}

// answerSome answers, sometimes, the pending items of one paused run.
func (s *sim) answerSome(ctx context.Context) bool {
	if s.rng.IntN(3) != 0 {
		return false
	}
	for _, id := range s.runs {
		if s.kinds[id] == Expiring {
			continue
		}
		snap, err := s.a.Runner.Get(ctx, tenant, id)
		if err != nil {
			continue
		}
		reqs, acts := snap.State.Pending()
		if len(reqs)+len(acts) == 0 {
			continue
		}
		for _, r := range reqs {
			s.input(ctx, "/v1/runs/"+id+"/tool-results", fmt.Sprintf(`{"request_id":%q,"success":true,"result":{"answer":"yes"}}`, r.RequestID))
		}
		for _, a := range acts {
			s.input(ctx, "/v1/runs/"+id+"/approvals/"+a.ActionID, `{"decision":"accept"}`)
		}
		return true
	}
	return false
}

// disrupt, now and then, cancels, interrupts or steers a run of that
// kind that is still going, once, racing its steps. The fault-free
// execution does not cancel or interrupt: it is what a cancel or an
// interrupt that comes too late leaves.
func (s *sim) disrupt(ctx context.Context) bool {
	if s.rng.IntN(8) != 0 {
		return false
	}
	for _, id := range s.runs {
		kind := s.kinds[id]
		if (kind != Cancelled && kind != Interrupted && kind != Steered) || s.disrupted[id] {
			continue
		}
		s.disrupted[id] = true
		switch {
		case kind == Steered:
			s.input(ctx, "/v1/runs/"+id+"/messages", `{"content":"steer: hurry up"}`)
		case !s.faults:
			continue
		case kind == Cancelled:
			s.input(ctx, "/v1/runs/"+id+"/cancel", `{"reason":"the user changed their mind"}`)
		default:
			s.input(ctx, "/v1/runs/"+id+"/interrupt", `{"action":"handoff","metadata":{"source":"sim"}}`)
		}
		return true
	}
	return false
}

// input posts an outside input, with an idempotency key or without,
// and with faults sometimes twice.
func (s *sim) input(ctx context.Context, path, body string) {
	key := ""
	if s.rng.IntN(2) == 0 {
		key = fmt.Sprintf("k-%d", s.rng.Uint64())
	}
	s.api(ctx, "POST", path, body, key)
	if s.faults && s.rng.Float64() < s.rate {
		s.fired(FaultDupInput)
		s.api(ctx, "POST", path, body, key)
	}
}

// deliverOne receives one visible step message and hands it to the
// worker, maybe with a fault; it reports whether there was one.
func (s *sim) deliverOne(ctx context.Context) bool {
	ds, err := s.raw.Receive(ctx, 1, 0)
	if err != nil || len(ds) == 0 {
		return false
	}
	d := ds[0]
	fault := ""
	if s.faults && s.rng.Float64() < s.rate {
		kinds := deliveryFaults
		if s.aws != nil {
			kinds = append(append([]string{}, deliveryFaults...), sdkFaults...)
		}
		fault = kinds[s.rng.IntN(len(kinds))]
		if (fault == FaultFreeze || fault == FaultChainFreeze) && s.frozen != nil {
			fault = "" // one frozen worker at a time
		}
	}
	if fault == FaultNoAck {
		s.fired(fault)
	}
	s.mu.Lock()
	s.slow = fault == FaultSlow
	s.inTool = fault == FaultInTool
	s.mu.Unlock()
	s.store.arm(fault)
	s.store.failing(s.callFailRate)
	s.a.Steps.(*faultQueue).arm(fault)
	if s.aws != nil {
		s.aws.arm(fault)
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{sqsRecord(d)}}
	s.checkStepSent(ctx, d)
	handled := make(chan events.SQSEventResponse, 1)
	go func() {
		resp, _ := s.a.Worker.Handle(ctx, ev)
		handled <- resp
	}()
	s.unacked[d.MessageID] = d.ReceiptHandle
	ack := func(resp events.SQSEventResponse) {
		if len(resp.BatchItemFailures) == 0 && fault != FaultNoAck {
			if err := s.raw.Delete(ctx, d.ReceiptHandle); err == nil && s.unacked[d.MessageID] == d.ReceiptHandle {
				delete(s.unacked, d.MessageID)
			}
		}
	}
	select {
	case resp := <-handled:
		ack(resp)
	case <-s.store.freeze:
		// The worker stopped before its commit: the scheduler goes on
		// (the message comes back after its visibility timeout, another
		// worker handles it) and lets it commit later.
		s.frozen = &frozenWorker{handled: handled, ack: ack}
	case <-s.slowIn:
		// The model call is slow but its worker alive: three visibility
		// timeouts pass, the worker's ticker fires, and the step must not
		// be delivered to anyone else meanwhile.
		s.fired(FaultSlow)
		s.mu.Lock()
		tick := s.tickCh
		s.mu.Unlock()
		for range 9 {
			s.clock.T = s.clock.T.Add(visibility / 3)
			if s.a.Worker.Extender != nil {
				tick <- s.clock.T
				<-s.extended
			}
			others, _ := s.raw.Receive(ctx, 10, 0)
			for _, o := range others {
				if o.MessageID == d.MessageID {
					s.res.Violations = append(s.res.Violations, fmt.Sprintf("%s: step message %s delivered again while its worker was alive", s.index[stepRun(d.Body)], d.MessageID))
					continue
				}
				_ = s.raw.ExtendVisibility(ctx, o.ReceiptHandle, 0) // not this worker's: visible again
			}
		}
		s.slowOut <- struct{}{}
		ack(<-handled)
	case run := <-s.chain.outIn:
		s.overtake(ctx, run)
		ack(<-handled)
	case <-s.toolIn:
		// The worker is inside the tool when its message is delivered
		// again (its visibility lapsed: an extension failed): a second
		// worker must find the claim live and leave the call alone.
		s.fired(FaultInTool)
		s.redeliver(ctx, d)
		s.toolOut <- struct{}{}
		ack(<-handled)
	}
	s.mu.Lock()
	s.slow, s.inTool = false, false
	s.mu.Unlock()
	s.store.arm("")
	s.store.failing(0)
	s.a.Steps.(*faultQueue).arm("")
	if s.aws != nil {
		// An SDK fault the delivery's calls did not take (a stale step
		// makes no transaction) is not left for the next caller.
		s.aws.arm("")
	}
	return true
}

// redeliver hands message d, in flight, to a second worker at once: its
// visibility lapses, it is received again and handled to the end (the
// first worker is still inside its tool). Other messages received with
// it are made visible again.
func (s *sim) redeliver(ctx context.Context, d core.ReceivedMessage) {
	if err := s.raw.ExtendVisibility(ctx, d.ReceiptHandle, 0); err != nil {
		return
	}
	got, _ := s.raw.Receive(ctx, 10, 0)
	for _, o := range got {
		if o.MessageID != d.MessageID {
			_ = s.raw.ExtendVisibility(ctx, o.ReceiptHandle, 0)
			continue
		}
		s.unacked[o.MessageID] = o.ReceiptHandle
		run := stepRun(o.Body)
		before, _ := s.store.Store.LoadRun(ctx, run)
		resp, _ := s.a.Worker.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{sqsRecord(o)}})
		if after, err := s.store.Store.LoadRun(ctx, run); err == nil && after.State.Version != before.State.Version {
			s.violation("%s: a second worker committed step %s while the first was inside its tool", s.index[run], stepName(o.Body))
		}
		if len(resp.BatchItemFailures) == 0 {
			if err := s.raw.Delete(ctx, o.ReceiptHandle); err == nil {
				delete(s.unacked, o.MessageID)
			}
		}
	}
}

// sqsRecord is a received message as the worker gets it.
func sqsRecord(d core.ReceivedMessage) events.SQSMessage {
	return events.SQSMessage{MessageId: d.MessageID, ReceiptHandle: d.ReceiptHandle, Body: string(d.Body),
		Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(d.ReceiveCount), "MessageGroupId": d.Group}}
}

// checkStepSent records a step message that names a step its run has
// not scheduled: one sent before the commit that schedules it.
func (s *sim) checkStepSent(ctx context.Context, d core.ReceivedMessage) {
	var st core.Step
	if json.Unmarshal(d.Body, &st) != nil {
		return
	}
	rec, err := s.store.Store.LoadRun(ctx, st.RunID)
	if err == nil && st.Seq > rec.State.StepSeq {
		s.res.Violations = append(s.res.Violations, fmt.Sprintf("%s: step %d was delivered before the commit that scheduled it (the run has scheduled %d)", s.index[st.RunID], st.Seq, rec.State.StepSeq))
	}
}

// frozenWorker is a worker stopped before its commit.
type frozenWorker struct {
	handled chan events.SQSEventResponse
	ack     func(events.SQSEventResponse)
	// lapsed: time passed its lease and its message's visibility.
	lapsed bool
}

// thaw lets the frozen worker commit, and waits for it.
func (s *sim) thaw() {
	w := s.frozen
	s.frozen = nil
	s.store.thaw <- struct{}{}
	w.ack(<-w.handled)
}

// checkVersions records a run version that went backwards.
func (s *sim) checkVersions(ctx context.Context) {
	for _, id := range s.runs {
		rec, err := s.store.Store.LoadRun(ctx, id)
		if err != nil {
			continue
		}
		if v := rec.State.Version; v < s.versions[id] {
			s.res.Violations = append(s.res.Violations, fmt.Sprintf("%s: version went back from %d to %d", s.index[id], s.versions[id], v))
		}
		s.versions[id] = rec.State.Version
	}
}

// read is one connection of a run's stream reader, from the last event
// it saw (Last-Event-ID): it takes what the stream sends, maybe
// disconnecting after a few events, and reports whether it got the
// stream's end.
func (s *sim) read(ctx context.Context, id string) bool {
	run := s.index[id]
	seen := s.res.Seen[run]
	var after int64
	if len(seen) > 0 {
		after = seen[len(seen)-1]
	}
	sink := &reader{limit: -1}
	if s.faults && s.rng.IntN(3) == 0 {
		sink.limit = s.rng.IntN(3)
		s.fired(FaultReconnect)
	}
	_ = runstream.Follower{Runner: s.a.Runner}.Follow(ctx, tenant, id, after, 0, sink)
	s.res.Seen[run] = append(seen, sink.seqs...)
	return sink.ended
}

// reader is a stream reader's connection.
type reader struct {
	seqs  []int64
	limit int // events before it disconnects; -1: none
	ended bool
}

func (r *reader) Event(_ context.Context, ev core.Event) error {
	if ev.Seq == 0 {
		return nil // a turn in flight's start: no id
	}
	if r.limit == 0 {
		return runstream.ErrGone
	}
	r.limit--
	r.seqs = append(r.seqs, ev.Seq)
	return nil
}

func (r *reader) Announced(ctx context.Context, ev core.Event) error {
	if r.limit == 0 {
		return runstream.ErrGone
	}
	r.limit--
	r.seqs = append(r.seqs, ev.Seq)
	return nil
}

func (r *reader) Deltas(context.Context, core.DeltaBatch) error { return nil }
func (r *reader) Flush()                                        {}
func (r *reader) KeepAlive() error                              { return nil }
func (r *reader) End(context.Context, durable.Snapshot) error {
	if r.limit != 0 {
		r.ended = true
	}
	return nil
}

// fired counts a fault that happened.
func (s *sim) fired(fault string) {
	s.mu.Lock()
	s.res.Faults[fault]++
	s.mu.Unlock()
}

// collect reads every run's end.
func (s *sim) collect(ctx context.Context) error {
	unfinished := 0
	for _, id := range s.runs {
		snap, err := s.a.Runner.Get(ctx, tenant, id)
		if err != nil {
			return err
		}
		v, err := s.a.Runner.View(ctx, snap, 0)
		if err != nil {
			return err
		}
		msgs, err := s.a.Store.Messages(ctx, tenant, snap.State.SessionID, 0, 1<<62, 10000)
		if err != nil {
			return err
		}
		evs, err := s.a.Store.Events(ctx, id, 0, 1<<62, 10000)
		if err != nil {
			return err
		}
		u := usage{Prompt: int(core.NumberOf(v.Result.Usage["prompt_tokens"])), Completion: int(core.NumberOf(v.Result.Usage["completion_tokens"]))}
		if total := int(core.NumberOf(v.Result.Usage["total_tokens"])); total != u.Prompt+u.Completion {
			s.res.Violations = append(s.res.Violations, fmt.Sprintf("%s: usage total_tokens %d is not its prompt and completion tokens (%d)", s.index[id], total, u.Prompt+u.Completion))
		}
		var modelUSD float64
		if v.Result.Cost != nil {
			modelUSD = v.Result.Cost.ModelUSD
		}
		var children usage
		for _, c := range snap.State.Children {
			if c.Status == core.StatusRunning {
				continue // its end never reached the parent (which ended first)
			}
			child, err := s.a.Runner.Get(ctx, tenant, c.RunID)
			if err != nil {
				return err
			}
			cm, err := s.a.Store.Messages(ctx, tenant, child.State.SessionID, 0, 1<<62, 10000)
			if err != nil {
				return err
			}
			cu := spent(map[string]usage{"helping": helperTurns[0], "helped": helperTurns[1]}, cm)
			children.Prompt += cu.Prompt
			children.Completion += cu.Completion
		}
		s.checkRunVersion(s.index[id], snap.State)
		for _, c := range snap.State.Children {
			if child, err := s.a.Runner.Get(ctx, tenant, c.RunID); err == nil {
				s.checkRunVersion(s.index[id]+" child", child.State)
			}
		}
		s.res.Runs[s.index[id]] = RunOutcome{RunID: id, Status: snap.State.Status, Final: v.Result.FinalContent, Messages: msgs, Events: evs, Results: v.Result.ToolExecutionResults, Usage: u, CostUSD: modelUSD, ChildUsage: children}
		if s.kinds[id] == Remembering {
			i, _ := strconv.Atoi(strings.TrimPrefix(s.index[id], "r"))
			if err := s.checkMemories(ctx, i, id, snap.State.Status, evs); err != nil {
				return err
			}
		}
		if !core.IsTerminal(snap.State.Status) {
			unfinished++
		}
	}
	// The tenant's count of unfinished runs, changed with the commits
	// that create and finish runs, matches the runs (no crash, duplicate
	// or failed call leaks or double-counts a place).
	ls, ok := s.store.Store.(core.LimitStore)
	if !ok {
		return fmt.Errorf("the store %T keeps no active-run count", s.store.Store)
	}
	n, err := ls.ActiveRuns(ctx, tenant)
	if err != nil {
		return err
	}
	if n != unfinished {
		s.res.Violations = append(s.res.Violations, fmt.Sprintf("the tenant's active-run count is %d; %d of its runs are unfinished", n, unfinished))
	}
	return nil
}

// errCrash is an injected crash.
var errCrash = errors.New("sim: injected crash")

// faultStore fails the store call an armed fault names, once.
type faultStore struct {
	durable.Store
	sim   *sim
	mu    sync.Mutex
	armed string
	// freeze receives when a worker stops before its commit; thaw lets
	// it go on.
	freeze, thaw chan struct{}
	// failRate is the chance a call fails while a delivery is handled
	// (Options.CallFailRate); rng draws it.
	failRate float64
	rng      *rand.Rand
}

// failing sets the chance a call fails from now on.
func (f *faultStore) failing(rate float64) {
	f.mu.Lock()
	f.failRate = rate
	f.mu.Unlock()
}

// flaky draws whether a call fails, and how: before or after the call.
func (f *faultStore) flaky() (fail, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failRate <= 0 || f.rng.Float64() >= f.failRate {
		return false, false
	}
	f.sim.fired(FaultCallFailed)
	return true, f.rng.IntN(2) == 0
}

func (f *faultStore) arm(fault string) {
	f.mu.Lock()
	f.armed = fault
	f.mu.Unlock()
}

// fire reports whether the armed fault is fault, disarming it.
func (f *faultStore) fire(fault string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.armed != fault {
		return false
	}
	f.armed = ""
	f.sim.fired(fault)
	return true
}

func (f *faultStore) LoadRun(ctx context.Context, id string) (core.RunRecord, error) {
	fail, after := f.flaky()
	if fail && !after {
		return core.RunRecord{}, core.Retryable(errCrash)
	}
	rec, err := f.Store.LoadRun(ctx, id)
	if err == nil && (fail || f.fire(FaultLoad)) {
		// The worker read the run, then died.
		return core.RunRecord{}, core.Retryable(errCrash)
	}
	return rec, err
}

func (f *faultStore) ClaimIntent(ctx context.Context, runID, callID, owner string, now time.Time, lease time.Duration) (core.Claim, error) {
	if f.sim.mutation == MutSkipIntentClaim {
		return core.Claim{Claimed: true, Attempt: 1}, nil
	}
	fail, after := f.flaky()
	if fail && !after {
		return core.Claim{}, core.Retryable(errCrash)
	}
	c, err := f.Store.ClaimIntent(ctx, runID, callID, owner, now, lease)
	if err == nil && !c.Claimed && f.sim.mutation == MutIgnoreClaimRefusal {
		c.Claimed = true
	}
	if err == nil && (fail || f.fire(FaultClaim)) {
		return core.Claim{}, core.Retryable(errCrash)
	}
	return c, err
}

func (f *faultStore) Commit(ctx context.Context, w core.Write) error {
	if f.fire(FaultFreeze) {
		f.freeze <- struct{}{}
		<-f.thaw
	}
	held := f.chainCommit(ctx, &w)
	if f.sim.mutation == MutSendBeforeCommit && len(w.Output.Next) > 0 {
		qs := make([]core.QueuedStep, len(w.Output.Next))
		for i, st := range w.Output.Next {
			group := w.Output.State.SessionID
			if st.Kind == core.StepToolCall && w.Output.State.Config.ParallelToolCalls {
				group += "#" + st.CallID
			}
			qs[i] = core.QueuedStep{Step: st, Group: group, DedupID: fmt.Sprintf("%s:%d", st.RunID, st.Seq)}
		}
		_ = f.sim.raw.Enqueue(ctx, qs)
	}
	if f.fire(FaultRecord) {
		return core.Retryable(errCrash)
	}
	if f.sim.mutation == MutNoVersionFence {
		if cur, err := f.Store.LoadRun(ctx, w.Output.State.RunID); err == nil {
			w.PrevVersion = cur.State.Version
		}
	}
	fail, after := f.flaky()
	if fail && !after {
		return core.Retryable(errCrash)
	}
	err := f.Store.Commit(ctx, w)
	if err == nil && f.chainCommitted(ctx, w, held) {
		return core.Retryable(errCrash) // the invocation died
	}
	if err == nil && (fail || f.fire(FaultAmbiguous)) {
		return core.Retryable(errCrash)
	}
	return err
}

// Events drops, under MutDropEventOnResume, the first event after a
// resumed reader's cursor.
// ToolRecords reads a run's tool records (none under
// MutForkForgetsTheRecord).
func (f *faultStore) ToolRecords(ctx context.Context, runID string, before int64) ([]core.ToolExecutionResult, []core.AuditEvent, error) {
	if f.sim.mutation == MutForkForgetsTheRecord {
		return nil, nil, nil
	}
	return f.Store.ToolRecords(ctx, runID, before)
}

func (f *faultStore) Events(ctx context.Context, runID string, after, before int64, limit int) ([]core.Event, error) {
	evs, err := f.Store.Events(ctx, runID, after, before, limit)
	if err == nil && f.sim.mutation == MutDropEventOnResume && after > 0 && len(evs) > 0 {
		evs = evs[1:]
	}
	return evs, err
}

// faultQueue fails the send an armed FaultSend names, once.
type faultQueue struct {
	app.Queue
	sim   *sim
	mu    sync.Mutex
	armed string
	// tried holds the steps (run:seq:call) a send was tried for.
	tried map[string]bool
}

func (q *faultQueue) arm(fault string) {
	q.mu.Lock()
	q.armed = fault
	q.mu.Unlock()
}

// ExtendVisibility extends, and tells the simulation it did.
func (q *faultQueue) ExtendVisibility(ctx context.Context, receipt string, d time.Duration) error {
	err := q.Queue.ExtendVisibility(ctx, receipt, d)
	q.sim.extended <- struct{}{}
	return err
}

func (q *faultQueue) Enqueue(ctx context.Context, steps []core.QueuedStep) error {
	// A sweep's send of steps already sent (or tried) is a resend of
	// stalled steps; a sweep also sends new steps (a child run's end it
	// delivers to the parent schedules the parent's next one).
	q.mu.Lock()
	again := len(steps) > 0
	if q.tried == nil {
		q.tried = map[string]bool{}
	}
	for _, st := range steps {
		k := fmt.Sprintf("%s:%d:%s", st.Step.RunID, st.Step.Seq, st.Step.CallID)
		again = again && q.tried[k]
		q.tried[k] = true
	}
	q.mu.Unlock()
	fail, after := q.sim.store.flaky()
	if fail && !after {
		return core.Retryable(errCrash)
	}
	if fail {
		if err := q.Queue.Enqueue(ctx, steps); err != nil {
			return err
		}
		return core.Retryable(errCrash)
	}
	q.mu.Lock()
	fire := q.armed == FaultSend
	if fire {
		q.armed = ""
	}
	q.mu.Unlock()
	if fire {
		q.sim.fired(FaultSend)
		return errCrash
	}
	// A run's extraction message is its outbox record's delivery, sent
	// again on the outbox's pace (NotifyAfter), not a stalled step.
	if q.sim.sweeping && steps[0].Step.Kind != core.StepMemoryExtract && !q.sim.leaseResend(steps[0].Step.RunID) && again {
		q.sim.resentBySweeper(steps[0].Step.RunID)
	}
	return q.Queue.Enqueue(ctx, steps)
}

// Keys sorts a map's keys.
func Keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// violation records what the execution saw break.
func (s *sim) violation(format string, args ...any) {
	s.mu.Lock()
	s.res.Violations = append(s.res.Violations, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// stepName names a step message's step: its sequence and call.
func stepName(body []byte) string {
	var st core.Step
	_ = json.Unmarshal(body, &st)
	return fmt.Sprintf("%d (%s %s)", st.Seq, st.Kind, st.CallID)
}

// stepRun is the run id of a step message.
func stepRun(body []byte) string {
	var st core.Step
	_ = json.Unmarshal(body, &st)
	return st.RunID
}

// describe is a short view of a message for violation reports.
func describe(m core.Message) string {
	return fmt.Sprintf("%s %q %s", m.Role, strings.TrimSpace(m.Content), m.ToolName())
}
