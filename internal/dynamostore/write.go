package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// Limits of one TransactWriteItems call: 100 items and 4 MB (a margin
// below DynamoDB's 4 MiB covers the estimate's slack).
const (
	txMaxItems = 100
	txMaxBytes = 4_000_000
	// maxWithCommit is how many pending items and outbox records a Write
	// may carry together; they are written in the commit point's
	// transaction, never ahead of it, beside the run, its configuration,
	// the session head and the tenant's active-run count.
	maxWithCommit = 94
	// dueShards spreads the due index over this many partition keys.
	dueShards = 8
)

// writePlan is a Write turned into items.
type writePlan struct {
	runID, session, tenant string
	prev                   int64
	terminal               bool
	// afterFinish: the run finished before this write; its session,
	// which may have moved on, is left as it is.
	afterFinish bool
	// activeLimit is the write's core.Write.ActiveLimit; takesActive and
	// freesActive say whether its transaction counts a new unfinished run
	// or frees a finished one's place (core.Write.TakesActive,
	// FreesActive).
	activeLimit              int
	takesActive, freesActive bool
	nextSeq                  int64
	// base is the new session's core.SessionHead.Base as JSON ("": none).
	base    string
	cfgHash string
	run     item // the run item, the commit point
	cfg     item // the configuration item
	records []item
	// pending are the items written with the commit point, never ahead
	// of it: the pending items and the outbox records.
	pending []item
}

func (s *Store) plan(w core.Write) (*writePlan, error) {
	st := w.Output.State
	if st.RunID == "" || st.SessionID == "" {
		return nil, fmt.Errorf("%w: the run state has no run id or session id", core.ErrInvalidInput)
	}
	state, cfg, cfgHash, err := encodeState(st)
	if err != nil {
		return nil, err
	}
	p := &writePlan{
		runID: st.RunID, session: st.SessionID, tenant: w.Tenant, prev: w.PrevVersion,
		terminal: core.IsTerminal(st.Status), afterFinish: w.AfterFinish, activeLimit: w.ActiveLimit, takesActive: w.TakesActive(), freesActive: w.FreesActive(), nextSeq: max(st.NextMsgSeq, 1), cfgHash: cfgHash,
	}
	if len(st.Base) > 0 {
		b, err := json.Marshal(st.Base)
		if err != nil {
			return nil, fmt.Errorf("encode the transcript base: %w", err)
		}
		p.base = string(b)
	}
	p.run = itemKey(runPK(st.RunID), skState)
	p.run["tenant"] = avS(w.Tenant)
	p.run["session"] = avS(st.SessionID)
	p.run["version"] = avN(st.Version)
	p.run["status"] = avS(string(st.Status))
	p.run["next_msg"] = avN(st.NextMsgSeq)
	p.run["next_evt"] = avN(st.NextEventSeq)
	p.run["cfg_h"] = avS(cfgHash)
	p.run[attrSteps] = avN(1)
	// Nothing reads a run's update and due times from item attributes
	// (they are in the state, and in the due index's key): every commit
	// rewrites the item at two write units per started KB, so it carries
	// only what a query or condition reads.
	if err := listAttrs(p.run, w.Tenant, st); err != nil {
		return nil, err
	}
	if err := blobAttrs(p.run, "state", state); err != nil {
		return nil, fmt.Errorf("run state: %w", err)
	}
	if w.DueAt != nil {
		due, err := dueKey(*w.DueAt)
		if err != nil {
			return nil, err
		}
		p.run[attrGSI1PK] = avS(dueShard(st.RunID))
		p.run[attrGSI1SK] = avS(due + "#" + st.RunID)
	}
	p.cfg = itemKey(runPK(st.RunID), skConfig)
	p.cfg["h"] = avS(cfgHash)
	if err := blobAttrs(p.cfg, "cfg", cfg); err != nil {
		return nil, fmt.Errorf("run config: %w", err)
	}

	// The records in write order: messages under the session; events,
	// tool results and audit events under the run.
	type entry struct {
		pk, prefix string
		seq        int64
		v          any
		data       []byte // encoded already (a step record)
	}
	var recs []entry
	ses, run := sessionPK(w.Tenant, st.SessionID), runPK(st.RunID)
	o := w.Output
	for _, m := range o.Messages {
		recs = append(recs, entry{pk: ses, prefix: prefixMsg, seq: m.Seq, v: m})
	}
	if len(o.Events) > 0 {
		b, err := encodeStep(newStepRecord(o))
		if err != nil {
			return nil, fmt.Errorf("encode the step record %s%d: %w", prefixEvt, o.Events[0].Seq, err)
		}
		recs = append(recs, entry{pk: run, prefix: prefixEvt, seq: o.Events[0].Seq, data: b})
	} else if len(o.ToolResults) > 0 || len(o.Audit) > 0 {
		return nil, fmt.Errorf("%w: tool records without events", core.ErrInvalidInput)
	}
	writer := nonce()
	for _, r := range recs {
		b := r.data
		if b == nil {
			var err error
			if b, err = core.CanonicalJSON(r.v); err != nil {
				return nil, fmt.Errorf("encode %s%d: %w", r.prefix, r.seq, err)
			}
		}
		its, err := partItems(r.pk, r.prefix, r.seq, b, writer)
		if err != nil {
			return nil, err
		}
		p.records = append(p.records, its...)
	}
	if n := len(w.Pending) + len(w.Notifications); n > maxWithCommit {
		return nil, fmt.Errorf("%w: %d pending items and %d outbox records in one write, at most %d in all", core.ErrInvalidInput, len(w.Pending), len(w.Notifications), maxWithCommit)
	}
	for _, pi := range w.Pending {
		if pi.RunID != st.RunID || pi.ID == "" {
			return nil, fmt.Errorf("%w: pending item %q of run %q in a write of run %q", core.ErrInvalidInput, pi.ID, pi.RunID, st.RunID)
		}
		p.pending = append(p.pending, pendingItem(pi))
	}
	for _, n := range w.Notifications {
		if n.RunID != st.RunID || n.ID == "" {
			return nil, fmt.Errorf("%w: notification %q of run %q in a write of run %q", core.ErrInvalidInput, n.ID, n.RunID, st.RunID)
		}
		it, err := outboxItem(n)
		if err != nil {
			return nil, err
		}
		p.pending = append(p.pending, it)
	}
	return p, nil
}

