package dynamostore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/wait"
)

// intentRetention is how long an intent outlives its lease before the
// table's TTL may delete it. A deleted intent would make a crashed call
// look unclaimed, so it is kept far longer than any retry of its step.
const intentRetention = 7 * 24 * time.Hour

// ClaimIntent claims a tool call's execution for owner for lease with one
// conditional update. A live claim by another owner gives Claimed false;
// every successful claim after the first has Previous set.
func (s *Store) ClaimIntent(ctx context.Context, runID, toolCallID, owner string, now time.Time, lease time.Duration) (core.Claim, error) {
	k := itemKey(runPK(runID), prefixInt+toolCallID)
	exp := now.Add(lease)
	e := newExpr()
	update := fmt.Sprintf("SET %s = %s, %s = %s, %s = if_not_exists(%s, %s) + %s, %s = %s",
		e.n("owner"), e.v(avS(owner)), e.n("lease_exp"), e.v(avN(exp.UnixNano())),
		e.n("attempt"), e.n("attempt"), e.v(avN(0)), e.v(avN(1)), e.n(attrTTL), e.v(avN(exp.Add(intentRetention).Unix())))
	cond := fmt.Sprintf("attribute_not_exists(%s) OR %s = %s OR %s <= %s",
		e.n(attrPK), e.n("owner"), e.v(avS(owner)), e.n("lease_exp"), e.v(avN(now.UnixNano())))
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: k, UpdateExpression: aws.String(update), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
		ReturnValues: types.ReturnValueAllNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		old, failed := conditionFailed(err)
		if !failed {
			return core.Claim{}, fmt.Errorf("claim intent %s/%s: %w", runID, toolCallID, translate(err))
		}
		if old == nil {
			got, gerr := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: k, ConsistentRead: aws.Bool(true)})
			if gerr != nil {
				return core.Claim{}, fmt.Errorf("claim intent %s/%s: %w", runID, toolCallID, translate(gerr))
			}
			old = got.Item
		}
		attempt, _, err := getN(old, "attempt")
		if err != nil {
			return core.Claim{}, fmt.Errorf("claim intent %s/%s: %w", runID, toolCallID, err)
		}
		return core.Claim{Claimed: false, Previous: true, Attempt: int(attempt), Sent: remoteSent(old)}, nil
	}
	attempt, _, err := getN(out.Attributes, "attempt")
	if err != nil {
		return core.Claim{}, fmt.Errorf("claim intent %s/%s: %w", runID, toolCallID, err)
	}
	return core.Claim{Claimed: true, Previous: attempt > 1, Attempt: int(attempt), Sent: remoteSent(out.Attributes)}, nil
}

// remoteSent is the remote task an intent item records, or nil.
func remoteSent(it item) *core.RemoteSent {
	task, ok := getS(it, "remote_task")
	if !ok {
		return nil
	}
	ctxID, _ := getS(it, "remote_ctx")
	return &core.RemoteSent{TaskID: task, ContextID: ctxID}
}

// SettleIntent records what a call's attempt sent (one update, which
// also frees the lease), or forgets the claim of an attempt that sent
// nothing (a delete conditioned on owner still holding it).
func (s *Store) SettleIntent(ctx context.Context, runID, toolCallID, owner string, sent *core.RemoteSent) error {
	k := itemKey(runPK(runID), prefixInt+toolCallID)
	e := newExpr()
	if sent == nil {
		_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table), Key: k,
			ConditionExpression:      aws.String(fmt.Sprintf("%s = %s AND attribute_not_exists(%s)", e.n("owner"), e.v(avS(owner)), e.n("remote_task"))),
			ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
		})
		if _, failed := conditionFailed(err); err != nil && !failed {
			return fmt.Errorf("settle intent %s/%s: %w", runID, toolCallID, translate(err))
		}
		return nil
	}
	update := fmt.Sprintf("SET %s = %s, %s = %s, %s = %s, %s = if_not_exists(%s, %s), %s = %s REMOVE %s",
		e.n("remote_task"), e.v(avS(sent.TaskID)), e.n("remote_ctx"), e.v(avS(sent.ContextID)), e.n("lease_exp"), e.v(avN(0)),
		e.n("attempt"), e.n("attempt"), e.v(avN(1)), e.n(attrTTL), e.v(avN(time.Now().Add(intentRetention).Unix())), e.n("owner"))
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: k, UpdateExpression: aws.String(update),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
	})
	if err != nil {
		return fmt.Errorf("settle intent %s/%s: %w", runID, toolCallID, translate(err))
	}
	return nil
}

// ---- idempotency ----

