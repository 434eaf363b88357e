package queuetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// The settings a queue under test must be created with.
const (
	// Visibility is the visibility timeout of a queue under test.
	Visibility = time.Second
	// MaxReceives is how many times a message is received before it is
	// dead-lettered.
	MaxReceives = 2
)

// patience bounds a wait for something that must come.
const patience = 10 * time.Second

// Queue is what the suite drives: the step queue port, the poller's
// receiver, and a look at the dead-letter queue.
type Queue interface {
	core.StepQueue
	core.StepReceiver
	// DeadLetters returns dead-lettered messages. It may return only those
	// an earlier call did not return (an SQS DLQ is drained as it is read).
	DeadLetters(ctx context.Context) ([]core.ReceivedMessage, error)
}

// Clock is implemented by queues with an injected clock: the suite
// advances it instead of sleeping.
type Clock interface {
	Advance(d time.Duration)
}

// RunContract runs the step-queue contract on fresh queues from newQueue,
// which must create each with a visibility timeout of Visibility and a
// maximum receive count of MaxReceives. The subtests run in parallel, one
// queue each.
func RunContract(t *testing.T, newQueue func(t *testing.T) Queue) {
	tests := []struct {
		name string
		run  func(t *testing.T, q Queue)
	}{
		{"EnqueueReceive", testEnqueueReceive},
		{"EmptyEnqueue", testEmptyEnqueue},
		{"FIFOWithinGroup", testFIFOWithinGroup},
		{"GroupInFlightBlocksOnlyItsGroup", testGroupInFlight},
		{"DuplicateDedupIDDropped", testDedup},
		{"VisibilityTimeoutRedelivers", testRedelivery},
		{"DeleteIsFinal", testDelete},
		{"ExtendVisibilityHides", testExtendVisibility},
		{"DeadLetterAfterMaxReceives", testDeadLetter},
		{"BatchOverTen", testBatchOverTen},
		{"MissingIDsRejected", testMissingIDs},
		{"LongAndUnusualIDs", testLongIDs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newQueue(t))
		})
	}
}

func testEnqueueReceive(t *testing.T, q Queue) {
	cases := []struct {
		name string
		qs   core.QueuedStep
	}{
		{"model_turn", core.QueuedStep{
			Step:  core.Step{Kind: core.StepModelTurn, Format: core.StepFormat, RunID: "r-1", Seq: 3},
			Group: "s-1", DedupID: "r-1:3",
		}},
		{"tool_call", core.QueuedStep{
			Step:  core.Step{Kind: core.StepToolCall, Format: core.StepFormat, RunID: "r-2", Seq: 7, CallID: "call_1"},
			Group: "r-2:call_1", DedupID: "r-2:7",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			before := time.Now()
			enqueue(t, q, tc.qs)
			ds := receiveWithin(t, q, 10, patience)
			if len(ds) != 1 {
				t.Fatalf("received %d messages, want 1: %s", len(ds), describe(ds))
			}
			d := ds[0]
			if got := decode(t, d); got != tc.qs.Step {
				t.Errorf("body decodes to %+v, want %+v", got, tc.qs.Step)
			}
			var raw map[string]any
			if err := json.Unmarshal(d.Body, &raw); err != nil {
				t.Fatalf("body %s: %v", d.Body, err)
			}
			keys := []string{"kind", "v", "run_id", "seq"}
			if tc.qs.Step.CallID != "" {
				keys = append(keys, "call_id")
			}
			for _, k := range keys {
				if _, ok := raw[k]; !ok {
					t.Errorf("body %s lacks %q", d.Body, k)
				}
			}
			if len(raw) != len(keys) {
				t.Errorf("body %s has keys beyond %v", d.Body, keys)
			}
			if d.Group != tc.qs.Group || d.DedupID != tc.qs.DedupID {
				t.Errorf("group, dedup id = %q, %q; want %q, %q", d.Group, d.DedupID, tc.qs.Group, tc.qs.DedupID)
			}
			if d.ReceiveCount != 1 {
				t.Errorf("receive count %d, want 1", d.ReceiveCount)
			}
			if d.MessageID == "" || d.ReceiptHandle == "" {
				t.Errorf("message id %q, receipt handle %q: want both set", d.MessageID, d.ReceiptHandle)
			}
			if d.SentAt.Before(before.Add(-time.Minute)) || d.SentAt.After(time.Now().Add(time.Minute)) {
				t.Errorf("sent at %v, want about %v", d.SentAt, before)
			}
			if err := q.Delete(ctx, d.ReceiptHandle); err != nil {
				t.Fatalf("delete: %v", err)
			}
		})
	}
	expectEmpty(t, q, patience)
}