func dueKey(t time.Time) (string, error) {
	t = t.UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return "", fmt.Errorf("%w: due time %s is out of range", core.ErrInvalidInput, t)
	}
	return t.Format("2006-01-02T15:04:05.000000000") + "Z", nil
}

// Shards of the sparse index: due runs and unsent notifications.
const (
	dueShardPrefix    = "DUE#"
	outboxShardPrefix = "OBX#"
)

func dueShard(runID string) string { return shardOf(dueShardPrefix, runID) }

// shardOf is the index shard of a run under prefix.
func shardOf(prefix, runID string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(runID))
	return fmt.Sprintf("%s%d", prefix, h.Sum32()%dueShards)
}

// ---- sizes ----

func avSize(v types.AttributeValue) int {
	switch t := v.(type) {
	case *types.AttributeValueMemberS:
		return len(t.Value)
	case *types.AttributeValueMemberN:
		return len(t.Value)
	case *types.AttributeValueMemberB:
		return len(t.Value)
	case *types.AttributeValueMemberL:
		n := 3
		for _, x := range t.Value {
			n += avSize(x) + 1
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, x := range t.Value {
			n += len(k) + avSize(x) + 1
		}
		return n
	default:
		return 1
	}
}

// itemSize estimates an item's size as DynamoDB counts it.
func itemSize(it item) int {
	n := 0
	for k, v := range it {
		n += len(k) + avSize(v)
	}
	return n + 64
}

func sizeOf(items []item) int {
	n := 0
	for _, it := range items {
		n += itemSize(it)
	}
	return n
}

// chunks splits items into groups that fit a transaction beside
// reserveItems items of reserveBytes.
func chunks(items []item, reserveItems, reserveBytes int) [][]item {
	var out [][]item
	var cur []item
	size := 0
	for _, it := range items {
		n := itemSize(it)
		if len(cur) > 0 && (len(cur)+1+reserveItems > txMaxItems || size+n+reserveBytes > txMaxBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, it)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// ---- transaction items ----

func (s *Store) put(it item, cond string, e *expr) types.TransactWriteItem {
	p := &types.Put{TableName: aws.String(s.table), Item: it}
	if cond != "" {
		p.ConditionExpression = aws.String(cond)
		p.ExpressionAttributeNames, p.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	}
	return types.TransactWriteItem{Put: p}
}

func (s *Store) puts(items []item) []types.TransactWriteItem {
	out := make([]types.TransactWriteItem, len(items))
	for i, it := range items {
		out[i] = s.put(it, "", nil)
	}
	return out
}

func (s *Store) update(k item, update, cond string, e *expr) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: k, UpdateExpression: aws.String(update), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

func (s *Store) check(k item, cond string, e *expr) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(s.table), Key: k, ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
	}}
}

