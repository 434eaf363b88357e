package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/baton-agents/baton/core"
)

// throttled answers BatchGetItem and BatchWriteItem as DynamoDB does
// under throttling: the first busy calls process nothing and hand every
// key or request back as unprocessed; later calls process all of them.
type throttled struct {
	dynamoAPI
	busy  int
	calls int
}

func (f *throttled) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	f.calls++
	if f.calls <= f.busy {
		return &dynamodb.BatchGetItemOutput{UnprocessedKeys: in.RequestItems}, nil
	}
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
	for table, ka := range in.RequestItems {
		out.Responses[table] = append(out.Responses[table], ka.Keys...)
	}
	return out, nil
}

func (f *throttled) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	f.calls++
	if f.calls <= f.busy {
		return &dynamodb.BatchWriteItemOutput{UnprocessedItems: in.RequestItems}, nil
	}
	return &dynamodb.BatchWriteItemOutput{}, nil
}

// TestBatchesRetryUnprocessed: a batch read or write asks again for what
// DynamoDB left unprocessed, nine calls in all, then gives up with a
// retryable error rather than loop or drop what it was given.
func TestBatchesRetryUnprocessed(t *testing.T) {
	keys := []item{itemKey("P#1", "a"), itemKey("P#2", "b"), itemKey("P#3", "c")}
	var writes []types.WriteRequest
	for _, k := range keys {
		writes = append(writes, types.WriteRequest{PutRequest: &types.PutRequest{Item: k}})
	}
	ops := map[string]func(s *Store) error{
		"get": func(s *Store) error {
			found, err := s.batchGet(t.Context(), keys)
			if err == nil && len(found) != len(keys) {
				return fmt.Errorf("found %d of %d keys", len(found), len(keys))
			}
			return err
		},
		"write": func(s *Store) error { return s.batchWrite(t.Context(), writes) },
	}
	cases := []struct {
		busy, calls int
		retryable   bool
	}{
		{busy: 0, calls: 1},
		{busy: 2, calls: 3},
		{busy: 8, calls: 9},
		{busy: 9, calls: 9, retryable: true},
		{busy: 100, calls: 9, retryable: true},
	}
	for name, op := range ops {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/busy %d", name, tc.busy), func(t *testing.T) {
				t.Parallel()
				db := &throttled{busy: tc.busy}
				err := op(&Store{db: db, table: "t"})
				if db.calls != tc.calls {
					t.Errorf("%d calls, want %d", db.calls, tc.calls)
				}
				switch {
				case tc.retryable && !core.IsRetryable(err):
					t.Fatalf("got %v, want a retryable error", err)
				case !tc.retryable && err != nil:
					t.Fatal(err)
				}
			})
		}
	}
}

// updates accepts every UpdateItem and counts them.
type updates struct {
	dynamoAPI
	calls int
}

func (f *updates) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.calls++
	return &dynamodb.UpdateItemOutput{}, nil
}

// TestNoteDeliveryBounds: a delivery note's step seq is one a step key
// holds, 0 to maxSeq; one outside is refused before anything is sent.
func TestNoteDeliveryBounds(t *testing.T) {
	for _, tc := range []struct {
		seq int64
		ok  bool
	}{{-1, false}, {0, true}, {1, true}, {maxSeq, true}, {maxSeq + 1, false}} {
		db := &updates{}
		err := (&Store{db: db, table: "t"}).NoteDelivery(t.Context(), "r-1", core.DeliveryNote{Step: core.Step{Kind: core.StepModelTurn, Seq: tc.seq}})
		if (err == nil) != tc.ok || db.calls != map[bool]int{true: 1}[tc.ok] {
			t.Errorf("seq %d: %v after %d updates, want ok %v", tc.seq, err, db.calls, tc.ok)
		}
	}
}

// refusing fails every conditional PutItem and UpdateItem as DynamoDB
// does when the item exists: with the item (held), or without it, the
// item then gone before GetItem reads it (vanished).
type refusing struct {
	dynamoAPI
	held                item
	puts, updates, gets int
}

func (f *refusing) refuse(n *int) error {
	if *n++; *n > 10 {
		return errors.New("refusing: too many attempts")
	}
	return &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed"), Item: f.held}
}

func (f *refusing) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, f.refuse(&f.puts)
}

func (f *refusing) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, f.refuse(&f.updates)
}

