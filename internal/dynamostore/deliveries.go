package dynamostore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/baton-agents/baton/core"
)

// prefixDeliveries keys a step's delivery sums under its run:
// DLV#<step seq>#<tool call id> (the call id empty for a model step).
const prefixDeliveries = "DLV#"

func deliveriesSK(seq int64, callID string) string {
	return fmt.Sprintf("%s%016d#%s", prefixDeliveries, seq, callID)
}

// NoteDelivery adds a delivery note to its step's sums with one update
// (ADD creates the item and its counters on a step's first note).
func (s *Store) NoteDelivery(ctx context.Context, runID string, n core.DeliveryNote) error {
	if n.Step.Seq < 0 || n.Step.Seq > maxSeq {
		return fmt.Errorf("note delivery of run %s: step seq %d out of range", runID, n.Step.Seq)
	}
	e := newExpr()
	var redelivered, stale int64
	if n.Redelivered {
		redelivered = 1
	}
	if n.Stale {
		stale = 1
	}
	set := []string{
		fmt.Sprintf("%s = %s", e.n("kind"), e.v(avS(string(n.Step.Kind)))),
		fmt.Sprintf("%s = %s", e.n("at"), e.v(avN(n.At.UnixNano()))),
	}
	if n.Turn > 0 {
		set = append(set, fmt.Sprintf("%s = if_not_exists(%s, %s)", e.n("turn"), e.n("turn"), e.v(avN(int64(n.Turn)))))
	}
	update := fmt.Sprintf("SET %s ADD %s %s, %s %s", strings.Join(set, ", "),
		e.n("redelivered"), e.v(avN(redelivered)), e.n("stale"), e.v(avN(stale)))
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: itemKey(runPK(runID), deliveriesSK(n.Step.Seq, n.Step.CallID)),
		UpdateExpression:         aws.String(update),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
	})
	if err != nil {
		return fmt.Errorf("note delivery of run %s: %w", runID, translate(err))
	}
	return nil
}

// Deliveries returns the run's delivery sums by step seq, then call id,
// with one strongly consistent query.
func (s *Store) Deliveries(ctx context.Context, runID string) ([]core.StepDeliveries, error) {
	e := newExpr()
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND begins_with(%s, %s)", e.n(attrPK), e.v(avS(runPK(runID))),
			e.n(attrSK), e.v(avS(prefixDeliveries)))),
		ConsistentRead: aws.Bool(true),
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	var out []core.StepDeliveries
	err := s.query(ctx, in, 0, func(it item) (bool, error) {
		d, err := decodeDeliveries(it)
		out = append(out, d)
		return false, err
	})
	if err != nil {
		return nil, fmt.Errorf("deliveries of run %s: %w", runID, err)
	}
	return out, nil
}

func decodeDeliveries(it item) (core.StepDeliveries, error) {
	var d core.StepDeliveries
	sk, _ := getS(it, attrSK)
	seq, callID, ok := strings.Cut(strings.TrimPrefix(sk, prefixDeliveries), "#")
	if _, err := fmt.Sscanf(seq, "%d", &d.StepSeq); err != nil || !ok {
		return d, fmt.Errorf("delivery key %q: malformed", sk)
	}
	d.ToolCallID = callID
	kind, _ := getS(it, "kind")
	d.Kind = core.StepKind(kind)
	var nums [4]int64
	for i, name := range []string{"turn", "redelivered", "stale", "at"} {
		n, _, err := getN(it, name)
		if err != nil {
			return d, err
		}
		nums[i] = n
	}
	d.Turn, d.Redeliveries, d.Stale = int(nums[0]), int(nums[1]), int(nums[2])
	d.LastAt = time.Unix(0, nums[3]).UTC()
	return d, nil
}