// BeginIdempotent records an in-flight request under (scope, key) with one
// conditional put and returns nil, or returns the existing unexpired
// record (a record expires at its ExpiresAt, whatever the table's TTL
// has deleted yet).
func (s *Store) BeginIdempotent(ctx context.Context, scope, key, hash string, now time.Time, ttl time.Duration) (*core.IdempotencyRecord, error) {
	pk := idemPK(scope, key)
	exp := now.Add(ttl)
	it := itemKey(pk, skIdem)
	it["hash"] = avS(hash)
	it["done"] = avBool(false)
	it["expires"] = avN(exp.UnixNano())
	it[attrTTL] = avN(exp.Unix() + 1)
	for attempt := 0; ; attempt++ {
		e := newExpr()
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(s.table), Item: it,
			ConditionExpression:      aws.String(fmt.Sprintf("attribute_not_exists(%s) OR %s <= %s", e.n(attrPK), e.n("expires"), e.v(avN(now.UnixNano())))),
			ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err == nil {
			return nil, nil
		}
		old, failed := conditionFailed(err)
		if !failed {
			return nil, fmt.Errorf("begin idempotency key %q: %w", key, translate(err))
		}
		if old == nil {
			got, gerr := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(pk, skIdem), ConsistentRead: aws.Bool(true)})
			if gerr != nil {
				return nil, fmt.Errorf("begin idempotency key %q: %w", key, translate(gerr))
			}
			old = got.Item
		}
		if old == nil && attempt < 2 {
			continue // deleted in between: try again
		}
		rec, err := s.idemRecord(ctx, pk, old)
		if err != nil {
			return nil, fmt.Errorf("begin idempotency key %q: %w", key, err)
		}
		return rec, nil
	}
}

// idemRecord reads a record from its item, joining a large body.
func (s *Store) idemRecord(ctx context.Context, pk string, it item) (*core.IdempotencyRecord, error) {
	if it == nil {
		return nil, core.Retryable(fmt.Errorf("%w: idempotency record vanished", core.ErrConflict))
	}
	rec := &core.IdempotencyRecord{Done: getBool(it, "done")}
	rec.Hash, _ = getS(it, "hash")
	status, _, err := getN(it, "status")
	if err != nil {
		return nil, err
	}
	rec.StatusCode = int(status)
	exp, _, err := getN(it, "expires")
	if err != nil {
		return nil, err
	}
	rec.ExpiresAt = time.Unix(0, exp).UTC()
	if b, ok := getB(it, "body"); ok {
		rec.Body = bytes.Clone(b)
	} else if w, ok := getS(it, "body_w"); ok {
		prefix := prefixIBody + w + "#"
		recs, err := s.readRecords(ctx, pk, prefix, prefix, 0, 2, 0)
		if err != nil {
			return nil, fmt.Errorf("read body: %w", err)
		}
		if len(recs) != 1 {
			return nil, fmt.Errorf("read body: %d parts found", len(recs))
		}
		rec.Body = recs[0].data
	}
	return rec, nil
}

// FinishIdempotent stores the response of an in-flight request; it fails
// with ErrConflict unless a record with the same hash exists. A body too
// large for one item is written in parts first, named by a fresh nonce,
// and the record points at them.
func (s *Store) FinishIdempotent(ctx context.Context, scope, key string, rec core.IdempotencyRecord) error {
	pk := idemPK(scope, key)
	e := newExpr()
	set := []string{
		fmt.Sprintf("%s = %s", e.n("done"), e.v(avBool(true))),
		fmt.Sprintf("%s = %s", e.n("status"), e.v(avN(int64(rec.StatusCode)))),
	}
	var remove []string
	if len(rec.Body) == 0 {
		remove = append(remove, e.n("body"), e.n("body_w"))
	} else if len(rec.Body) <= chunkBytes {
		set = append(set, fmt.Sprintf("%s = %s", e.n("body"), e.v(avB(rec.Body))))
		remove = append(remove, e.n("body_w"))
	} else {
		expires := rec.ExpiresAt
		if expires.IsZero() {
			got, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(pk, skIdem), ConsistentRead: aws.Bool(true)})
			if err != nil {
				return fmt.Errorf("finish idempotency key %q: %w", key, translate(err))
			}
			h, _ := getS(got.Item, "hash")
			if got.Item == nil || h != rec.Hash {
				return fmt.Errorf("finish idempotency key %q: %w", key, core.ErrConflict)
			}
			n, _, err := getN(got.Item, "expires")
			if err != nil {
				return fmt.Errorf("finish idempotency key %q: %w", key, err)
			}
			expires = time.Unix(0, n)
		}
		w := nonce()
		parts, err := partItems(pk, prefixIBody+w+"#", 1, rec.Body, w)
		if err != nil {
			return fmt.Errorf("finish idempotency key %q: %w", key, err)
		}
		for _, it := range parts {
			it[attrTTL] = avN(expires.Unix() + 1)
		}
		if err := s.batchPut(ctx, parts); err != nil {
			return fmt.Errorf("finish idempotency key %q: %w", key, err)
		}
		set = append(set, fmt.Sprintf("%s = %s", e.n("body_w"), e.v(avS(w))))
		remove = append(remove, e.n("body"))
	}
	if !rec.ExpiresAt.IsZero() {
		set = append(set, fmt.Sprintf("%s = %s", e.n("expires"), e.v(avN(rec.ExpiresAt.UnixNano()))),
			fmt.Sprintf("%s = %s", e.n(attrTTL), e.v(avN(rec.ExpiresAt.Unix()+1))))
	}
	update := "SET " + strings.Join(set, ", ") + " REMOVE " + strings.Join(remove, ", ")
	cond := fmt.Sprintf("attribute_exists(%s) AND %s = %s", e.n(attrPK), e.n("hash"), e.v(avS(rec.Hash)))
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: itemKey(pk, skIdem), UpdateExpression: aws.String(update), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
	})
	if err != nil {
		if _, failed := conditionFailed(err); failed {
			return fmt.Errorf("finish idempotency key %q: %w: no in-flight request with this hash", key, core.ErrConflict)
		}
		return fmt.Errorf("finish idempotency key %q: %w", key, translate(err))
	}
	return nil
}

