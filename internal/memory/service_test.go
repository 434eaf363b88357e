package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

type modelFunc func(ctx context.Context, req core.ModelRequest) (core.ModelReply, error)

func (f modelFunc) Complete(ctx context.Context, req core.ModelRequest) (core.ModelReply, error) {
	return f(ctx, req)
}

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

type harness struct {
	svc   *Service
	t     *testing.T
	store *countingStore
	ids   int
	clock *core.FixedClock
	specs map[string]*agents.MemorySpec
	model core.ModelProvider
	// invokes counts the bedrock embedder's calls (a Titan fake that
	// embeds every text as the scripted embedder does).
	invokes int
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, store: newStore(backingStore(t)), clock: &core.FixedClock{T: t0}, specs: map[string]*agents.MemorySpec{}}
	h.model = core.ScriptedModel{}
	svc, err := New(Config{
		Store: h.store,
		Models: modelFunc(func(ctx context.Context, req core.ModelRequest) (core.ModelReply, error) {
			return h.model.Complete(ctx, req)
		}),
		Agents: func(_ context.Context, agent, _ string) (*agents.MemorySpec, error) {
			if agent == "ghost" {
				return nil, errors.New("no such agent")
			}
			return h.specs[agent], nil
		},
		Embedders: NewEmbedders(EmbedderConfig{InvokeModel: func(_ context.Context, _ string, body []byte) ([]byte, error) {
			h.invokes++
			var in titanRequest
			if err := json.Unmarshal(body, &in); err != nil {
				return nil, err
			}
			v, _ := Scripted{Dimensions: in.Dimensions}.Embed(context.Background(), []string{in.InputText})
			return json.Marshal(titanResponse{Embedding: v[0]})
		}}),
		Clock: h.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	return h
}

var scopeA = core.MemoryScope{Tenant: "t1", Subject: "alice"}

// put stores memories with the scripted embedder's vectors, one minute
// apart from t0 on.
func (h *harness) put(t *testing.T, scope core.MemoryScope, texts ...string) []string {
	t.Helper()
	var ids []string
	for i, text := range texts {
		v, _ := Scripted{}.Embed(context.Background(), []string{text})
		at := t0.Add(time.Duration(i) * time.Minute)
		h.ids++
		m := core.Memory{ID: fmt.Sprintf("m%03d", h.ids), Subject: scope.Subject, Text: text, CreatedAt: at, UpdatedAt: at,
			Vector: Quantize(v[0]), Embedder: Scripted{}.Name()}
		if err := h.store.WriteMemories(context.Background(), core.MemoryWrite{Scope: scope, Put: []core.Memory{m}}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	return ids
}

func texts(got []core.RecalledMemory) []string {
	var out []string
	for _, m := range got {
		out = append(out, m.Text)
	}
	return out
}

func TestRecallRanksBySimilarityWithinBudget(t *testing.T) {
	h := newHarness(t)
	h.put(t, scopeA, "The user prefers green tea.", "The user's dog is called Rex.", "The user lives in Lisbon.", "The user drinks tea without sugar.")
	h.put(t, core.MemoryScope{Tenant: "t1", Subject: "bob"}, "Bob prefers tea too.")
	h.put(t, core.MemoryScope{Tenant: "t2", Subject: "alice"}, "Other tenant's alice likes tea.")
	h.store.pageSize = 2 // three pages
	got, err := h.svc.Recall(context.Background(), core.RecallRequest{Scope: scopeA, Agent: "a", Query: "Which tea does the user like?", TopK: 2})
	if err != nil {
		t.Fatal(err)
	}
	if tx := texts(got); len(tx) != 2 || !strings.Contains(tx[0], "tea") || !strings.Contains(tx[1], "tea") {
		t.Fatalf("want the two tea memories of alice in t1: %q", tx)
	}
	if got[0].Score < got[1].Score || got[0].ID == "" || got[0].CreatedAt.IsZero() {
		t.Fatalf("best first, with ids and times: %+v", got)
	}
	if h.store.pages != 2 {
		t.Fatalf("read %d pages of a 4-memory scope at 2 a page, want 2", h.store.pages)
	}
	// A budget of 8 tokens (32 bytes) holds one of the 27- and 34-byte
	// tea memories: the first that fits.
	got, _ = h.svc.Recall(context.Background(), core.RecallRequest{Scope: scopeA, Query: "tea", TopK: 5, MaxTokens: 8})
	if tx := texts(got); len(tx) != 1 || tx[0] != "The user prefers green tea." {
		t.Fatalf("budget: %q", tx)
	}
}

func TestRecallEmptyQueryIsNewestFirst(t *testing.T) {
	h := newHarness(t)
	h.put(t, scopeA, "first", "second", "third")
	h.clock.T = t0.Add(24 * time.Hour)
	got, err := h.svc.Recall(context.Background(), core.RecallRequest{Scope: scopeA, Query: "  ", TopK: 2})
	if err != nil {
		t.Fatal(err)
	}
	if tx := texts(got); len(tx) != 2 || tx[0] != "third" || tx[1] != "second" {
		t.Fatalf("%q", tx)
	}
}

func TestRecallOtherEmbedderFallsBackToWords(t *testing.T) {
	h := newHarness(t)
	h.put(t, scopeA, "The user likes jazz.")
	// A memory embedded by another model, and one with no vector: both
	// are ranked by their words.
	for i, text := range []string{"The user's favourite jazz album is Kind of Blue.", "The user plays chess."} {
		m := core.Memory{ID: fmt.Sprintf("x%d", i), Subject: "alice", Text: text, CreatedAt: t0, UpdatedAt: t0}
		if i == 0 {
			m.Vector, m.Embedder = []int8{127, 0, 0}, "bedrock:amazon.titan-embed-text-v2:0:256"
		}
		_ = h.store.WriteMemories(context.Background(), core.MemoryWrite{Scope: scopeA, Put: []core.Memory{m}})
	}
	got, err := h.svc.Recall(context.Background(), core.RecallRequest{Scope: scopeA, Query: "jazz album", TopK: 3})
	if err != nil {
		t.Fatal(err)
	}
	if tx := texts(got); len(tx) != 3 || !strings.Contains(tx[0], "album") || tx[2] != "The user plays chess." {
		t.Fatalf("lexical fallback: %q", tx)
	}
}

func TestRecallErrors(t *testing.T) {
	h := newHarness(t)
	if _, err := h.svc.Recall(context.Background(), core.RecallRequest{Scope: core.MemoryScope{Tenant: "t1"}}); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("no subject: %v", err)
	}
	if _, err := h.svc.Recall(context.Background(), core.RecallRequest{Scope: scopeA, Agent: "ghost"}); err == nil || !strings.Contains(err.Error(), "ghost") {
		t.Fatalf("unknown agent: %v", err)
	}
	h.specs["b"] = &agents.MemorySpec{Embedder: &agents.EmbedderSpec{Provider: "bedrock"}}
	svc, _ := New(Config{Store: h.store, Agents: h.svc.agents, Embedders: NewEmbedders(EmbedderConfig{})})
	if _, err := svc.Recall(context.Background(), core.RecallRequest{Scope: scopeA, Agent: "b", Query: "x"}); err == nil || !strings.Contains(err.Error(), "does not link") {
		t.Fatalf("bedrock unavailable: %v", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without a store should fail")
	}
}

func TestSelect(t *testing.T) {
	var found []Scored
	for i := range 80 {
		found = append(found, Scored{Memory: core.Memory{ID: fmt.Sprintf("%02d", i), Text: "abcd"}, Score: float64(i % 7)})
	}
	if got := Select(found, 0, 0); len(got) != core.DefaultRecallTopK || got[0].Score != 6 || got[0].Memory.ID != "06" {
		t.Fatalf("defaults: %d %+v", len(got), got[0])
	}
	if got := Select(found, 1000, 1<<20); len(got) != MaxRecallTopK {
		t.Fatalf("cap: %d", len(got))
	}
	if got := Select(found, 10, 3); len(got) != 3 {
		t.Fatalf("3 one-token memories fit in 3 tokens: %d", len(got))
	}
	r := &Ranker{Now: t0}
	if r.Recency(core.Memory{UpdatedAt: t0.Add(-RecencyHalfLife)}) != 0.5 || r.Recency(core.Memory{CreatedAt: t0.Add(time.Hour)}) != 1 {
		t.Fatal("recency half-life")
	}
}

func TestRecallEmbedsOnlyWhenVectorsCompare(t *testing.T) {
	h := newHarness(t)
	h.specs["b"] = &agents.MemorySpec{Embedder: &agents.EmbedderSpec{Provider: "bedrock"}}
	recall := func() []string {
		t.Helper()
		got, err := h.svc.Recall(context.Background(), core.RecallRequest{Scope: scopeA, Agent: "b", Query: "tea please"})
		if err != nil {
			t.Fatal(err)
		}
		return texts(got)
	}
	// An empty scope (a user's first run): no embedding call.
	if got := recall(); len(got) != 0 || h.invokes != 0 {
		t.Fatalf("%q, %d calls", got, h.invokes)
	}
	// Only the scripted embedder's vectors: ranked by words, no call.
	h.put(t, scopeA, "The user likes coffee.", "The user likes tea.")
	if got := recall(); len(got) != 2 || got[0] != "The user likes tea." || h.invokes != 0 {
		t.Fatalf("%q, %d calls", got, h.invokes)
	}
	// A memory of the agent's embedder: the query is embedded once.
	call := toolCall(core.ToolMemoryRemember, map[string]any{"text": "The user takes tea with lemon."})
	call.Agent = "b"
	res := execute(t, h, call)
	if !res.Success || h.invokes != 1 {
		t.Fatalf("%+v, %d calls", res, h.invokes)
	}
	if got := recall(); len(got) != 3 || h.invokes != 2 {
		t.Fatalf("%q, %d calls", got, h.invokes)
	}
}

func TestRankerComparesOnlyItsEmbeddersVectors(t *testing.T) {
	q := Quantize([]float32{1, 0, 0})
	r := &Ranker{Embedder: "e1", Query: q, Words: Words("green tea"), Now: t0}
	same := core.Memory{Text: "coffee", Embedder: "e1", Vector: q}
	if s := r.Similarity(same); s < 0.999 {
		t.Fatalf("same embedder, same vector: %v", s)
	}
	other := core.Memory{Text: "coffee", Embedder: "e2", Vector: q}
	if s := r.Similarity(other); s != 0 {
		t.Fatalf("another embedder's vector of the same length must not be compared: %v", s)
	}
	short := core.Memory{Text: "green tea", Embedder: "e1", Vector: q[:2]}
	if s := r.Similarity(short); s != 1 {
		t.Fatalf("a vector of another length falls back to words: %v", s)
	}
	if s := (&Ranker{Embedder: "e1", Now: t0}).Similarity(same); s != 0 {
		t.Fatalf("an empty query has no similarity: %v", s)
	}
	if s := (&Ranker{Embedder: "e1", Words: Words("coffee"), Now: t0}).Similarity(same); s != 1 {
		t.Fatalf("a query without a vector ranks by words: %v", s)
	}
	sc := r.Score(core.Memory{Text: "green tea", UpdatedAt: t0})
	if sc.Similarity != 1 || sc.Score != SimilarityWeight+RecencyWeight || sc.Memory.Vector != nil {
		t.Fatalf("%+v", sc)
	}
}
