package dynamostore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/baton-agents/baton/core"
)

// partItems splits one record into items of at most chunkBytes of data.
// Every part carries the part count n and the writer's nonce w, so a
// reader can tell a whole record from a mix of writers or leftovers.
func partItems(pk, prefix string, seq int64, data []byte, writer string) ([]item, error) {
	if seq < 1 || seq > maxSeq {
		return nil, fmt.Errorf("%sseq %d is out of range", prefix, seq)
	}
	n := (len(data) + chunkBytes - 1) / chunkBytes
	n = max(n, 1)
	if n > maxParts {
		return nil, fmt.Errorf("%s%d is %d bytes, more than %d parts", prefix, seq, len(data), maxParts)
	}
	out := make([]item, n)
	for i := range out {
		lo, hi := i*chunkBytes, min((i+1)*chunkBytes, len(data))
		it := itemKey(pk, partSK(prefix, seq, i))
		it["n"] = avN(int64(n))
		it["w"] = avS(writer)
		it["d"] = avB(data[lo:hi])
		out[i] = it
	}
	return out, nil
}

// record is one reassembled record.
type record struct {
	prefix string
	seq    int64
	data   []byte
}

// parseSK splits "<prefix><seq>#<part>".
func parseSK(sk string) (prefix string, seq int64, part int, err error) {
	i := strings.LastIndexByte(sk, '#')
	if i < 17 || len(sk)-i-1 != 4 {
		return "", 0, 0, fmt.Errorf("malformed record key %q", sk)
	}
	p, err := strconv.Atoi(sk[i+1:])
	if err != nil {
		return "", 0, 0, fmt.Errorf("malformed record key %q", sk)
	}
	seq, err = strconv.ParseInt(sk[i-16:i], 10, 64)
	if err != nil {
		return "", 0, 0, fmt.Errorf("malformed record key %q", sk)
	}
	return sk[:i-16], seq, p, nil
}

// assembler joins the parts of records read in key order.
type assembler struct {
	cur      record
	parts    int
	have     int
	writer   string
	complete bool
	started  bool
}

// add takes the next item; it returns a record when the item completes
// one. Parts beyond a record's count are leftovers of a longer record an
// uncommitted writer left at the same key, and are skipped.
func (a *assembler) add(it item) (*record, error) {
	sk, _ := getS(it, attrSK)
	prefix, seq, part, err := parseSK(sk)
	if err != nil {
		return nil, err
	}
	n, _, err := getN(it, "n")
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", sk, err)
	}
	w, _ := getS(it, "w")
	data, ok := getB(it, "d")
	if !ok {
		return nil, fmt.Errorf("record %s has no data", sk)
	}
	same := a.started && prefix == a.cur.prefix && seq == a.cur.seq
	if same && a.complete {
		return nil, nil
	}
	if !same {
		if err := a.finish(); err != nil {
			return nil, err
		}
		if part != 0 {
			return nil, fmt.Errorf("record %s%d: part 0 is missing", prefix, seq)
		}
		a.cur = record{prefix: prefix, seq: seq}
		a.parts, a.have, a.writer, a.complete, a.started = int(n), 0, w, false, true
	}
	if part != a.have || int(n) != a.parts || w != a.writer {
		return nil, fmt.Errorf("record %s%d: part %d of %d (writer %s) does not follow part %d of %d (writer %s)", prefix, seq, part, n, w, a.have-1, a.parts, a.writer)
	}
	a.cur.data = append(a.cur.data, data...)
	a.have++
	if a.have == a.parts {
		a.complete = true
		r := a.cur
		return &r, nil
	}
	return nil, nil
}

// finish reports a record whose parts ran out.
func (a *assembler) finish() error {
	if a.started && !a.complete {
		return fmt.Errorf("record %s%d: %d of %d parts", a.cur.prefix, a.cur.seq, a.have, a.parts)
	}
	return nil
}

// readRecords reads the records of pk with after < seq < before whose
// sort keys run from prefixLo to prefixHi, at most limit (0: no limit),
// in key order.
func (s *Store) readRecords(ctx context.Context, pk, prefixLo, prefixHi string, after, before int64, limit int) ([]record, error) {
	if after >= maxSeq || before <= 1 || before-after <= 1 {
		return nil, nil
	}
	lo, hi := max(after+1, 1), min(before-1, maxSeq)
	if hi < lo {
		return nil, nil
	}
	e := newExpr()
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND %s BETWEEN %s AND %s", e.n(attrPK), e.v(avS(pk)),
			e.n(attrSK), e.v(avS(partSK(prefixLo, lo, 0))), e.v(avS(partSK(prefixHi, hi, maxParts))))),
		ConsistentRead: aws.Bool(true),
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	var out []record
	var asm assembler
	done := false
	err := s.query(ctx, in, limit, func(it item) (bool, error) {
		r, err := asm.add(it)
		if err != nil {
			return false, err
		}
		if r != nil {
			out = append(out, *r)
			done = limit > 0 && len(out) >= limit
		}
		return done, nil
	})
	if err != nil {
		return nil, err
	}
	if done {
		return out, nil
	}
	if err := asm.finish(); err != nil {
		return nil, err
	}
	return out, nil
}

