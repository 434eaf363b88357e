package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// Logical operations. Each is one round trip on AWS (an HTTP request to
// DynamoDB or SQS, retries counted as further round trips) and one port
// call on the in-memory adapters.
const (
	opStateRead      = "state_read"      // DynamoDB Query RUN#… (state + config items) / Store.LoadRun
	opTranscriptRead = "transcript_read" // DynamoDB Query SES#… MSG# / Store.Messages
	opIntentClaim    = "intent_claim"    // DynamoDB UpdateItem INT#… / Store.ClaimIntent
	opCommit         = "commit"          // DynamoDB TransactWriteItems / Store.Commit
	opCreateRun      = "create_run"      // DynamoDB TransactWriteItems (first write) / Store.CreateRun
	opSessionHead    = "session_head"    // DynamoDB GetItem SES#…/HEAD / Store.SessionHead
	opEnqueue        = "enqueue"         // SQS SendMessageBatch / Queue.Enqueue
	opReceive        = "receive"         // SQS ReceiveMessage / Queue.Receive (event source mapping)
	opDelete         = "delete"          // SQS DeleteMessage / Queue.Delete (event source mapping)
	opExtend         = "extend"          // SQS ChangeMessageVisibility / Queue.ExtendVisibility (a step outlasting a third of the visibility timeout)
	opDeltaWrite     = "delta_write"     // DynamoDB PutItem RUN#…/DLT#… (a batch of streamed tokens)
	opDeltaRead      = "delta_read"      // DynamoDB Query RUN#… DLT#… (a stream's poll for token batches)
	opEventRead      = "event_read"      // DynamoDB Query RUN#… EVT#… (a stream's or a view's events)
	opToolRecordRead = "tool_recs_read"  // DynamoDB Query RUN#… TR#… (a view's tool results and audit)
)

// awsName names the AWS request of a logical operation.
var awsName = map[string]string{
	opStateRead:      "DynamoDB Query (run state)",
	opTranscriptRead: "DynamoDB Query (transcript)",
	opIntentClaim:    "DynamoDB UpdateItem (intent)",
	opCommit:         "DynamoDB TransactWriteItems",
	opCreateRun:      "DynamoDB TransactWriteItems (create)",
	opSessionHead:    "DynamoDB GetItem (session head)",
	opEnqueue:        "SQS SendMessageBatch",
	opReceive:        "SQS ReceiveMessage",
	opDelete:         "SQS DeleteMessage",
	opExtend:         "SQS ChangeMessageVisibility",
	opDeltaWrite:     "DynamoDB PutItem (token batch)",
	opDeltaRead:      "DynamoDB Query (token batches)",
	opEventRead:      "DynamoDB Query (events)",
	opToolRecordRead: "DynamoDB Query (tool records)",
}

// isSQS reports whether a logical operation goes to SQS.
func isSQS(op string) bool {
	return op == opEnqueue || op == opReceive || op == opDelete || op == opExtend || len(op) > 4 && op[:4] == "sqs:"
}

// opStat is what the calls of one operation cost.
type opStat struct {
	// Calls counts round trips: HTTP requests (retries included) on AWS,
	// port calls in memory.
	Calls int `json:"calls"`
	// BytesOut and BytesIn are request and response body bytes (AWS), or
	// the serialized JSON sizes of what was written and read (memory).
	BytesOut int64 `json:"bytes_written"`
	BytesIn  int64 `json:"bytes_read"`
	// RCU and WCU are DynamoDB capacity units (ReturnConsumedCapacity
	// TOTAL, or computed from item sizes where the endpoint reports none).
	RCU float64 `json:"rcu,omitempty"`
	WCU float64 `json:"wcu,omitempty"`
	// IndexWCU is the part of WCU spent on the global secondary index.
	IndexWCU float64 `json:"index_wcu,omitempty"`
	// ReportedWCU is what the endpoint reported (WCU differs for
	// transactions, computed from the items).
	ReportedWCU float64 `json:"reported_wcu,omitempty"`
	// CostWCU is WCU as result.cost counts it (internal/cost.Instrument):
	// the same, except that a transaction's index writes are counted at
	// the most they can cost, as a stateless worker does not know the
	// entries the run's previous commit left.
	CostWCU float64 `json:"cost_wcu,omitempty"`
	// SQSBilled counts billed SQS requests (one per started 64 KB of
	// payload).
	SQSBilled int `json:"sqs_billed,omitempty"`
	// ItemBytes is the size of the items single-item puts wrote, by
	// DynamoDB's rules (attribute names plus values).
	ItemBytes int64 `json:"item_bytes,omitempty"`
	// ZeroRCUQueries counts the queries the endpoint reported no read
	// units for (DynamoDB Local, when a query finds nothing).
	ZeroRCUQueries int `json:"queries_reported_0_rcu,omitempty"`
}