// transact runs one transaction, sending it again while it is cancelled
// only by collisions with concurrent writes, which say nothing about its
// conditions. Each attempt is a new request with a new idempotency token.
func (s *Store) transact(ctx context.Context, items []types.TransactWriteItem) error {
	for attempt := 0; ; attempt++ {
		_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return nil
		}
		if anyConditionFailed(err) || !isRetryable(err) || attempt >= 8 {
			return translate(err)
		}
		if err := wait.Sleep(ctx, backoff(attempt)); err != nil {
			return err
		}
	}
}

// ---- session head conditions ----

// headBase is the condition that the session is still at head with no
// unfinished run.
func headBase(e *expr, head core.SessionHead) string {
	if !head.Exists {
		return fmt.Sprintf("attribute_not_exists(%s)", e.n("next_seq"))
	}
	return fmt.Sprintf("%s = %s AND attribute_not_exists(%s)", e.n("next_seq"), e.v(avN(head.NextSeq)), e.n("active_run"))
}

// headTake is the head update of a new run.
func (p *writePlan) headTake(e *expr, head core.SessionHead) string {
	next := max(p.nextSeq, head.NextSeq)
	set := fmt.Sprintf("SET %s = %s, %s = %s, %s = %s", e.n("next_seq"), e.v(avN(next)), e.n("tenant"), e.v(avS(p.tenant)), e.n("session"), e.v(avS(p.session)))
	if !p.terminal {
		set += fmt.Sprintf(", %s = %s", e.n("active_run"), e.v(avS(p.runID)))
	}
	if !head.Exists && p.base != "" {
		// A fork's session: where its shared prefix is, for every run
		// it will have.
		set += fmt.Sprintf(", %s = %s", e.n(attrBase), e.v(avS(p.base)))
	}
	return set
}

// writesHead says whether a commit writes the session head: only the
// commit that finishes the run, which releases the session and advances
// its message counter. An unfinished run holds the session from its
// creation to that commit (nothing else removes active_run, and every
// commit is fenced by the run's version), so its other commits leave the
// head alone; while a run holds the session, its committed message
// counter is the run item's (see currentHead). A write after the run
// finished leaves the session alone too: it may have moved on.
func (p *writePlan) writesHead() bool { return p.terminal && !p.afterFinish }

// headCommit is the head update and condition of the commit that
// finishes the run: nobody else holds the session and the head never
// moves back.
func (p *writePlan) headCommit(e *expr) (update, cond string) {
	next := e.v(avN(p.nextSeq))
	update = fmt.Sprintf("SET %s = %s REMOVE %s", e.n("next_seq"), next, e.n("active_run"))
	cond = fmt.Sprintf("(attribute_not_exists(%s) OR %s = %s) AND %s <= %s", e.n("active_run"), e.n("active_run"), e.v(avS(p.runID)), e.n("next_seq"), next)
	return update, cond
}

