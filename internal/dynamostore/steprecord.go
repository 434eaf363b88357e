package dynamostore

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/baton-agents/baton/core"
)

// A commit's events, tool results and audit events are stored together,
// as one step record (one item, split into parts only beyond chunkBytes)
// under the run: EVT#<seq of its first event>. A commit carrying tool
// records always emits events (a recorded result emits tool_result); a
// write with tool records and no events is refused. The run item of a
// run written this way says so (attrSteps), so reading its tool records
// skips the one-record-each TR#RES# and TR#AUD# items of runs written
// before step records, which are still read, as are their one-event
// records under EVT#.
//
// The key is the first event's seq, which every writer of the same run
// version computes alike, so the committed writer's record replaces the
// one a crashed or losing writer left at that key (the assembler skips a
// longer leftover's extra parts); a leftover beyond the committed event
// counter is never read.

// A step record's data is its JSON, or (marked by a first byte of
// deflated) its JSON deflated when that is shorter: a tool step's events,
// result and audit event (two hashes) come to about 1.5 KB, which would
// take two write units a KB, and deflate to well under one KB.
const deflated = 0x01

var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// encodeStep is a step record's stored data.
func encodeStep(sr stepRecord) ([]byte, error) {
	b, err := core.CanonicalJSON(sr)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteByte(deflated)
	w := deflaters.Get().(*flate.Writer)
	defer deflaters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if buf.Len() >= len(b) {
		return b, nil
	}
	return buf.Bytes(), nil
}

// stepRecord is a step record's data.
type stepRecord struct {
	Events  []core.Event `json:"events"`
	Results []seqResult  `json:"results,omitempty"`
	Audit   []seqAudit   `json:"audit,omitempty"`
}

// seqResult and seqAudit carry the seq of the call's tool_result
// message, which the records' own JSON leaves out.
type seqResult struct {
	Seq    int64                    `json:"seq"`
	Result core.ToolExecutionResult `json:"result"`
}

type seqAudit struct {
	Seq   int64           `json:"seq"`
	Audit core.AuditEvent `json:"audit"`
}

// newStepRecord is the step record of an output with events.
func newStepRecord(o core.Output) stepRecord {
	r := stepRecord{Events: o.Events}
	for _, x := range o.ToolResults {
		r.Results = append(r.Results, seqResult{Seq: x.Seq, Result: x})
	}
	for _, a := range o.Audit {
		r.Audit = append(r.Audit, seqAudit{Seq: a.Seq, Audit: a})
	}
	return r
}

// decodeStep reads an EVT# record: a step record, or the single event of
// a table written before step records.
func decodeStep(r record) (stepRecord, error) {
	if len(r.data) > 0 && r.data[0] == deflated {
		b, err := io.ReadAll(flate.NewReader(bytes.NewReader(r.data[1:])))
		if err != nil {
			return stepRecord{}, fmt.Errorf("inflate: %w", err)
		}
		r.data = b
	}
	var probe struct {
		Events json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(r.data, &probe); err != nil {
		return stepRecord{}, err
	}
	if probe.Events == nil {
		var e core.Event
		if err := core.DecodeJSON(r.data, &e); err != nil {
			return stepRecord{}, err
		}
		e.Seq = r.seq
		return stepRecord{Events: []core.Event{e}}, nil
	}
	var sr stepRecord
	if err := core.DecodeJSON(r.data, &sr); err != nil {
		return stepRecord{}, err
	}
	for i := range sr.Results {
		sr.Results[i].Result.Seq = sr.Results[i].Seq
	}
	for i := range sr.Audit {
		sr.Audit[i].Audit.Seq = sr.Audit[i].Seq
	}
	return sr, nil
}

// stepRecords reads the run's step records whose first event is in
// [from, before), in order; stop, when it returns true, ends the read
// after the record it was given.
func (s *Store) stepRecords(ctx context.Context, runID string, from, before int64, stop func(stepRecord) bool) error {
	if from >= before || from > maxSeq {
		return nil
	}
	e := newExpr()
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND %s BETWEEN %s AND %s", e.n(attrPK), e.v(avS(runPK(runID))),
			e.n(attrSK), e.v(avS(partSK(prefixEvt, max(from, 1), 0))), e.v(avS(partSK(prefixEvt, min(before-1, maxSeq), maxParts))))),
		ConsistentRead: aws.Bool(true),
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	var asm assembler
	stopped := false
	err := s.query(ctx, in, 0, func(it item) (bool, error) {
		r, err := asm.add(it)
		if err != nil || r == nil {
			return false, err
		}
		sr, err := decodeStep(*r)
		if err != nil {
			return false, fmt.Errorf("decode step record %d: %w", r.seq, err)
		}
		stopped = stop(sr)
		return stopped, nil
	})
	if err != nil || stopped {
		return err
	}
	return asm.finish()
}

// containingStep returns the first event seq of the last step record
// that starts at or below seq, or 0 when there is none.
func (s *Store) containingStep(ctx context.Context, runID string, seq int64) (int64, error) {
	e := newExpr()
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND %s BETWEEN %s AND %s", e.n(attrPK), e.v(avS(runPK(runID))),
			e.n(attrSK), e.v(avS(partSK(prefixEvt, 1, 0))), e.v(avS(partSK(prefixEvt, min(seq, maxSeq), maxParts))))),
		ConsistentRead:   aws.Bool(true),
		ScanIndexForward: aws.Bool(false),
		Limit:            aws.Int32(1),
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return 0, translate(err)
	}
	if len(out.Items) == 0 {
		return 0, nil
	}
	sk, _ := getS(out.Items[0], attrSK)
	_, first, _, err := parseSK(sk)
	return first, err
}
