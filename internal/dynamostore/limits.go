package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
)

// The state of per-tenant limits: one item per rate-limit bucket (its
// theoretical arrival time, expiring when the bucket is full again) and
// one per tenant counting its unfinished runs, changed in the
// transactions that create and finish runs.
const (
	skBucket = "RL"
	skActive = "ACTIVE"
	// takeAttempts bounds the compare-and-set loop of one TakeToken
	// under contention on one bucket.
	takeAttempts = 4
)

func bucketPK(key string) string    { return "RL#" + escape(key) }
func activePK(tenant string) string { return "ACT#" + escape(tenant) }

// activeTake is the transaction item of a new unfinished run under an
// active-run limit (writePlan.takesActive; item 3 of a create): one more
// run, refused at the limit.
func (s *Store) activeTake(p *writePlan) types.TransactWriteItem {
	e := newExpr()
	return s.update(itemKey(activePK(p.tenant), skActive),
		fmt.Sprintf("ADD %s %s", e.n("n"), e.v(avN(1))),
		fmt.Sprintf("attribute_not_exists(%s) OR %s < %s", e.n("n"), e.n("n"), e.v(avN(int64(p.activeLimit)))), e)
}

// activeFree is the transaction items of the commit that finishes a run
// under an active-run limit: one run fewer.
func (s *Store) activeFree(p *writePlan) []types.TransactWriteItem {
	if !p.freesActive {
		return nil
	}
	e := newExpr()
	return []types.TransactWriteItem{{Update: &types.Update{
		TableName: aws.String(s.table), Key: itemKey(activePK(p.tenant), skActive),
		UpdateExpression:          aws.String(fmt.Sprintf("ADD %s %s", e.n("n"), e.v(avN(-1)))),
		ExpressionAttributeNames:  e.namesOrNil(),
		ExpressionAttributeValues: e.valuesOrNil(),
	}}}
}

// tooManyActive is the refusal of a new run at the tenant's limit.
func (p *writePlan) tooManyActive() error {
	return &core.TooManyActiveError{Tenant: p.tenant, Limit: p.activeLimit}
}

// ActiveRuns reads a tenant's count of unfinished runs.
func (s *Store) ActiveRuns(ctx context.Context, tenant string) (int, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: itemKey(activePK(tenant), skActive), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return 0, fmt.Errorf("active runs of %s: %w", tenant, translate(err))
	}
	n, _, err := getN(out.Item, "n")
	return int(n), err
}

// TakeToken takes a token from a rate limit's bucket (core.GCRA) with a
// conditional write: a full bucket (no item, or a theoretical arrival
// time in the past) takes one request; a bucket in use takes a second,
// conditioned on the time the first one returned. Contention past
// takeAttempts is answered as an empty bucket for one interval.
func (s *Store) TakeToken(ctx context.Context, key string, now time.Time, l core.RateLimit) (time.Duration, error) {
	if l.Rate <= 0 {
		return 0, nil
	}
	k := itemKey(bucketPK(key), skBucket)
	var old *time.Time // nil: assume a full bucket
	for range takeAttempts {
		tat := now
		if old != nil {
			tat = *old
		}
		next, wait := core.GCRA(tat, now, l)
		if wait > 0 {
			return wait, nil
		}
		e := newExpr()
		var cond string
		if old == nil {
			cond = fmt.Sprintf("attribute_not_exists(%s) OR %s <= %s", e.n("tat"), e.n("tat"), e.v(avN(now.UnixNano())))
		} else {
			cond = fmt.Sprintf("%s = %s", e.n("tat"), e.v(avN(old.UnixNano())))
		}
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: k,
			UpdateExpression: aws.String(fmt.Sprintf("SET %s = %s, %s = %s", e.n("tat"), e.v(avN(next.UnixNano())),
				e.n(attrTTL), e.v(avN(next.Unix()+60)))),
			ConditionExpression:      aws.String(cond),
			ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err == nil {
			return 0, nil
		}
		it, failed := conditionFailed(err)
		if !failed {
			return 0, fmt.Errorf("rate limit %s: %w", key, translate(err))
		}
		n, ok, err := getN(it, "tat")
		if err != nil {
			return 0, err
		}
		cur := time.Unix(0, n)
		if !ok {
			cur = time.Time{}
		}
		old = &cur
	}
	return time.Duration(float64(time.Second) / l.Rate), nil
}
