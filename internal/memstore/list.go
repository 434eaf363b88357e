package memstore

import (
	"context"
	"fmt"
	"sort"

	"github.com/baton-agents/baton/core"
)

var _ core.RunLister = (*Store)(nil)

// ListRuns lists a tenant's runs newest first (core.RunLister). It reads
// every stored run, which suits an in-memory store.
func (s *Store) ListRuns(_ context.Context, tenant string, q core.RunListQuery) (core.RunPage, error) {
	after := ""
	if q.Cursor != "" {
		key, err := core.DecodeRunCursor(q.Cursor)
		if err != nil {
			return core.RunPage{}, err
		}
		after = key
	}
	if q.Limit < 1 {
		return core.RunPage{}, fmt.Errorf("%w: limit must be at least 1", core.ErrInvalidInput)
	}
	type entry struct {
		key string
		sum core.RunSummary
	}
	var all []entry
	s.mu.Lock()
	for _, r := range s.runs {
		if r.tenant != tenant {
			continue
		}
		st, err := core.UnmarshalState(r.state)
		if err != nil {
			s.mu.Unlock()
			return core.RunPage{}, err
		}
		key := core.RunListKey(st.CreatedAt, st.RunID)
		sum := st.Summary()
		if (after != "" && key >= after) || !q.Keeps(sum) {
			continue
		}
		all = append(all, entry{key, sum})
	}
	s.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].key > all[j].key })
	page := core.RunPage{Runs: []core.RunSummary{}}
	for i, e := range all {
		if i == q.Limit {
			page.Next = core.EncodeRunCursor(all[i-1].key)
			break
		}
		page.Runs = append(page.Runs, e.sum)
	}
	return page, nil
}
