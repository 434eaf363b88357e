package dynamostore

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/baton-agents/baton/core"
)

func TestSessionKeysAreUnambiguous(t *testing.T) {
	pairs := [][2]string{
		{"t#1", "x"}, {"t", "1#x"}, {"t%231", "x"}, {"t", "1x"}, {"t1", "x"}, {"", "t#1#x"}, {"t#1#x", ""},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := sessionPK(p[0], p[1])
		if prev, dup := seen[k]; dup {
			t.Fatalf("tenant %q session %q and tenant %q session %q share key %q", prev[0], prev[1], p[0], p[1], k)
		}
		seen[k] = p
	}
}

func TestPartsRoundTrip(t *testing.T) {
	random := make([]byte, 3*chunkBytes+17)
	_, _ = rand.Read(random)
	cases := []struct {
		name  string
		data  []byte
		parts int
	}{
		{"small", []byte(`{"role":"user"}`), 1},
		{"exactly one chunk", bytes.Repeat([]byte("a"), chunkBytes), 1},
		{"one byte over", bytes.Repeat([]byte("a"), chunkBytes+1), 2},
		{"random", random, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items, err := partItems("SES#t#s", prefixMsg, 42, tc.data, "w1")
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != tc.parts {
				t.Fatalf("got %d parts, want %d", len(items), tc.parts)
			}
			for _, it := range items {
				if itemSize(it) > 400*1024 {
					t.Fatalf("part of %d bytes exceeds DynamoDB's item limit", itemSize(it))
				}
			}
			var a assembler
			var got []record
			for _, it := range items {
				r, err := a.add(it)
				if err != nil {
					t.Fatal(err)
				}
				if r != nil {
					got = append(got, *r)
				}
			}
			if err := a.finish(); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].seq != 42 || got[0].prefix != prefixMsg || !bytes.Equal(got[0].data, tc.data) {
				t.Fatalf("reassembled %d records", len(got))
			}
		})
	}
}

func TestPartItemsRejectsBadSeqs(t *testing.T) {
	for _, seq := range []int64{0, -1, maxSeq + 1} {
		if _, err := partItems("P", prefixEvt, seq, []byte("{}"), "w"); err == nil {
			t.Fatalf("seq %d accepted", seq)
		}
	}
	for _, seq := range []int64{1, maxSeq} {
		if _, err := partItems("P", prefixEvt, seq, []byte("{}"), "w"); err != nil {
			t.Fatalf("seq %d refused: %v", seq, err)
		}
	}
}

