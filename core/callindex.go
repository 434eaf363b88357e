package core

import (
	"sort"
	"sync"
)

// TranscriptIndex makes a step's CPU independent of the transcript's
// length. It is derived from one session's transcript, which is
// append-only, and extended with the messages it has not seen whenever a
// step is planned or applied with it, so each message is looked at once
// instead of at every later step. It answers the three questions a step
// used to scan the whole transcript for:
//
//   - duplicate detection: by a 64-bit hash of (tool name, canonical
//     parameters), the sequence number of the latest tool_call message
//     with that key that has a tool_result (each call is canonicalized
//     once, when first seen);
//   - the tool_call_ids already used in the session;
//   - where the latest compaction summary is.
//
// The duplicate key set is a filter: a call whose key it lacks has no
// answered duplicate, and a call whose key it holds is confirmed by the
// scan that decides the outcome, so a hash collision never changes an
// answer. An index is used only when the transcript a step is given
// covers every message it has indexed; otherwise (a step of an older
// state racing a newer one on the same worker) the step scans as before.
//
// It is not part of the serialized run state, because it is a function of
// the durable transcript: the in-process runner keeps one per run, a
// worker one next to each cached session transcript, built again with it
// when the cache is cold. Attach it with RunState.UseIndex. A
// TranscriptIndex is safe for concurrent use.
type TranscriptIndex struct {
	mu      sync.Mutex
	session string
	next    int64 // the first sequence number not indexed
	// open are the tool_call messages without a result yet, by id.
	open     map[string]indexedCall
	answered map[uint64]int64
	ids      map[string]struct{}
	// summary is the sequence number of the latest compaction summary
	// (0: none).
	summary int64
	// known is a call whose key the caller computed already (its
	// canonical parameters), for sync to take rather than compute again.
	known struct {
		id  string
		key uint64
	}
}

type indexedCall struct {
	key uint64
	seq int64
}

// NewTranscriptIndex returns an empty index of a session's transcript.
func NewTranscriptIndex(sessionID string) *TranscriptIndex {
	// Sized for a few dozen calls, so a run's first turns do not grow
	// the maps one step at a time.
	return &TranscriptIndex{session: sessionID, open: map[string]indexedCall{}, answered: make(map[uint64]int64, 32), ids: make(map[string]struct{}, 32)}
}

// UseIndex attaches a session's transcript index to the state, for the
// Plan and Apply calls given this state. An index of another session is
// ignored.
func (st *RunState) UseIndex(ix *TranscriptIndex) {
	if ix != nil && ix.session != st.SessionID {
		ix = nil
	}
	st.index = ix
}

// callKey hashes a call's tool name and canonical parameters.
func callKey(name string, params any) (key uint64, ok bool) {
	err := withCanonical(params, false, func(canon []byte, _ bool) { key = callKeyOf(name, canon) })
	return key, err == nil
}

// callKeyOf hashes a tool name and canonical parameters (64-bit
// FNV-1a of the name, a zero byte and the parameters).
func callKeyOf[B []byte | string](name string, canon B) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * prime
	}
	h *= prime // the zero byte
	for i := 0; i < len(canon); i++ {
		h = (h ^ uint64(canon[i])) * prime
	}
	return h
}

// sync indexes the messages of transcript (in sequence order) not yet
// seen, and reports whether the index now describes exactly transcript.
// The caller holds mu.
func (ix *TranscriptIndex) sync(transcript []Message) bool {
	i := sort.Search(len(transcript), func(i int) bool { return transcript[i].Seq >= ix.next })
	for _, msg := range transcript[i:] {
		if id := msg.ToolCallID(); id != "" {
			ix.ids[id] = struct{}{}
		}
		switch msg.Role {
		case RoleToolCall:
			id := msg.ToolCallID()
			key, ok := ix.known.key, ix.known.id != "" && ix.known.id == id
			if !ok {
				key, ok = callKey(msg.ToolName(), msg.Metadata[MetaParameters])
			}
			if ok {
				ix.open[id] = indexedCall{key: key, seq: msg.Seq}
			}
		case RoleToolResult:
			id := msg.ToolCallID()
			if c, ok := ix.open[id]; ok {
				delete(ix.open, id)
				if c.seq > ix.answered[c.key] {
					ix.answered[c.key] = c.seq
				}
			}
		}
		if _, ok := compactionMeta(msg); ok {
			ix.summary = msg.Seq
		}
		ix.next = msg.Seq + 1
	}
	if len(transcript) == 0 {
		return ix.next == 0
	}
	return ix.next == transcript[len(transcript)-1].Seq+1
}

// mayHaveAnswered reports whether the session may hold an answered call
// to name with these parameters at or after sequence number from. False
// is certain; true (or an unusable index) asks for the scan.
func (ix *TranscriptIndex) mayHaveAnswered(transcript []Message, from int64, c *CallState) bool {
	var key uint64
	ok, exact := false, false
	if canon, redacted := c.canonical(); !redacted {
		// Without a redaction, the call's canonical parameters are the
		// key's, and its tool_call message (the call's own parameters)
		// needs no other.
		key, ok, exact = callKeyOf(c.Name, canon), true, true
	} else {
		key, ok = callKey(c.Name, c.Parameters)
	}
	if !ok {
		return true
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if exact {
		ix.known.id, ix.known.key = c.ID, key
		defer func() { ix.known.id = "" }()
	}
	if !ix.sync(transcript) {
		return true
	}
	seq := ix.answered[key]
	return seq > 0 && seq >= from
}

// describes indexes transcript and reports whether the index can answer
// for it (hasID).
func (ix *TranscriptIndex) describes(transcript []Message) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.sync(transcript)
}

// hasID reports whether a tool_call_id occurs in the transcript the
// index describes.
func (ix *TranscriptIndex) hasID(id string) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	_, ok := ix.ids[id]
	return ok
}

// latestSummary returns the position in transcript of its latest
// compaction summary (-1: none), and false when the index cannot answer
// for transcript.
func (ix *TranscriptIndex) latestSummary(transcript []Message) (int, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.sync(transcript) {
		return 0, false
	}
	if ix.summary == 0 {
		return -1, true
	}
	i := sort.Search(len(transcript), func(i int) bool { return transcript[i].Seq >= ix.summary })
	if i == len(transcript) || transcript[i].Seq != ix.summary {
		return 0, false
	}
	return i, true
}