// headItems are the head's transaction items of a commit (none unless
// it finishes the run).
func (s *Store) headItems(p *writePlan) []types.TransactWriteItem {
	if !p.writesHead() {
		return nil
	}
	he := newExpr()
	update, cond := p.headCommit(he)
	return []types.TransactWriteItem{s.update(itemKey(sessionPK(p.tenant, p.session), skHead), update, cond, he)}
}

// runFree is the condition that a run id is unused: no item, or only the
// expired claim of a large create that never finished.
func runFree(e *expr, now time.Time) string {
	return fmt.Sprintf("attribute_not_exists(%s) OR (attribute_not_exists(%s) AND %s <= %s)",
		e.n(attrPK), e.n("version"), e.n("claim_exp"), e.v(avN(now.UnixNano())))
}

// claimFree is the condition that nobody holds a live claim on an item.
func claimFree(e *expr, now time.Time) string {
	return fmt.Sprintf("(attribute_not_exists(%s) OR %s <= %s)", e.n("claim"), e.n("claim_exp"), e.v(avN(now.UnixNano())))
}

// ---- CreateRun ----

// CreateRun stores a new run and takes the session lock, creating or
// advancing the session from head. ErrLockHeld: the session has an
// unfinished run. ErrConflict: the session moved since head was read, or
// the run id exists.
func (s *Store) CreateRun(ctx context.Context, head core.SessionHead, w core.Write) error {
	runID := w.Output.State.RunID
	p, err := s.plan(w)
	if err != nil {
		return fmt.Errorf("create run %s: %w", runID, err)
	}
	fixed := append([]item{p.run, p.cfg}, p.pending...)
	if n := len(fixed) + 1 + len(p.records); n <= txMaxItems && sizeOf(fixed)+sizeOf(p.records)+1024 <= txMaxBytes {
		err = s.createOne(ctx, p, head)
	} else {
		err = s.createLarge(ctx, p, head)
	}
	if err != nil {
		return fmt.Errorf("create run %s: %w", runID, err)
	}
	return nil
}

// createOne creates a run with one transaction.
func (s *Store) createOne(ctx context.Context, p *writePlan, head core.SessionHead) error {
	re := newExpr()
	he := newExpr()
	update := p.headTake(he, head)
	items := []types.TransactWriteItem{
		s.put(p.run, runFree(re, s.now()), re),
		s.update(itemKey(sessionPK(p.tenant, p.session), skHead), update, headBase(he, head), he),
		s.put(p.cfg, "", nil),
	}
	if p.takesActive {
		items = append(items, s.activeTake(p))
	}
	items = append(items, s.puts(p.pending)...)
	items = append(items, s.puts(p.records)...)
	return s.createFailed(ctx, p, head, s.transact(ctx, items))
}

// createFailed explains a failed create transaction whose item 0 is the
// run, item 1 the session head and item 3, under an active-run limit,
// the tenant's count.
func (s *Store) createFailed(ctx context.Context, p *writePlan, head core.SessionHead, err error) error {
	if err == nil {
		return nil
	}
	reasons, ok := cancelReasons(err)
	if !ok || !anyConditionFailed(err) {
		return err
	}
	if failedAt(reasons, 0) {
		info, rerr := s.readRunInfo(ctx, p.runID)
		if rerr == nil && !info.exists {
			return core.Retryable(fmt.Errorf("%w: run id %s is being created by another writer", core.ErrConflict, p.runID))
		}
		return fmt.Errorf("%w: run %s exists", core.ErrConflict, p.runID)
	}
	if failedAt(reasons, 1) {
		return s.headRefusal(ctx, p, head, reasons[1].Item)
	}
	if p.takesActive && failedAt(reasons, 3) {
		return p.tooManyActive()
	}
	return s.claimLost(ctx, p, head)
}