// runCounters reads a run's committed message and event counters; ok is
// false when the run does not exist.
func (s *Store) runCounters(ctx context.Context, runID string) (nextMsg, nextEvt int64, ok bool, err error) {
	nextMsg, nextEvt, _, ok, err = s.runRecordInfo(ctx, runID)
	return nextMsg, nextEvt, ok, err
}

// runRecordInfo is runCounters and whether the run stores its tool
// records in step records only (attrSteps).
func (s *Store) runRecordInfo(ctx context.Context, runID string) (nextMsg, nextEvt int64, steps, ok bool, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: itemKey(runPK(runID), skState), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#m, #e, #v, #s"),
		ExpressionAttributeNames: map[string]string{"#m": "next_msg", "#e": "next_evt", "#v": "version", "#s": attrSteps},
	})
	if err != nil {
		return 0, 0, false, false, translate(err)
	}
	if _, committed, _ := getN(out.Item, "version"); !committed {
		return 0, 0, false, false, nil
	}
	if nextMsg, _, err = getN(out.Item, "next_msg"); err != nil {
		return 0, 0, false, false, err
	}
	if nextEvt, _, err = getN(out.Item, "next_evt"); err != nil {
		return 0, 0, false, false, err
	}
	_, steps = out.Item[attrSteps]
	return nextMsg, nextEvt, steps, true, nil
}

// Messages pages a session's transcript: after < seq < before, at most
// limit. A before of 0 or less reads up to the session's head.
func (s *Store) Messages(ctx context.Context, tenant, sessionID string, after, before int64, limit int) ([]core.Message, error) {
	if before <= 0 {
		head, err := s.currentHead(ctx, tenant, sessionID)
		if err != nil {
			return nil, fmt.Errorf("messages of session %s: %w", sessionID, err)
		}
		if !head.Exists {
			return nil, nil
		}
		before = head.NextSeq
	}
	recs, err := s.readRecords(ctx, sessionPK(tenant, sessionID), prefixMsg, prefixMsg, after, before, limit)
	if err != nil {
		return nil, fmt.Errorf("messages of session %s: %w", sessionID, err)
	}
	out := make([]core.Message, len(recs))
	for i, r := range recs {
		if err := out[i].UnmarshalJSON(r.data); err != nil {
			return nil, fmt.Errorf("messages of session %s: decode message %d: %w", sessionID, r.seq, err)
		}
		out[i].Seq = r.seq
	}
	return out, nil
}

// Events pages a run's events: after < seq < before, at most limit. A
// before of 0 or less reads up to the run's committed counter.
func (s *Store) Events(ctx context.Context, runID string, after, before int64, limit int) ([]core.Event, error) {
	if before <= 0 {
		_, nextEvt, ok, err := s.runCounters(ctx, runID)
		if err != nil {
			return nil, fmt.Errorf("events of run %s: %w", runID, err)
		}
		if !ok {
			return nil, nil
		}
		before = nextEvt
	}
	after = max(after, 0)
	if before-after <= 1 {
		return nil, nil
	}
	// Step records from after+1 on; when none starts there, the events
	// from after+1 begin inside the record before (a page that ended
	// within a step), read first.
	var steps [][]core.Event
	n := 0
	take := func(sr stepRecord) bool {
		steps = append(steps, sr.Events)
		n += len(sr.Events)
		return limit > 0 && n >= limit
	}
	if err := s.stepRecords(ctx, runID, after+1, before, take); err != nil {
		return nil, fmt.Errorf("events of run %s: %w", runID, err)
	}
	if after > 0 && (len(steps) == 0 || len(steps[0]) == 0 || steps[0][0].Seq != after+1) {
		start, err := s.containingStep(ctx, runID, after)
		if err != nil {
			return nil, fmt.Errorf("events of run %s: %w", runID, err)
		}
		if start > 0 {
			var head [][]core.Event
			if err := s.stepRecords(ctx, runID, start, start+1, func(sr stepRecord) bool { head = append(head, sr.Events); return true }); err != nil {
				return nil, fmt.Errorf("events of run %s: %w", runID, err)
			}
			steps = append(head, steps...)
		}
	}
	return stepEvents(steps, after, before, limit), nil
}

