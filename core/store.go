package core

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// The ports below are what the distributed runtime needs from storage and
// queues. Each has an in-memory implementation and an AWS one (DynamoDB,
// SQS) that pass the same contract suite. Adapters translate their SDK
// errors into ErrNotFound, ErrConflict and ErrLockHeld.

// SessionHead is a session's committed position.
type SessionHead struct {
	Exists bool
	// NextSeq is the sequence number the session's next message gets.
	NextSeq int64
	// ActiveRun is the unfinished run holding the session lock, or "".
	ActiveRun string
	// Base is where the transcript below the session's own messages is
	// kept (a fork's shared prefix), set when the session is created from
	// its first run's RunState.Base.
	Base []TranscriptSegment
}

// RunRecord is a stored run.
type RunRecord struct {
	Tenant string
	State  RunState
}

// PendingItem mirrors a client-tool request or an approval action, so
// that a late or second answer can be told apart from an unknown id.
type PendingItem struct {
	RunID      string    `json:"run_id"`
	ID         string    `json:"id"`
	Kind       string    `json:"kind"` // PendingToolRequestKind or PendingActionKind
	ToolCallID string    `json:"tool_call_id"`
	Status     string    `json:"status"` // PendingOpen, PendingResolved or PendingExpired
	ExpiresAt  time.Time `json:"expires_at"`
}

// Pending item kinds and statuses.
const (
	PendingToolRequestKind = "tool_request"
	PendingActionKind      = "action"
	PendingOpen            = "pending"
	PendingResolved        = "resolved"
	PendingExpired         = "expired"
)

// Write is one transition to store. Records (messages, events, tool
// results, audit, pending items) have deterministic keys; the state is
// the commit point, conditioned on PrevVersion. Readers never see a record
// beyond the committed state's counters.
type Write struct {
	Tenant string
	// PrevVersion is the version the transition was computed from; 0 for
	// a new run.
	PrevVersion int64
	Output      Output
	Pending     []PendingItem
	// DueAt is when the scheduler must look at the run again (a pending
	// expiry, or a step that may have been lost); nil when it is finished.
	DueAt *time.Time
	// Notifications are the transition's outbox records, stored with the
	// commit point (all or nothing) and published after it.
	Notifications []Notification
	// AfterFinish says the run was already finished before this write
	// (a callback_failed event): the write leaves the run's session
	// alone, which may have moved on to another run.
	AfterFinish bool
	// ActiveLimit, when positive, caps the tenant's unfinished runs: the
	// store counts them (a new unfinished run adds one, the write that
	// finishes a run takes one away, both with the commit point) and
	// refuses a new run with ErrTooManyActive when the count is at the
	// limit. Every write of a deployment carries the same limit.
	ActiveLimit int
}

// TakesActive: under an ActiveLimit, the write creates an unfinished run,
// which the tenant's count gains (refused at the limit).
func (w Write) TakesActive() bool {
	return w.ActiveLimit > 0 && !IsTerminal(w.Output.State.Status)
}

// FreesActive: under an ActiveLimit, the write is the one that finishes
// its run, which leaves the tenant's count.
func (w Write) FreesActive() bool {
	return w.ActiveLimit > 0 && IsTerminal(w.Output.State.Status) && !w.AfterFinish
}

