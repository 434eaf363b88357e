package core

// CompactionPolicy turns on transcript compaction: when the model would
// see more than MaxMessages non-system messages, all but the most recent
// RecentMessages are summarized by the caller's Summarizer into one
// synthetic summary message.
type CompactionPolicy struct {
	Enabled        bool `json:"enabled"`
	MaxMessages    int  `json:"max_messages"`
	RecentMessages int  `json:"recent_messages"`
}

func (p *CompactionPolicy) active() bool { return p != nil && p.Enabled && p.MaxMessages > 0 }

func (p *CompactionPolicy) recent() int {
	if p.RecentMessages > 0 && p.RecentMessages < p.MaxMessages {
		return p.RecentMessages
	}
	return (p.MaxMessages + 1) / 2
}

// CompactionRequest is the I/O a compaction step needs.
type CompactionRequest struct {
	RunID    string
	Messages []Message // the messages to summarize, oldest first
	Through  int64     // the last compacted sequence number
	Retained int
}

// MetaCompaction is the metadata key of a compaction summary message.
const MetaCompaction = "compaction"

func compactionMeta(m Message) (map[string]any, bool) {
	c, ok := m.Metadata[MetaCompaction].(map[string]any)
	if !ok {
		return nil, false
	}
	s, _ := c["status"].(string)
	return c, s == "compacted"
}

// compactedView is the session transcript as the model sees it after
// compaction: system messages, the latest summary, then every message
// after the summary's boundary. The stored transcript is never rewritten.
func compactedView(transcript []Message) []Message {
	idx := -1
	for i := len(transcript) - 1; i >= 0; i-- {
		if _, ok := compactionMeta(transcript[i]); ok {
			idx = i
			break
		}
	}
	if idx < 0 {
		return transcript
	}
	meta, _ := compactionMeta(transcript[idx])
	through, _ := intOf(meta["compacted_through"])
	view := make([]Message, 0, len(transcript))
	for _, m := range transcript {
		if m.Role == RoleSystem && m.Seq <= through {
			view = append(view, m)
		}
	}
	view = append(view, transcript[idx])
	for i, m := range transcript {
		if i == idx || m.Seq <= through {
			continue
		}
		if _, summary := compactionMeta(m); summary {
			continue
		}
		view = append(view, m)
	}
	return view
}

// compactionPlan picks the messages to summarize: all but the most recent
// ones, moving the boundary back so that a tool call and its result are
// never separated.
func compactionPlan(p *CompactionPolicy, view []Message) (compact []Message, through int64, retained int, ok bool) {
	var rest []Message
	for _, m := range view {
		if m.Role != RoleSystem {
			rest = append(rest, m)
		}
	}
	if len(rest) <= p.MaxMessages {
		return nil, 0, 0, false
	}
	// Cut at the last block start at or before the target, so a tool call
	// group and its results stay on one side.
	target := len(rest) - p.recent()
	cut := 0
	for i := 0; i < len(rest); i = blockEnd(rest, i) {
		if i > target {
			break
		}
		cut = i
	}
	compact = rest[:cut]
	for _, m := range compact {
		if _, summary := compactionMeta(m); !summary && m.Seq > through {
			through = m.Seq
		}
	}
	if through == 0 {
		return nil, 0, 0, false
	}
	return compact, through, len(rest) - cut, true
}