// stepEvents joins the events of step records read in key order: those
// in (after, before), at most limit. A record that starts at or below
// the last event taken is the leftover of a writer that lost to the
// record before it, and is skipped.
func stepEvents(steps [][]core.Event, after, before int64, limit int) []core.Event {
	var out []core.Event
	last := int64(0)
	for _, evs := range steps {
		if len(evs) == 0 || evs[0].Seq <= last {
			continue
		}
		for _, e := range evs {
			if e.Seq > after && e.Seq < before && (limit <= 0 || len(out) < limit) {
				out = append(out, e)
			}
		}
		last = evs[len(evs)-1].Seq
	}
	return out
}

// ToolRecords returns the tool results and audit events whose Seq is
// below before (the run's committed message counter when before is 0 or
// less), in order, with one query.
func (s *Store) ToolRecords(ctx context.Context, runID string, before int64) ([]core.ToolExecutionResult, []core.AuditEvent, error) {
	nextMsg, nextEvt, steps, ok, err := s.runRecordInfo(ctx, runID)
	if err != nil {
		return nil, nil, fmt.Errorf("tool records of run %s: %w", runID, err)
	}
	if !ok {
		return nil, nil, nil
	}
	if before <= 0 {
		before = nextMsg
	}
	var results []core.ToolExecutionResult
	var audit []core.AuditEvent
	last := int64(0)
	err = s.stepRecords(ctx, runID, 1, nextEvt, func(sr stepRecord) bool {
		if len(sr.Events) == 0 || sr.Events[0].Seq <= last {
			return false // a losing writer's leftover (see stepEvents)
		}
		last = sr.Events[len(sr.Events)-1].Seq
		for _, x := range sr.Results {
			if x.Seq < before {
				results = append(results, x.Result)
			}
		}
		for _, a := range sr.Audit {
			if a.Seq < before {
				audit = append(audit, a.Audit)
			}
		}
		return false
	})
	if err != nil {
		return nil, nil, fmt.Errorf("tool records of run %s: %w", runID, err)
	}
	if steps {
		return results, audit, nil
	}
	// A run written before step records: TR#AUD# sorts before TR#RES#,
	// so one range covers every audit event and the results below
	// before; audit events at or beyond before are dropped here.
	recs, err := s.readRecords(ctx, runPK(runID), prefixAud, prefixRes, 0, before, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("tool records of run %s: %w", runID, err)
	}
	for _, r := range recs {
		if r.seq >= before {
			continue
		}
		switch r.prefix {
		case prefixRes:
			var x core.ToolExecutionResult
			if err := core.DecodeJSON(r.data, &x); err != nil {
				return nil, nil, fmt.Errorf("tool records of run %s: decode result %d: %w", runID, r.seq, err)
			}
			x.Seq = r.seq
			results = append(results, x)
		case prefixAud:
			var a core.AuditEvent
			if err := core.DecodeJSON(r.data, &a); err != nil {
				return nil, nil, fmt.Errorf("tool records of run %s: decode audit event %d: %w", runID, r.seq, err)
			}
			a.Seq = r.seq
			audit = append(audit, a)
		}
	}
	return results, audit, nil
}

// pendingItem is the item of a pending request or action.
func pendingItem(p core.PendingItem) item {
	it := itemKey(runPK(p.RunID), prefixPend+p.ID)
	it["run_id"] = avS(p.RunID)
	it["id"] = avS(p.ID)
	it["kind"] = avS(p.Kind)
	it["tool_call_id"] = avS(p.ToolCallID)
	it["status"] = avS(p.Status)
	it["expires_at"] = avS(p.ExpiresAt.UTC().Format(time.RFC3339Nano))
	return it
}

// PendingItem reads one pending item by its request or action id.
func (s *Store) PendingItem(ctx context.Context, runID, id string) (core.PendingItem, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: itemKey(runPK(runID), prefixPend+id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return core.PendingItem{}, fmt.Errorf("pending item %s/%s: %w", runID, id, translate(err))
	}
	if out.Item == nil {
		return core.PendingItem{}, fmt.Errorf("pending item %s/%s: %w", runID, id, core.ErrNotFound)
	}
	p := core.PendingItem{}
	p.RunID, _ = getS(out.Item, "run_id")
	p.ID, _ = getS(out.Item, "id")
	p.Kind, _ = getS(out.Item, "kind")
	p.ToolCallID, _ = getS(out.Item, "tool_call_id")
	p.Status, _ = getS(out.Item, "status")
	exp, _ := getS(out.Item, "expires_at")
	if p.ExpiresAt, err = time.Parse(time.RFC3339Nano, exp); err != nil {
		return core.PendingItem{}, fmt.Errorf("pending item %s/%s: expires_at: %w", runID, id, err)
	}
	return p, nil
}
