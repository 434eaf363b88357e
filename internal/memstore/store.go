package memstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/baton-agents/baton/core"
)

// Store is an in-memory implementation of every storage port. Values are
// stored serialized, so callers can never alias stored state.
type Store struct {
	mu       sync.Mutex
	sessions map[string]*session
	runs     map[string]*run
	intents  map[string]*intent
	idem     map[string]*core.IdempotencyRecord
	tokens   map[string]core.Token
	// deltas holds each run's streamed delta batches in position order.
	deltas map[string][]core.DeltaBatch
	// buckets are the rate limits' theoretical arrival times; active
	// counts each tenant's unfinished runs (core.Write.ActiveLimit).
	buckets map[string]time.Time
	active  map[string]int
	// deliveries holds each run's delivery sums by step seq and call id.
	deliveries map[string]map[deliveryKey]core.StepDeliveries
	// versions and aliases are the agent versions and aliases
	// (versions.go).
	versions map[string]core.AgentVersion
	aliases  map[string]core.AgentAlias
	audit    []core.AgentAuditEntry
	// evals are the evals by id, and evalResults their scored cases by
	// eval and case (evals.go).
	evals       map[string]core.EvalRecord
	evalResults map[string]map[int]core.EvalResult
	// memories are the memory scopes by tenant and subject (memory.go).
	memories map[string]*memScope
	// sched holds the schedules and their triggers (schedules.go).
	sched schedules
}

type deliveryKey struct {
	seq    int64
	callID string
}

type session struct {
	nextSeq   int64
	activeRun string
	messages  map[int64][]byte
	// base is where the transcript below the session's own messages is
	// (core.SessionHead.Base), set by its first run.
	base []core.TranscriptSegment
}

type run struct {
	tenant  string
	state   []byte
	version int64
	dueAt   *time.Time
	events  map[int64][]byte
	results map[int64][]byte
	audit   map[int64][]byte
	pending map[string]core.PendingItem
	session string
	// outbox holds the run's notifications, serialized, by id; sent marks
	// those published.
	outbox map[string]*outboxEntry
}

type outboxEntry struct {
	data []byte
	at   time.Time
	sent bool
}

type intent struct {
	owner   string
	expires time.Time
	attempt int
	sent    *core.RemoteSent
}

var _ core.Storage = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{
		sessions: map[string]*session{}, runs: map[string]*run{}, intents: map[string]*intent{},
		idem: map[string]*core.IdempotencyRecord{}, tokens: map[string]core.Token{},
		buckets: map[string]time.Time{}, active: map[string]int{},
		deliveries: map[string]map[deliveryKey]core.StepDeliveries{},
		versions:   map[string]core.AgentVersion{}, aliases: map[string]core.AgentAlias{},
		evals: map[string]core.EvalRecord{}, evalResults: map[string]map[int]core.EvalResult{},
		memories: map[string]*memScope{}, sched: newSchedules(),
	}
}

// pairKey is the map key of a pair of ids: a session's tenant and id, an
// intent's run and tool call, an idempotency key's scope and key.
func pairKey(a, b string) string { return a + "\x00" + b }

// SessionHead reads a session.
func (s *Store) SessionHead(_ context.Context, tenant, sessionID string) (core.SessionHead, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[pairKey(tenant, sessionID)]
	if !ok {
		return core.SessionHead{NextSeq: 1}, nil
	}
	return core.SessionHead{Exists: true, NextSeq: ss.nextSeq, ActiveRun: ss.activeRun, Base: slices.Clone(ss.base)}, nil
}

