package dynamostore

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// DueRuns lists runs whose DueAt is at or before now, earliest first (ties
// by run id), at most limit (0: no limit). It queries every shard of the
// sparse due index at once and merges the answers. The index is
// eventually consistent, so a commit may take a moment to show here.
func (s *Store) DueRuns(ctx context.Context, now time.Time, limit int) ([]string, error) {
	due, err := dueKey(now)
	if err != nil {
		return nil, fmt.Errorf("due runs: %w", err)
	}
	// "<time>#<run>" < "<time>$" for every run due at or before now.
	keys, err := s.indexKeys(ctx, dueShardPrefix, due+"$", limit)
	if err != nil {
		return nil, fmt.Errorf("due runs: %w", err)
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		_, out[i], _ = strings.Cut(k.gsiSK, "#")
	}
	return out, nil
}
