//go:build integration

package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/baton-agents/baton/core"
)

func (c *counting) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.count("PutItem")
	return c.dynamoAPI.PutItem(ctx, in, opts...)
}

func (c *counting) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.count("BatchGetItem")
	return c.dynamoAPI.BatchGetItem(ctx, in, opts...)
}

// TestScheduleRoundTrips pins the requests of the schedule calls and the
// items they write: a create and a delete are one transaction each (the
// tenant's count item follows them), a read one GetItem, a page one
// query, an update one UpdateItem, a trigger a PutItem and an UpdateItem
// (and a read of one a GetItem), every tenant's schedules an index query
// and a BatchGetItem; a trigger expires by the table's TTL no earlier
// than its ExpiresAt.
func TestScheduleRoundTrips(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	sc := core.Schedule{ID: "sch_1", Tenant: "acme", Agent: "demo", Request: json.RawMessage(`{"agent":"demo"}`), Cron: "0 9 * * *", Timezone: "UTC",
		Overlap: core.OverlapSkip, Missed: core.MissedSkip, CreatedAt: time.Unix(100, 0), UpdatedAt: time.Unix(100, 0), Cursor: time.Unix(100, 0),
		LastRunID: "r-0"}
	trigger := core.Trigger{ScheduleID: "sch_1", FireTime: time.Unix(3600, 0), Outcome: core.TriggerSkipped,
		Reason: "paused: paused", RecordedAt: time.Unix(3601, 0), ExpiresAt: time.Unix(7200, 5)}
	steps := []struct {
		what, want string
		do         func() error
	}{
		{"a create", "map[TransactWriteItems:1]", func() error { return f.s.CreateSchedule(ctx, sc, 10) }},
		{"a read", "map[GetItem:1]", func() error {
			got, err := f.s.GetSchedule(ctx, "acme", "sch_1")
			if err == nil && got.LastRunID != sc.LastRunID {
				return fmt.Errorf("last run %q, want %q", got.LastRunID, sc.LastRunID)
			}
			return err
		}},
		{"a page", "map[Query:1]", func() error { _, _, err := f.s.ListSchedules(ctx, "acme", 10, ""); return err }},
		{"an update", "map[UpdateItem:1]", func() error {
			up := sc
			up.Version, up.Paused = 2, true
			return f.s.UpdateSchedule(ctx, up)
		}},
		{"a stale update", "map[UpdateItem:1]", func() error {
			// The stored version is 2: an update to 2 expects 1.
			up := sc
			up.Version = 2
			err := f.s.UpdateSchedule(ctx, up)
			if !errors.Is(err, core.ErrConflict) || !strings.Contains(err.Error(), "version 1 is not the stored one") {
				return fmt.Errorf("got %v, want a conflict naming version 1", err)
			}
			return nil
		}},
		{"a trigger", "map[PutItem:1 UpdateItem:1]", func() error {
			_, _, err := f.s.RecordTrigger(ctx, "acme", trigger)
			return err
		}},
		{"the same trigger again", "map[PutItem:1 UpdateItem:1]", func() error {
			again := trigger
			again.Outcome, again.Reason = core.TriggerStarted, ""
			got, stored, err := f.s.RecordTrigger(ctx, "acme", again)
			if err == nil && (stored || got.Outcome != core.TriggerSkipped) {
				return fmt.Errorf("recorded again: %+v, stored %v", got, stored)
			}
			return err
		}},
		{"a trigger expiring on a second", "map[PutItem:1 UpdateItem:1]", func() error {
			on := trigger
			on.FireTime, on.ExpiresAt = time.Unix(7200, 0), time.Unix(9000, 0)
			_, _, err := f.s.RecordTrigger(ctx, "acme", on)
			return err
		}},
		{"a trigger read", "map[GetItem:1]", func() error { _, err := f.s.Trigger(ctx, "sch_1", time.Unix(3600, 0)); return err }},
		{"a page of triggers", "map[Query:1]", func() error { _, _, err := f.s.Triggers(ctx, "sch_1", 10, ""); return err }},
		{"every tenant's", "map[BatchGetItem:1 Query:1]", func() error { _, _, err := f.s.AllSchedules(ctx, 10, ""); return err }},
	}
	c.take()
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		if got := fmt.Sprint(c.take()); got != st.want {
			t.Fatalf("%s sent %s, want %s", st.what, got, st.want)
		}
	}
	raw := func(pk, sk string) item {
		t.Helper()
		out, err := f.s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.s.table), Key: itemKey(pk, sk), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	if ttl, _, _ := getN(raw("SCHT#sch_1", core.TriggerKey(time.Unix(3600, 0))), attrTTL); ttl != 7201 {
		t.Fatalf("the trigger's ttl is %d, want 7201 (its ExpiresAt, rounded up)", ttl)
	}
	if ttl, _, _ := getN(raw("SCHT#sch_1", core.TriggerKey(time.Unix(7200, 0))), attrTTL); ttl != 9000 {
		t.Fatalf("the trigger's ttl is %d, want 9000 (its ExpiresAt, a whole second)", ttl)
	}
	if n, _, _ := getN(raw("SCHN#acme", skSchedCount), "n"); n != 1 {
		t.Fatalf("acme's count is %d after a create", n)
	}
	it := raw("SCH#acme", "sch_1")
	if pk, _ := getS(it, attrGSI1PK); pk != gsiSchedules {
		t.Fatalf("the schedule's index key is %q", pk)
	}
	c.take()
	if err := f.s.DeleteSchedule(ctx, "acme", "sch_1"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(c.take()); got != "map[TransactWriteItems:1]" {
		t.Fatalf("a delete sent %s", got)
	}
	if n, _, _ := getN(raw("SCHN#acme", skSchedCount), "n"); n != 0 {
		t.Fatalf("acme's count is %d after the delete", n)
	}
	if it := raw("SCHID#sch_1", skSchedID); it != nil {
		t.Fatalf("the id's owner outlived the schedule: %v", it)
	}
}

