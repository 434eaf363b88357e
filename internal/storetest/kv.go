package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

func testClaimIntent(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	const lease = time.Minute
	steps := []struct {
		name       string
		run, call  string
		owner      string
		at         time.Duration
		claimed    bool
		previous   bool
		attempt    int
		skipPrevOK bool // a refused claim's Previous is not part of the contract
	}{
		{"first claim", "r-1", "call_1", "a", 0, true, false, 1, false},
		{"live claim of another owner", "r-1", "call_1", "b", 30 * time.Second, false, false, 1, true},
		{"same owner again", "r-1", "call_1", "a", 40 * time.Second, true, true, 2, false},
		{"just before the renewed lease ends", "r-1", "call_1", "b", 40*time.Second + lease - time.Nanosecond, false, false, 2, true},
		{"takeover at expiry", "r-1", "call_1", "b", 40*time.Second + lease, true, true, 3, false},
		{"old owner after takeover", "r-1", "call_1", "a", 2 * lease, false, false, 3, true},
		{"takeover long after", "r-1", "call_1", "a", time.Hour, true, true, 4, false},
		{"other call", "r-1", "call_2", "b", 0, true, false, 1, false},
		{"same call id in another run", "r-2", "call_1", "b", 0, true, false, 1, false},
	}
	for _, st := range steps {
		got, err := s.ClaimIntent(t.Context(), st.run, st.call, st.owner, t0.Add(st.at), lease)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got.Claimed != st.claimed || got.Attempt != st.attempt || (!st.skipPrevOK && got.Previous != st.previous) {
			t.Fatalf("%s: got %+v, want Claimed %v Previous %v Attempt %d", st.name, got, st.claimed, st.previous, st.attempt)
		}
	}
}

func testSettleIntent(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	ctx := t.Context()
	const lease = time.Minute
	claim := func(call, owner string, at time.Duration) core.Claim {
		t.Helper()
		c, err := s.ClaimIntent(ctx, "r-1", call, owner, t0.Add(at), lease)
		if err != nil {
			t.Fatalf("claim %s by %s: %v", call, owner, err)
		}
		return c
	}
	settle := func(call, owner string, sent *core.RemoteSent) {
		t.Helper()
		if err := s.SettleIntent(ctx, "r-1", call, owner, sent); err != nil {
			t.Fatalf("settle %s by %s: %v", call, owner, err)
		}
	}
	// An attempt that sent nothing forgets its claim: the next is a
	// first attempt, at once.
	claim("call_1", "a", 0)
	settle("call_1", "a", nil)
	if c := claim("call_1", "b", time.Second); !c.Claimed || c.Previous || c.Attempt != 1 || c.Sent != nil {
		t.Fatalf("claim after a forgotten one: %+v, want a first attempt", c)
	}
	// A forget by an owner that no longer holds the claim changes nothing.
	settle("call_1", "a", nil)
	if c := claim("call_1", "c", 2*time.Second); c.Claimed {
		t.Fatalf("claim after another owner's forget: %+v, want b's live claim kept", c)
	}
	// A recorded send frees the lease and every later claim returns it.
	sent := &core.RemoteSent{TaskID: "task-1", ContextID: "ctx-1"}
	settle("call_1", "b", sent)
	c := claim("call_1", "c", 3*time.Second)
	if !c.Claimed || !c.Previous || c.Sent == nil || *c.Sent != *sent {
		t.Fatalf("claim after a recorded send: %+v, want it claimed at once with %+v", c, sent)
	}
	if c := claim("call_1", "d", 4*time.Second); c.Claimed || c.Sent == nil || *c.Sent != *sent {
		t.Fatalf("refused claim after a recorded send: %+v, want the send still recorded", c)
	}
	// A forget never drops a recorded send.
	settle("call_1", "c", nil)
	if c := claim("call_1", "e", 5*time.Second+lease); !c.Claimed || c.Sent == nil || c.Sent.TaskID != "task-1" {
		t.Fatalf("claim after settle: %+v", c)
	}
	// A send recorded for a call never claimed (a follow-up message's
	// key) is recorded too; other calls see nothing.
	settle("call_1/reply", "x", &core.RemoteSent{TaskID: "task-1"})
	if c := claim("call_1/reply", "y", 0); !c.Claimed || c.Sent == nil || c.Sent.TaskID != "task-1" || c.Sent.ContextID != "" {
		t.Fatalf("claim of a send recorded without a claim: %+v", c)
	}
	if c := claim("call_2", "y", 0); c.Sent != nil {
		t.Fatalf("other call: %+v, want nothing sent", c)
	}
}