// headRefusal explains why the session head refused a new run.
func (s *Store) headRefusal(ctx context.Context, p *writePlan, head core.SessionHead, old item) error {
	if old == nil {
		var err error
		if _, old, err = s.readHead(ctx, p.tenant, p.session); err != nil {
			return fmt.Errorf("%w: session %s moved (%v)", core.ErrConflict, p.session, err)
		}
	}
	cur, err := headOf(old)
	if err != nil {
		return err
	}
	switch {
	case cur.ActiveRun != "":
		return fmt.Errorf("%w: session %s has unfinished run %s", core.ErrLockHeld, p.session, cur.ActiveRun)
	case cur.Exists != head.Exists || (cur.Exists && cur.NextSeq != head.NextSeq):
		return fmt.Errorf("%w: session %s moved since its head was read", core.ErrConflict, p.session)
	default:
		return core.Retryable(fmt.Errorf("%w: another run is being created on session %s", core.ErrConflict, p.session))
	}
}

// claimLost explains a large create whose claim was lost or taken.
func (s *Store) claimLost(ctx context.Context, p *writePlan, head core.SessionHead) error {
	return s.headRefusal(ctx, p, head, nil)
}

// createLarge creates a run whose first write exceeds one transaction:
// it claims the run id and the session, writes the records in
// transactions that re-check the claim, and commits.
func (s *Store) createLarge(ctx context.Context, p *writePlan, head core.SessionHead) error {
	c, now := nonce(), s.now()
	exp := now.Add(s.claimLease).UnixNano()
	headKey := itemKey(sessionPK(p.tenant, p.session), skHead)
	placeholder := itemKey(runPK(p.runID), skState)
	placeholder["claim"] = avS(c)
	placeholder["claim_exp"] = avN(exp)

	re := newExpr()
	he := newExpr()
	claim := []types.TransactWriteItem{
		s.put(placeholder, runFree(re, now), re),
		s.update(headKey, fmt.Sprintf("SET %s = %s, %s = %s", he.n("claim"), he.v(avS(c)), he.n("claim_exp"), he.v(avN(exp))),
			headBase(he, head)+" AND "+claimFree(he, now), he),
	}
	if err := s.createFailed(ctx, p, head, s.transact(ctx, claim)); err != nil {
		return err
	}
	release := func() {
		ctx := context.WithoutCancel(ctx)
		e := newExpr()
		_, _ = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table), Key: itemKey(runPK(p.runID), skState),
			ConditionExpression:      aws.String(fmt.Sprintf("attribute_not_exists(%s) AND %s = %s", e.n("version"), e.n("claim"), e.v(avS(c)))),
			ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
		})
		e = newExpr()
		_, _ = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: headKey,
			UpdateExpression:         aws.String(fmt.Sprintf("REMOVE %s, %s", e.n("claim"), e.n("claim_exp"))),
			ConditionExpression:      aws.String(fmt.Sprintf("%s = %s", e.n("claim"), e.v(avS(c)))),
			ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
		})
	}
	ce := newExpr()
	held := s.check(headKey, headBase(ce, head)+fmt.Sprintf(" AND %s = %s", ce.n("claim"), ce.v(avS(c))), ce)
	for _, chunk := range chunks(p.records, 1, 1024) {
		err := s.transact(ctx, append([]types.TransactWriteItem{held}, s.puts(chunk)...))
		if err != nil {
			release()
			if anyConditionFailed(err) {
				return s.claimLost(ctx, p, head)
			}
			return err
		}
	}
	re, he = newExpr(), newExpr()
	update := p.headTake(he, head) + fmt.Sprintf(" REMOVE %s, %s", he.n("claim"), he.n("claim_exp"))
	final := []types.TransactWriteItem{
		s.put(p.run, fmt.Sprintf("attribute_not_exists(%s) AND %s = %s", re.n("version"), re.n("claim"), re.v(avS(c))), re),
		s.update(headKey, update, headBase(he, head)+fmt.Sprintf(" AND %s = %s", he.n("claim"), he.v(avS(c))), he),
		s.put(p.cfg, "", nil),
	}
	if p.takesActive {
		final = append(final, s.activeTake(p))
	}
	final = append(final, s.puts(p.pending)...)
	if err := s.transact(ctx, final); err != nil {
		release()
		if reasons, _ := cancelReasons(err); p.takesActive && failedAt(reasons, 3) {
			return p.tooManyActive()
		}
		if anyConditionFailed(err) {
			return s.claimLost(ctx, p, head)
		}
		return err
	}
	return nil
}

