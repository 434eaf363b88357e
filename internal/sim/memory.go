package sim

import (
	"context"
	"fmt"
	"strings"

	"github.com/baton-agents/baton/core"
)

// Long-term memory in the battery: a remembering run (its agent
// sim-memory recalls and extracts) tells a fact of a subject of its own;
// when it completed, the fact is remembered exactly once, from that run,
// and the run records its extraction once; a run that did not complete
// is not extracted. Duplicate and lost deliveries of the run's steps and
// of its extraction message, crashes and frozen workers may not change
// that.

// rememberText is remembering run i's message: a fact the scripted
// extraction takes ("my …").
func rememberText(i int) string { return fmt.Sprintf("My locker code is k%d.", i) }

// memorySubject is remembering run i's end user.
func memorySubject(i int) string { return fmt.Sprintf("user-%d", i) }

// checkMemories checks the memories of remembering run i (id), whose
// events are evs.
func (s *sim) checkMemories(ctx context.Context, i int, id string, status core.RunStatus, evs []core.Event) error {
	ms, _, err := s.a.Store.Memories(ctx, core.MemoryScope{Tenant: tenant, Subject: memorySubject(i)}, "", 0)
	if err != nil {
		return err
	}
	written := 0
	for _, e := range evs {
		if e.Type == core.EventMemoryWritten && e.Fields()["source"] == core.MemoryFromExtraction {
			written++
		}
	}
	run := s.index[id]
	bad := func(format string, args ...any) {
		s.res.Violations = append(s.res.Violations, run+": "+fmt.Sprintf(format, args...))
	}
	if status != core.StatusCompleted {
		if len(ms) != 0 || written != 0 {
			bad("a run that ended %s was extracted: %d memories, %d memory_written", status, len(ms), written)
		}
		return nil
	}
	if written != 1 {
		bad("its extraction was recorded %d times, want once", written)
	}
	want := fmt.Sprintf("k%d", i)
	if len(ms) != 1 || ms[0].SourceRunID != id || !strings.Contains(ms[0].Text, want) {
		var texts []string
		for _, m := range ms {
			texts = append(texts, m.Text+" ("+m.SourceRunID+")")
		}
		bad("its fact is remembered %d times (%s), want once from the run", len(ms), strings.Join(texts, "; "))
	}
	return nil
}