// Notification is an outbox record: one run notification to publish for
// a committed transition. Its ID is derived from the run and the commit,
// so every send of it, first or repeated, carries the same id.
type Notification struct {
	ID    string `json:"id"`
	RunID string `json:"run_id"`
	// DetailType is one of the NotificationPaused, NotificationFinished
	// and NotificationExpired detail types.
	DetailType string          `json:"detail_type"`
	Detail     json.RawMessage `json:"detail"`
	// Time is the transition's time (the committed state's UpdatedAt);
	// the sweeper sends the record again once Time is NotifyAfter old. A
	// callback delivery that failed moves it forward (UpdateNotification)
	// to space out the attempts.
	Time time.Time `json:"time"`
	// Callback, when set, makes the record the delivery of notification
	// Callback.EventID to the run's callback instead of its event on the
	// bus; each target has its own record, settled on its own.
	Callback *CallbackDelivery `json:"callback,omitempty"`
	// Parent, when set, makes the record the delivery of a finished
	// child run's end to the parent run's call (durable/children.go).
	Parent *ParentDelivery `json:"parent,omitempty"`
	// Child, when set, makes the record the stop of the running child
	// runs of a run that ended (durable/children.go).
	Child *ChildStop `json:"child,omitempty"`
	// Remote, when set, makes the record the cancel of the remote tasks
	// a run gave up on (AbandonedRemoteTasks; durable/remote.go).
	Remote *RemoteCancel `json:"remote,omitempty"`
	// Eval, when set, makes the record the end of an eval's case run (or
	// of its judge's run), which scores the case (evals.go).
	Eval *EvalDelivery `json:"eval,omitempty"`
	// Memory, when set, makes the record the start of a completed run's
	// memory extraction: its delivery sends the run's StepMemoryExtract
	// message.
	Memory *MemoryExtraction `json:"memory,omitempty"`
}

// MemoryExtraction addresses a run's memory extraction.
type MemoryExtraction struct {
	Subject string `json:"subject"`
}

// ChildStop ends the running child runs of a run that ended: they are
// interrupted when it was, otherwise cancelled, with Reason. One record
// stops them all, however many the run fanned out to, so the commit that
// ends a run carries a bounded number of outbox records.
type ChildStop struct {
	RunIDs []string `json:"run_ids,omitempty"`
	// RunID is the one child of a record written before RunIDs existed.
	RunID     string `json:"run_id,omitempty"`
	Interrupt bool   `json:"interrupt,omitempty"`
	Reason    string `json:"reason"`
}

// Runs are the child runs the record stops.
func (c ChildStop) Runs() []string {
	if c.RunID != "" {
		return append(slices.Clip(c.RunIDs), c.RunID)
	}
	return c.RunIDs
}

// ParentDelivery addresses a child run's end to the call it answers.
type ParentDelivery struct {
	RunID      string `json:"run_id"`
	ToolCallID string `json:"tool_call_id"`
}

// Callback is a run's webhook: the URL notifications are POSTed to and
// the notification events it wants (paused, finished, expired). Format
// "" posts the notification's detail; another names the body a
// protocol edge wants (CallbackFormatA2A: an A2A push notification),
// with Token (sent back to the receiver as the format says) and ID (the
// edge's name for the configuration).
type Callback struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Format string   `json:"format,omitempty"`
	Token  string   `json:"token,omitempty"`
	ID     string   `json:"id,omitempty"`
}

// CallbackFormatA2A: the callback is an A2A task's push notification
// configuration; its body is the task (package a2aserver).
const CallbackFormatA2A = "a2a"

// Wants reports whether the callback takes notification event ev.
func (c *Callback) Wants(ev string) bool {
	if c == nil {
		return false
	}
	for _, e := range c.Events {
		if e == ev {
			return true
		}
	}
	return false
}

// CallbackDelivery is the state of one notification's delivery to a
// run's callback.
type CallbackDelivery struct {
	// EventID is the notification's event id, the request's
	// Idempotency-Key.
	EventID string `json:"event_id"`
	Event   string `json:"event"`
	// Agent is the run's agent, whose callback secret signs the request.
	Agent string `json:"agent"`
	URL   string `json:"url"`
	// Format and Token are the callback's.
	Format string `json:"format,omitempty"`
	Token  string `json:"token,omitempty"`
	// Attempts counts the failed attempts; LastStatus (0: no response)
	// and LastError describe the last one.
	Attempts   int    `json:"attempts,omitempty"`
	LastStatus int    `json:"last_status,omitempty"`
	LastError  string `json:"last_error,omitempty"`
	// Failed: Baton gave up; the record stays, out of the unsent list,
	// as the failed-delivery record.
	Failed bool `json:"failed,omitempty"`
}

// Run notifications: the source and the detail types of the events.
const (
	NotificationSource   = "baton"
	NotificationPaused   = "Baton Run Paused"
	NotificationFinished = "Baton Run Finished"
	NotificationExpired  = "Baton Pending Expired"
)