// ---- Commit ----

// Commit stores a transition of an existing run, conditioned on
// PrevVersion. ErrConflict: another writer committed since PrevVersion;
// ErrNotFound: the run does not exist. A terminal state releases the
// session lock.
func (s *Store) Commit(ctx context.Context, w core.Write) error {
	runID := w.Output.State.RunID
	p, err := s.plan(w)
	if err != nil {
		return fmt.Errorf("commit run %s: %w", runID, err)
	}
	if err := s.commit(ctx, p, false); err != nil {
		return fmt.Errorf("commit run %s: %w", runID, err)
	}
	return nil
}

// errConfigChanged asks commit to write the configuration too.
var errConfigChanged = errors.New("run configuration changed")

func (s *Store) commit(ctx context.Context, p *writePlan, withConfig bool) error {
	fixed := append([]item{p.run}, p.pending...)
	if withConfig {
		fixed = append(fixed, p.cfg)
	}
	var err error
	if n := len(fixed) + 1 + len(p.records); n <= txMaxItems && sizeOf(fixed)+sizeOf(p.records)+1024 <= txMaxBytes {
		err = s.commitOne(ctx, p, withConfig)
	} else {
		err = s.commitLarge(ctx, p, withConfig)
	}
	if errors.Is(err, errConfigChanged) && !withConfig {
		return s.commit(ctx, p, true)
	}
	return err
}

// runCond is the commit point's condition: the run is at PrevVersion,
// belongs to the write's tenant and session, and (unless the write
// carries the configuration) has the same configuration.
func (p *writePlan) runCond(e *expr, withConfig bool) string {
	cond := fmt.Sprintf("%s = %s AND %s = %s AND %s = %s", e.n("version"), e.v(avN(p.prev)),
		e.n("tenant"), e.v(avS(p.tenant)), e.n("session"), e.v(avS(p.session)))
	if !withConfig {
		cond += fmt.Sprintf(" AND %s = %s", e.n("cfg_h"), e.v(avS(p.cfgHash)))
	}
	return cond
}

func (s *Store) commitOne(ctx context.Context, p *writePlan, withConfig bool) error {
	re := newExpr()
	items := append([]types.TransactWriteItem{s.put(p.run, p.runCond(re, withConfig), re)}, s.headItems(p)...)
	items = append(items, s.activeFree(p)...)
	if withConfig {
		items = append(items, s.put(p.cfg, "", nil))
	}
	items = append(items, s.puts(p.pending)...)
	items = append(items, s.puts(p.records)...)
	return s.commitFailed(ctx, p, withConfig, s.transact(ctx, items))
}

// commitFailed explains a failed commit transaction whose item 0 is the
// run and item 1 the session head, when the commit writes it.
func (s *Store) commitFailed(ctx context.Context, p *writePlan, withConfig bool, err error) error {
	if err == nil {
		return nil
	}
	reasons, ok := cancelReasons(err)
	if !ok || !anyConditionFailed(err) {
		return err
	}
	if failedAt(reasons, 0) {
		return s.runRefusal(ctx, p, withConfig)
	}
	if p.writesHead() && failedAt(reasons, 1) {
		old := reasons[1].Item
		if old == nil {
			var rerr error
			if _, old, rerr = s.readHead(ctx, p.tenant, p.session); rerr != nil {
				return fmt.Errorf("%w: session head refused the commit (%v)", core.ErrConflict, rerr)
			}
		}
		cur, _ := headOf(old)
		return fmt.Errorf("%w: run %s does not hold session %s (head %+v)", core.ErrConflict, p.runID, p.session, cur)
	}
	return err
}

// runInfo is what a failed commit needs to know about the stored run.
type runInfo struct {
	exists          bool
	version         int64
	tenant, session string
	cfgHash         string
}