func (f *refusing) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.gets++
	return &dynamodb.GetItemOutput{Item: f.held}, nil
}

// TestConditionFailures: a refused claim or idempotency begin reads the
// item the refusal carries, with no read of its own; one whose item is
// gone by the time it is read tries again, three times for an
// idempotency key, then fails as retryable.
func TestConditionFailures(t *testing.T) {
	exp := time.Unix(1000, 0)
	idem := item{"hash": avS("h"), "done": avBool(false), "expires": avN(exp.UnixNano())}
	intent := item{"owner": avS("b"), "attempt": avN(2)}
	t.Run("idempotency key held", func(t *testing.T) {
		db := &refusing{held: idem}
		rec, err := (&Store{db: db, table: "t"}).BeginIdempotent(t.Context(), "s", "k", "h", time.Unix(0, 0), time.Hour)
		if err != nil || rec == nil || rec.Hash != "h" || rec.Done || db.puts != 1 || db.gets != 0 {
			t.Fatalf("got %+v, %v after %d puts and %d reads", rec, err, db.puts, db.gets)
		}
	})
	t.Run("idempotency key vanished", func(t *testing.T) {
		db := &refusing{}
		_, err := (&Store{db: db, table: "t"}).BeginIdempotent(t.Context(), "s", "k", "h", time.Unix(0, 0), time.Hour)
		if !core.IsRetryable(err) || !errors.Is(err, core.ErrConflict) || db.puts != 3 || db.gets != 3 {
			t.Fatalf("got %v after %d puts and %d reads, want a retryable conflict after 3 of each", err, db.puts, db.gets)
		}
	})
	// A new run refused by its session's head: the head the refusal
	// carries explains it, with no read; without one, a read does.
	held := item{"next_seq": avN(4), "active_run": avS("r-0")}
	for _, carried := range []item{held, nil} {
		t.Run(fmt.Sprintf("session lock held, head carried %v", carried != nil), func(t *testing.T) {
			db := &refusing{held: held}
			err := (&Store{db: db, table: "t"}).headRefusal(t.Context(), &writePlan{tenant: "acme", session: "s"}, core.SessionHead{Exists: true, NextSeq: 4}, carried)
			if reads := map[bool]int{true: 0, false: 1}[carried != nil]; !errors.Is(err, core.ErrLockHeld) || db.gets != reads {
				t.Fatalf("got %v after %d reads, want the lock held after %d", err, db.gets, reads)
			}
		})
	}
	t.Run("intent held", func(t *testing.T) {
		db := &refusing{held: intent}
		c, err := (&Store{db: db, table: "t"}).ClaimIntent(t.Context(), "r-1", "call_1", "a", time.Unix(0, 0), time.Minute)
		if err != nil || c.Claimed || !c.Previous || c.Attempt != 2 || db.updates != 1 || db.gets != 0 {
			t.Fatalf("got %+v, %v after %d updates and %d reads", c, err, db.updates, db.gets)
		}
	})
}

// TestTakeTokenWithoutRate: a limit without a rate takes no token and
// sends nothing.
func TestTakeTokenWithoutRate(t *testing.T) {
	for _, rate := range []float64{0, -1} {
		db := &updates{}
		wait, err := (&Store{db: db, table: "t"}).TakeToken(t.Context(), "k", time.Unix(100, 0), core.RateLimit{Rate: rate, Burst: 1})
		if wait != 0 || err != nil || db.calls != 0 {
			t.Errorf("rate %v: wait %s, %v after %d updates", rate, wait, err, db.calls)
		}
	}
}

// TestTakeTokenUnderContention: a bucket whose conditional write loses
// takeAttempts times answers as empty for one interval of the rate.
func TestTakeTokenUnderContention(t *testing.T) {
	now := time.Unix(100, 0)
	db := &refusing{held: item{"tat": avN(now.Add(-time.Hour).UnixNano())}}
	wait, err := (&Store{db: db, table: "t"}).TakeToken(t.Context(), "k", now, core.RateLimit{Rate: 4, Burst: 1})
	if wait != 250*time.Millisecond || err != nil || db.updates != takeAttempts {
		t.Fatalf("wait %s, %v after %d updates; want 250ms after %d", wait, err, db.updates, takeAttempts)
	}
}

