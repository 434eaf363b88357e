//go:build integration

package dynamostore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/storetest"
)

// client returns a client of the DynamoDB endpoint named by
// BATON_TEST_DYNAMODB_ENDPOINT, or skips the test.
func client(t *testing.T) *dynamodb.Client {
	endpoint := os.Getenv("BATON_TEST_DYNAMODB_ENDPOINT")
	if endpoint == "" {
		t.Skip("BATON_TEST_DYNAMODB_ENDPOINT is not set (scripts/emulators.sh start prints it)")
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

var tables atomic.Int64

// newTable creates a uniquely named table and drops it when t ends.
func newTable(t *testing.T, db *dynamodb.Client) string {
	t.Helper()
	name := fmt.Sprintf("baton-test-%d-%d-%d", os.Getpid(), time.Now().UnixNano()%1e9, tables.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := CreateTable(ctx, db, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			t.Errorf("delete table %s: %v", name, err)
		}
	})
	return name
}

func TestContract(t *testing.T) {
	db := client(t)
	storetest.RunContract(t, func(t *testing.T) storetest.Store {
		return New(db, newTable(t, db))
	})
}

func TestCreateTableIsIdempotent(t *testing.T) {
	db := client(t)
	name := newTable(t, db)
	if err := CreateTable(t.Context(), db, name); err != nil {
		t.Fatalf("second CreateTable: %v", err)
	}
}

// counting counts the requests a store sends.
type counting struct {
	dynamoAPI
	mu    sync.Mutex
	calls map[string]int
	items int // returned by queries
}

func (c *counting) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[op]++
}

func (c *counting) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

func (c *counting) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.count("GetItem")
	return c.dynamoAPI.GetItem(ctx, in, opts...)
}

func (c *counting) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.count("UpdateItem")
	return c.dynamoAPI.UpdateItem(ctx, in, opts...)
}

func (c *counting) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.count("Query")
	out, err := c.dynamoAPI.Query(ctx, in, opts...)
	if err == nil {
		c.mu.Lock()
		c.items += len(out.Items)
		c.mu.Unlock()
	}
	return out, err
}

// takeItems returns the items queries returned since the last call.
func (c *counting) takeItems() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.items
	c.items = 0
	return n
}

func (c *counting) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.count("BatchWriteItem")
	return c.dynamoAPI.BatchWriteItem(ctx, in, opts...)
}

func (c *counting) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	c.count("DeleteItem")
	return c.dynamoAPI.DeleteItem(ctx, in, opts...)
}

func (c *counting) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.count("TransactWriteItems")
	return c.dynamoAPI.TransactWriteItems(ctx, in, opts...)
}

// fixture starts runs with the real machine.
type fixture struct {
	t     *testing.T
	s     *Store
	m     *core.Machine
	clock *core.FixedClock
}