// TestAssembler covers what readers meet in the table: leftovers of a
// longer uncommitted record at the same key, and damage.
func TestAssembler(t *testing.T) {
	parts := func(seq int64, data, writer string, n int) []item {
		items, err := partItems("P", prefixEvt, seq, []byte(data), writer)
		if err != nil {
			t.Fatal(err)
		}
		if n < len(items) {
			items = items[:n]
		}
		return items
	}
	long := strings.Repeat("x", 2*chunkBytes+1) // three parts
	leftover := parts(2, long, "old", 3)
	cases := []struct {
		name    string
		items   []item
		want    []string
		wantErr string
	}{
		{"in order", append(parts(1, "a", "w", 9), parts(2, "b", "w", 9)...), []string{"a", "b"}, ""},
		{"leftover parts skipped", append(append(parts(1, "a", "w", 9), parts(2, "b", "new", 9)...), append(leftover[1:], parts(3, "c", "w", 9)...)...), []string{"a", "b", "c"}, ""},
		{"mixed writers", append(parts(2, long, "w1", 1), parts(2, long, "w2", 3)[1:]...), nil, "does not follow"},
		{"missing first part", parts(2, long, "w", 3)[1:], nil, "part 0 is missing"},
		{"truncated", parts(2, long, "w", 2), nil, "2 of 3 parts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a assembler
			var got []string
			var err error
			for _, it := range tc.items {
				var r *record
				if r, err = a.add(it); err != nil {
					break
				}
				if r != nil {
					got = append(got, string(r.data))
				}
			}
			if err == nil {
				err = a.finish()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDueKeysSortByTime(t *testing.T) {
	base := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	times := []time.Time{
		base.Add(time.Nanosecond), base, base.Add(-time.Hour), base.In(time.FixedZone("X", 5*3600)).Add(time.Minute),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	keys := make([]string, len(times))
	for i, tm := range times {
		k, err := dueKey(tm)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = k
	}
	sort.Strings(keys)
	sorted := append([]time.Time(nil), times...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	for i := range sorted {
		want, _ := dueKey(sorted[i])
		if keys[i] != want {
			t.Fatalf("key order %v differs from time order at %d", keys, i)
		}
	}
	if _, err := dueKey(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)); err == nil {
		t.Fatal("year 10000 accepted")
	}
	// A run due exactly now sorts below the DueRuns bound.
	k, _ := dueKey(base)
	if !(k+"#r-zzz" < k+"$") {
		t.Fatal("bound excludes runs due now")
	}
}

func TestChunksFitTransactions(t *testing.T) {
	big := itemKey("P", "S")
	big["d"] = avB(make([]byte, chunkBytes))
	small := itemKey("P", "S")
	cases := []struct {
		name  string
		items []item
	}{
		{"many small", repeat(small, 250)},
		{"many large", repeat(big, 30)},
		{"mixed", append(repeat(small, 99), repeat(big, 12)...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			total := 0
			for _, c := range chunks(tc.items, 1, 1024) {
				if len(c)+1 > txMaxItems || sizeOf(c)+1024 > txMaxBytes {
					t.Fatalf("chunk of %d items and %d bytes does not fit a transaction", len(c), sizeOf(c))
				}
				total += len(c)
			}
			if total != len(tc.items) {
				t.Fatalf("chunks hold %d items, want %d", total, len(tc.items))
			}
		})
	}
}

// TestChunksAreFull: a chunk takes items while they fit beside the
// reserve, up to exactly the items or bytes of a transaction.
func TestChunksAreFull(t *testing.T) {
	small := itemKey("P", "S")
	big := itemKey("P", "S")
	big["d"] = avB(make([]byte, 300_000))
	reserve := txMaxBytes - 10*itemSize(big) // ten big items and the reserve: exactly txMaxBytes
	for _, tc := range []struct {
		name    string
		items   []item
		reserve int
		want    []int
	}{
		{"items", repeat(small, txMaxItems), 1024, []int{txMaxItems - 1, 1}},
		{"bytes", repeat(big, 11), reserve, []int{10, 1}},
	} {
		var got []int
		for _, c := range chunks(tc.items, 1, tc.reserve) {
			got = append(got, len(c))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: chunks of %v, want %v", tc.name, got, tc.want)
		}
	}
}

func repeat(it item, n int) []item {
	out := make([]item, n)
	for i := range out {
		out[i] = it
	}
	return out
}

func TestStateRoundTrip(t *testing.T) {
	huge := strings.Repeat("You are a careful assistant. ", 40000) // about 1.1 MB, compresses well
	cases := []struct {
		name   string
		system string
		gz     bool
	}{
		{"small", "Be brief.", false},
		{"mid-size config is gzipped when shorter", strings.Repeat("Be brief. ", 100), true},
		{"large config is gzipped", huge, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := core.RunState{Format: core.StateFormat, RunID: "r-1", SessionID: "s-1", Status: core.StatusQueued, Version: 3,
				Config: core.RunConfig{System: tc.system, Model: core.ModelSpec{Provider: "scripted"}, MaxTurns: 8, PendingTTL: core.Duration(time.Hour),
					Metadata: map[string]any{"n": json.Number("12345678901234567890")}},
				CreatedAt: time.Unix(0, 1).UTC(), UpdatedAt: time.Unix(0, 2).UTC()}
			if err := json.Unmarshal([]byte(`{"total_tokens":7}`), &st.Usage); err != nil {
				t.Fatal(err)
			}
			state, cfg, _, err := encodeState(st)
			if err != nil {
				t.Fatal(err)
			}
			it := item{}
			if err := blobAttrs(it, "cfg", cfg); err != nil {
				t.Fatal(err)
			}
			if _, gz := it["cfg_gz"]; gz != tc.gz {
				t.Fatalf("gzipped %v, want %v", gz, tc.gz)
			}
			back, err := readBlob(it, "cfg")
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeState(state, back)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := core.MarshalState(st)
			gotJSON, _ := core.MarshalState(got)
			if !bytes.Equal(gotJSON, want) {
				t.Fatalf("state changed:\n got %.300s\nwant %.300s", gotJSON, want)
			}
		})
	}
}

func TestBlobTooLarge(t *testing.T) {
	random := make([]byte, 2*chunkBytes)
	_, _ = rand.Read(random)
	err := blobAttrs(item{}, "state", random)
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("got %v, want a clear size error", err)
	}
}

// TestBlobAttrsBounds: a blob under gzipFrom bytes is stored as it is,
// one of gzipFrom gzipped when that is shorter, and one that does not
// shrink as it is up to exactly chunkBytes.
func TestBlobAttrsBounds(t *testing.T) {
	random := make([]byte, chunkBytes)
	_, _ = rand.Read(random)
	for _, tc := range []struct {
		name string
		b    []byte
		attr string
	}{
		{"just under gzipFrom", bytes.Repeat([]byte("a"), gzipFrom-1), "state"},
		{"gzipFrom", bytes.Repeat([]byte("a"), gzipFrom), "state_gz"},
		{"chunkBytes that do not shrink", random, "state"},
		{"gzipped to exactly chunkBytes", gzipsTo(t, chunkBytes), "state_gz"},
	} {
		it := item{}
		if err := blobAttrs(it, "state", tc.b); err != nil || len(it) != 1 || it[tc.attr] == nil {
			t.Errorf("%s: %v, attributes %d; want only %s", tc.name, err, len(it), tc.attr)
		}
	}
}

// gzipsTo returns a blob longer than chunkBytes that gzips (as
// blobAttrs does) to exactly n bytes: a fixed random prefix, as long as
// a search finds, and zeros.
func gzipsTo(t *testing.T, n int) []byte {
	t.Helper()
	r := mrand.New(mrand.NewPCG(1, 2))
	random := make([]byte, n)
	for i := range random {
		random[i] = byte(r.IntN(256))
	}
	zeros := make([]byte, 20000)
	size := func(k int) int {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		_, _ = w.Write(append(random[:k:k], zeros...))
		_ = w.Close()
		return buf.Len()
	}
	k := sort.Search(n, func(k int) bool { return size(k) >= n })
	if size(k) != n {
		t.Fatalf("no blob gzips to %d bytes", n)
	}
	return append(random[:k:k], zeros...)
}

func TestTranslate(t *testing.T) {
	code := func(c string) *string { return aws.String(c) }
	cases := []struct {
		name      string
		err       error
		retryable bool
		condition bool
	}{
		{"throttled", &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}, true, false},
		{"throttling", &smithy.GenericAPIError{Code: "ThrottlingException"}, true, false},
		{"internal", &types.InternalServerError{}, true, false},
		{"validation", &smithy.GenericAPIError{Code: "ValidationException"}, false, false},
		{"condition", &types.ConditionalCheckFailedException{}, false, false},
		{"cancelled by conflict", &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{{Code: code("None")}, {Code: code("TransactionConflict")}}}, true, false},
		{"cancelled by condition", &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{{Code: code("ConditionalCheckFailed")}, {Code: code("TransactionConflict")}}}, false, true},
		{"cancelled by validation", &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{{Code: code("ValidationError")}}}, false, false},
		{"wrapped", fmt.Errorf("commit: %w", &types.RequestLimitExceeded{}), true, false},
		{"HTTP 500", httpError(500), true, false},
		{"HTTP 503", httpError(503), true, false},
		{"HTTP 499", httpError(499), false, false},
		{"HTTP 400", httpError(400), false, false},
		{"not sent", &smithyhttp.RequestSendError{Err: errors.New("connection refused")}, true, false},
		{"canceled", fmt.Errorf("query: %w", context.Canceled), false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := translate(tc.err)
			if core.IsRetryable(got) != tc.retryable {
				t.Fatalf("retryable %v, want %v", core.IsRetryable(got), tc.retryable)
			}
			if !errors.Is(got, tc.err) {
				t.Fatal("translation lost the SDK error")
			}
			if anyConditionFailed(tc.err) != tc.condition {
				t.Fatalf("condition failed %v, want %v", anyConditionFailed(tc.err), tc.condition)
			}
		})
	}
}