func (s *opStat) add(o opStat) {
	s.Calls += o.Calls
	s.BytesOut += o.BytesOut
	s.BytesIn += o.BytesIn
	s.RCU += o.RCU
	s.WCU += o.WCU
	s.IndexWCU += o.IndexWCU
	s.ReportedWCU += o.ReportedWCU
	s.CostWCU += o.CostWCU
	s.SQSBilled += o.SQSBilled
	s.ItemBytes += o.ItemBytes
	s.ZeroRCUQueries += o.ZeroRCUQueries
}

// recorder collects the operations of one step, or of one message's
// receive and delete. It is safe for concurrent use.
type recorder struct {
	mu  sync.Mutex
	ops map[string]*opStat
	// lazy holds size computations deferred until after a step's timing.
	lazy []func()
	// committed is the output of the step's successful commit.
	committed *core.Output
	// loaded is the run state the step read.
	loaded *core.RunState
	// committedAt and committedCPU are when the step's commit returned
	// (wall clock and this process's CPU time).
	committedAt  time.Time
	committedCPU time.Duration
	// parts, on the recorder of a worker invocation (newSplitter), are
	// its steps' recorders in order.
	parts []*recorder
}

func newRecorder() *recorder { return &recorder{ops: map[string]*opStat{}} }

// newSplitter is the recorder of a worker invocation, which may run
// several steps when they are chained: it divides the operations into
// the steps'. A step ends with its commit and the sends that follow it;
// the first DynamoDB request after a commit belongs to the next step
// (its intent claim, or its own commit for a model turn, which reads
// nothing when chained).
func newSplitter() *recorder {
	r := newRecorder()
	r.parts = []*recorder{newRecorder()}
	return r
}

// at is the recorder an operation op made now is added to: r itself,
// or on a splitter the current step's (a new one when op is a DynamoDB
// request after the current step committed).
func (r *recorder) at(op string) *recorder {
	if r.parts == nil {
		return r
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := r.parts[len(r.parts)-1]
	if !isSQS(op) && cur.isCommitted() {
		cur = newRecorder()
		r.parts = append(r.parts, cur)
	}
	return cur
}

// current is the recorder of the step in progress (r itself unless r is
// a splitter).
func (r *recorder) current() *recorder {
	if r.parts == nil {
		return r
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.parts[len(r.parts)-1]
}

func (r *recorder) isCommitted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.committed != nil
}

// steps returns a splitter's step recorders. Operations after the last
// commit that started no committed step (a step that failed) are added
// to the last committed step: they are its invocation's cost.
func (r *recorder) steps() []*recorder {
	r.mu.Lock()
	parts := append([]*recorder(nil), r.parts...)
	r.mu.Unlock()
	n := len(parts)
	for n > 1 && !parts[n-1].isCommitted() {
		last, prev := parts[n-1], parts[n-2]
		for op, s := range last.finish() {
			prev.add(op, s)
		}
		n--
	}
	r.mu.Lock()
	r.parts = parts[:n] // merged once
	r.mu.Unlock()
	return parts[:n]
}

type recorderKey struct{}

// withRecorder attributes the operations done with ctx to r.
func withRecorder(ctx context.Context, r *recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

// unattributed collects operations done outside any step (setup,
// starting runs, verification); it is never reported.
var unattributed = newRecorder()

func recorderFrom(ctx context.Context) *recorder {
	if r, ok := ctx.Value(recorderKey{}).(*recorder); ok {
		return r
	}
	return unattributed
}

func (r *recorder) add(op string, s opStat) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, ok := r.ops[op]
	if !ok {
		cur = &opStat{}
		r.ops[op] = cur
	}
	cur.add(s)
}

// later defers f until finish; the unattributed recorder, which is never
// finished, drops it.
func (r *recorder) later(f func()) {
	if r == unattributed {
		return
	}
	r.mu.Lock()
	r.lazy = append(r.lazy, f)
	r.mu.Unlock()
}

// finish runs the deferred computations and returns the totals by
// operation.
func (r *recorder) finish() map[string]opStat {
	r.mu.Lock()
	lazy := r.lazy
	r.lazy = nil
	r.mu.Unlock()
	for _, f := range lazy {
		f()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]opStat, len(r.ops))
	for k, v := range r.ops {
		out[k] = *v
	}
	return out
}

func (r *recorder) setCommitted(out core.Output) {
	r = r.current()
	at, c := time.Now(), cpuNow()
	r.mu.Lock()
	r.committed = &out
	r.committedAt, r.committedCPU = at, c
	r.mu.Unlock()
}

func (r *recorder) setLoaded(st core.RunState) {
	r = r.at(opStateRead)
	r.mu.Lock()
	if r.loaded == nil {
		r.loaded = &st
	}
	r.mu.Unlock()
}

// jsonSize is the size of v's JSON encoding.
func jsonSize(v any) int64 {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return int64(len(b))
}

