package durable

import (
	"fmt"
	"strings"
	"testing"

	"github.com/baton-agents/baton/core"
)

// msgs are messages seq from..to-1 of 10 bytes (266 bytes each in the
// cache's estimate: content plus 256).
func cacheMsgs(from, to int64) []core.Message {
	var out []core.Message
	for s := from; s < to; s++ {
		out = append(out, core.Message{Role: core.RoleUser, Content: strings.Repeat("m", 10), Seq: s})
	}
	return out
}

func seqs(ms []core.Message) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%d ", m.Seq)
	}
	return strings.TrimSpace(b.String())
}

// TestTranscriptCache: what the transcript cache returns after a series
// of reads: a session's prefix below the asked bound, only full reads
// starting an entry, only the reader that read on from the cached end
// extending it, and the least recently used sessions evicted once the
// estimate passes the bound (and not at it).
func TestTranscriptCache(t *testing.T) {
	const msgSize = 266
	type put struct {
		key  string
		from int64
		span [2]int64 // the messages' seqs
		next int64
	}
	type get struct {
		key      string
		before   int64
		want     string // the cached seqs
		wantNext int64
	}
	cases := []struct {
		name string
		max  int64
		ops  []any
	}{
		{"a miss", 10 * msgSize, []any{get{"a", 5, "", 0}}},
		{"a full read, then a prefix of it", 10 * msgSize, []any{
			put{"a", 0, [2]int64{1, 4}, 4},
			get{"a", 4, "1 2 3", 4},
			get{"a", 3, "1 2", 4}, // the message at the bound is not below it
			get{"a", 1, "", 4},
		}},
		{"a read from the middle starts no entry", 10 * msgSize, []any{
			put{"a", 3, [2]int64{3, 5}, 5},
			get{"a", 5, "", 0},
		}},
		{"read on from the cached end", 10 * msgSize, []any{
			put{"a", 0, [2]int64{1, 3}, 3},
			put{"a", 3, [2]int64{3, 5}, 5},
			get{"a", 9, "1 2 3 4", 5},
		}},
		{"a reader that read from elsewhere leaves it", 10 * msgSize, []any{
			put{"a", 0, [2]int64{1, 3}, 3},
			put{"a", 2, [2]int64{2, 5}, 5},
			get{"a", 9, "1 2", 3},
		}},
		{"next never goes back", 10 * msgSize, []any{
			put{"a", 0, [2]int64{1, 3}, 6},
			put{"a", 6, [2]int64{6, 6}, 4},
			get{"a", 9, "1 2", 6},
		}},
		{"at the bound nothing is evicted", 4 * msgSize, []any{
			put{"a", 0, [2]int64{1, 3}, 3},
			put{"b", 0, [2]int64{1, 3}, 3},
			get{"a", 9, "1 2", 3},
			get{"b", 9, "1 2", 3},
		}},
		{"past the bound the least recently used goes", 4 * msgSize, []any{
			put{"a", 0, [2]int64{1, 3}, 3},
			put{"b", 0, [2]int64{1, 3}, 3},
			get{"a", 9, "1 2", 3}, // a is used: b is the least recent
			put{"c", 0, [2]int64{1, 2}, 2},
			get{"b", 9, "", 0},
			get{"a", 9, "1 2", 3},
			get{"c", 9, "1", 2},
		}},
		{"a session larger than the bound is not kept", msgSize, []any{
			put{"a", 0, [2]int64{1, 3}, 3},
			get{"a", 9, "", 0},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTranscriptCache(tc.max)
			for i, op := range tc.ops {
				switch op := op.(type) {
				case put:
					c.put(op.key, op.from, cacheMsgs(op.span[0], op.span[1]), op.next)
				case get:
					got, next := c.get(op.key, op.before)
					if seqs(got) != op.want || next != op.wantNext {
						t.Fatalf("op %d: get(%s, %d) = [%s] next %d, want [%s] next %d", i, op.key, op.before, seqs(got), next, op.want, op.wantNext)
					}
				}
			}
		})
	}
	for _, max := range []int64{0, -1} {
		if newTranscriptCache(max) != nil {
			t.Errorf("a cache of %d bytes", max)
		}
	}
}