// httpError is the error of a response with status code that no
// DynamoDB error code names.
func httpError(code int) error {
	return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("unexpected response")}
}

// TestBackoffBounds: retry n waits between half and all of 10 ms
// doubled n times (at most six).
func TestBackoffBounds(t *testing.T) {
	for n := range 9 {
		d := 10 * time.Millisecond << min(n, 6)
		for range 200 {
			if b := backoff(n); b < d/2 || b > d {
				t.Fatalf("backoff(%d) = %s, want %s to %s", n, b, d/2, d)
			}
		}
	}
}

// TestStepEvents checks how the events of step records are joined: the
// bounds and the limit apply to events, and a record that starts inside
// the one before it (a losing writer's leftover) is skipped.
func TestStepEvents(t *testing.T) {
	evs := func(seqs ...int64) []core.Event {
		out := make([]core.Event, len(seqs))
		for i, s := range seqs {
			out[i] = core.Event{Seq: s}
		}
		return out
	}
	steps := [][]core.Event{evs(1, 2, 3), evs(3), evs(4, 5), evs(5, 6, 7), evs(6, 7, 8)}
	for _, tc := range []struct {
		after, before int64
		limit         int
		want          string
	}{
		{0, 100, 0, "[1 2 3 4 5 6 7 8]"},
		{1, 100, 0, "[2 3 4 5 6 7 8]"},
		{1, 5, 0, "[2 3 4]"},
		{0, 100, 2, "[1 2]"},
		{2, 100, 2, "[3 4]"},
	} {
		var got []int64
		for _, e := range stepEvents(steps, tc.after, tc.before, tc.limit) {
			got = append(got, e.Seq)
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("after %d before %d limit %d: %v, want %s", tc.after, tc.before, tc.limit, got, tc.want)
		}
	}
}