func (s *Store) readRunInfo(ctx context.Context, runID string) (runInfo, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: itemKey(runPK(runID), skState), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#v, #t, #s, #c"),
		ExpressionAttributeNames: map[string]string{"#v": "version", "#t": "tenant", "#s": "session", "#c": "cfg_h"},
	})
	if err != nil {
		return runInfo{}, translate(err)
	}
	var info runInfo
	if info.version, info.exists, err = getN(out.Item, "version"); err != nil {
		return runInfo{}, err
	}
	info.tenant, _ = getS(out.Item, "tenant")
	info.session, _ = getS(out.Item, "session")
	info.cfgHash, _ = getS(out.Item, "cfg_h")
	return info, nil
}

// runRefusal explains why the run item refused a commit.
func (s *Store) runRefusal(ctx context.Context, p *writePlan, withConfig bool) error {
	info, err := s.readRunInfo(ctx, p.runID)
	switch {
	case err != nil:
		return fmt.Errorf("%w: run %s refused the commit (%v)", core.ErrConflict, p.runID, err)
	case !info.exists:
		return core.ErrNotFound
	case info.version != p.prev:
		return fmt.Errorf("%w: version %d, expected %d", core.ErrConflict, info.version, p.prev)
	case info.tenant != p.tenant || info.session != p.session:
		return fmt.Errorf("%w: the run belongs to tenant %q session %q, the write names tenant %q session %q",
			core.ErrInvalidInput, info.tenant, info.session, p.tenant, p.session)
	case info.cfgHash != p.cfgHash && !withConfig:
		return errConfigChanged
	default:
		return core.Retryable(fmt.Errorf("%w: another writer holds run %s", core.ErrConflict, p.runID))
	}
}

// commitLarge commits a write that exceeds one transaction: it claims the
// run at PrevVersion, writes the records in transactions that re-check
// the claim and the version, and commits.
func (s *Store) commitLarge(ctx context.Context, p *writePlan, withConfig bool) error {
	c, now := nonce(), s.now()
	exp := now.Add(s.claimLease).UnixNano()
	runKey := itemKey(runPK(p.runID), skState)
	e := newExpr()
	cond := p.runCond(e, withConfig) + " AND " + claimFree(e, now)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: runKey,
		UpdateExpression:         aws.String(fmt.Sprintf("SET %s = %s, %s = %s", e.n("claim"), e.v(avS(c)), e.n("claim_exp"), e.v(avN(exp)))),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
	})
	if err != nil {
		if _, failed := conditionFailed(err); failed {
			return s.runRefusal(ctx, p, withConfig)
		}
		return translate(err)
	}
	release := func() {
		e := newExpr()
		_, _ = s.db.UpdateItem(context.WithoutCancel(ctx), &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: runKey,
			UpdateExpression:         aws.String(fmt.Sprintf("REMOVE %s, %s", e.n("claim"), e.n("claim_exp"))),
			ConditionExpression:      aws.String(fmt.Sprintf("%s = %s", e.n("claim"), e.v(avS(c)))),
			ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
		})
	}
	ce := newExpr()
	check := s.check(runKey, fmt.Sprintf("%s = %s AND %s = %s", ce.n("version"), ce.v(avN(p.prev)), ce.n("claim"), ce.v(avS(c))), ce)
	for _, chunk := range chunks(p.records, 1, 1024) {
		if err := s.transact(ctx, append([]types.TransactWriteItem{check}, s.puts(chunk)...)); err != nil {
			release()
			if anyConditionFailed(err) {
				return s.runRefusal(ctx, p, withConfig)
			}
			return err
		}
	}
	re := newExpr()
	final := append([]types.TransactWriteItem{
		s.put(p.run, p.runCond(re, withConfig)+fmt.Sprintf(" AND %s = %s", re.n("claim"), re.v(avS(c))), re),
	}, s.headItems(p)...)
	final = append(final, s.activeFree(p)...)
	if withConfig {
		final = append(final, s.put(p.cfg, "", nil))
	}
	final = append(final, s.puts(p.pending)...)
	if err := s.commitFailed(ctx, p, withConfig, s.transact(ctx, final)); err != nil {
		release()
		return err
	}
	return nil
}