func newFixture(t *testing.T) (*fixture, *counting) {
	db := client(t)
	c := &counting{dynamoAPI: db, calls: map[string]int{}}
	s := New(db, newTable(t, db))
	s.db = c
	clock := &core.FixedClock{T: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	return &fixture{t: t, s: s, m: core.NewMachine(clock), clock: clock}, c
}

func (f *fixture) write(prev core.RunState, out core.Output) core.Write {
	w := core.Write{Tenant: "tenant-a", PrevVersion: prev.Version, Output: out, Pending: core.PendingItems(prev, out.State)}
	if due, ok := out.State.DueAt(core.Stall{After: time.Minute}); ok {
		w.DueAt = &due
	}
	return w
}

// start creates a run whose model turns all answer text.
func (f *fixture) start(runID, session string, msgs ...string) core.Output {
	f.t.Helper()
	in := core.StartInput{RunID: runID, SessionID: session, FirstSeq: 1,
		Config: core.RunConfig{Model: core.ModelSpec{Provider: core.ProviderScripted}}}
	for _, m := range msgs {
		in.Messages = append(in.Messages, core.Message{Role: core.RoleUser, Content: m})
	}
	out, err := f.m.Start(f.t.Context(), in)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.s.CreateRun(f.t.Context(), core.SessionHead{NextSeq: 1}, f.write(core.RunState{}, out)); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// reply is the transition of the run's pending model turn answering
// content, computed from prev.
func (f *fixture) reply(prev core.RunState, transcript []core.Message, content string) core.Output {
	f.t.Helper()
	step := prev.ScheduledSteps()[0]
	out, err := f.m.Apply(f.t.Context(), prev, transcript, core.ModelReplied{Step: step, Reply: core.ModelReply{Content: content}})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// twoSteps creates run r-1 and commits its model's reply: a run of two
// step records.
func (f *fixture) twoSteps() (first, second core.Output) {
	f.t.Helper()
	first = f.start("r-1", "s-1", "Hi")
	second = f.reply(first.State, first.Messages, "Hello.")
	if err := f.s.Commit(f.t.Context(), f.write(first.State, second)); err != nil {
		f.t.Fatal(err)
	}
	return first, second
}

// TestRoundTrips pins the requests of the hot path: a new run and a
// commit are one transaction each, a load is one query.
func TestRoundTrips(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	c.take()
	first := f.start("r-1", "s-1", "Hi")
	if got := c.take(); fmt.Sprint(got) != "map[TransactWriteItems:1]" {
		t.Fatalf("CreateRun sent %v", got)
	}
	rec, err := f.s.LoadRun(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.take(); fmt.Sprint(got) != "map[Query:1]" {
		t.Fatalf("LoadRun sent %v", got)
	}
	msgs, err := f.s.Messages(ctx, "tenant-a", "s-1", 0, rec.State.NextMsgSeq, 0)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("messages: %d, %v", len(msgs), err)
	}
	if got := c.take(); fmt.Sprint(got) != "map[Query:1]" {
		t.Fatalf("Messages sent %v", got)
	}
	out := f.reply(rec.State, first.Messages, "Hello.")
	if err := f.s.Commit(ctx, f.write(rec.State, out)); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); fmt.Sprint(got) != "map[TransactWriteItems:1]" {
		t.Fatalf("Commit sent %v", got)
	}

	// A write larger than one transaction claims the run, writes its
	// records in transactions and commits in a last one. (A commit's
	// events are one record however many there are; its messages are
	// one each.)
	second := f.start("r-2", "s-2", "Hi")
	c.take()
	big := second
	big.Messages, big.Events = nil, nil
	for i := 0; i < 150; i++ {
		big.Messages = append(big.Messages, core.Message{Seq: big.State.NextMsgSeq, Role: core.RoleUser, Content: "more"})
		big.State.NextMsgSeq++
	}
	big.State.Version++
	if err := f.s.Commit(ctx, f.write(second.State, big)); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); fmt.Sprint(got) != "map[TransactWriteItems:3 UpdateItem:1]" {
		t.Fatalf("large Commit sent %v", got)
	}
}

// TestLeftoversAreNeverShown writes the records a crashed large writer
// leaves beyond the committed counters, then commits over them.
func TestLeftoversAreNeverShown(t *testing.T) {
	f, _ := newFixture(t)
	ctx := t.Context()
	first := f.start("r-1", "s-1", "Hi")
	st := first.State
	long := []byte(`{"role":"assistant","content":"` + strings.Repeat("x", 2*chunkBytes) + `"}`)
	orphans, err := partItems(sessionPK("tenant-a", "s-1"), prefixMsg, st.NextMsgSeq, long, "crashed")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := partItems(runPK("r-1"), prefixEvt, st.NextEventSeq+3, []byte(`{"seq":0,"type":"status","turn":0,"at":"2026-03-02T09:00:00Z"}`), "crashed")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.batchPut(ctx, append(orphans, evs...)); err != nil {
		t.Fatal(err)
	}
	check := func(wantMsgs []core.Message, wantEvents int) {
		t.Helper()
		msgs, err := f.s.Messages(ctx, "tenant-a", "s-1", 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != len(wantMsgs) {
			t.Fatalf("got %d messages, want %d", len(msgs), len(wantMsgs))
		}
		for i := range msgs {
			if msgs[i].Seq != wantMsgs[i].Seq || msgs[i].Content != wantMsgs[i].Content {
				t.Fatalf("message %d: got seq %d %.40q, want seq %d %.40q", i, msgs[i].Seq, msgs[i].Content, wantMsgs[i].Seq, wantMsgs[i].Content)
			}
		}
		events, err := f.s.Events(ctx, "r-1", 0, 0, 0)
		if err != nil || len(events) != wantEvents {
			t.Fatalf("got %d events (%v), want %d", len(events), err, wantEvents)
		}
	}
	check(first.Messages, len(first.Events))
	out := f.reply(st, first.Messages, "Short answer.")
	if err := f.s.Commit(ctx, f.write(st, out)); err != nil {
		t.Fatal(err)
	}
	check(append(first.Messages, out.Messages...), len(first.Events)+len(out.Events))
}

// TestLargeWriteClaim checks that a large writer's live claim turns a
// second large writer away (retryably) and that an expired one does not.
func TestLargeWriteClaim(t *testing.T) {
	f, _ := newFixture(t)
	ctx := t.Context()
	first := f.start("r-1", "s-1", "Hi")
	st := first.State
	e := newExpr()
	now := time.Now()
	_, err := f.s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(f.s.table), Key: itemKey(runPK("r-1"), skState),
		UpdateExpression:         aws.String(fmt.Sprintf("SET %s = %s, %s = %s", e.n("claim"), e.v(avS("stalled")), e.n("claim_exp"), e.v(avN(now.Add(time.Minute).UnixNano())))),
		ExpressionAttributeNames: e.namesOrNil(), ExpressionAttributeValues: e.valuesOrNil(),
	})
	if err != nil {
		t.Fatal(err)
	}
	big := f.reply(st, first.Messages, strings.Repeat("y", 100))
	for i := 0; i < 120; i++ { // one item each: a write larger than one transaction
		big.Messages = append(big.Messages, core.Message{Seq: big.State.NextMsgSeq, Role: core.RoleUser, Content: "more"})
		big.State.NextMsgSeq++
	}
	f.s.now = func() time.Time { return now }
	err = f.s.Commit(ctx, f.write(st, big))
	if !errors.Is(err, core.ErrConflict) || !core.IsRetryable(err) {
		t.Fatalf("commit beside a live claim: got %v, want a retryable conflict", err)
	}
	f.s.now = func() time.Time { return now.Add(time.Minute) }
	if err := f.s.Commit(ctx, f.write(st, big)); err != nil {
		t.Fatalf("commit after the claim expired: %v", err)
	}
	rec, err := f.s.LoadRun(ctx, "r-1")
	if err != nil || rec.State.Version != big.State.Version {
		t.Fatalf("load: version %d, %v", rec.State.Version, err)
	}
	events, err := f.s.Events(ctx, "r-1", 0, 0, 0)
	if err != nil || int64(len(events)) != big.State.NextEventSeq-1 {
		t.Fatalf("got %d events, %v", len(events), err)
	}
}

