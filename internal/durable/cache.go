package durable

import (
	"container/list"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/baton-agents/baton/core"
)

// transcriptCache keeps session transcripts a worker has read, so a step
// reads only the messages committed since (transcripts are append-only:
// a committed message never changes). It is bounded by an estimate of the
// bytes it holds and evicts the least recently used session.
type transcriptCache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	entries map[string]*list.Element
	lru     *list.List
}

type cacheEntry struct {
	key  string
	msgs []core.Message
	next int64 // the first sequence number not cached
	size int64
	// index is the transcript index of the session (see
	// core.TranscriptIndex), kept and evicted with its transcript.
	index *core.TranscriptIndex
}

func newTranscriptCache(maxBytes int64) *transcriptCache {
	if maxBytes <= 0 {
		return nil
	}
	return &transcriptCache{max: maxBytes, entries: map[string]*list.Element{}, lru: list.New()}
}

func messageSize(m core.Message) int64 { return int64(len(m.Content)) + 256 }

// get returns the cached prefix below before and the sequence number to
// read from next.
func (c *transcriptCache) get(key string, before int64) ([]core.Message, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, 0
	}
	c.lru.MoveToFront(el)
	e := el.Value.(*cacheEntry)
	n := len(e.msgs)
	for n > 0 && e.msgs[n-1].Seq >= before {
		n--
	}
	return e.msgs[:n:n], e.next
}

// put extends a session's cached transcript with messages read after next.
func (c *transcriptCache) put(key string, from int64, more []core.Message, next int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var e *cacheEntry
	if el, ok := c.entries[key]; ok {
		e = el.Value.(*cacheEntry)
		c.lru.MoveToFront(el)
		if e.next != from {
			return // another reader extended it meanwhile
		}
	} else {
		if from != 0 {
			return // only a full read may start a session's entry
		}
		e = &cacheEntry{key: key, index: core.NewTranscriptIndex(sessionOf(key))}
		c.entries[key] = c.lru.PushFront(e)
	}
	for _, m := range more {
		e.msgs = append(e.msgs, m)
		s := messageSize(m)
		e.size += s
		c.size += s
	}
	if next > e.next {
		e.next = next
	}
	for c.size > c.max && c.lru.Len() > 0 {
		old := c.lru.Back()
		oe := old.Value.(*cacheEntry)
		c.lru.Remove(old)
		delete(c.entries, oe.key)
		c.size -= oe.size
	}
}

// index returns the cached session's transcript index, or nil.
func (c *transcriptCache) index(key string) *core.TranscriptIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		return el.Value.(*cacheEntry).index
	}
	return nil
}

// cacheKey is the cache's key of a tenant's session; sessionOf reads the
// session back.
func cacheKey(tenant, sessionID string) string { return tenant + "\x00" + sessionID }

func sessionOf(key string) string { return key[strings.IndexByte(key, 0)+1:] }

// useIndex attaches the cached transcript index of the state's session,
// so planning and applying the state's step cost the same however long
// the transcript is. Without a cached transcript the step scans it.
func (e *Runner) useIndex(tenant string, st *core.RunState) {
	if e.cache != nil {
		st.UseIndex(e.cache.index(cacheKey(tenant, st.SessionID)))
	}
}

// transcript returns the session transcript below the state's committed
// message counter, reading only what the cache lacks.
func (e *Runner) transcript(ctx context.Context, tenant string, st core.RunState) ([]core.Message, error) {
	return e.transcriptBefore(ctx, tenant, st.SessionID, st.Base, st.NextMsgSeq)
}

// messages reads a session's messages with after < seq < before, at most
// limit (0: all), in order: those below its own from the sessions its
// base names (a fork's shared prefix, core.TranscriptSegment), then its
// own.
func (e *Runner) messages(ctx context.Context, tenant, sessionID string, base []core.TranscriptSegment, after, before int64, limit int) ([]core.Message, error) {
	var out []core.Message
	read := func(session string, from, to int64) error { // seqs in [from, to)
		lo, hi := max(after, from-1), min(before, to)
		n := 0
		if limit > 0 {
			if n = limit - len(out); n <= 0 {
				return nil
			}
		}
		if lo+1 >= hi {
			return nil
		}
		msgs, err := e.Store.Messages(ctx, tenant, session, lo, hi, n)
		out = append(out, msgs...)
		return err
	}
	from := int64(1)
	for _, seg := range base {
		if err := read(seg.SessionID, from, seg.Before); err != nil {
			return nil, err
		}
		from = seg.Before
	}
	if err := read(sessionID, from, before); err != nil {
		return nil, err
	}
	return out, nil
}

// transcriptBefore returns the session's messages below before.
func (e *Runner) transcriptBefore(ctx context.Context, tenant, sessionID string, base []core.TranscriptSegment, before int64) ([]core.Message, error) {
	if before <= 1 { // message seqs start at 1
		return nil, nil
	}
	key := cacheKey(tenant, sessionID)
	var cached []core.Message
	var from int64
	if e.cache != nil {
		cached, from = e.cache.get(key, before)
		if from >= before {
			return cached, nil
		}
	}
	after := int64(0)
	if from > 0 {
		after = from - 1
	}
	more, err := e.messages(ctx, tenant, sessionID, base, after, before, 0)
	if err != nil {
		return nil, fmt.Errorf("load transcript of session %s: %w", sessionID, err)
	}
	if e.cache == nil {
		return more, nil
	}
	e.cache.put(key, from, more, before)
	out := make([]core.Message, 0, len(cached)+len(more))
	out = append(append(out, cached...), more...)
	return out, nil
}

// committed adds a commit's own messages to the cache, so the next step
// of the session needs no transcript read at all.
func (e *Runner) committed(tenant string, out core.Output) {
	if e.cache == nil || len(out.Messages) == 0 {
		return
	}
	st := out.State
	e.cache.put(cacheKey(tenant, st.SessionID), st.NextMsgSeq-int64(len(out.Messages)), out.Messages, st.NextMsgSeq)
}
