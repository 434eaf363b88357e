package dynamostore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// DueRuns lists runs whose DueAt is at or before now, earliest first (ties
// by run id), at most limit (0: no limit). It queries every shard of the
// sparse due index at once and merges the answers. The index is
// eventually consistent, so a commit may take a moment to show here.
func (s *Store) DueRuns(ctx context.Context, now time.Time, limit int) ([]string, error) {
	due, err := dueKey(now)
	if err != nil {
		return nil, fmt.Errorf("due runs: %w", err)
	}
	// "<time>#<run>" < "<time>$" for every run due at or before now.
	upper := due + "$"
	keys := make([][]string, dueShards)
	errs := make([]error, dueShards)
	var wg sync.WaitGroup
	for i := range dueShards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[i], errs[i] = s.dueShard(ctx, fmt.Sprintf("DUE#%d", i), upper, limit)
		}()
	}
	wg.Wait()
	var all []string
	for i := range dueShards {
		if errs[i] != nil {
			return nil, fmt.Errorf("due runs: %w", errs[i])
		}
		all = append(all, keys[i]...)
	}
	sort.Strings(all)
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	out := make([]string, len(all))
	for i, k := range all {
		_, out[i], _ = strings.Cut(k, "#")
	}
	return out, nil
}

// dueShard returns the first limit index keys of one shard below upper.
func (s *Store) dueShard(ctx context.Context, shard, upper string, limit int) ([]string, error) {
	e := newExpr()
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String(indexGSI1),
		KeyConditionExpression: aws.String(fmt.Sprintf("%s = %s AND %s < %s", e.n(attrGSI1PK), e.v(avS(shard)), e.n(attrGSI1SK), e.v(avS(upper)))),
	}
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.namesOrNil(), e.valuesOrNil()
	var out []string
	err := s.query(ctx, in, limit, func(it item) (bool, error) {
		if k, ok := getS(it, attrGSI1SK); ok {
			out = append(out, k)
		}
		return limit > 0 && len(out) >= limit, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