// Outbox reads and settles the notifications that commits stored.
type Outbox interface {
	// UnsentNotifications lists the notifications not yet marked sent
	// whose Time is at or before before, oldest first, at most limit (0:
	// no limit).
	UnsentNotifications(ctx context.Context, before time.Time, limit int) ([]Notification, error)
	// MarkNotificationSent marks a notification sent; an unknown or an
	// already sent one is not an error.
	MarkNotificationSent(ctx context.Context, runID, id string) error
	// UpdateNotification stores n again over the unsent record of the
	// same run and id: listed again at n.Time, or, when its callback
	// delivery Failed, kept and listed no more. A sent or unknown record
	// is left alone (no error).
	UpdateNotification(ctx context.Context, n Notification) error
}

// NotificationPublisher sends notifications (to EventBridge, a local
// receiver, a log). Publish returns nil only when every notification
// was accepted; it may send any of them more than once.
type NotificationPublisher interface {
	Publish(ctx context.Context, ns []Notification) error
}

// Storage is every storage port of the distributed runtime. The durable
// stores (internal/memstore, internal/dynamostore) implement all of it,
// and the contract suite (internal/storetest) runs on it.
type Storage interface {
	RunStore
	TranscriptReader
	RecordReader
	DueRuns
	IntentStore
	IdempotencyStore
	TokenStore
	DeltaStore
	Outbox
	RunLister
	LimitStore
	DeliveryLog
	AgentVersionStore
	EvalStore
	MemoryStore
	ScheduleStore
}

// RateLimit is a token bucket: it holds at most Burst tokens and refills
// at Rate tokens a second.
type RateLimit struct {
	Rate  float64
	Burst int
}

// LimitStore keeps the state of per-tenant limits where every API
// instance sees it.
type LimitStore interface {
	// TakeToken takes one token from bucket key at now (the generic cell
	// rate algorithm: the bucket is a theoretical arrival time). When the
	// bucket is empty it takes nothing and returns how long until a token
	// is there; 0 means the token was taken.
	TakeToken(ctx context.Context, key string, now time.Time, l RateLimit) (time.Duration, error)
	// ActiveRuns is the tenant's count of unfinished runs kept by the
	// writes that carry an ActiveLimit.
	ActiveRuns(ctx context.Context, tenant string) (int, error)
}

// GCRA is the generic cell rate algorithm on a bucket whose theoretical
// arrival time is tat (zero: a full bucket): the new tat when a token is
// taken at now, or, when the bucket is empty, how long until a token is
// there. Both stores keep tat and call it.
func GCRA(tat, now time.Time, l RateLimit) (next time.Time, wait time.Duration) {
	if l.Rate <= 0 {
		return tat, 0
	}
	interval := time.Duration(float64(time.Second) / l.Rate)
	if tat.Before(now) {
		tat = now
	}
	next = tat.Add(interval)
	if over := next.Sub(now) - time.Duration(max(l.Burst, 1))*interval; over > 0 {
		return tat, over
	}
	return next, 0
}

// RunStore stores runs and their sessions.
type RunStore interface {
	// SessionHead reads a session; a missing session has Exists false.
	SessionHead(ctx context.Context, tenant, sessionID string) (SessionHead, error)
	// CreateRun stores a new run and takes the session lock, creating or
	// advancing the session from head. ErrLockHeld: the session has an
	// unfinished run. ErrConflict: the session moved since head was read,
	// or the run id exists.
	CreateRun(ctx context.Context, head SessionHead, w Write) error
	// LoadRun reads a run's committed state (strongly consistent).
	LoadRun(ctx context.Context, runID string) (RunRecord, error)
	// Commit stores a transition of an existing run. ErrConflict: another
	// writer committed since PrevVersion. A terminal state releases the
	// session lock.
	Commit(ctx context.Context, w Write) error
}

// TranscriptReader pages a session's transcript: messages with after <
// seq < before, in order, at most limit.
type TranscriptReader interface {
	Messages(ctx context.Context, tenant, sessionID string, after, before int64, limit int) ([]Message, error)
}