// TestRecordTriggerFinishesACrashedRecord: a trigger stored by a call
// that crashed before moving the schedule's cursor moves it when it is
// recorded again.
func TestRecordTriggerFinishesACrashedRecord(t *testing.T) {
	f, _ := newFixture(t)
	ctx := t.Context()
	sc := core.Schedule{ID: "sch_c", Tenant: "acme", Agent: "demo", Request: json.RawMessage(`{}`), Cron: "0 9 * * *", Timezone: "UTC",
		Overlap: core.OverlapSkip, Missed: core.MissedSkip, CreatedAt: time.Unix(100, 0), UpdatedAt: time.Unix(100, 0)}
	if err := f.s.CreateSchedule(ctx, sc, 0); err != nil {
		t.Fatal(err)
	}
	fire := time.Unix(3600, 0).UTC()
	first := core.Trigger{ScheduleID: "sch_c", FireTime: fire, Outcome: core.TriggerStarted, RunID: "r-crashed", RecordedAt: fire}
	d, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	it := itemKey(triggerPK("sch_c"), core.TriggerKey(fire))
	it["d"] = avB(d)
	if _, err := f.s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.s.table), Item: it}); err != nil {
		t.Fatal(err)
	}
	got, stored, err := f.s.RecordTrigger(ctx, "acme", core.Trigger{ScheduleID: "sch_c", FireTime: fire, Outcome: core.TriggerStarted, RunID: "r-retry", RecordedAt: fire.Add(time.Minute)})
	if err != nil || stored || got.RunID != "r-crashed" {
		t.Fatalf("record again: %+v %v %v", got, stored, err)
	}
	s, err := f.s.GetSchedule(ctx, "acme", "sch_c")
	if err != nil || !s.Cursor.Equal(fire) || s.LastRunID != "r-crashed" {
		t.Fatalf("the schedule: cursor %s, last run %q, %v", s.Cursor, s.LastRunID, err)
	}
}