// CreateRun stores a new run and takes the session lock.
func (s *Store) CreateRun(_ context.Context, head core.SessionHead, w core.Write) error {
	st := w.Output.State
	enc, err := encodeWrite(w)
	if err != nil {
		return fmt.Errorf("create run %s: %w", st.RunID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, exists := s.runs[st.RunID]; exists {
		return fmt.Errorf("create run %s: %w: run exists", st.RunID, core.ErrConflict)
	}
	key := pairKey(w.Tenant, st.SessionID)
	ss, exists := s.sessions[key]
	switch {
	case exists && ss.activeRun != "":
		return fmt.Errorf("create run %s: %w: session has unfinished run %s", st.RunID, core.ErrLockHeld, ss.activeRun)
	case exists != head.Exists || (exists && ss.nextSeq != head.NextSeq):
		return fmt.Errorf("create run %s: %w: session moved", st.RunID, core.ErrConflict)
	case w.TakesActive() && s.active[w.Tenant] >= w.ActiveLimit:
		return fmt.Errorf("create run %s: %w", st.RunID, &core.TooManyActiveError{Tenant: w.Tenant, Limit: w.ActiveLimit})
	}
	if w.TakesActive() {
		s.active[w.Tenant]++
	}
	if !exists {
		ss = &session{messages: map[int64][]byte{}, base: slices.Clone(st.Base)}
		s.sessions[key] = ss
	}
	r := &run{tenant: w.Tenant, session: st.SessionID, events: map[int64][]byte{}, results: map[int64][]byte{}, audit: map[int64][]byte{}, pending: map[string]core.PendingItem{}, outbox: map[string]*outboxEntry{}}
	s.runs[st.RunID] = r
	s.apply(ss, r, w, enc)
	return nil
}

// LoadRun reads a run.
func (s *Store) LoadRun(_ context.Context, runID string) (core.RunRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[runID]
	if !ok {
		return core.RunRecord{}, fmt.Errorf("load run %s: %w", runID, core.ErrNotFound)
	}
	st, err := core.UnmarshalState(r.state)
	if err != nil {
		return core.RunRecord{}, err
	}
	return core.RunRecord{Tenant: r.tenant, State: st}, nil
}

// Commit stores a transition conditioned on the previous version.
func (s *Store) Commit(_ context.Context, w core.Write) error {
	st := w.Output.State
	enc, err := encodeWrite(w)
	if err != nil {
		return fmt.Errorf("commit run %s: %w", st.RunID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[st.RunID]
	if !ok {
		return fmt.Errorf("commit run %s: %w", st.RunID, core.ErrNotFound)
	}
	if r.version != w.PrevVersion {
		return fmt.Errorf("commit run %s: %w: version %d, expected %d", st.RunID, core.ErrConflict, r.version, w.PrevVersion)
	}
	if w.FreesActive() {
		s.active[r.tenant]--
	}
	s.apply(s.sessions[pairKey(r.tenant, r.session)], r, w, enc)
	return nil
}

// encoded is a Write serialized before the store changes, so a value
// that cannot be encoded fails the write instead of half-applying it.
type encoded struct {
	state    []byte
	messages [][]byte
	events   [][]byte
	results  [][]byte
	audit    [][]byte
	outbox   [][]byte
}

func encodeWrite(w core.Write) (encoded, error) {
	var out encoded
	var err error
	if out.state, err = core.MarshalState(w.Output.State); err != nil {
		return encoded{}, fmt.Errorf("encode run state: %w", err)
	}
	encodeAll := func(what string, n int, item func(int) any) ([][]byte, error) {
		bs := make([][]byte, n)
		for i := range bs {
			b, err := core.CanonicalJSON(item(i))
			if err != nil {
				return nil, fmt.Errorf("encode %s %d: %w", what, i, err)
			}
			bs[i] = b
		}
		return bs, nil
	}
	o := w.Output
	if out.messages, err = encodeAll("message", len(o.Messages), func(i int) any { return o.Messages[i] }); err != nil {
		return encoded{}, err
	}
	if out.events, err = encodeAll("event", len(o.Events), func(i int) any { return o.Events[i] }); err != nil {
		return encoded{}, err
	}
	if out.results, err = encodeAll("tool result", len(o.ToolResults), func(i int) any { return o.ToolResults[i] }); err != nil {
		return encoded{}, err
	}
	if out.audit, err = encodeAll("audit event", len(o.Audit), func(i int) any { return o.Audit[i] }); err != nil {
		return encoded{}, err
	}
	for _, n := range w.Notifications {
		if n.RunID != w.Output.State.RunID || n.ID == "" {
			return encoded{}, fmt.Errorf("%w: notification %q of run %q in a write of run %q", core.ErrInvalidInput, n.ID, n.RunID, w.Output.State.RunID)
		}
	}
	if out.outbox, err = encodeAll("notification", len(w.Notifications), func(i int) any { return w.Notifications[i] }); err != nil {
		return encoded{}, err
	}
	return out, nil
}

func (s *Store) apply(ss *session, r *run, w core.Write, enc encoded) {
	st := w.Output.State
	for i, m := range w.Output.Messages {
		ss.messages[m.Seq] = enc.messages[i]
	}
	for i, e := range w.Output.Events {
		r.events[e.Seq] = enc.events[i]
	}
	for i, x := range w.Output.ToolResults {
		r.results[x.Seq] = enc.results[i]
	}
	for i, a := range w.Output.Audit {
		r.audit[a.Seq] = enc.audit[i]
	}
	for _, p := range w.Pending {
		r.pending[p.ID] = p
	}
	for i, n := range w.Notifications {
		r.outbox[n.ID] = &outboxEntry{data: enc.outbox[i], at: n.Time, sent: n.Callback != nil && n.Callback.Failed}
	}
	r.state, r.version, r.dueAt = enc.state, st.Version, nil
	if w.DueAt != nil {
		due := *w.DueAt
		r.dueAt = &due
	}
	if st.NextMsgSeq > ss.nextSeq {
		ss.nextSeq = st.NextMsgSeq
	}
	if core.IsTerminal(st.Status) {
		if ss.activeRun == st.RunID {
			ss.activeRun = ""
		}
	} else {
		ss.activeRun = st.RunID
	}
}

// Messages pages a session's transcript.
func (s *Store) Messages(_ context.Context, tenant, sessionID string, after, before int64, limit int) ([]core.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[pairKey(tenant, sessionID)]
	if !ok {
		return nil, nil
	}
	return decodeRange(ss.messages, after, before, limit, func(seq int64, b []byte) (m core.Message, err error) {
		err = m.UnmarshalJSON(b)
		m.Seq = seq
		return m, err
	})
}

// decodeRange decodes the records of m whose seqs lie between after and
// before (0: no bound), at most limit (0: no limit), in seq order.
func decodeRange[T any](m map[int64][]byte, after, before int64, limit int, decode func(seq int64, b []byte) (T, error)) ([]T, error) {
	var out []T
	for _, seq := range sortedSeqs(m, after, before) {
		if limit > 0 && len(out) >= limit {
			break
		}
		v, err := decode(seq, m[seq])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func sortedSeqs(m map[int64][]byte, after, before int64) []int64 {
	seqs := make([]int64, 0, len(m))
	for k := range m {
		if k > after && (before <= 0 || k < before) {
			seqs = append(seqs, k)
		}
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	return seqs
}

// Events pages a run's events.
func (s *Store) Events(_ context.Context, runID string, after, before int64, limit int) ([]core.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[runID]
	if !ok {
		return nil, nil
	}
	return decodeRange(r.events, after, before, limit, func(_ int64, b []byte) (e core.Event, err error) {
		err = core.DecodeJSON(b, &e)
		return e, err
	})
}

// ToolRecords reads a run's tool results and audit events.
func (s *Store) ToolRecords(_ context.Context, runID string, before int64) ([]core.ToolExecutionResult, []core.AuditEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[runID]
	if !ok {
		return nil, nil, nil
	}
	res, err := decodeRange(r.results, 0, before, 0, func(seq int64, b []byte) (x core.ToolExecutionResult, err error) {
		err = core.DecodeJSON(b, &x)
		x.Seq = seq
		return x, err
	})
	if err != nil {
		return nil, nil, err
	}
	aud, err := decodeRange(r.audit, 0, before, 0, func(seq int64, b []byte) (a core.AuditEvent, err error) {
		err = core.DecodeJSON(b, &a)
		a.Seq = seq
		return a, err
	})
	if err != nil {
		return nil, nil, err
	}
	return res, aud, nil
}

// PendingItem reads a pending item.
func (s *Store) PendingItem(_ context.Context, runID, id string) (core.PendingItem, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[runID]; ok {
		if p, ok := r.pending[id]; ok {
			return p, nil
		}
	}
	return core.PendingItem{}, fmt.Errorf("pending item %s/%s: %w", runID, id, core.ErrNotFound)
}

// DueRuns lists runs due at or before now, earliest first.
func (s *Store) DueRuns(_ context.Context, now time.Time, limit int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	type due struct {
		id string
		at time.Time
	}
	var ds []due
	for id, r := range s.runs {
		if r.dueAt != nil && !r.dueAt.After(now) {
			ds = append(ds, due{id, *r.dueAt})
		}
	}
	sort.Slice(ds, func(i, j int) bool {
		if !ds[i].at.Equal(ds[j].at) {
			return ds[i].at.Before(ds[j].at)
		}
		return ds[i].id < ds[j].id
	})
	var out []string
	for _, d := range ds {
		if limit > 0 && len(out) >= limit {
			break
		}
		out = append(out, d.id)
	}
	return out, nil
}

// ClaimIntent claims a tool call's execution.
func (s *Store) ClaimIntent(_ context.Context, runID, toolCallID, owner string, now time.Time, lease time.Duration) (core.Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := pairKey(runID, toolCallID)
	in, ok := s.intents[key]
	if !ok {
		s.intents[key] = &intent{owner: owner, expires: now.Add(lease), attempt: 1}
		return core.Claim{Claimed: true, Attempt: 1}, nil
	}
	if in.owner != owner && now.Before(in.expires) {
		return core.Claim{Claimed: false, Previous: true, Attempt: in.attempt, Sent: copySent(in.sent)}, nil
	}
	in.owner, in.expires = owner, now.Add(lease)
	in.attempt++
	return core.Claim{Claimed: true, Previous: true, Attempt: in.attempt, Sent: copySent(in.sent)}, nil
}

// SettleIntent records what a call's attempt sent, or forgets the claim
// of an attempt that sent nothing.
func (s *Store) SettleIntent(_ context.Context, runID, toolCallID, owner string, sent *core.RemoteSent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := pairKey(runID, toolCallID)
	in, ok := s.intents[key]
	switch {
	case sent != nil && !ok:
		s.intents[key] = &intent{attempt: 1, sent: copySent(sent)}
	case sent != nil:
		in.sent, in.owner, in.expires = copySent(sent), "", time.Time{}
	case ok && in.owner == owner && in.sent == nil:
		delete(s.intents, key)
	}
	return nil
}

func copySent(s *core.RemoteSent) *core.RemoteSent {
	if s == nil {
		return nil
	}
	cp := *s
	return &cp
}

// BeginIdempotent records an in-flight request or returns the existing
// record.
func (s *Store) BeginIdempotent(_ context.Context, scope, key, hash string, now time.Time, ttl time.Duration) (*core.IdempotencyRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := pairKey(scope, key)
	if rec, ok := s.idem[k]; ok && now.Before(rec.ExpiresAt) {
		cp := *rec
		cp.Body = bytes.Clone(rec.Body)
		return &cp, nil
	}
	s.idem[k] = &core.IdempotencyRecord{Hash: hash, ExpiresAt: now.Add(ttl)}
	return nil, nil
}

// FinishIdempotent stores a response.
func (s *Store) FinishIdempotent(_ context.Context, scope, key string, rec core.IdempotencyRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := pairKey(scope, key)
	cur, ok := s.idem[k]
	if !ok || cur.Hash != rec.Hash {
		return fmt.Errorf("finish idempotency key %q: %w", key, core.ErrConflict)
	}
	rec.Done = true
	rec.Body = bytes.Clone(rec.Body)
	if rec.ExpiresAt.IsZero() {
		rec.ExpiresAt = cur.ExpiresAt
	}
	s.idem[k] = &rec
	return nil
}

// AbortIdempotent forgets an in-flight request.
func (s *Store) AbortIdempotent(_ context.Context, scope, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := pairKey(scope, key)
	if rec, ok := s.idem[k]; ok && !rec.Done {
		delete(s.idem, k)
	}
	return nil
}

// LookupToken resolves a token hash.
func (s *Store) LookupToken(_ context.Context, hash string) (core.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[hash]
	if !ok {
		return core.Token{}, fmt.Errorf("token: %w", core.ErrNotFound)
	}
	t.Scopes = append([]string(nil), t.Scopes...)
	return t, nil
}

// PutToken stores a token hash.
func (s *Store) PutToken(_ context.Context, hash string, t core.Token) error {
	if strings.TrimSpace(hash) == "" || t.Tenant == "" {
		return fmt.Errorf("put token: hash and tenant are required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Scopes = append([]string(nil), t.Scopes...)
	s.tokens[hash] = t
	return nil
}

// UnsentNotifications lists the notifications not marked sent whose time
// is at or before before, oldest first (ties by id).
func (s *Store) UnsentNotifications(_ context.Context, before time.Time, limit int) ([]core.Notification, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []core.Notification
	for _, r := range s.runs {
		for _, e := range r.outbox {
			if e.sent || e.at.After(before) {
				continue
			}
			var n core.Notification
			if err := core.DecodeJSON(e.data, &n); err != nil {
				return nil, fmt.Errorf("decode notification: %w", err)
			}
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Time.Equal(out[j].Time) {
			return out[i].Time.Before(out[j].Time)
		}
		return out[i].ID < out[j].ID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// UpdateNotification stores an unsent notification again.
func (s *Store) UpdateNotification(_ context.Context, n core.Notification) error {
	b, err := core.CanonicalJSON(n)
	if err != nil {
		return fmt.Errorf("encode notification %s: %w", n.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[n.RunID]; ok {
		if e, ok := r.outbox[n.ID]; ok && !e.sent {
			e.data, e.at, e.sent = b, n.Time, n.Callback != nil && n.Callback.Failed
		}
	}
	return nil
}

// MarkNotificationSent marks a notification sent.
func (s *Store) MarkNotificationSent(_ context.Context, runID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[runID]; ok {
		if e, ok := r.outbox[id]; ok {
			e.sent = true
		}
	}
	return nil
}

// TakeToken takes a token from a rate limit's bucket (core.GCRA).
func (s *Store) TakeToken(_ context.Context, key string, now time.Time, l core.RateLimit) (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, wait := core.GCRA(s.buckets[key], now, l)
	if wait == 0 {
		s.buckets[key] = next
	}
	return wait, nil
}

// ActiveRuns counts a tenant's unfinished runs.
func (s *Store) ActiveRuns(_ context.Context, tenant string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active[tenant], nil
}