// observedStore notes what a step read and committed, for the step's
// classification and its minimum; with count set it also counts the
// calls (the in-memory runtime, where no HTTP request exists to count),
// and with sizes their serialized sizes, computed after the step's
// timing.
type observedStore struct {
	durable.Store
	count, sizes bool
}

func (s *observedStore) record(ctx context.Context, op string, out, in func() int64) {
	if !s.count {
		return
	}
	r := recorderFrom(ctx).at(op)
	if !s.sizes {
		r.add(op, opStat{Calls: 1})
		return
	}
	r.later(func() { r.add(op, opStat{Calls: 1, BytesOut: out(), BytesIn: in()}) })
}

// zero is the size of nothing.
func zero() int64 { return 0 }

// SessionHead counts the call.
func (s *observedStore) SessionHead(ctx context.Context, tenant, sessionID string) (core.SessionHead, error) {
	h, err := s.Store.SessionHead(ctx, tenant, sessionID)
	s.record(ctx, opSessionHead, func() int64 { return jsonSize([]string{tenant, sessionID}) }, func() int64 { return jsonSize(h) })
	return h, err
}

// CreateRun counts the call.
func (s *observedStore) CreateRun(ctx context.Context, head core.SessionHead, w core.Write) error {
	err := s.Store.CreateRun(ctx, head, w)
	s.record(ctx, opCreateRun, func() int64 { return jsonSize(w) }, zero)
	return err
}

// LoadRun notes the state read.
func (s *observedStore) LoadRun(ctx context.Context, runID string) (core.RunRecord, error) {
	rec, err := s.Store.LoadRun(ctx, runID)
	if err == nil {
		recorderFrom(ctx).setLoaded(rec.State)
	}
	s.record(ctx, opStateRead, func() int64 { return jsonSize(runID) }, func() int64 { return jsonSize(rec) })
	return rec, err
}

// Commit notes the committed output (after counting the call, which
// belongs to the step the commit ends).
func (s *observedStore) Commit(ctx context.Context, w core.Write) error {
	err := s.Store.Commit(ctx, w)
	s.record(ctx, opCommit, func() int64 { return jsonSize(w) }, zero)
	if err == nil {
		recorderFrom(ctx).setCommitted(w.Output)
	}
	return err
}

// Messages counts the call.
func (s *observedStore) Messages(ctx context.Context, tenant, sessionID string, after, before int64, limit int) ([]core.Message, error) {
	m, err := s.Store.Messages(ctx, tenant, sessionID, after, before, limit)
	s.record(ctx, opTranscriptRead, func() int64 { return jsonSize([]any{tenant, sessionID, after, before, limit}) }, func() int64 { return jsonSize(m) })
	return m, err
}

// ClaimIntent counts the call.
func (s *observedStore) ClaimIntent(ctx context.Context, runID, toolCallID, owner string, now time.Time, lease time.Duration) (core.Claim, error) {
	c, err := s.Store.ClaimIntent(ctx, runID, toolCallID, owner, now, lease)
	s.record(ctx, opIntentClaim, func() int64 { return jsonSize([]any{runID, toolCallID, owner, now, lease}) }, func() int64 { return jsonSize(c) })
	return c, err
}

// countedQueue counts the in-memory queue's calls and, with sizes, their
// serialized sizes.
type countedQueue struct {
	inner interface {
		core.StepQueue
		core.StepReceiver
	}
	sizes bool
}

func (q countedQueue) record(ctx context.Context, op string, out, in func() int64) {
	r := recorderFrom(ctx).at(op)
	if !q.sizes {
		r.add(op, opStat{Calls: 1, SQSBilled: 1})
		return
	}
	r.later(func() { r.add(op, opStat{Calls: 1, BytesOut: out(), BytesIn: in(), SQSBilled: 1}) })
}

// Enqueue counts the call.
func (q countedQueue) Enqueue(ctx context.Context, steps []core.QueuedStep) error {
	err := q.inner.Enqueue(ctx, steps)
	q.record(ctx, opEnqueue, func() int64 { return jsonSize(steps) }, zero)
	return err
}

// Receive counts the call.
func (q countedQueue) Receive(ctx context.Context, max int, wait time.Duration) ([]core.ReceivedMessage, error) {
	ds, err := q.inner.Receive(ctx, max, wait)
	q.record(ctx, opReceive, zero, func() int64 { return jsonSize(ds) })
	return ds, err
}

// Delete counts the call.
func (q countedQueue) Delete(ctx context.Context, receipt string) error {
	err := q.inner.Delete(ctx, receipt)
	q.record(ctx, opDelete, func() int64 { return jsonSize(receipt) }, zero)
	return err
}

func (q countedQueue) ExtendVisibility(ctx context.Context, receipt string, d time.Duration) error {
	err := q.inner.ExtendVisibility(ctx, receipt, d)
	q.record(ctx, opExtend, func() int64 { return jsonSize(receipt) }, zero)
	return err
}
