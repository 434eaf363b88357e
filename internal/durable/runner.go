package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/evals"
	"github.com/baton-agents/baton/internal/telemetry"
)

// Store is every storage port the runner uses.
type Store interface {
	core.RunStore
	core.TranscriptReader
	core.RecordReader
	core.DueRuns
	core.IntentStore
	core.Outbox
	core.RunLister
	core.DeliveryLog
	core.AgentVersionStore
	core.EvalStore
	core.MemoryStore
	core.ScheduleStore
}

// Options wires a Runner. Store, Queue and Agents are required; every
// other zero value takes its default.
type Options struct {
	Store  Store
	Queue  core.StepQueue
	Agents *agents.Registry
	// Versions loads the agent versions runs start and run on
	// (versions.go); nil: every run runs on Agents, AgentMachines, Tools
	// and ToolSource.
	Versions Versions
	// Model and Tools are the step I/O ports (Tools may be nil where no
	// tool executes, as in the API and the sweeper). Model also writes
	// compaction summaries, unless a Summarizer is set, which then does.
	Model      core.ModelProvider
	Tools      core.ToolExecutor
	Summarizer core.Summarizer
	Compactor  core.ContextCompactor
	// ToolSource offers the tools discovered at run time (MCP servers);
	// nil: none. The worker applies its answer before each model turn.
	ToolSource core.ToolSource
	// Memory recalls memories before runs' first turns and extracts
	// completed runs (memory.go); nil: runs with memory recall nothing
	// (recorded on the run) and are not extracted here.
	Memory MemoryService
	// Notifier publishes run notifications (nil: none are stored or
	// sent); see notify.go.
	Notifier core.NotificationPublisher
	// Callbacks delivers notifications to runs' callbacks (nil: runs'
	// callbacks get none); see callbacks.go.
	Callbacks CallbackSender
	// Deltas keeps the token deltas of streamed model turns for live
	// streams (nil: tokens are not streamed).
	Deltas core.DeltaStore
	// RemoteTasks cancels the remote tasks of calls runs gave up on
	// (nil: this process leaves those records to one that has it, the
	// worker or the sweeper); see remote.go.
	RemoteTasks RemoteTasks
	// Machine carries the step machine's hooks (nil: none). The runner
	// sets its clock to Clock, so the one clock rules both.
	Machine *core.Machine
	// AgentMachines carries the hooks of agents configured with their own
	// (guardrails, mediator, completion policy from the agents file), by
	// agent slug; a run of any other agent uses Machine. Their clocks are
	// set to Clock too.
	AgentMachines map[string]*core.Machine
	// Pricer prices runs on every machine (nil: the machines' own);
	// Metering counts steps' AWS requests into their runs' cost (nil:
	// none), see metering.go.
	Pricer   core.Pricer
	Metering *Metering
	// Telemetry traces runs (a zero value: no spans), see tracing.go.
	Telemetry telemetry.Settings
	// Metrics receives the runner's CloudWatch EMF lines (nil: none),
	// see metrics.go.
	Metrics *EMF
	Clock   core.Clock    // default core.SystemClock
	IDs     core.IDSource // default core.RandomIDs
	Log     *slog.Logger  // default: discard
	Limits  Limits
}

