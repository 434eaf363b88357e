package memstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/baton-agents/baton/core"
)

var _ core.AgentVersionStore = (*Store)(nil)

// PutAgentVersion stores v unless its id is stored (core.AgentVersionStore).
func (s *Store) PutAgentVersion(_ context.Context, v core.AgentVersion) (core.AgentVersion, bool, error) {
	if len(v.File) > core.MaxAgentVersionBytes {
		return core.AgentVersion{}, false, fmt.Errorf("%w: the agents file is %d bytes as canonical JSON, more than a version's %d", core.ErrInvalidInput, len(v.File), core.MaxAgentVersionBytes)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.versions[v.ID]; ok {
		return cloneVersion(old), false, nil
	}
	s.versions[v.ID] = cloneVersion(v)
	s.audit = append(s.audit, core.AgentAuditEntry{At: v.PublishedAt, By: v.PublishedBy, Action: core.AuditPublish, Version: v.ID})
	return cloneVersion(v), true, nil
}

// GetAgentVersion returns a stored version (core.AgentVersionStore).
func (s *Store) GetAgentVersion(_ context.Context, id string) (core.AgentVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.versions[id]
	if !ok {
		return core.AgentVersion{}, fmt.Errorf("agent version %s: %w", id, core.ErrNotFound)
	}
	return cloneVersion(v), nil
}

// ListAgentVersions lists the versions newest first, without their files
// (core.AgentVersionStore).
func (s *Store) ListAgentVersions(context.Context) ([]core.AgentVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]core.AgentVersion, 0, len(s.versions))
	for _, v := range s.versions {
		v = cloneVersion(v)
		v.File = nil
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].PublishedAt.Equal(out[j].PublishedAt) {
			return out[i].PublishedAt.After(out[j].PublishedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// GetAgentAlias returns a stored alias (core.AgentVersionStore).
func (s *Store) GetAgentAlias(_ context.Context, name string) (core.AgentAlias, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.aliases[name]
	if !ok {
		return core.AgentAlias{}, fmt.Errorf("agent alias %s: %w", name, core.ErrNotFound)
	}
	return cloneAlias(a), nil
}

// PutAgentAlias stores a when the stored alias's revision is prev
// (core.AgentVersionStore).
func (s *Store) PutAgentAlias(_ context.Context, a core.AgentAlias, prev int64) (core.AgentAlias, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.aliases[a.Name]
	if old.Revision != prev {
		return core.AgentAlias{}, fmt.Errorf("agent alias %s: revision %d, not %d: %w", a.Name, old.Revision, prev, core.ErrConflict)
	}
	a = cloneAlias(a)
	a.Revision = prev + 1
	s.aliases[a.Name] = a
	e := core.AgentAuditEntry{At: a.UpdatedAt, By: a.UpdatedBy, Action: core.AuditAlias, Alias: a.Name, After: new(cloneAlias(a))}
	if had {
		e.Before = new(cloneAlias(old))
	}
	s.audit = append(s.audit, e)
	return cloneAlias(a), nil
}

// ListAgentAudit lists the latest audit entries (core.AgentVersionStore).
func (s *Store) ListAgentAudit(_ context.Context, limit int) ([]core.AgentAuditEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []core.AgentAuditEntry
	for i := len(s.audit) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, s.audit[i])
	}
	return out, nil
}

// ListAgentAliases lists the aliases by name (core.AgentVersionStore).
func (s *Store) ListAgentAliases(context.Context) ([]core.AgentAlias, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]core.AgentAlias, 0, len(s.aliases))
	for _, name := range slices.Sorted(maps.Keys(s.aliases)) {
		out = append(out, cloneAlias(s.aliases[name]))
	}
	return out, nil
}

func cloneVersion(v core.AgentVersion) core.AgentVersion {
	v.File = slices.Clone(v.File)
	v.Agents = slices.Clone(v.Agents)
	return v
}

func cloneAlias(a core.AgentAlias) core.AgentAlias {
	a.Routes = slices.Clone(a.Routes)
	a.Tenants = maps.Clone(a.Tenants)
	return a
}