// TestStepRecordRoundTrip checks a step record reads back as written,
// deflated or not, with the seqs of its results and audit events, and
// that a one-event record of a table written before step records reads
// as a step of that event.
func TestStepRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	big := core.Output{
		Events:      []core.Event{{Seq: 7, Type: core.EventToolResult, At: at, Data: core.Fields{"result": strings.Repeat("blob ", 200)}}, {Seq: 8, Type: core.EventStatus, At: at}},
		ToolResults: []core.ToolExecutionResult{{ToolName: "t", ToolCallID: "c1", Seq: 12, Result: core.ToolResult{Success: true, ToolName: "t"}}},
		Audit:       []core.AuditEvent{{Type: "tool_call", ToolName: "t", ToolCallID: "c1", Seq: 12}},
	}
	small := core.Output{Events: []core.Event{{Seq: 1, Type: core.EventStatus, At: at}}}
	for name, o := range map[string]core.Output{"large": big, "small": small} {
		data, err := encodeStep(newStepRecord(o))
		if err != nil {
			t.Fatal(err)
		}
		if deflatedData := data[0] == deflated; deflatedData != (name == "large") {
			t.Errorf("%s: deflated %v", name, deflatedData)
		}
		sr, err := decodeStep(record{prefix: prefixEvt, seq: o.Events[0].Seq, data: data})
		if err != nil {
			t.Fatal(err)
		}
		if len(sr.Events) != len(o.Events) || sr.Events[len(sr.Events)-1].Seq != o.Events[len(o.Events)-1].Seq {
			t.Errorf("%s: events %+v", name, sr.Events)
		}
		if len(sr.Results) != len(o.ToolResults) || len(sr.Audit) != len(o.Audit) {
			t.Fatalf("%s: %d results, %d audit events", name, len(sr.Results), len(sr.Audit))
		}
		for i := range sr.Results {
			if sr.Results[i].Result.Seq != o.ToolResults[i].Seq || sr.Audit[i].Audit.Seq != o.Audit[i].Seq || sr.Results[i].Result.ToolCallID != "c1" {
				t.Errorf("%s: result %+v, audit %+v", name, sr.Results[i], sr.Audit[i])
			}
		}
	}
	legacy, err := decodeStep(record{prefix: prefixEvt, seq: 4, data: []byte(`{"seq":0,"type":"status","turn":1,"at":"2026-03-02T09:00:00Z"}`)})
	if err != nil || len(legacy.Events) != 1 || legacy.Events[0].Seq != 4 || legacy.Events[0].Type != core.EventStatus {
		t.Fatalf("legacy event record: %+v, %v", legacy, err)
	}
}

