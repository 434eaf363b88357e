package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
)

// Evals (core.EvalStore):
//
//	PK=EVAL#<id>        SK=HEAD           the eval (JSON in d, without its dataset) and its dataset (blob ds)
//	PK=EVALS#<tenant>   SK=<created>#<id> the tenant's eval list: the eval again, without its dataset
//	PK=EVAL#<id>        SK=CASE#<case>    a scored case (JSON in d), written once
//
// The eval's two items are one transaction, conditioned on the eval
// being new; a cancel rewrites both, conditioned on the eval not being
// cancelled; a case's result is a put conditioned on none being there.
const skEvalHead = "HEAD"

var _ core.EvalStore = (*Store)(nil)

func evalPK(id string) string             { return "EVAL#" + id }
func evalListPK(tenant string) string     { return "EVALS#" + escape(tenant) }
func evalCaseSK(n int) string             { return fmt.Sprintf("CASE#%06d", n) }
func evalListSK(e core.EvalRecord) string { return core.RunListKey(e.CreatedAt, e.ID) }

// evalMeta is an eval as its items' d holds it: without its dataset.
func evalMeta(e core.EvalRecord) ([]byte, error) {
	e.Dataset = nil
	return json.Marshal(e)
}

// CreateEval stores a new eval and its list entry.
func (s *Store) CreateEval(ctx context.Context, e core.EvalRecord) error {
	meta, err := evalMeta(e)
	if err != nil {
		return err
	}
	head := itemKey(evalPK(e.ID), skEvalHead)
	head["d"] = avB(meta)
	head["tenant"] = avS(e.Tenant)
	if err := blobAttrs(head, "ds", e.Dataset); err != nil {
		return fmt.Errorf("%w: eval %s: the dataset: %v", core.ErrInvalidInput, e.ID, err)
	}
	list := itemKey(evalListPK(e.Tenant), evalListSK(e))
	list["d"] = avB(meta)
	x := newExpr()
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: head, ConditionExpression: aws.String(fmt.Sprintf("attribute_not_exists(%s)", x.n(attrPK))), ExpressionAttributeNames: x.namesOrNil()}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: list}},
	}})
	if reasons, ok := cancelReasons(err); ok && failedAt(reasons, 0) {
		return fmt.Errorf("create eval %s: %w: it exists", e.ID, core.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("create eval %s: %w", e.ID, translate(err))
	}
	return nil
}

// GetEval reads an eval of tenant's, with its dataset.
func (s *Store) GetEval(ctx context.Context, tenant, id string) (core.EvalRecord, error) {
	var e core.EvalRecord
	it, err := s.getJSON(ctx, itemKey(evalPK(id), skEvalHead), "eval "+id, &e)
	if err != nil {
		return core.EvalRecord{}, err
	}
	if e.Tenant != tenant {
		return core.EvalRecord{}, fmt.Errorf("eval %s: %w", id, core.ErrNotFound)
	}
	if e.Dataset, err = readBlob(it, "ds"); err != nil {
		return core.EvalRecord{}, fmt.Errorf("eval %s: the dataset: %w", id, err)
	}
	return e, nil
}

// ListEvals lists tenant's evals newest first, without their datasets:
// one query of the tenant's list partition.
func (s *Store) ListEvals(ctx context.Context, tenant string, limit int, cursor string) ([]core.EvalRecord, string, error) {
	if limit < 1 {
		return nil, "", fmt.Errorf("%w: limit must be at least 1", core.ErrInvalidInput)
	}
	x := newExpr()
	cond := fmt.Sprintf("%s = %s", x.n(attrPK), x.v(avS(evalListPK(tenant))))
	if cursor != "" {
		key, err := core.DecodeRunCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		cond += fmt.Sprintf(" AND %s < %s", x.n(attrSK), x.v(avS(key)))
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), ScanIndexForward: aws.Bool(false),
		KeyConditionExpression: aws.String(cond), ExpressionAttributeNames: x.namesOrNil(), ExpressionAttributeValues: x.valuesOrNil()}
	var out []core.EvalRecord
	next := ""
	err := s.query(ctx, in, limit+1, func(it item) (bool, error) {
		if len(out) == limit {
			next = core.EncodeRunCursor(evalListSK(out[len(out)-1]))
			return true, nil
		}
		var e core.EvalRecord
		d, _ := getB(it, "d")
		if err := json.Unmarshal(d, &e); err != nil {
			return true, err
		}
		out = append(out, e)
		return false, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("list evals: %w", err)
	}
	return out, next, nil
}

// CancelEval marks an eval cancelled in both its items, once.
func (s *Store) CancelEval(ctx context.Context, tenant, id string, at time.Time) error {
	e, err := s.GetEval(ctx, tenant, id)
	if err != nil || e.Cancelled {
		return err
	}
	e.Cancelled, e.CancelledAt = true, &at
	meta, err := evalMeta(e)
	if err != nil {
		return err
	}
	hx, lx := newExpr(), newExpr()
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		s.update(itemKey(evalPK(id), skEvalHead), fmt.Sprintf("SET %s = %s, %s = %s", hx.n("d"), hx.v(avB(meta)), hx.n("cx"), hx.v(avN(1))),
			fmt.Sprintf("attribute_exists(%s) AND attribute_not_exists(%s)", hx.n(attrPK), hx.n("cx")), hx),
		s.update(itemKey(evalListPK(tenant), evalListSK(e)), fmt.Sprintf("SET %s = %s", lx.n("d"), lx.v(avB(meta))), fmt.Sprintf("attribute_exists(%s)", lx.n(attrPK)), lx),
	}})
	if reasons, ok := cancelReasons(err); ok && failedAt(reasons, 0) {
		return nil // cancelled meanwhile
	}
	if err != nil {
		return fmt.Errorf("cancel eval %s: %w", id, translate(err))
	}
	return nil
}

// PutEvalResult stores a case's result unless one is stored.
func (s *Store) PutEvalResult(ctx context.Context, evalID string, r core.EvalResult) (bool, error) {
	d, err := json.Marshal(r)
	if err != nil {
		return false, err
	}
	it := itemKey(evalPK(evalID), evalCaseSK(r.Case))
	it["d"] = avB(d)
	x := newExpr()
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it,
		ConditionExpression: aws.String(fmt.Sprintf("attribute_not_exists(%s)", x.n(attrPK))), ExpressionAttributeNames: x.namesOrNil()})
	if _, failed := conditionFailed(err); failed {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("eval %s: store case %d: %w", evalID, r.Case, translate(err))
	}
	return true, nil
}

// EvalResults lists an eval's scored cases by case.
func (s *Store) EvalResults(ctx context.Context, evalID string) ([]core.EvalResult, error) {
	x := newExpr()
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:   aws.String(fmt.Sprintf("%s = %s AND begins_with(%s, %s)", x.n(attrPK), x.v(avS(evalPK(evalID))), x.n(attrSK), x.v(avS("CASE#")))),
		ExpressionAttributeNames: x.namesOrNil(), ExpressionAttributeValues: x.valuesOrNil()}
	out := []core.EvalResult{}
	err := s.query(ctx, in, 0, func(it item) (bool, error) {
		var r core.EvalResult
		d, _ := getB(it, "d")
		if err := json.Unmarshal(d, &r); err != nil {
			return true, err
		}
		out = append(out, r)
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("eval %s: read its cases: %w", evalID, err)
	}
	return out, nil
}
