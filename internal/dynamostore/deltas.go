package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/baton-agents/baton/core"
)

var _ core.DeltaStore = (*Store)(nil)

// prefixDelta starts the sort key of a streamed delta batch:
// DLT#<turn>#<attempt>#<batch>, fixed width, so the keys of a run's
// batches sort in DeltaPos order.
const prefixDelta = "DLT#"

func deltaSK(p core.DeltaPos) string {
	return fmt.Sprintf("%s%08d#%015d#%08d", prefixDelta, p.Turn, p.Attempt, p.Batch)
}

// PutDeltas stores a batch of streamed deltas as one item in the run's
// partition, with the table's TTL set to its expiry: one write of
// ceil(size/1 KB) write units per batch.
func (s *Store) PutDeltas(ctx context.Context, b core.DeltaBatch) error {
	data, err := encodeDeltas(b.Deltas)
	if err != nil {
		return fmt.Errorf("deltas of run %s: %w", b.RunID, err)
	}
	it := itemKey(runPK(b.RunID), deltaSK(b.Pos))
	it["index"] = avN(int64(b.Index))
	it["deltas"] = avB(data)
	it["expires"] = avN(b.ExpiresAt.UnixNano())
	it[attrTTL] = avN(b.ExpiresAt.Unix() + 1)
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it}); err != nil {
		return fmt.Errorf("deltas of run %s: %w", b.RunID, translate(err))
	}
	return nil
}

// Deltas returns the run's unexpired batches at or after from, in order,
// with one strongly consistent query (a batch the query missed would be
// skipped for good by a stream that moved past it).
func (s *Store) Deltas(ctx context.Context, runID string, from core.DeltaPos, now time.Time, limit int) ([]core.DeltaBatch, error) {
	e := newExpr()
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND %s BETWEEN %s AND %s", e.n(attrPK), e.v(avS(runPK(runID))),
			e.n(attrSK), e.v(avS(deltaSK(from))), e.v(avS(prefixDelta+"~")))),
		ConsistentRead: aws.Bool(true),
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	var out []core.DeltaBatch
	err := s.query(ctx, in, limit, func(it item) (bool, error) {
		b, err := decodeDeltas(runID, it)
		if err != nil {
			return false, err
		}
		if now.Before(b.ExpiresAt) {
			out = append(out, b)
		}
		return limit > 0 && len(out) >= limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("deltas of run %s: %w", runID, err)
	}
	return out, nil
}

func decodeDeltas(runID string, it item) (core.DeltaBatch, error) {
	b := core.DeltaBatch{RunID: runID}
	sk, _ := getS(it, attrSK)
	if _, err := fmt.Sscanf(sk, prefixDelta+"%d#%d#%d", &b.Pos.Turn, &b.Pos.Attempt, &b.Pos.Batch); err != nil {
		return b, fmt.Errorf("delta batch key %q: %w", sk, err)
	}
	index, _, err := getN(it, "index")
	if err != nil {
		return b, err
	}
	exp, _, err := getN(it, "expires")
	if err != nil {
		return b, err
	}
	b.Index, b.ExpiresAt = int(index), time.Unix(0, exp).UTC()
	raw, _ := getB(it, "deltas")
	if b.Deltas, err = decodeDeltaTexts(raw); err != nil {
		return b, fmt.Errorf("delta batch %s: %w", sk, err)
	}
	return b, nil
}

// A batch's deltas are stored as a JSON array of strings, each the
// delta's text after one letter for its kind (t: token, h: thinking):
// about half the size of the deltas' JSON objects, so a batch of a few
// dozen tokens stays within one write unit.
const (
	deltaTokenTag    = 't'
	deltaThinkingTag = 'h'
)

func encodeDeltas(deltas []core.TokenDelta) ([]byte, error) {
	texts := make([]string, len(deltas))
	for i, d := range deltas {
		tag := deltaTokenTag
		if d.Kind == core.DeltaThinking {
			tag = deltaThinkingTag
		}
		texts[i] = string(rune(tag)) + d.Text
	}
	return json.Marshal(texts)
}

func decodeDeltaTexts(raw []byte) ([]core.TokenDelta, error) {
	var texts []string
	if err := json.Unmarshal(raw, &texts); err != nil {
		return nil, err
	}
	out := make([]core.TokenDelta, len(texts))
	for i, t := range texts {
		if t == "" {
			return nil, fmt.Errorf("delta %d has no kind", i)
		}
		kind := core.DeltaToken
		if t[0] == deltaThinkingTag {
			kind = core.DeltaThinking
		}
		out[i] = core.TokenDelta{Kind: kind, Text: t[1:]}
	}
	return out, nil
}