// emptyPages answers every Query with a page whose entries the filter
// took out, and a key to go on from, as DynamoDB does for a filtered
// read of a long list; it records the inputs.
type emptyPages struct {
	dynamoAPI
	limits []int32
}

func (f *emptyPages) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.limits = append(f.limits, aws.ToInt32(in.Limit))
	if len(f.limits) > 20 {
		return nil, errors.New("emptyPages: too many pages")
	}
	k := fmt.Sprintf("2026-01-01T00:00:%02dZ#r-%d", 60-len(f.limits), len(f.limits))
	return &dynamodb.QueryOutput{LastEvaluatedKey: item{attrGSI2PK: avS("L#t"), attrGSI2SK: avS(k), attrPK: avS("R#x"), attrSK: avS("S")}}, nil
}

// TestListRunsPages: a list reads one entry past its page in a query; a
// list that keeps only some runs reads 1000 entries a query, and at most
// listPagesMax queries a call, then hands back a cursor to go on from.
func TestListRunsPages(t *testing.T) {
	cases := []struct {
		name  string
		q     core.RunListQuery
		limit int32
	}{
		{"every run", core.RunListQuery{Limit: 5}, 6},
		{"a status", core.RunListQuery{Limit: 5, Status: core.StatusQueued}, 1000},
		{"an agent", core.RunListQuery{Limit: 5, Agent: "demo"}, 1000},
		{"top level", core.RunListQuery{Limit: 5, TopLevel: true}, 1000},
		{"a parent's", core.RunListQuery{Limit: 5, Parent: "r-1"}, 1000},
		{"a run's forks", core.RunListQuery{Limit: 5, ForkedFrom: "r-1"}, 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := &emptyPages{}
			page, err := (&Store{db: db, table: "t"}).ListRuns(t.Context(), "t", tc.q)
			if err != nil || len(page.Runs) != 0 || page.Next == "" {
				t.Fatalf("page %+v, %v; want none and a cursor", page, err)
			}
			if len(db.limits) != listPagesMax {
				t.Fatalf("%d queries, want %d", len(db.limits), listPagesMax)
			}
			for _, l := range db.limits {
				if l != tc.limit {
					t.Fatalf("queries of %v entries, want %d", db.limits, tc.limit)
				}
			}
		})
	}
}

// conflicting fails its first fail transactions as cancelled by a
// concurrent write, then takes them.
type conflicting struct {
	dynamoAPI
	fail, calls int
}

func (f *conflicting) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if f.calls++; f.calls <= f.fail {
		return nil, &types.TransactionConflictException{Message: aws.String("Transaction is ongoing for the item")}
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

// TestTransactRetriesConflicts: a transaction cancelled by a concurrent
// write is sent again, up to nine sends in all; then its error, which is
// retryable, is returned.
func TestTransactRetriesConflicts(t *testing.T) {
	for _, tc := range []struct {
		fail, calls int
		ok          bool
	}{{2, 3, true}, {8, 9, true}, {100, 9, false}} {
		db := &conflicting{fail: tc.fail}
		err := (&Store{db: db, table: "t"}).transact(t.Context(), nil)
		if (err == nil) != tc.ok || db.calls != tc.calls || (err != nil && !core.IsRetryable(err)) {
			t.Errorf("%d conflicts: %v after %d sends, want ok %v after %d", tc.fail, err, db.calls, tc.ok, tc.calls)
		}
	}
}

// limits records each Query's Limit (nil: -1) and answers with no items.
type limits struct {
	dynamoAPI
	got []int32
}

func (f *limits) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if in.Limit == nil {
		f.got = append(f.got, -1)
	} else {
		f.got = append(f.got, *in.Limit)
	}
	return &dynamodb.QueryOutput{}, nil
}

// TestQueryLimit: a read with a limit sizes its pages to it (at most
// 1,000 items, DynamoDB's floor of 1 kept), one without sends no Limit.
func TestQueryLimit(t *testing.T) {
	db := &limits{}
	s := &Store{db: db, table: "t"}
	for _, limit := range []int{0, 1, 5, 1000, 5000} {
		if err := s.query(t.Context(), &dynamodb.QueryInput{}, limit, func(item) (bool, error) { return false, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int32{-1, 1, 5, 1000, 1000}; !slices.Equal(db.got, want) {
		t.Fatalf("limits %v, want %v", db.got, want)
	}
}