// AbortIdempotent forgets an in-flight request; a finished record and an
// unknown key are left alone.
func (s *Store) AbortIdempotent(ctx context.Context, scope, key string) error {
	e := newExpr()
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: itemKey(idemPK(scope, key), skIdem),
		ConditionExpression:      aws.String(fmt.Sprintf("attribute_exists(%s) AND %s = %s", e.n(attrPK), e.n("done"), e.v(avBool(false)))),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
	})
	if err != nil {
		if _, failed := conditionFailed(err); failed {
			return nil
		}
		return fmt.Errorf("abort idempotency key %q: %w", key, translate(err))
	}
	return nil
}

// batchWriteSize is the most requests one BatchWriteItem takes.
const batchWriteSize = 25

// batchPut writes items with BatchWriteItem (batchWrite).
func (s *Store) batchPut(ctx context.Context, items []item) error {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	return s.batchWrite(ctx, reqs)
}

// batchWrite sends write requests with BatchWriteItem, batchWriteSize a
// call, sending unprocessed requests again with backoff.
func (s *Store) batchWrite(ctx context.Context, all []types.WriteRequest) error {
	for len(all) > 0 {
		reqs := all[:min(len(all), batchWriteSize)]
		all = all[len(reqs):]
		for attempt := 0; len(reqs) > 0; attempt++ {
			out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: reqs}})
			if err != nil {
				return translate(err)
			}
			reqs = out.UnprocessedItems[s.table]
			if len(reqs) == 0 {
				break
			}
			if attempt >= 8 {
				return core.Retryable(fmt.Errorf("batch write: %d items still unprocessed", len(reqs)))
			}
			if err := wait.Sleep(ctx, backoff(attempt)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ---- tokens ----

// LookupToken resolves a token hash.
func (s *Store) LookupToken(ctx context.Context, hash string) (core.Token, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(tokenPK(hash), skToken), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return core.Token{}, fmt.Errorf("token: %w", translate(err))
	}
	if out.Item == nil {
		return core.Token{}, fmt.Errorf("token: %w", core.ErrNotFound)
	}
	var t core.Token
	t.Tenant, _ = getS(out.Item, "tenant")
	t.Label, _ = getS(out.Item, "label")
	if l, ok := out.Item["scopes"].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			sv, ok := v.(*types.AttributeValueMemberS)
			if !ok {
				return core.Token{}, fmt.Errorf("token: scopes hold a %T", v)
			}
			t.Scopes = append(t.Scopes, sv.Value)
		}
	}
	return t, nil
}

// PutToken stores a token under its hash.
func (s *Store) PutToken(ctx context.Context, hash string, t core.Token) error {
	if strings.TrimSpace(hash) == "" || t.Tenant == "" {
		return fmt.Errorf("put token: %w: hash and tenant are required", core.ErrInvalidInput)
	}
	it := itemKey(tokenPK(hash), skToken)
	it["tenant"] = avS(t.Tenant)
	scopes := make([]types.AttributeValue, len(t.Scopes))
	for i, sc := range t.Scopes {
		scopes[i] = avS(sc)
	}
	it["scopes"] = &types.AttributeValueMemberL{Value: scopes}
	if t.Label != "" {
		it["label"] = avS(t.Label)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: it}); err != nil {
		return fmt.Errorf("put token: %w", translate(err))
	}
	return nil
}