// Limits holds the runner's tunables; zero values take the defaults.
type Limits struct {
	// StallAfter is how long a scheduled step may go unprocessed before the
	// sweeper sends it again (default 2m). A worker performing a step
	// proves it is alive by committing each model call retry (a
	// model_retry event) and, when StallAfter/2 passes without one, a
	// heartbeat; each moves the run's UpdatedAt, so a step whose worker
	// lives is never sent again (see progress).
	StallAfter time.Duration
	// ChainLease is how long a step a chaining worker holds is its
	// (core.Stall.Lease, chain.go): held that long without the run
	// moving, the sweeper sends it again. Every function of a deployment
	// must carry the same value, as they do StallAfter; zero leaves held
	// steps to StallAfter.
	ChainLease time.Duration
	// IntentLease is how long a claimed tool execution is exclusive; after
	// it, a retry treats the earlier attempt's outcome as unknown (default
	// 5m; keep it at or above the tool timeout).
	IntentLease time.Duration
	// MaxReceives is the queue's receive count before dead-lettering; on
	// the last receive a step that keeps failing fails its run instead
	// (default 5).
	MaxReceives int
	// Redelivery is how long the queue waits before it delivers a failed
	// step again (its visibility timeout), for the tool_retry events that
	// say when a call is tried again; 0 when not known.
	Redelivery time.Duration
	// MaxActiveRuns, when positive, caps each tenant's unfinished runs
	// (core.Write.ActiveLimit): Start refuses the next run with
	// core.ErrTooManyActive. Every function of a deployment (API, worker,
	// sweeper, intake) must carry the same value, as each finishes runs.
	MaxActiveRuns int
	// CommitAttempts bounds the reload-and-reapply loop on version
	// conflicts (default 8).
	CommitAttempts int
	// TranscriptCacheBytes bounds the per-process transcript cache
	// (default 64 MiB; negative disables it).
	TranscriptCacheBytes int64
	// Streamed token deltas (deltas.go): a turn's first delta is written
	// at once; later ones gather into a batch written once it holds
	// DeltaBatchDeltas deltas (default 18) or DeltaBatchBytes of text
	// (default 4 KiB), or DeltaWindow after its first delta (default
	// 250ms); DeltaTTL is how long a batch is kept for streams (default
	// 10m).
	DeltaWindow      time.Duration
	DeltaBatchDeltas int
	DeltaBatchBytes  int
	DeltaTTL         time.Duration
	// NotifyAfter is how long after its transition an unsent notification
	// is left to the process that committed it before the sweeper sends
	// it (default 30s).
	NotifyAfter time.Duration
	// CallbackAttempts is how many failed deliveries of a notification
	// to a run's callback make Baton give up (default 6);
	// CallbackBackoff is the wait after the first failure, doubling after
	// each (default 30s, at most 1h).
	CallbackAttempts int
	CallbackBackoff  time.Duration
	// RemoteFollow is how long a call whose remote agent's task was
	// still working when its step's time was up waits before its step
	// is scheduled again (default 2s), doubling with each such wait up
	// to RemoteFollowMax (default 1m); a message sent starts again at
	// RemoteFollow. The sweeper schedules the step, so the wait is at
	// least its period.
	RemoteFollow    time.Duration
	RemoteFollowMax time.Duration
}

func (c Limits) withDefaults() Limits {
	if c.StallAfter <= 0 {
		c.StallAfter = 2 * time.Minute
	}
	if c.IntentLease <= 0 {
		c.IntentLease = 5 * time.Minute
	}
	if c.MaxReceives <= 0 {
		c.MaxReceives = 5
	}
	if c.CommitAttempts <= 0 {
		c.CommitAttempts = 8
	}
	if c.TranscriptCacheBytes == 0 {
		c.TranscriptCacheBytes = 64 << 20
	}
	if c.DeltaWindow <= 0 {
		c.DeltaWindow = 250 * time.Millisecond
	}
	if c.DeltaBatchBytes <= 0 {
		c.DeltaBatchBytes = 4 << 10
	}
	if c.DeltaBatchDeltas <= 0 {
		c.DeltaBatchDeltas = 18
	}
	if c.DeltaTTL <= 0 {
		c.DeltaTTL = 10 * time.Minute
	}
	if c.NotifyAfter <= 0 {
		c.NotifyAfter = 30 * time.Second
	}
	if c.CallbackAttempts <= 0 {
		c.CallbackAttempts = 6
	}
	if c.CallbackBackoff <= 0 {
		c.CallbackBackoff = 30 * time.Second
	}
	if c.RemoteFollow <= 0 {
		c.RemoteFollow = 2 * time.Second
	}
	if c.RemoteFollowMax < c.RemoteFollow {
		c.RemoteFollowMax = max(time.Minute, c.RemoteFollow)
	}
	return c
}

// Runner is the durable runner: it drives core's step machine one step
// per invocation over the storage and queue ports. It is safe for
// concurrent use.
type Runner struct {
	Machine *core.Machine
	// Versions loads the agent versions runs run on; machines caches
	// their agents' machines on the runner's clock (versions.go).
	Versions Versions
	machines sync.Map
	// evals keeps the decoded datasets of evals (evals.go), and records
	// the recorded tool calls of finished runs that forks replay
	// (fork.go).
	evals       smallCache[[]evals.Case]
	records     smallCache[[]core.RecordedCall]
	Store       Store
	Queue       core.StepQueue
	Deltas      core.DeltaStore
	Notifier    core.NotificationPublisher
	Callbacks   CallbackSender
	RemoteTasks RemoteTasks
	IO          core.IO
	// Memory extracts completed runs (Options.Memory).
	Memory core.MemoryExtractor
	Clock  core.Clock
	IDs    core.IDSource
	// Agents is the deployment's own agents file (Options.Agents).
	Agents    *agents.Registry
	Log       *slog.Logger
	Limits    Limits
	Metering  *Metering
	Telemetry telemetry.Settings
	Metrics   *EMF
	cache     *transcriptCache
	// after paces the heartbeats of a step's I/O (time.After).
	after func(time.Duration) <-chan time.Time
}