// RecordReader reads a run's records.
type RecordReader interface {
	// Events returns events with after < seq < before, in order, at most
	// limit.
	Events(ctx context.Context, runID string, after, before int64, limit int) ([]Event, error)
	// ToolRecords returns the tool results and audit events whose Seq is
	// below before, in order.
	ToolRecords(ctx context.Context, runID string, before int64) ([]ToolExecutionResult, []AuditEvent, error)
	// PendingItem reads one pending item by its request or action id.
	PendingItem(ctx context.Context, runID, id string) (PendingItem, error)
}

// DueRuns lists runs whose DueAt is at or before now.
type DueRuns interface {
	DueRuns(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// Claim is the outcome of claiming a tool call's execution intent.
type Claim struct {
	// Claimed: this caller may execute the call now.
	Claimed bool
	// Previous: an earlier attempt recorded the intent and its outcome is
	// unknown (its lease expired without a recorded result).
	Previous bool
	// Attempt counts claims of this call, starting at 1.
	Attempt int
	// Sent is what an earlier attempt recorded once its message to a
	// remote agent was sent (SettleIntent), nil when none did.
	Sent *RemoteSent
}

// RemoteSent is the remote task a message of a call started or
// continued, recorded in the call's intent right after the send
// returned: an attempt that finds it follows the task and never sends
// the message again.
type RemoteSent struct {
	TaskID    string `json:"task_id"`
	ContextID string `json:"context_id,omitempty"`
}

// IntentStore records a server tool call's intent before it executes.
type IntentStore interface {
	// ClaimIntent claims the call for owner for lease. A live claim by
	// another owner gives Claimed false.
	ClaimIntent(ctx context.Context, runID, toolCallID, owner string, now time.Time, lease time.Duration) (Claim, error)
	// SettleIntent ends owner's claim of the call before its lease runs
	// out. With sent, it records the remote task the attempt's message
	// started (every later claim returns it in Claim.Sent) and frees the
	// lease, whoever holds it. Without, the attempt sent nothing: an
	// intent owner still holds is forgotten, so the next claim is a first
	// attempt again; one another owner took over is left alone.
	SettleIntent(ctx context.Context, runID, toolCallID, owner string, sent *RemoteSent) error
}

// IdempotencyRecord remembers a POST's outcome under its key.
type IdempotencyRecord struct {
	Hash       string    `json:"hash"`
	Done       bool      `json:"done"`
	StatusCode int       `json:"status_code,omitempty"`
	Body       []byte    `json:"body,omitempty"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// IdempotencyStore backs the Idempotency-Key header.
type IdempotencyStore interface {
	// BeginIdempotent records an in-flight request under (scope, key) and
	// returns nil, or returns the existing unexpired record.
	BeginIdempotent(ctx context.Context, scope, key, hash string, now time.Time, ttl time.Duration) (*IdempotencyRecord, error)
	// FinishIdempotent stores the response of an in-flight request.
	FinishIdempotent(ctx context.Context, scope, key string, rec IdempotencyRecord) error
	// AbortIdempotent forgets an in-flight request that failed on the
	// server's side, so the client may retry it.
	AbortIdempotent(ctx context.Context, scope, key string) error
}

// Token is a stored API token (only its SHA-256 hash is the key).
type Token struct {
	Tenant string   `json:"tenant"`
	Scopes []string `json:"scopes"`
	Label  string   `json:"label,omitempty"`
}

// TokenStore resolves token hashes.
type TokenStore interface {
	LookupToken(ctx context.Context, hash string) (Token, error)
	PutToken(ctx context.Context, hash string, t Token) error
}

// QueuedStep is a step message on its way to the queue.
type QueuedStep struct {
	Step Step
	// Group serializes delivery: the session for sequential steps, a
	// per-call group for parallel tool steps.
	Group string
	// DedupID drops duplicate sends of one commit's step: run id, step
	// sequence and the commit's version (a resend is another commit).
	DedupID string
}

// StepQueue sends step messages.
type StepQueue interface {
	Enqueue(ctx context.Context, steps []QueuedStep) error
}

// ReceivedMessage is one step message received from the step queue.
type ReceivedMessage struct {
	MessageID     string
	Body          []byte
	ReceiptHandle string
	ReceiveCount  int
	Group         string
	DedupID       string
	SentAt        time.Time
	// Attributes are the message attributes of a message of a
	// MessageQueue (string values only); step messages have none.
	Attributes map[string]string
}

// StepReceiver is the receive side of the step queue, what a local
// poller standing in for the Lambda event source mapping reads. Messages
// not deleted reappear after the visibility timeout and are dead-lettered
// after the queue's maximum receives, as with SQS.
type StepReceiver interface {
	// Receive returns up to max messages, waiting up to wait for the first.
	Receive(ctx context.Context, max int, wait time.Duration) ([]ReceivedMessage, error)
	// Delete removes a received message by its receipt handle.
	Delete(ctx context.Context, receiptHandle string) error
	VisibilityExtender
}

// VisibilityExtender keeps received messages hidden while they are being
// handled: ExtendVisibility hides the message of a receipt handle for d
// from now (SQS ChangeMessageVisibility), so a step that outlasts the
// queue's visibility timeout is not delivered to a second worker. A
// handle whose message was deleted, or is visible again, is an error
// wrapping ErrNotFound.
type VisibilityExtender interface {
	ExtendVisibility(ctx context.Context, receiptHandle string, d time.Duration) error
}

// ScheduledSteps derives the steps a run is waiting on from its state, so
// a step lost between the commit and the enqueue can be sent again.
func (st RunState) ScheduledSteps() []Step {
	var out []Step
	for s := range st.scheduled {
		out = append(out, s)
	}
	return out
}

// scheduled yields the run's scheduled steps, as ScheduledSteps lists
// them, without building the list.
func (st RunState) scheduled(yield func(Step) bool) {
	if IsTerminal(st.Status) {
		return
	}
	if st.ModelStep != 0 && !yield(Step{Kind: StepModelTurn, Format: StepFormat, RunID: st.RunID, Seq: st.ModelStep}) {
		return
	}
	for _, c := range st.Calls {
		if (c.Status == CallPending || c.Status == CallApproved) && c.StepSeq != 0 {
			if !yield(Step{Kind: StepToolCall, Format: StepFormat, RunID: st.RunID, Seq: c.StepSeq, CallID: c.ID}) {
				return
			}
		}
	}
}

// DueAt is when a scheduler must look at the run: the earliest pending
// expiry of a paused run or due follow-up of a remote task, or, for a run
// with scheduled steps, when StallDue sends them again (a lost step, or
// the step of a chaining invocation that died). Finished runs are never
// due.
func (st RunState) DueAt(stall Stall) (time.Time, bool) {
	if IsTerminal(st.Status) {
		return time.Time{}, false
	}
	due, ok := st.NextExpiry()
	if remote, rok := st.NextRemoteDue(); rok && (!ok || remote.Before(due)) {
		due, ok = remote, true
	}
	if at, sok := st.StallDue(stall); sok && (!ok || at.Before(due)) {
		due, ok = at, true
	}
	return due, ok
}

// PendingItems lists the run's open requests and actions, and marks those
// of prev that are no longer open as resolved or expired.
func PendingItems(prev, next RunState) []PendingItem {
	open := map[string]bool{}
	var out []PendingItem
	for _, c := range next.Calls {
		switch c.Status {
		case CallAwaitingClient:
			open[c.RequestID] = true
			out = append(out, PendingItem{RunID: next.RunID, ID: c.RequestID, Kind: PendingToolRequestKind, ToolCallID: c.ID, Status: PendingOpen, ExpiresAt: *c.ExpiresAt})
		case CallAwaitingApproval:
			open[c.ActionID] = true
			out = append(out, PendingItem{RunID: next.RunID, ID: c.ActionID, Kind: PendingActionKind, ToolCallID: c.ID, Status: PendingOpen, ExpiresAt: *c.ExpiresAt})
		}
	}
	for _, c := range prev.Calls {
		var id, kind string
		switch c.Status {
		case CallAwaitingClient:
			id, kind = c.RequestID, PendingToolRequestKind
		case CallAwaitingApproval:
			id, kind = c.ActionID, PendingActionKind
		default:
			continue
		}
		if open[id] {
			continue
		}
		status := PendingResolved
		if !c.ExpiresAt.After(next.UpdatedAt) {
			status = PendingExpired
		}
		out = append(out, PendingItem{RunID: next.RunID, ID: id, Kind: kind, ToolCallID: c.ID, Status: status, ExpiresAt: *c.ExpiresAt})
	}
	return out
}

// DeltaPos orders a run's streamed delta batches: by turn, then by the
// attempt of the turn's model call (attempts start later than earlier
// ones: Attempt is the attempt's start in Unix milliseconds), then by
// batch within the attempt. The zero Batch of a position is its first
// batch; positions compare with Before.
type DeltaPos struct {
	Turn    int   `json:"turn"`
	Attempt int64 `json:"attempt"`
	Batch   int   `json:"batch"`
}

// Before reports whether p sorts before q.
func (p DeltaPos) Before(q DeltaPos) bool {
	if p.Turn != q.Turn {
		return p.Turn < q.Turn
	}
	if p.Attempt != q.Attempt {
		return p.Attempt < q.Attempt
	}
	return p.Batch < q.Batch
}

// DeltaBatch is a batch of the token deltas one attempt of a model turn
// streamed, written by the worker performing the turn and tailed by live
// streams. Batches are ephemeral: they expire at ExpiresAt (minutes after
// they were written) and are never part of the run, its transcript or
// its envelope.
type DeltaBatch struct {
	RunID string
	Pos   DeltaPos
	// Index is the position of the batch's first delta among the deltas
	// of its attempt.
	Index     int
	Deltas    []TokenDelta
	ExpiresAt time.Time
}

// DeltaStore keeps the streamed deltas of model turns for live streams.
type DeltaStore interface {
	// PutDeltas stores a batch; a batch at the same position is replaced.
	PutDeltas(ctx context.Context, b DeltaBatch) error
	// Deltas returns the run's unexpired batches at or after from, in
	// order, at most limit.
	Deltas(ctx context.Context, runID string, from DeltaPos, now time.Time, limit int) ([]DeltaBatch, error)
}

// DeliveryNote is one unusual delivery of a step message, which the
// runner notes beside the run: a redelivery (the queue's receive count
// is above 1: an earlier attempt failed, timed out or crashed) or a stale
// delivery, dropped because the run had moved on (a duplicate send, or
// another delivery committed the step first). A first delivery that is
// not stale is never noted, so a healthy step writes nothing more.
type DeliveryNote struct {
	Step Step
	// Turn is the model turn a model step runs (0: not known, as for a
	// stale delivery).
	Turn        int
	Redelivered bool
	Stale       bool
	At          time.Time
}

// StepDeliveries sums the noted deliveries of one step (by its seq and,
// for a tool step, its call id).
type StepDeliveries struct {
	StepSeq    int64    `json:"step_seq"`
	Kind       StepKind `json:"kind"`
	ToolCallID string   `json:"tool_call_id,omitempty"`
	Turn       int      `json:"turn,omitempty"`
	// Redeliveries counts deliveries after an earlier one failed, timed
	// out or crashed; Stale counts deliveries dropped as stale.
	Redeliveries int       `json:"redeliveries"`
	Stale        int       `json:"stale"`
	LastAt       time.Time `json:"last_at"`
}

// DeliveryLog keeps a run's delivery notes.
type DeliveryLog interface {
	// NoteDelivery adds a note to its step's sums.
	NoteDelivery(ctx context.Context, runID string, n DeliveryNote) error
	// Deliveries returns the run's sums by step seq, then call id.
	Deliveries(ctx context.Context, runID string) ([]StepDeliveries, error)
}

// ChangeNotifier is a store that can tell a process's readers when a run
// changed through it, where one process is every writer of the runs
// (baton dev: durable.Changes). A stream waits for the channel instead of
// polling.
type ChangeNotifier interface {
	// Changed returns a channel closed at the run's next delta write or
	// commit in this store.
	Changed(runID string) <-chan struct{}
}
