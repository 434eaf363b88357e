package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

// The recall benchmark: one Recall (top 5 within 500 tokens, the
// defaults) of a scope holding 100, 1,000 or 10,000 memories of about
// 120 bytes, each with a 256-dimension vector (the scripted embedder's
// and Titan v2's default size), on each store benchStores returns.
// Besides ns/op it reports the store pages a recall reads (pages/op) and,
// on DynamoDB, the read capacity it consumes (RCU/op computed from the
// items, reportedRCU/op as the endpoint reports it), the items' size, and
// the time in Query calls (query-ms/op), of which the round trips up to
// the responses' headers (roundtrip-ms/op); see benchstores_test.go. docs/performance.md ("Memory recall") has the
// figures and how to run it on DynamoDB Local.

// benchSizes are the scope sizes measured.
var benchSizes = []int{100, 1000, 10000}

// benchStore is a store under measurement: its counters are reset
// before the timed loop and read after it.
type benchStore struct {
	name  string
	store core.MemoryStore
	// counters returns what the store has counted so far.
	counters func() benchCounters
}

// benchCounters are a store's reads: pages, and on DynamoDB the read
// capacity (computed from the items, and as the endpoint reports it)
// and the items' bytes.
type benchCounters struct {
	pages           int
	rcu, reported   float64
	bytes           int64
	call, roundTrip time.Duration
}

var (
	benchNouns = strings.Fields(`coffee tea music team manager daughter son dog cat city flight hotel seat editor language framework
		database laptop phone bank doctor gym diet book podcast car bike project deadline meeting budget client report`)
	benchAdjs = strings.Fields(`green black quiet early late vegetarian remote large small blue red weekly monthly formal casual
		spicy short long dark light north south new old`)
	benchVerbs = strings.Fields(`prefers likes avoids uses needs books reads drinks plays visits writes reviews schedules`)
	benchDays  = strings.Fields(`Monday Tuesday Wednesday Thursday Friday Saturday Sunday mornings evenings weekends`)
)

// benchText is a deterministic memory of about 120 bytes.
func benchText(r *rand.Rand) string {
	pick := func(ws []string) string { return ws[r.IntN(len(ws))] }
	return fmt.Sprintf("The user %s %s %s, keeps the %s %s for %s, and asked to be reminded about the %s on %s.",
		pick(benchVerbs), pick(benchAdjs), pick(benchNouns), pick(benchAdjs), pick(benchNouns), pick(benchDays), pick(benchNouns), pick(benchDays))
}

// fillScope writes n memories to scope, 25 a write, with the scripted
// embedder's vectors.
func fillScope(tb testing.TB, store core.MemoryStore, scope core.MemoryScope, n int) {
	tb.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(uint64(n), 43))
	emb := Scripted{}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i += core.MaxMemoryWrite {
		var w core.MemoryWrite
		w.Scope = scope
		var texts []string
		for j := i; j < min(n, i+core.MaxMemoryWrite); j++ {
			texts = append(texts, benchText(r))
		}
		vecs, _ := emb.Embed(ctx, texts)
		for j, text := range texts {
			t := at.Add(time.Duration(i+j) * time.Minute)
			w.Put = append(w.Put, core.Memory{ID: memoryID("bench", scope.Subject, fmt.Sprint(i+j)), Subject: scope.Subject, Text: text,
				Source: core.MemoryFromExtraction, SourceRunID: "run-bench", CreatedAt: t, UpdatedAt: t, Vector: Quantize(vecs[j]), Embedder: emb.Name()})
		}
		if err := store.WriteMemories(ctx, w); err != nil {
			tb.Fatal(err)
		}
	}
}

func BenchmarkRecall(b *testing.B) {
	for _, st := range benchStores(b) {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", st.name, n), func(b *testing.B) {
				scope := core.MemoryScope{Tenant: "bench", Subject: fmt.Sprintf("user-%d", n)}
				fillScope(b, st.store, scope, n)
				svc, err := New(Config{Store: st.store, Embedders: NewEmbedders(EmbedderConfig{}),
					Agents: func(context.Context, string, string) (*agents.MemorySpec, error) { return nil, nil }})
				if err != nil {
					b.Fatal(err)
				}
				req := core.RecallRequest{Scope: scope, RunID: "run-1", Agent: "a", Query: "Which tea does the user drink in the mornings?",
					TopK: core.DefaultRecallTopK, MaxTokens: core.DefaultRecallMaxTokens}
				ctx := context.Background()
				if got, err := svc.Recall(ctx, req); err != nil || len(got) != core.DefaultRecallTopK {
					b.Fatalf("recall: %d memories, %v", len(got), err)
				}
				c0 := st.counters()
				b.ReportAllocs()
				b.ResetTimer()
				ops := 0
				for b.Loop() {
					if _, err := svc.Recall(ctx, req); err != nil {
						b.Fatal(err)
					}
					ops++
				}
				b.StopTimer()
				c1 := st.counters()
				per := func(x float64) float64 { return x / float64(ops) }
				b.ReportMetric(per(float64(c1.pages-c0.pages)), "pages/op")
				if c1.bytes > c0.bytes {
					b.ReportMetric(per(c1.rcu-c0.rcu), "RCU/op")
					b.ReportMetric(per(c1.reported-c0.reported), "reportedRCU/op")
					b.ReportMetric(per(float64(c1.bytes-c0.bytes))/1024, "itemKB/op")
					b.ReportMetric(per(float64(c1.call-c0.call))/1e6, "query-ms/op")
					b.ReportMetric(per(float64(c1.roundTrip-c0.roundTrip))/1e6, "roundtrip-ms/op")
				}
			})
		}
	}
}