func testEmptyEnqueue(t *testing.T, q Queue) {
	if err := q.Enqueue(t.Context(), nil); err != nil {
		t.Fatalf("enqueue of no steps: %v", err)
	}
	expectEmpty(t, q, patience)
}

func testFIFOWithinGroup(t *testing.T, q Queue) {
	// Five in one call, three more one by one: order is send order.
	enqueue(t, q, steps("g", 1, 5)...)
	for seq := int64(6); seq <= 8; seq++ {
		enqueue(t, q, steps("g", seq, 1)...)
	}
	got := drain(t, q, 8)
	assertOrder(t, got, "g", seqRange(1, 8))
	expectEmpty(t, q, patience)
}

func testGroupInFlight(t *testing.T, q Queue) {
	ctx := t.Context()
	enqueue(t, q, steps("a", 1, 2)...)
	first := receiveWithin(t, q, 1, patience)
	if len(first) != 1 || decode(t, first[0]).Seq != 1 {
		t.Fatalf("first receive: %s, want a/1", describe(first))
	}
	// a/1 is in flight: b proceeds, a/2 waits. The receives below return
	// well within the visibility timeout, so a/1 stays in flight.
	enqueue(t, q, steps("b", 10, 1)...)
	other := receiveWithin(t, q, 10, Visibility/2)
	if len(other) != 1 || other[0].Group != "b" {
		t.Fatalf("while a/1 is in flight, received %s; want only b/10", describe(other))
	}
	if err := q.Delete(ctx, other[0].ReceiptHandle); err != nil {
		t.Fatalf("delete b/10: %v", err)
	}
	expectEmpty(t, q, Visibility/2)
	if err := q.Delete(ctx, first[0].ReceiptHandle); err != nil {
		t.Fatalf("delete a/1: %v", err)
	}
	next := receiveWithin(t, q, 10, patience)
	if len(next) != 1 || decode(t, next[0]).Seq != 2 || next[0].ReceiveCount != 1 {
		t.Fatalf("after deleting a/1, received %s; want a/2 (first receive)", describe(next))
	}
	deleteAll(t, q, next)
	expectEmpty(t, q, patience)
}

func testDedup(t *testing.T, q Queue) {
	mk := func(seq int64, dedup string) core.QueuedStep {
		qs := steps("g", seq, 1)[0]
		qs.DedupID = dedup
		return qs
	}
	enqueue(t, q, mk(1, "d1"))
	enqueue(t, q, mk(2, "d1"))              // a later call
	enqueue(t, q, mk(3, "d2"), mk(4, "d2")) // the same call
	got := drain(t, q, 2)
	assertOrder(t, got, "g", []int64{1, 3})
	expectEmpty(t, q, patience)
	// The window outlives the message: a step sent again after its
	// message was handled is still a duplicate.
	enqueue(t, q, mk(5, "d1"))
	expectEmpty(t, q, patience)
}