// TestDecodeStepOfNothing: an empty record (damage: no writer writes
// one) is an error, not a panic.
func TestDecodeStepOfNothing(t *testing.T) {
	if _, err := decodeStep(record{}); err == nil {
		t.Fatal("an empty record decoded")
	}
}

// TestParseSK: a record key is its prefix (one character or more), a
// 16-digit seq and a 4-digit part; anything else is malformed.
func TestParseSK(t *testing.T) {
	for _, tc := range []struct {
		sk, prefix string
		seq        int64
		part       int
	}{
		{"X0000000000000042#0001", "X", 42, 1},
		{partSK(prefixEvt, 7, 12), prefixEvt, 7, 12},
	} {
		prefix, seq, part, err := parseSK(tc.sk)
		if err != nil || prefix != tc.prefix || seq != tc.seq || part != tc.part {
			t.Errorf("%q: %q %d %d %v", tc.sk, prefix, seq, part, err)
		}
	}
	for _, sk := range []string{"0000000000000042#0001", "X000000000000042#0001", "X0000000000000042#001", "X0000000000000042", "X000000000000004x#0001", "X0000000000000042#00x1"} {
		if _, _, _, err := parseSK(sk); err == nil {
			t.Errorf("%q parsed", sk)
		}
	}
}

// TestItemSize: an item's estimated size is its attribute names and
// values as DynamoDB counts them (a list or map 3 bytes and 1 an
// element), plus 64 bytes of slack for what the estimate leaves out.
func TestItemSize(t *testing.T) {
	for _, tc := range []struct {
		it   item
		want int
	}{
		{item{"a": avS("xyz")}, 1 + 3 + 64},
		{item{"n": avN(12345)}, 1 + 5 + 64},
		{item{"b": avB([]byte{1, 2})}, 1 + 2 + 64},
		{item{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{avS("ab"), avS("c")}}}, 1 + 3 + (2 + 1) + (1 + 1) + 64},
		{item{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": avS("v")}}}, 1 + 3 + (1 + 1 + 1) + 64},
	} {
		if got := itemSize(tc.it); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.it, got, tc.want)
		}
	}
}

// TestPlanCapsPendingAndOutbox: a write holds at most maxWithCommit
// pending items and outbox records together.
func TestPlanCapsPendingAndOutbox(t *testing.T) {
	out, err := core.NewMachine(&core.FixedClock{T: time.Unix(100, 0)}).Start(t.Context(), core.StartInput{RunID: "r-1", SessionID: "s-1", FirstSeq: 1,
		Config: core.RunConfig{Model: core.ModelSpec{Provider: core.ProviderScripted}}, Messages: []core.Message{{Role: core.RoleUser, Content: "Hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	write := func(pending, notes int) core.Write {
		w := core.Write{Tenant: "t", Output: out}
		for i := range pending {
			w.Pending = append(w.Pending, core.PendingItem{RunID: "r-1", ID: fmt.Sprintf("p-%d", i), Status: core.PendingOpen})
		}
		for i := range notes {
			w.Notifications = append(w.Notifications, core.Notification{ID: fmt.Sprintf("n-%d", i), RunID: "r-1", Time: time.Unix(100, 0)})
		}
		return w
	}
	s := &Store{table: "t"}
	for _, tc := range []struct{ pending, notes int }{{maxWithCommit, 0}, {0, maxWithCommit}, {maxWithCommit - 3, 3}} {
		if _, err := s.plan(write(tc.pending, tc.notes)); err != nil {
			t.Errorf("%d pending, %d outbox: %v", tc.pending, tc.notes, err)
		}
	}
	for _, tc := range []struct{ pending, notes int }{{maxWithCommit + 1, 0}, {3, maxWithCommit - 2}, {maxWithCommit, 1}} {
		if _, err := s.plan(write(tc.pending, tc.notes)); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("%d pending, %d outbox: %v, want invalid input", tc.pending, tc.notes, err)
		}
	}
}
