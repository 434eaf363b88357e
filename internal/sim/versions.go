package sim

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// Agent versions under faults: while runs are in flight, a seed publishes
// a second agents file (the same agents with another system prompt) and
// points the default alias at it. Every run, and every child run it
// starts after the move, must run on the version it started on: each
// model request of a run carries that version's prompt, and each of its
// tool calls runs on that version's handlers (the second version's tools
// have handlers of their own).

// Systems of the two versions the battery runs.
const (
	systemV1 = "sim v1"
	systemV2 = "sim v2"
)

// adminToken holds agents:manage (publish, aliases).
const adminToken = "sim-admin-token-1"

// publishAt is the loop step at which seed moves the default alias:
// early, while the runs are in flight.
func publishAt(seed uint64) int { return int(seed % 24) }

// seenSystem records the version (its system prompt) a model request or
// a tool call of run ran on.
func (s *sim) seenSystem(runID, system string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.systems[runID] == nil {
		s.systems[runID] = map[string]bool{}
	}
	s.systems[runID][system] = true
}

// publishVersion publishes the second agents file through the API and
// points default at it.
func (s *sim) publishVersion(ctx context.Context) error {
	st, v := s.adminAPI(ctx, "POST", "/v1/agent-versions", agentsFileWith(s.mcp.URL, systemV2))
	if st != 201 {
		return fmt.Errorf("publish the second agents file: %d %v", st, v)
	}
	id, _ := v["id"].(string)
	if st, v := s.adminAPI(ctx, "PUT", "/v1/agent-aliases/"+core.DefaultAlias, `{"version":"`+id+`"}`); st != 200 {
		return fmt.Errorf("point default at %s: %d %v", id, st, v)
	}
	s.systemOf[id] = systemV2
	return nil
}

// checkRunVersion notes a violation when a run (or a child run) ran on
// more than one prompt, or on a prompt not its version's.
func (s *sim) checkRunVersion(label string, st core.RunState) {
	s.mu.Lock()
	seen := s.systems[st.RunID]
	s.mu.Unlock()
	want, ok := s.systemOf[st.Config.AgentVersion]
	if !ok {
		s.res.Violations = append(s.res.Violations, fmt.Sprintf("%s: run %s recorded agent version %q, which the battery never published", label, st.RunID, st.Config.AgentVersion))
		return
	}
	var got []string
	for p := range seen {
		got = append(got, p)
	}
	sort.Strings(got)
	if len(got) > 1 || (len(got) == 1 && got[0] != want) {
		s.res.Violations = append(s.res.Violations, fmt.Sprintf("%s: run %s on %s (%q) sent its model the prompts %s", label, st.RunID, st.Config.AgentVersion, want, strings.Join(got, ", ")))
	}
}

// followDefault is MutVersionFollowsDefault: a step loads whatever
// version the default alias names now, not its run's.
type followDefault struct {
	durable.Versions
	store core.AgentVersionStore
}

func (f followDefault) Load(ctx context.Context, id string) (*durable.Version, error) {
	if a, err := f.store.GetAgentAlias(ctx, core.DefaultAlias); err == nil {
		id = a.Routes[0].Version
	}
	return f.Versions.Load(ctx, id)
}