func testRedelivery(t *testing.T, q Queue) {
	enqueue(t, q, steps("g", 1, 1)...)
	first := receiveWithin(t, q, 10, patience)
	if len(first) != 1 || first[0].ReceiveCount != 1 {
		t.Fatalf("first receive: %s, want g/1 received once", describe(first))
	}
	expectEmpty(t, q, Visibility/2)
	sleep(q, Visibility)
	again := receiveWithin(t, q, 10, Visibility+patience)
	if len(again) != 1 {
		t.Fatalf("after the visibility timeout, received %s; want g/1 again", describe(again))
	}
	d := again[0]
	if d.MessageID != first[0].MessageID || decode(t, d) != decode(t, first[0]) {
		t.Errorf("redelivered %s, want the message %s", describe(again), describe(first))
	}
	if d.ReceiveCount != 2 {
		t.Errorf("receive count %d, want 2", d.ReceiveCount)
	}
	if d.ReceiptHandle == first[0].ReceiptHandle {
		t.Errorf("receipt handle reused: %q", d.ReceiptHandle)
	}
	deleteAll(t, q, again)
	expectEmpty(t, q, patience)
}

// testExtendVisibility: a message whose visibility is extended stays
// hidden past the queue's visibility timeout, and comes back once the
// extension is over; a deleted message's handle is refused.
func testExtendVisibility(t *testing.T, q Queue) {
	enqueue(t, q, steps("g", 1, 1)...)
	first := receiveWithin(t, q, 10, patience)
	if len(first) != 1 {
		t.Fatalf("received %s, want g/1", describe(first))
	}
	if err := q.ExtendVisibility(t.Context(), first[0].ReceiptHandle, 4*Visibility); err != nil {
		t.Fatalf("extend: %v", err)
	}
	sleep(q, 2*Visibility)
	if ds, err := q.Receive(t.Context(), 10, 0); err != nil || len(ds) != 0 {
		t.Fatalf("received %s (%v) while its visibility was extended", describe(ds), err)
	}
	sleep(q, 3*Visibility)
	again := receiveWithin(t, q, 10, Visibility+patience)
	if len(again) != 1 || again[0].MessageID != first[0].MessageID {
		t.Fatalf("after the extension, received %s; want g/1 again", describe(again))
	}
	deleteAll(t, q, again)
	if err := q.ExtendVisibility(t.Context(), again[0].ReceiptHandle, Visibility); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("extend a deleted message: %v, want ErrNotFound", err)
	}
}

func testDelete(t *testing.T, q Queue) {
	enqueue(t, q, steps("g", 1, 1)...)
	ds := receiveWithin(t, q, 10, patience)
	if len(ds) != 1 {
		t.Fatalf("received %s, want g/1", describe(ds))
	}
	deleteAll(t, q, ds)
	sleep(q, Visibility)
	expectEmpty(t, q, patience)
}