func sameRecord(t *testing.T, what string, got *core.IdempotencyRecord, want core.IdempotencyRecord) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: got no record, want %+v", what, want)
	}
	if got.Hash != want.Hash || got.Done != want.Done || got.StatusCode != want.StatusCode || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Fatalf("%s: got hash %q done %v status %d expires %s, want hash %q done %v status %d expires %s", what,
			got.Hash, got.Done, got.StatusCode, got.ExpiresAt, want.Hash, want.Done, want.StatusCode, want.ExpiresAt)
	}
	sameBytes(t, what+" body", got.Body, want.Body)
}

func testIdempotency(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	ctx := t.Context()
	const scope, ttl = "tenant-a POST /v1/runs", time.Hour
	body := []byte(`{"run_id":"r-1","status":"queued","n":12345678901234567890}`)
	big := []byte(bigText + bigText)

	begin := func(key, hash string, at time.Duration) *core.IdempotencyRecord {
		t.Helper()
		rec, err := s.BeginIdempotent(ctx, scope, key, hash, t0.Add(at), ttl)
		if err != nil {
			t.Fatalf("begin %s: %v", key, err)
		}
		return rec
	}
	if rec := begin("k1", "h1", 0); rec != nil {
		t.Fatalf("first begin returned %+v", rec)
	}
	sameRecord(t, "in flight", begin("k1", "h2", time.Minute), core.IdempotencyRecord{Hash: "h1", ExpiresAt: t0.Add(ttl)})
	if rec, err := s.BeginIdempotent(ctx, "tenant-b POST /v1/runs", "k1", "h1", t0, ttl); err != nil || rec != nil {
		t.Fatalf("same key in another scope: %+v, %v", rec, err)
	}
	wantErr(t, "finish with another hash", s.FinishIdempotent(ctx, scope, "k1", core.IdempotencyRecord{Hash: "h2", StatusCode: 202}), core.ErrConflict)
	wantErr(t, "finish an unknown key", s.FinishIdempotent(ctx, scope, "k-unknown", core.IdempotencyRecord{Hash: "h1", StatusCode: 202}), core.ErrConflict)

	mine := slices.Clone(body)
	if err := s.FinishIdempotent(ctx, scope, "k1", core.IdempotencyRecord{Hash: "h1", StatusCode: 202, Body: mine}); err != nil {
		t.Fatal(err)
	}
	mine[0] = 'X'
	done := core.IdempotencyRecord{Hash: "h1", Done: true, StatusCode: 202, Body: body, ExpiresAt: t0.Add(ttl)}
	got := begin("k1", "h1", 2*time.Minute)
	sameRecord(t, "finished", got, done)
	got.Body[0] = 'Y'
	sameRecord(t, "finished, read again", begin("k1", "h3", 3*time.Minute), done)

	if rec := begin("k1", "h4", ttl); rec != nil {
		t.Fatalf("begin at expiry returned %+v, want the record replaced", rec)
	}
	sameRecord(t, "replaced", begin("k1", "h1", ttl+time.Second), core.IdempotencyRecord{Hash: "h4", ExpiresAt: t0.Add(2 * ttl)})

	// A finished response keeps an explicit expiry and a body larger than
	// any single DynamoDB item.
	if rec := begin("k2", "h1", 0); rec != nil {
		t.Fatalf("first begin returned %+v", rec)
	}
	exp := t0.Add(5 * time.Hour)
	if err := s.FinishIdempotent(ctx, scope, "k2", core.IdempotencyRecord{Hash: "h1", StatusCode: 201, Body: big, ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	sameRecord(t, "large body", begin("k2", "h1", 2*time.Hour), core.IdempotencyRecord{Hash: "h1", Done: true, StatusCode: 201, Body: big, ExpiresAt: exp})
}

func testIdempotencyAbort(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	ctx := t.Context()
	const scope, ttl = "tenant-a POST /v1/runs/r-1/cancel", time.Hour
	if rec, err := s.BeginIdempotent(ctx, scope, "k", "h1", t0, ttl); err != nil || rec != nil {
		t.Fatalf("begin: %+v, %v", rec, err)
	}
	if err := s.AbortIdempotent(ctx, scope, "k"); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.BeginIdempotent(ctx, scope, "k", "h2", t0.Add(time.Second), ttl); err != nil || rec != nil {
		t.Fatalf("begin after abort: %+v, %v", rec, err)
	}
	if err := s.FinishIdempotent(ctx, scope, "k", core.IdempotencyRecord{Hash: "h2", StatusCode: 202, Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	if err := s.AbortIdempotent(ctx, scope, "k"); err != nil {
		t.Fatal(err)
	}
	rec, err := s.BeginIdempotent(ctx, scope, "k", "h2", t0.Add(2*time.Second), ttl)
	if err != nil {
		t.Fatal(err)
	}
	sameRecord(t, "abort keeps a finished record", rec, core.IdempotencyRecord{Hash: "h2", Done: true, StatusCode: 202, Body: []byte("{}"), ExpiresAt: t0.Add(time.Second + ttl)})
	if err := s.AbortIdempotent(ctx, scope, "k-unknown"); err != nil {
		t.Fatalf("abort of an unknown key: %v", err)
	}
}

func testTokens(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	ctx := t.Context()
	hash := strings.Repeat("ab", 32)
	_, err := s.LookupToken(ctx, hash)
	wantErr(t, "unknown token", err, core.ErrNotFound)
	cases := []core.Token{
		{Tenant: "tenant-a", Scopes: []string{"runs:write", "runs:read"}, Label: "ci"},
		{Tenant: "tenant-b", Scopes: []string{"runs:read"}},
		{Tenant: "tenant-c"},
	}
	for i, tok := range cases {
		t.Run(fmt.Sprintf("put %d", i), func(t *testing.T) {
			scopes := slices.Clone(tok.Scopes)
			put := tok
			put.Scopes = scopes
			if err := s.PutToken(ctx, hash, put); err != nil {
				t.Fatal(err)
			}
			if len(scopes) > 0 {
				scopes[0] = "admin"
			}
			got, err := s.LookupToken(ctx, hash)
			if err != nil {
				t.Fatal(err)
			}
			if got.Tenant != tok.Tenant || got.Label != tok.Label || !slices.Equal(got.Scopes, tok.Scopes) {
				t.Fatalf("got %+v, want %+v", got, tok)
			}
		})
	}
	if err := s.PutToken(ctx, "", core.Token{Tenant: "tenant-a"}); err == nil {
		t.Fatal("a token without a hash was stored")
	}
	if err := s.PutToken(ctx, hash, core.Token{}); err == nil {
		t.Fatal("a token without a tenant was stored")
	}
	_, err = s.LookupToken(ctx, strings.Repeat("cd", 32))
	wantErr(t, "other unknown token", err, core.ErrNotFound)
}

// testNumbers checks that numbers in messages, parameters, events, tool
// records and the run state survive exactly.
func testNumbers(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	nums := map[string]any{
		"big":     json.Number("12345678901234567890"),
		"precise": json.Number("0.1000000000000000000000000001"),
		"huge":    json.Number("-1e400"),
		"list":    []any{json.Number("9007199254740993"), json.Number("1.50")},
	}
	params := map[string]any{"q": "numbers", "n": nums}
	cfg := config(t, turn("", call("call_1", "ability/echo", params)), turn("Done."))
	cfg.Metadata = map[string]any{"trace": json.Number("12345678901234567890")}
	msg := core.Message{Role: core.RoleUser, Content: "Count", Metadata: map[string]any{"n": json.Number("12345678901234567890")}}
	first := h.mustStart("r-1", "s-1", cfg, nil, msg)
	outs := append([]core.Output{first}, h.drive("r-1")...)
	want := canonical(t, nums)

	msgs := h.messages("s-1", 0, 0, 0)
	sameMessages(t, msgs, allMessages(outs...))
	if n, ok := msgs[0].Metadata["n"].(json.Number); !ok || n != "12345678901234567890" {
		t.Fatalf("user message metadata n = %#v", msgs[0].Metadata["n"])
	}
	var call core.Message
	for _, m := range msgs {
		if m.Role == core.RoleToolCall {
			call = m
		}
	}
	p, _ := call.Metadata[core.MetaParameters].(map[string]any)
	if got := canonical(t, p["n"]); got != want {
		t.Fatalf("tool_call parameters: got %s, want %s", got, want)
	}
	if _, ok := p["n"].(map[string]any)["big"].(json.Number); !ok {
		t.Fatalf("tool_call parameter big is %T, want json.Number", p["n"].(map[string]any)["big"])
	}
	results, _, err := s.ToolRecords(h.ctx, "r-1", 0)
	if err != nil || len(results) != 1 {
		t.Fatalf("tool records: %d, %v", len(results), err)
	}
	if got := canonical(t, results[0].Parameters["n"]); got != want {
		t.Fatalf("tool record parameters: got %s, want %s", got, want)
	}
	sameEvents(t, h.events("r-1", 0, 0, 0), allEvents(outs...))
	st := h.load("r-1")
	if n, ok := st.Config.Metadata["trace"].(json.Number); !ok || n != "12345678901234567890" {
		t.Fatalf("state metadata trace = %#v", st.Config.Metadata["trace"])
	}
	sameState(t, st, outs[len(outs)-1].State)
}

// testLargeMessage round-trips messages and tool records of 1 MiB and
// more, byte for byte.
func testLargeMessage(t *testing.T, newStore func(*testing.T) Store) {
	s := newStore(t)
	h := newHarness(t, s, "tenant-a")
	cfg := config(t, turn("", call("call_1", "ability/big", nil)), turn("Done."))
	cfg.ToolResultMaxBytes = 4 << 20
	first := h.mustStart("r-1", "s-1", cfg, nil, user(bigText, "short")...)
	outs := append([]core.Output{first}, h.drive("r-1")...)
	msgs := h.messages("s-1", 0, 0, 0)
	sameMessages(t, msgs, allMessages(outs...))
	sameBytes(t, "user message", []byte(msgs[0].Content), []byte(bigText))
	var result core.Message
	for _, m := range msgs {
		if m.Role == core.RoleToolResult {
			result = m
		}
	}
	sameBytes(t, "tool result message", []byte(result.Content), []byte(bigText))
	results, _, err := s.ToolRecords(h.ctx, "r-1", 0)
	if err != nil || len(results) != 1 {
		t.Fatalf("tool records: %d, %v", len(results), err)
	}
	got, _ := results[0].Result.Result.(string)
	sameBytes(t, "tool record result", []byte(got), []byte(bigText))
	// Paging lands on the large messages' boundaries.
	sameMessages(t, h.messages("s-1", 1, 0, 1), msgs[1:2])
	sameMessages(t, h.messages("s-1", 0, 2, 0), msgs[:1])
	if st := h.load("r-1"); st.Status != core.StatusCompleted {
		t.Fatalf("status %s", st.Status)
	}
}
