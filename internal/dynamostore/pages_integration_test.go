//go:build integration

package dynamostore

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/baton-agents/baton/core"
)

// TestPagesAreOneQuery: a page of schedules, of every tenant's schedules,
// of a schedule's triggers or of evals reads one item past the page in
// the same query, to know whether there is a next page.
func TestPagesAreOneQuery(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	for i := range 3 {
		sc := core.Schedule{ID: fmt.Sprintf("sch_%d", i), Tenant: "acme", Agent: "demo", Request: json.RawMessage(`{}`), Cron: "0 9 * * *", Timezone: "UTC",
			Overlap: core.OverlapSkip, Missed: core.MissedSkip, CreatedAt: time.Unix(100, 0), UpdatedAt: time.Unix(100, 0)}
		if err := f.s.CreateSchedule(ctx, sc, 0); err != nil {
			t.Fatal(err)
		}
		tr := core.Trigger{ScheduleID: "sch_0", FireTime: time.Unix(int64(3600*(i+1)), 0), Outcome: core.TriggerSkipped, Reason: "paused: paused"}
		if _, _, err := f.s.RecordTrigger(ctx, "acme", tr); err != nil {
			t.Fatal(err)
		}
		ev := core.EvalRecord{ID: fmt.Sprintf("ev_%d", i), Tenant: "acme", Agent: "demo", Version: "av_0000000000000001", Tools: "replay",
			Concurrency: 1, Total: 1, Dataset: []byte(`[{"id":"1"}]`), CreatedAt: time.Unix(int64(100+i), 0)}
		if err := f.s.CreateEval(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	pages := []struct {
		what, want string
		page       func() (int, string, error)
	}{
		{"a page of schedules", "map[Query:1]", func() (int, string, error) {
			out, next, err := f.s.ListSchedules(ctx, "acme", 2, "")
			return len(out), next, err
		}},
		{"a page of every tenant's", "map[BatchGetItem:1 Query:1]", func() (int, string, error) {
			out, next, err := f.s.AllSchedules(ctx, 2, "")
			return len(out), next, err
		}},
		{"a page of triggers", "map[Query:1]", func() (int, string, error) {
			out, next, err := f.s.Triggers(ctx, "sch_0", 2, "")
			return len(out), next, err
		}},
		{"a page of evals", "map[Query:1]", func() (int, string, error) {
			out, next, err := f.s.ListEvals(ctx, "acme", 2, "")
			return len(out), next, err
		}},
	}
	c.take()
	for _, p := range pages {
		n, next, err := p.page()
		if err != nil || n != 2 || next == "" {
			t.Fatalf("%s: %d items, next %q, %v; want 2 and a next page", p.what, n, next, err)
		}
		if got := fmt.Sprint(c.take()); got != p.want {
			t.Fatalf("%s sent %s, want %s", p.what, got, p.want)
		}
	}
}

// TestIndexKeysMergeShards: the sparse index (due runs, unsent
// notifications) is read one query a shard, each stopping at the limit
// (no second query for a shard that holds more), and the shards' entries
// are merged in sort key order and cut to the limit.
func TestIndexKeysMergeShards(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	for i, e := range []struct {
		shard  int
		sortBy string
	}{{0, "t1#a"}, {0, "t3#c"}, {0, "t5#e"}, {1, "t2#b"}, {1, "t9#z"}} {
		it := itemKey(fmt.Sprintf("IDX#%d", i), "IDX")
		it[attrGSI1PK] = avS(fmt.Sprintf("TEST#%d", e.shard))
		it[attrGSI1SK] = avS(e.sortBy)
		if _, err := f.s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.s.table), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		limit int
		want  string
	}{
		{0, "t1#a t2#b t3#c t5#e"}, {10, "t1#a t2#b t3#c t5#e"}, {2, "t1#a t2#b"}, {3, "t1#a t2#b t3#c"},
	} {
		c.take()
		keys, err := f.s.indexKeys(ctx, "TEST#", "t6", tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range keys {
			got = append(got, k.gsiSK)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("limit %d: %v, want %s", tc.limit, got, tc.want)
		}
		if calls := c.take(); calls["Query"] != dueShards {
			t.Errorf("limit %d: %v, want one query a shard (%d)", tc.limit, calls, dueShards)
		}
	}
}