func testDeadLetter(t *testing.T, q Queue) {
	enqueue(t, q, steps("a", 1, 2)...)
	var poison core.ReceivedMessage
	for n := 1; n <= MaxReceives; n++ {
		if n > 1 {
			sleep(q, Visibility)
		}
		ds := receiveWithin(t, q, 1, Visibility+patience)
		if len(ds) != 1 || decode(t, ds[0]).Seq != 1 || ds[0].ReceiveCount != n {
			t.Fatalf("receive %d: %s, want a/1 received %d times", n, describe(ds), n)
		}
		poison = ds[0]
	}
	// Past MaxReceives a/1 is dead-lettered, which unblocks its group.
	sleep(q, Visibility)
	got := drain(t, q, 1)
	assertOrder(t, got, "a", []int64{2})
	if got[0].ReceiveCount != 1 {
		t.Errorf("a/2 receive count %d, want 1", got[0].ReceiveCount)
	}
	expectEmpty(t, q, patience)

	deadline := time.Now().Add(patience)
	var seen []core.ReceivedMessage
	for {
		dead, err := q.DeadLetters(t.Context())
		if err != nil {
			t.Fatalf("dead letters: %v", err)
		}
		seen = append(seen, dead...)
		if slices.ContainsFunc(seen, func(d core.ReceivedMessage) bool { return string(d.Body) == string(poison.Body) }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a/1 (%s) is not among the dead letters %s", poison.Body, describe(seen))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func testBatchOverTen(t *testing.T, q Queue) {
	const n = 25
	var all []core.QueuedStep
	for seq := int64(1); seq <= n; seq++ {
		all = append(all, steps(fmt.Sprintf("g%d", seq%3), seq, 1)...)
	}
	enqueue(t, q, all...)
	got := drain(t, q, n)
	for g := range 3 {
		var want []int64
		for seq := int64(1); seq <= n; seq++ {
			if int(seq%3) == g {
				want = append(want, seq)
			}
		}
		assertOrder(t, got, fmt.Sprintf("g%d", g), want)
	}
	expectEmpty(t, q, patience)
}

func testMissingIDs(t *testing.T, q Queue) {
	cases := []struct {
		name           string
		group, dedupID string
	}{
		{"no group", "", "x:1"},
		{"no dedup id", "g", ""},
		{"neither", "", ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A valid step ahead of the bad one must not be sent either.
			ok := steps("ok", int64(i+1), 1)[0]
			bad := steps("g", 100, 1)[0]
			bad.Group, bad.DedupID = tc.group, tc.dedupID
			err := q.Enqueue(t.Context(), []core.QueuedStep{ok, bad})
			if err == nil {
				t.Fatal("enqueue succeeded, want an error")
			}
			if !errors.Is(err, core.ErrInvalidInput) || core.IsRetryable(err) {
				t.Errorf("error %v: want core.ErrInvalidInput, not retryable", err)
			}
		})
	}
	expectEmpty(t, q, patience)
}

func testLongIDs(t *testing.T, q Queue) {
	// Longer than SQS's 128 characters and outside its character set:
	// an adapter must map them without merging distinct ids.
	group := strings.Repeat("session/ü ", 25)
	dedup := strings.Repeat("run-ü:", 40)
	mk := func(group string, seq int64, dedup string) core.QueuedStep {
		qs := steps(group, seq, 1)[0]
		qs.DedupID = dedup
		return qs
	}
	enqueue(t, q,
		mk(group, 1, dedup+"1"),
		mk(group, 2, dedup+"2"),
		mk(group, 3, dedup+"1"), // duplicate of 1
		mk(group+"2", 4, dedup+"4"),
	)
	got := drain(t, q, 3)
	bySeq := map[int64]core.ReceivedMessage{}
	var order []int64
	for _, d := range got {
		s := decode(t, d)
		bySeq[s.Seq] = d
		if s.RunID == group {
			order = append(order, s.Seq)
		}
	}
	if !slices.Equal(order, []int64{1, 2}) {
		t.Errorf("group of long id delivered %v, want [1 2]", order)
	}
	if _, ok := bySeq[4]; !ok {
		t.Fatalf("second long group not delivered: %s", describe(got))
	}
	if g := bySeq[1].Group; g == "" || g != bySeq[2].Group || g == bySeq[4].Group {
		t.Errorf("groups %q, %q, %q: want the first two equal, the third different", g, bySeq[2].Group, bySeq[4].Group)
	}
	if bySeq[1].DedupID == "" || bySeq[1].DedupID == bySeq[2].DedupID {
		t.Errorf("dedup ids %q, %q: want distinct", bySeq[1].DedupID, bySeq[2].DedupID)
	}
	expectEmpty(t, q, patience)
}

// steps returns n steps of group from seq on, each its own run so that a
// step names its group: RunID is the group, DedupID "<group>:<seq>".
func steps(group string, seq int64, n int) []core.QueuedStep {
	out := make([]core.QueuedStep, 0, n)
	for i := range int64(n) {
		s := core.Step{Kind: core.StepModelTurn, Format: core.StepFormat, RunID: group, Seq: seq + i}
		out = append(out, core.QueuedStep{Step: s, Group: group, DedupID: fmt.Sprintf("%s:%d", group, s.Seq)})
	}
	return out
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func enqueue(t *testing.T, q Queue, s ...core.QueuedStep) {
	t.Helper()
	if err := q.Enqueue(t.Context(), s); err != nil {
		t.Fatalf("enqueue %d steps: %v", len(s), err)
	}
}

func decode(t *testing.T, d core.ReceivedMessage) core.Step {
	t.Helper()
	var s core.Step
	if err := json.Unmarshal(d.Body, &s); err != nil {
		t.Fatalf("message %s: body %q: %v", d.MessageID, d.Body, err)
	}
	return s
}

// receiveWithin receives until some message comes, failing after timeout.
func receiveWithin(t *testing.T, q Queue, max int, timeout time.Duration) []core.ReceivedMessage {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("nothing received within %v", timeout)
		}
		ds, err := q.Receive(t.Context(), max, min(left, 2*time.Second))
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		if len(ds) > 0 {
			return ds
		}
	}
}

