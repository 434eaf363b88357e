package dynamostore

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/baton-agents/baton/core"
)

// outboxItem is a notification's item: written in the commit's
// transaction beside the run item, and listed in the sparse index (under
// the OBX# shards) until MarkNotificationSent takes it out.
func outboxItem(n core.Notification) (item, error) {
	b, err := core.CanonicalJSON(n)
	if err != nil {
		return nil, fmt.Errorf("encode notification %s: %w", n.ID, err)
	}
	at, err := dueKey(n.Time)
	if err != nil {
		return nil, err
	}
	it := itemKey(runPK(n.RunID), prefixOutbox+n.ID)
	it["d"] = avB(b)
	if n.Callback != nil && n.Callback.Failed {
		// The failed-delivery record: kept, listed no more.
		it["failed"] = avBool(true)
		return it, nil
	}
	it[attrGSI1PK] = avS(shardOf(outboxShardPrefix, n.RunID))
	it[attrGSI1SK] = avS(at + "#" + n.RunID + "#" + n.ID)
	return it, nil
}

// UnsentNotifications lists the notifications not marked sent whose Time
// is at or before before, oldest first, at most limit (0: no limit). It
// queries every shard of the sparse index at once (a read of the index
// keys) and reads each listed notification with a strongly consistent
// GetItem, skipping those the eventually consistent index still lists
// after they were marked sent.
func (s *Store) UnsentNotifications(ctx context.Context, before time.Time, limit int) ([]core.Notification, error) {
	at, err := dueKey(before)
	if err != nil {
		return nil, fmt.Errorf("unsent notifications: %w", err)
	}
	keys, err := s.indexKeys(ctx, outboxShardPrefix, at+"$", limit)
	if err != nil {
		return nil, fmt.Errorf("unsent notifications: %w", err)
	}
	var out []core.Notification
	for _, k := range keys {
		got, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(k.pk, k.sk), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("unsent notifications: %w", translate(err))
		}
		if got.Item == nil || getBool(got.Item, "sent") {
			continue
		}
		b, _ := getB(got.Item, "d")
		var n core.Notification
		if err := core.DecodeJSON(b, &n); err != nil {
			return nil, fmt.Errorf("decode notification %s: %w", k.sk, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// MarkNotificationSent marks a notification sent and takes it out of the
// sparse index, with one conditional update.
func (s *Store) MarkNotificationSent(ctx context.Context, runID, id string) error {
	e := newExpr()
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: itemKey(runPK(runID), prefixOutbox+id),
		UpdateExpression:         aws.String(fmt.Sprintf("SET %s = %s REMOVE %s, %s", e.n("sent"), e.v(avBool(true)), e.n(attrGSI1PK), e.n(attrGSI1SK))),
		ConditionExpression:      aws.String(fmt.Sprintf("attribute_exists(%s)", e.n(attrPK))),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
	})
	if _, failed := conditionFailed(err); failed {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mark notification %s sent: %w", id, translate(err))
	}
	return nil
}

// UpdateNotification stores an unsent notification again (its item,
// listed at n.Time, or a failed delivery's, unlisted), with one
// conditional PutItem.
func (s *Store) UpdateNotification(ctx context.Context, n core.Notification) error {
	it, err := outboxItem(n)
	if err != nil {
		return err
	}
	e := newExpr()
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: it,
		ConditionExpression:      aws.String(fmt.Sprintf("attribute_exists(%s) AND attribute_not_exists(%s) AND attribute_not_exists(%s)", e.n(attrPK), e.n("sent"), e.n("failed"))),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
	})
	if _, failed := conditionFailed(err); failed {
		return nil
	}
	if err != nil {
		return fmt.Errorf("update notification %s: %w", n.ID, translate(err))
	}
	return nil
}

// indexKey is one entry of the sparse index: its sort key and the table
// key of its item.
type indexKey struct{ gsiSK, pk, sk string }

// indexKeys returns the first limit entries (0: all) of the sparse index
// under the shards of prefix whose sort key is below upper, in sort key
// order, querying the shards at once and merging their answers.
func (s *Store) indexKeys(ctx context.Context, prefix, upper string, limit int) ([]indexKey, error) {
	keys := make([][]indexKey, dueShards)
	errs := make([]error, dueShards)
	var wg sync.WaitGroup
	for i := range dueShards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[i], errs[i] = s.indexShard(ctx, fmt.Sprintf("%s%d", prefix, i), upper, limit)
		}()
	}
	wg.Wait()
	var all []indexKey
	for i := range dueShards {
		if errs[i] != nil {
			return nil, errs[i]
		}
		all = append(all, keys[i]...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].gsiSK < all[j].gsiSK })
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

// indexShard returns the first limit entries of one shard below upper.
func (s *Store) indexShard(ctx context.Context, shard, upper string, limit int) ([]indexKey, error) {
	e := newExpr()
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(indexGSI1),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND %s < %s", e.n(attrGSI1PK), e.v(avS(shard)), e.n(attrGSI1SK), e.v(avS(upper)))),
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	var out []indexKey
	err := s.query(ctx, in, limit, func(it item) (bool, error) {
		var k indexKey
		k.gsiSK, _ = getS(it, attrGSI1SK)
		k.pk, _ = getS(it, attrPK)
		k.sk, _ = getS(it, attrSK)
		out = append(out, k)
		return limit > 0 && len(out) >= limit, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