// TestExpiringItemsCarryTTL checks the ttl attribute of idempotency
// records and intents (the table's TTL only cleans up; reads check
// expiry themselves).
func TestExpiringItemsCarryTTL(t *testing.T) {
	f, _ := newFixture(t)
	ctx := t.Context()
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	if _, err := f.s.BeginIdempotent(ctx, "scope", "k", "h", now, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.ClaimIntent(ctx, "r-1", "call_1", "a", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	// A finished record with a body of more than one item: the record
	// and its body's parts expire with it.
	doneExp := now.Add(2 * time.Hour)
	if _, err := f.s.BeginIdempotent(ctx, "scope", "big", "h", now, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := f.s.FinishIdempotent(ctx, "scope", "big", core.IdempotencyRecord{Hash: "h", StatusCode: 200, Body: bytes.Repeat([]byte("b"), chunkBytes+1), ExpiresAt: doneExp}); err != nil {
		t.Fatal(err)
	}
	parts, err := f.s.db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(f.s.table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :body)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": avS(idemPK("scope", "big")), ":body": avS(prefixIBody)}})
	if err != nil || len(parts.Items) == 0 {
		t.Fatalf("the body's parts: %d, %v", len(parts.Items), err)
	}
	for _, it := range parts.Items {
		if ttl, ok, _ := getN(it, attrTTL); !ok || ttl < doneExp.Unix() {
			t.Fatalf("a body part's ttl is %d, want at least %d", ttl, doneExp.Unix())
		}
	}
	if wait, err := f.s.TakeToken(ctx, "tenant-a", now, core.RateLimit{Rate: 1, Burst: 1}); err != nil || wait != 0 {
		t.Fatalf("take a token: %s, %v", wait, err)
	}
	deltasExp := now.Add(10 * time.Minute)
	if err := f.s.PutDeltas(ctx, core.DeltaBatch{RunID: "r-1", Pos: core.DeltaPos{Turn: 1}, ExpiresAt: deltasExp, Deltas: []core.TokenDelta{{Kind: core.DeltaToken, Text: "x"}}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		key  item
		min  int64
	}{
		{"idempotency record", itemKey(idemPK("scope", "k"), skIdem), now.Add(time.Hour).Unix()},
		{"intent", itemKey(runPK("r-1"), prefixInt+"call_1"), now.Add(time.Minute + intentRetention).Unix()},
		{"deltas", itemKey(runPK("r-1"), deltaSK(core.DeltaPos{Turn: 1})), deltasExp.Unix()},
		{"finished idempotency record", itemKey(idemPK("scope", "big"), skIdem), doneExp.Unix()},
		{"rate limit bucket", itemKey(bucketPK("tenant-a"), skBucket), now.Add(time.Second).Unix()},
	}
	for _, tc := range cases {
		out, err := f.s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.s.table), Key: tc.key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		ttl, ok, err := getN(out.Item, attrTTL)
		if err != nil || !ok || ttl < tc.min {
			t.Fatalf("%s: ttl %d (present %v, %v), want at least %d", tc.name, ttl, ok, err, tc.min)
		}
	}
}

// TestConfigChange commits a state whose configuration differs from the
// stored one: the commit writes the configuration item too.
func TestConfigChange(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	first := f.start("r-1", "s-1", "Hi")
	out := f.reply(first.State, first.Messages, "Hello.")
	out.State.Config.System = "A new system prompt."
	c.take()
	if err := f.s.Commit(ctx, f.write(first.State, out)); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); fmt.Sprint(got) != "map[GetItem:1 TransactWriteItems:2]" {
		t.Fatalf("Commit of a new configuration sent %v", got)
	}
	rec, err := f.s.LoadRun(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := core.MarshalState(out.State)
	got, _ := core.MarshalState(rec.State)
	if string(got) != string(want) {
		t.Fatalf("state after a configuration change:\n got %s\nwant %s", got, want)
	}
}

// TestHeadWrittenOnlyByTheFinishingCommit checks that the commits of an
// unfinished run leave the session head item alone, that SessionHead
// and Messages still see the run's committed messages, and that the
// commit that finishes the run advances the head and releases it.
func TestHeadWrittenOnlyByTheFinishingCommit(t *testing.T) {
	f, _ := newFixture(t)
	ctx := t.Context()
	first := f.start("r-1", "s-1", "Hi")
	rawHead := func() core.SessionHead {
		t.Helper()
		h, _, err := f.s.readHead(ctx, "tenant-a", "s-1")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	created := rawHead()
	// Only a fork's session has a transcript base.
	if _, it, err := f.s.readHead(ctx, "tenant-a", "s-1"); err != nil || it[attrBase] != nil {
		t.Fatalf("a new session's head: base %v, %v; want none", it[attrBase], err)
	}
	steer, err := f.m.Apply(ctx, first.State, first.Messages, core.Steer{Content: "Also this."})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.T = f.clock.T.Add(time.Second)
	if err := f.s.Commit(ctx, f.write(first.State, steer)); err != nil {
		t.Fatal(err)
	}
	out := f.reply(steer.State, append(first.Messages, steer.Messages...), "Hello.")
	open := out
	open.State.Status = core.StatusRunning // the same transition, unfinished
	if err := f.s.Commit(ctx, f.write(steer.State, open)); err != nil {
		t.Fatal(err)
	}
	if got := rawHead(); !reflect.DeepEqual(got, created) {
		t.Fatalf("an unfinished run's commits wrote the head: %+v, was %+v", got, created)
	}
	head, err := f.s.SessionHead(ctx, "tenant-a", "s-1")
	if want := (core.SessionHead{Exists: true, NextSeq: open.State.NextMsgSeq, ActiveRun: "r-1"}); err != nil || !reflect.DeepEqual(head, want) {
		t.Fatalf("SessionHead = %+v, %v; want %+v", head, err, want)
	}
	msgs, err := f.s.Messages(ctx, "tenant-a", "s-1", 0, 0, 0)
	if err != nil || int64(len(msgs)) != open.State.NextMsgSeq-1 {
		t.Fatalf("Messages up to the head: %d messages, %v; want %d", len(msgs), err, open.State.NextMsgSeq-1)
	}
	done := out
	done.State.Version = open.State.Version + 1
	if err := f.s.Commit(ctx, f.write(open.State, done)); err != nil {
		t.Fatal(err)
	}
	if got, want := rawHead(), (core.SessionHead{Exists: true, NextSeq: done.State.NextMsgSeq}); !reflect.DeepEqual(got, want) {
		t.Fatalf("the finishing commit left the head at %+v, want %+v", got, want)
	}
}

// TestEventsPageWithinAStep pages a run whose commit stored many events
// in one step record, from every position: a page may start and end
// inside a step.
func TestEventsPageWithinAStep(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	first := f.start("r-1", "s-1", "Hi")
	out := f.reply(first.State, first.Messages, "Hello.")
	for i := 0; i < 6; i++ {
		out.Events = append(out.Events, core.Event{Seq: out.State.NextEventSeq, Type: core.EventStatus, At: out.State.UpdatedAt})
		out.State.NextEventSeq++
	}
	if err := f.s.Commit(ctx, f.write(first.State, out)); err != nil {
		t.Fatal(err)
	}
	total := int(out.State.NextEventSeq - 1)
	for after := 0; after <= total; after++ {
		for _, limit := range []int{0, 1, 3} {
			got, err := f.s.Events(ctx, "r-1", int64(after), 0, limit)
			if err != nil {
				t.Fatal(err)
			}
			want := total - after
			if limit > 0 {
				want = min(want, limit)
			}
			if len(got) != want {
				t.Fatalf("after %d limit %d: %d events, want %d", after, limit, len(got), want)
			}
			for i, e := range got {
				if e.Seq != int64(after+1+i) {
					t.Fatalf("after %d limit %d: event %d has seq %d", after, limit, i, e.Seq)
				}
			}
		}
	}
	c.take()
	if _, err := f.s.Events(ctx, "r-1", int64(len(first.Events)), 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); fmt.Sprint(got) != "map[GetItem:1 Query:1]" {
		t.Fatalf("a page from a step's start sent %v, want the counters and one query", got)
	}
}

// TestEventsReadNoRecordPastBefore: a read of a run's events below a
// bound reads the step records that start below it and no other (not
// the record that starts at the bound), and an empty range reads
// nothing.
func TestEventsReadNoRecordPastBefore(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	first, second := f.twoSteps()
	before := second.Events[0].Seq // the second step record's first event
	c.take()
	c.takeItems()
	evs, err := f.s.Events(ctx, "r-1", 0, before, 0)
	if err != nil || len(evs) != len(first.Events) || evs[len(evs)-1].Seq != before-1 {
		t.Fatalf("events below %d: %d, %v; want the first step's %d", before, len(evs), err, len(first.Events))
	}
	if n := c.takeItems(); n != 1 {
		t.Errorf("events below %d read %d items, want the first step record's one", before, n)
	}
	c.take()
	if err := f.s.stepRecords(ctx, "r-1", before, before, func(stepRecord) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if got := c.take(); len(got) != 0 {
		t.Errorf("an empty range sent %v", got)
	}
	if evs, err := f.s.Events(ctx, "r-1", before-1, before, 0); err != nil || len(evs) != 0 {
		t.Fatalf("events between %d and %d: %v %v", before-1, before, evs, err)
	}
	if got := c.take(); len(got) != 0 {
		t.Errorf("events of an empty range sent %v", got)
	}
	// A step record whose parts run out at the end of the read (damage)
	// is an error, not fewer events.
	parts, err := partItems(runPK("r-1"), prefixEvt, before, make([]byte, chunkBytes+1), "damaged")
	if err != nil || len(parts) != 2 {
		t.Fatalf("parts %d %v", len(parts), err)
	}
	if err := f.s.batchPut(ctx, parts[:1]); err != nil {
		t.Fatal(err)
	}
	if evs, err := f.s.Events(ctx, "r-1", 0, 0, 0); err == nil {
		t.Fatalf("a record missing its last part read as %d events", len(evs))
	}
}

// TestLoadRunOfATornRunGivesUp: a run whose configuration item does not
// match its state (a transaction half seen) is read again, five reads
// in all, then a retryable error.
func TestLoadRunOfATornRunGivesUp(t *testing.T) {
	f, c := newFixture(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	f.start("r-1", "s-1", "Hi")
	if _, err := f.s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.s.table), Key: itemKey(runPK("r-1"), skConfig)}); err != nil {
		t.Fatal(err)
	}
	c.take()
	_, err := f.s.LoadRun(ctx, "r-1")
	if err == nil || !core.IsRetryable(err) || !strings.Contains(err.Error(), "configuration does not match") {
		t.Fatalf("LoadRun of a torn run: %v, want a retryable mismatch", err)
	}
	if got := c.take(); got["Query"] != 5 {
		t.Fatalf("LoadRun of a torn run sent %v, want five queries", got)
	}
}

// TestCreateRunInOneTransactionUpToItsLimits: a new run whose items are
// exactly the most one transaction holds, in count or in bytes, is one
// transaction; one item more goes the large way and is stored too.
func TestCreateRunInOneTransactionUpToItsLimits(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	// planned returns the write of a new run of the given user messages,
	// its transaction's item count and its counted bytes.
	planned := func(runID string, contents []string) (core.Write, int, int) {
		t.Helper()
		in := core.StartInput{RunID: runID, SessionID: "s-" + runID, FirstSeq: 1, Config: core.RunConfig{Model: core.ModelSpec{Provider: core.ProviderScripted}}}
		for _, m := range contents {
			in.Messages = append(in.Messages, core.Message{Role: core.RoleUser, Content: m})
		}
		out, err := f.m.Start(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		w := f.write(core.RunState{}, out)
		p, err := f.s.plan(w)
		if err != nil {
			t.Fatal(err)
		}
		fixed := append([]item{p.run, p.cfg}, p.pending...)
		return w, len(fixed) + 1 + len(p.records), sizeOf(fixed) + sizeOf(p.records) + 1024
	}
	checkOneTransactionLimits(t, c, planned, func(w core.Write) error { return f.s.CreateRun(ctx, core.SessionHead{NextSeq: 1}, w) })
}

// checkOneTransactionLimits sends (with send) writes that planned makes
// of user messages: exactly txMaxItems items, and exactly txMaxBytes
// counted bytes, must be one transaction; one item more, or a few bytes
// more, must not. planned returns the write, its item count and its
// counted bytes; run ids of one length keep the bytes comparable.
func checkOneTransactionLimits(t *testing.T, c *counting, planned func(runID string, contents []string) (core.Write, int, int), send func(core.Write) error) {
	t.Helper()
	sent := func(w core.Write) string {
		t.Helper()
		c.take()
		if err := send(w); err != nil {
			t.Fatalf("write of %s: %v", w.Output.State.RunID, err)
		}
		return fmt.Sprint(c.take())
	}
	const one = "map[TransactWriteItems:1]"
	// In count: as many short messages as make txMaxItems items.
	_, n, _ := planned("r-probe", []string{"more"})
	msgs := slices.Repeat([]string{"more"}, 1+txMaxItems-n)
	if w, n, _ := planned("r-count", msgs); n != txMaxItems {
		t.Fatalf("%d items, want %d", n, txMaxItems)
	} else if got := sent(w); got != one {
		t.Errorf("a write of exactly %d items sent %s, want %s", txMaxItems, got, one)
	}
	if w, _, _ := planned("r-count-1", append(msgs, "more")); sent(w) == one {
		t.Errorf("a write of %d items was one transaction", txMaxItems+1)
	}
	// In bytes: ten large messages, the last sized to reach txMaxBytes.
	big := slices.Repeat([]string{strings.Repeat("x", 300_000)}, 10)
	for i := range 5 { // the item's size follows its content's, with some slack
		_, _, size := planned(fmt.Sprintf("r-b%d", i), big)
		big[9] = strings.Repeat("x", len(big[9])+txMaxBytes-size)
	}
	if w, _, size := planned("r-b5", big); size != txMaxBytes {
		t.Fatalf("%d bytes, want %d", size, txMaxBytes)
	} else if got := sent(w); got != one {
		t.Errorf("a write of exactly %d bytes sent %s, want %s", txMaxBytes, got, one)
	}
	w, _, size := planned("r-b6", big)
	for i := 0; i < 16 && size <= txMaxBytes; i++ { // a character more, until the bytes are over
		big[9] += "x"
		w, _, size = planned("r-c"+string(rune('a'+i)), big)
	}
	if size <= txMaxBytes || size > txMaxBytes+16 {
		t.Fatalf("%d bytes, want a few over %d", size, txMaxBytes)
	} else if sent(w) == one {
		t.Errorf("a write of %d bytes was one transaction", size)
	}
}

// TestCreateRunOverAnotherWritersClaim: a run id another writer claimed
// and has not committed yet is a retryable conflict; a committed one is
// not retryable.
func TestCreateRunOverAnotherWritersClaim(t *testing.T) {
	f, _ := newFixture(t)
	ctx := t.Context()
	if _, err := f.s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(f.s.table), Item: itemKey(runPK("r-1"), skState)}); err != nil {
		t.Fatal(err)
	}
	f.start("r-2", "s-2", "Hi")
	for run, retryable := range map[string]bool{"r-1": true, "r-2": false} {
		out, err := f.m.Start(ctx, core.StartInput{RunID: run, SessionID: "s-new-" + run, FirstSeq: 1,
			Config: core.RunConfig{Model: core.ModelSpec{Provider: core.ProviderScripted}}, Messages: []core.Message{{Role: core.RoleUser, Content: "Hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		err = f.s.CreateRun(ctx, core.SessionHead{NextSeq: 1}, f.write(core.RunState{}, out))
		if !errors.Is(err, core.ErrConflict) || core.IsRetryable(err) != retryable {
			t.Errorf("%s: %v, want a conflict, retryable %v", run, err, retryable)
		}
	}
}

// TestCommitInOneTransactionUpToItsLimits: a commit whose items are
// exactly the most one transaction holds, in count or in bytes, is one
// transaction; one item more goes the large way and is stored too.
func TestCommitInOneTransactionUpToItsLimits(t *testing.T) {
	f, c := newFixture(t)
	ctx := t.Context()
	// planned returns a commit of the given messages on a new run, its
	// transaction's item count and its counted bytes.
	planned := func(runID string, contents []string) (core.Write, int, int) {
		t.Helper()
		first := f.start(runID, "s-"+runID, "Hi")
		out := first
		out.Messages, out.Events = nil, nil
		for _, m := range contents {
			out.Messages = append(out.Messages, core.Message{Seq: out.State.NextMsgSeq, Role: core.RoleUser, Content: m})
			out.State.NextMsgSeq++
		}
		out.State.Version++
		w := f.write(first.State, out)
		p, err := f.s.plan(w)
		if err != nil {
			t.Fatal(err)
		}
		fixed := append([]item{p.run}, p.pending...)
		return w, len(fixed) + 1 + len(p.records), sizeOf(fixed) + sizeOf(p.records) + 1024
	}
	checkOneTransactionLimits(t, c, planned, func(w core.Write) error { return f.s.Commit(ctx, w) })
}

// TestToolRecordsSkipALeftoverAtTheLastEvent: a losing writer's step
// record that starts at the last event of the record before it is a
// leftover, and its tool results are not the run's.
func TestToolRecordsSkipALeftoverAtTheLastEvent(t *testing.T) {
	f, _ := newFixture(t)
	ctx := t.Context()
	_, second := f.twoSteps()
	last := second.Events[len(second.Events)-1]
	if last.Seq == second.Events[0].Seq {
		t.Fatalf("the step record holds one event (%d): no leftover can start at its last", last.Seq)
	}
	b, err := encodeStep(stepRecord{Events: []core.Event{last}, Results: []seqResult{{Seq: 1, Result: core.ToolExecutionResult{ToolCallID: "c-lost"}}}})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := partItems(runPK("r-1"), prefixEvt, last.Seq, b, "loser")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.batchPut(ctx, parts); err != nil {
		t.Fatal(err)
	}
	results, _, err := f.s.ToolRecords(ctx, "r-1", 0)
	if err != nil || len(results) != 0 {
		t.Fatalf("tool records %+v, %v; want none (the leftover's are not the run's)", results, err)
	}
}
