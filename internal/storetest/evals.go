package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-agents/baton/core"
)

// testEvals: an eval is stored once with its dataset (one over gzip's
// threshold too) and read back by its tenant only; a tenant's evals list
// newest first without datasets, page by page; a cancel is kept once; a
// case's result is stored once, however many writers race to store it,
// and results list by case.
func testEvals(t *testing.T, newStore func(*testing.T) Store) {
	s, ctx := newStore(t), context.Background()
	ev := func(id, tenant string, at time.Time, dataset string) core.EvalRecord {
		return core.EvalRecord{ID: id, Tenant: tenant, Agent: "demo", Version: "av_0000000000000001", Tools: "replay", Concurrency: 2, Total: 3,
			Dataset: []byte(dataset), CreatedAt: at}
	}
	big := `[` + strings.TrimSuffix(strings.Repeat(`{"id":"c","input":{"messages":[{"role":"user","content":"hello there"}]}},`, 3000), ",") + `]`
	a, b, c := ev("ev_a", "acme", t0, `[{"id":"1"}]`), ev("ev_b", "acme", t0.Add(time.Minute), big), ev("ev_c", "globex", t0.Add(2*time.Minute), `[]`)
	for _, e := range []core.EvalRecord{a, b, c} {
		if err := s.CreateEval(ctx, e); err != nil {
			t.Fatalf("create %s: %v", e.ID, err)
		}
	}
	if err := s.CreateEval(ctx, a); !errors.Is(err, core.ErrConflict) {
		t.Fatalf("a second create: %v", err)
	}
	got, err := s.GetEval(ctx, "acme", "ev_b")
	if err != nil || !bytes.Equal(got.Dataset, b.Dataset) || got.Agent != "demo" || !got.CreatedAt.Equal(b.CreatedAt) || got.Concurrency != 2 {
		t.Fatalf("get ev_b: %v (dataset %d bytes, want %d)", err, len(got.Dataset), len(b.Dataset))
	}
	for _, tc := range []struct{ tenant, id string }{{"globex", "ev_a"}, {"acme", "ev_c"}, {"acme", "ev_none"}} {
		if _, err := s.GetEval(ctx, tc.tenant, tc.id); !errors.Is(err, core.ErrNotFound) {
			t.Fatalf("%s reads %s: %v", tc.tenant, tc.id, err)
		}
	}
	list, next, err := s.ListEvals(ctx, "acme", 1, "")
	if err != nil || len(list) != 1 || list[0].ID != "ev_b" || list[0].Dataset != nil || next == "" {
		t.Fatalf("first page: %+v %q %v", list, next, err)
	}
	list, next, err = s.ListEvals(ctx, "acme", 1, next)
	if err != nil || len(list) != 1 || list[0].ID != "ev_a" || next != "" {
		t.Fatalf("second and last page: %+v %q %v", list, next, err)
	}
	if list, _, err = s.ListEvals(ctx, "acme", 5, ""); err != nil || len(list) != 2 {
		t.Fatalf("one page of all: %+v %v", list, err)
	}
	if _, _, err := s.ListEvals(ctx, "acme", 5, "not-a-cursor"); !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("a bad cursor: %v", err)
	}
	if err := s.CancelEval(ctx, "globex", "ev_a", t0); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("another tenant cancels: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := s.CancelEval(ctx, "acme", "ev_a", t0.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatalf("cancel %d: %v", i, err)
		}
	}
	got, err = s.GetEval(ctx, "acme", "ev_a")
	if err != nil || !got.Cancelled || got.CancelledAt == nil || !got.CancelledAt.Equal(t0) {
		t.Fatalf("cancelled eval: %+v %v", got, err)
	}
	if list, _, _ := s.ListEvals(ctx, "acme", 5, ""); len(list) != 2 || !list[1].Cancelled {
		t.Fatalf("the list after a cancel: %+v", list)
	}

	// Racing writers store each case once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored := map[int]int{}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for n := 2; n >= 0; n-- {
				ok, err := s.PutEvalResult(ctx, "ev_b", core.EvalResult{Case: n, Pass: n != 1, Data: []byte(fmt.Sprintf(`{"writer":%d}`, w))})
				if err != nil {
					t.Errorf("put case %d: %v", n, err)
					return
				}
				if ok {
					mu.Lock()
					stored[n]++
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	if stored[0] != 1 || stored[1] != 1 || stored[2] != 1 {
		t.Fatalf("stores per case: %v, want one each", stored)
	}
	rs, err := s.EvalResults(ctx, "ev_b")
	if err != nil || len(rs) != 3 || rs[0].Case != 0 || rs[2].Case != 2 || rs[1].Pass || !rs[0].Pass || !bytes.HasPrefix(rs[0].Data, []byte(`{"writer":`)) {
		t.Fatalf("results: %+v %v", rs, err)
	}
	if rs, err := s.EvalResults(ctx, "ev_a"); err != nil || len(rs) != 0 {
		t.Fatalf("an eval without results: %+v %v", rs, err)
	}
}