// drain receives and deletes until n messages came, in delivery order.
func drain(t *testing.T, q Queue, n int) []core.ReceivedMessage {
	t.Helper()
	var out []core.ReceivedMessage
	deadline := time.Now().Add(patience)
	for len(out) < n {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("received %d of %d messages within %v: %s", len(out), n, patience, describe(out))
		}
		ds, err := q.Receive(t.Context(), 10, min(left, time.Second))
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		deleteAll(t, q, ds)
		out = append(out, ds...)
	}
	return out
}

func deleteAll(t *testing.T, q Queue, ds []core.ReceivedMessage) {
	t.Helper()
	for _, d := range ds {
		if err := q.Delete(t.Context(), d.ReceiptHandle); err != nil {
			t.Fatalf("delete %s: %v", d.MessageID, err)
		}
	}
}

// barriers numbers the marker groups of expectEmpty, so that each is fresh.
var barriers atomic.Int64

// expectEmpty fails unless the queue holds nothing it may deliver. It
// enqueues a marker step in a fresh group and receives until the marker
// comes, failing if any other message comes before or with it, or if the
// marker does not come within within. The marker is deleted.
func expectEmpty(t *testing.T, q Queue, within time.Duration) {
	t.Helper()
	marker := steps(fmt.Sprintf("barrier-%d", barriers.Add(1)), 1, 1)[0]
	enqueue(t, q, marker)
	deadline := time.Now().Add(within)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("the marker %s was not received within %v", marker.Group, within)
		}
		ds, err := q.Receive(t.Context(), 10, min(left, 2*time.Second))
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		var got, others []core.ReceivedMessage
		for _, d := range ds {
			if decode(t, d) == marker.Step {
				got = append(got, d)
			} else {
				others = append(others, d)
			}
		}
		if len(others) > 0 {
			t.Fatalf("received %s before the marker %s, want nothing", describe(others), marker.Group)
		}
		if len(got) > 0 {
			deleteAll(t, q, got)
			return
		}
	}
}

// assertOrder checks that the deliveries of group are want, in order.
func assertOrder(t *testing.T, ds []core.ReceivedMessage, group string, want []int64) {
	t.Helper()
	var got []int64
	for _, d := range ds {
		if s := decode(t, d); s.RunID == group {
			got = append(got, s.Seq)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("group %s delivered %v, want %v (all: %s)", group, got, want, describe(ds))
	}
}

func sleep(q Queue, d time.Duration) {
	if c, ok := q.(Clock); ok {
		c.Advance(d)
		return
	}
	time.Sleep(d)
}

func describe(ds []core.ReceivedMessage) string {
	parts := make([]string, 0, len(ds))
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("{group %q body %s count %d}", d.Group, d.Body, d.ReceiveCount))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