// New wires a runner from o.
func New(o Options) *Runner {
	if o.Clock == nil {
		o.Clock = core.SystemClock{}
	}
	if o.IDs == nil {
		o.IDs = core.RandomIDs{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	m := core.Machine{}
	if o.Machine != nil {
		m = *o.Machine
	}
	m.Clock = o.Clock
	if o.Pricer != nil {
		m.Pricer = o.Pricer
	}
	versions := o.Versions
	if versions == nil {
		versions = staticVersions{&Version{Agents: o.Agents, Machines: o.AgentMachines, Tools: o.Tools, ToolSource: o.ToolSource}}
	}
	lim := o.Limits.withDefaults()
	var recaller core.MemoryRecaller
	if o.Memory != nil {
		recaller = o.Memory
	}
	return &Runner{Machine: &m, Versions: versions, Store: o.Store, Queue: o.Queue, Deltas: o.Deltas, Notifier: o.Notifier, Callbacks: o.Callbacks, RemoteTasks: o.RemoteTasks, Clock: o.Clock, IDs: o.IDs, Agents: o.Agents, Log: o.Log, Limits: lim, Metering: o.Metering, Telemetry: o.Telemetry, Metrics: o.Metrics,
		IO:     core.IO{Model: o.Model, Summarizer: o.Summarizer, Compactor: o.Compactor, Memory: recaller, Clock: o.Clock},
		Memory: o.Memory,
		cache:  newTranscriptCache(lim.TranscriptCacheBytes), after: defaultAfter}
}

// Errors the API maps to statuses.
var (
	// ErrSessionBusy: the session has an unfinished run (409
	// transcript_lock_contention).
	ErrSessionBusy = errors.New("the session has an unfinished run")
	// ErrAlreadyDecided: the pending item was answered, decided or expired
	// (409).
	ErrAlreadyDecided = errors.New("already decided")
	// ErrFinished: the run is finished (409).
	ErrFinished = errors.New("the run is finished")
	// ErrContention: the run kept changing under this request (409).
	ErrContention = errors.New("the run is busy; retry")
	// ErrUnknownAgent: no agent with that slug (400).
	ErrUnknownAgent = errors.New("unknown agent")
)

// group is the FIFO message group of a step: sequential steps share the
// session's group; parallel tool steps get one each.
func group(st core.RunState, s core.Step) string {
	if s.Kind == core.StepToolCall && st.Config.ParallelToolCalls {
		return st.SessionID + "#" + s.CallID
	}
	return st.SessionID
}

// dedupID is a step message's deduplication id: the run, the step and
// the version of the commit that sends it. A send retried for the same
// commit is dropped as a duplicate; the sweeper's resend of a stalled
// step is a commit of its own (core.StallResend), so SQS FIFO, which
// drops a repeated id for five minutes, does not drop it.
func dedupID(st core.RunState, s core.Step) string {
	return fmt.Sprintf("%s:%d:%d", s.RunID, s.Seq, st.Version)
}

// stall is the deployment's stall and lease periods.
func (e *Runner) stall() core.Stall {
	return core.Stall{After: e.Limits.StallAfter, Lease: e.Limits.ChainLease}
}

func (e *Runner) enqueue(ctx context.Context, st core.RunState, steps []core.Step) {
	if len(steps) == 0 {
		return
	}
	qs := make([]core.QueuedStep, len(steps))
	for i, s := range steps {
		s.Trace = st.Trace
		qs[i] = core.QueuedStep{Step: s, Group: group(st, s), DedupID: dedupID(st, s)}
	}
	if err := e.Queue.Enqueue(ctx, qs); err != nil {
		// The commit stands; the sweeper sends the steps again once the run
		// is due (Config.StallAfter).
		e.Log.ErrorContext(ctx, "enqueue steps", "run_id", st.RunID, "session_id", st.SessionID, "steps", len(steps), "err", err)
	}
}

// loadOwned loads a run and checks its tenant; another tenant's run is
// not found.
func (e *Runner) loadOwned(ctx context.Context, tenant, runID string) (core.RunRecord, error) {
	rec, err := e.Store.LoadRun(ctx, runID)
	if err != nil {
		return rec, err
	}
	if rec.Tenant != tenant {
		return core.RunRecord{}, fmt.Errorf("run %s: %w", runID, core.ErrNotFound)
	}
	return rec, nil
}
