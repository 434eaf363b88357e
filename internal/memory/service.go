package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
)

// AgentLookup returns the memory declaration of an agent version (the
// agents file's "memory"; nil when the agent declares none, which takes
// every default). version "" is the deployment's current version of the
// agent. An agent the deployment does not know is an error.
type AgentLookup func(ctx context.Context, agent, version string) (*agents.MemorySpec, error)

// Config is what a Service needs from the composition root.
type Config struct {
	// Store keeps the memories (core.Storage's core.MemoryStore).
	Store core.MemoryStore
	// Models runs the extraction's model call (the deployment's
	// core.ModelRouter). Only Extract needs it.
	Models core.ModelProvider
	// Agents finds an agent version's memory declaration: its embedder
	// and its extraction settings.
	Agents AgentLookup
	// Embedders builds the declared embedders (NewEmbedders).
	Embedders *Embedders
	// Clock stamps the memories; nil is the system clock.
	Clock core.Clock
	Log   *slog.Logger
}

// Service recalls, extracts and executes the memory tools over a store.
type Service struct {
	store     core.MemoryStore
	models    core.ModelProvider
	agents    AgentLookup
	embedders *Embedders
	clock     core.Clock
	log       *slog.Logger
}

var (
	_ core.MemoryRecaller  = (*Service)(nil)
	_ core.MemoryExtractor = (*Service)(nil)
	_ core.ToolExecutor    = (*Service)(nil)
)

// New builds a Service; Store, Agents and Embedders are required.
func New(cfg Config) (*Service, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("memory: a store is required")
	case cfg.Agents == nil:
		return nil, errors.New("memory: an agent lookup is required")
	case cfg.Embedders == nil:
		return nil, errors.New("memory: embedders are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: cfg.Store, models: cfg.Models, agents: cfg.Agents, embedders: cfg.Embedders, clock: cfg.Clock, log: cfg.Log}, nil
}

// MaxRecallTopK caps how many memories one recall returns.
const MaxRecallTopK = 50

// MaxQueryBytes caps the part of a recall query that is embedded (the
// query of a run's first recall is its first user message, which may be
// long): the first MaxQueryBytes bytes.
const MaxQueryBytes = 8000

// agent returns the memory declaration of an agent version (the zero
// declaration when it has none) and its embedder.
func (s *Service) agent(ctx context.Context, agent, version string) (agents.MemorySpec, Embedder, error) {
	spec, err := s.agents(ctx, agent, version)
	if err != nil {
		return agents.MemorySpec{}, nil, fmt.Errorf("memory: agent %s: %w", agent, err)
	}
	var m agents.MemorySpec
	if spec != nil {
		m = *spec
	}
	emb, err := s.embedders.For(m.Embedder)
	if err != nil {
		return m, nil, fmt.Errorf("memory: agent %s: %w", agent, err)
	}
	return m, emb, nil
}

// Recall returns the scope's memories most relevant to req.Query, best
// first, at most TopK (core.DefaultRecallTopK when not positive, at most
// MaxRecallTopK) within MaxTokens estimated tokens
// (core.DefaultRecallMaxTokens when not positive). See the package
// documentation for the ranking.
func (s *Service) Recall(ctx context.Context, req core.RecallRequest) ([]core.RecalledMemory, error) {
	if err := req.Scope.Validate(); err != nil {
		return nil, err
	}
	_, emb, err := s.agent(ctx, req.Agent, req.AgentVersion)
	if err != nil {
		return nil, err
	}
	// Read first: a scope without memories (a user's first run) or
	// without vectors of this embedder needs no embedding of the query.
	var found []Scored
	comparable := false
	err = s.scan(ctx, req.Scope, func(m core.Memory) {
		found = append(found, Scored{Memory: m})
		comparable = comparable || (m.Embedder == emb.Name() && len(m.Vector) > 0)
	})
	if err != nil || len(found) == 0 {
		return nil, err
	}
	r, err := s.ranker(ctx, emb, req.Query, comparable)
	if err != nil {
		return nil, err
	}
	for i := range found {
		found[i] = r.Score(found[i].Memory)
	}
	top := Select(found, req.TopK, req.MaxTokens)
	out := make([]core.RecalledMemory, len(top))
	for i, c := range top {
		out[i] = core.RecalledMemory{ID: c.Memory.ID, Text: c.Memory.Text, CreatedAt: c.Memory.CreatedAt, Score: c.Score}
	}
	return out, nil
}

// ranker returns the ranker of a recall at the clock's now, with query
// embedded when embed is set and the query is not empty (without a
// vector, words and recency rank).
func (s *Service) ranker(ctx context.Context, emb Embedder, query string, embed bool) (*Ranker, error) {
	query = strings.TrimSpace(truncate(query, MaxQueryBytes))
	r := &Ranker{Embedder: emb.Name(), Words: Words(query), Now: s.clock.Now()}
	if query == "" || !embed {
		return r, nil
	}
	vecs, err := emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("memory: embedding the recall query: %w", err)
	}
	r.Query = Quantize(vecs[0])
	return r, nil
}

// scan calls fn with every memory of the scope, page by page.
func (s *Service) scan(ctx context.Context, scope core.MemoryScope, fn func(core.Memory)) error {
	cursor := ""
	for {
		page, next, err := s.store.Memories(ctx, scope, cursor, 0)
		if err != nil {
			return fmt.Errorf("memory: reading the memories of %s: %w", scope.Subject, err)
		}
		for _, m := range page {
			fn(m)
		}
		if next == "" {
			return nil
		}
		if next == cursor {
			return fmt.Errorf("memory: the store returned the same cursor twice reading the memories of %s", scope.Subject)
		}
		cursor = next
	}
}

// memoryID is the id of a memory derived from parts: "mem-" and 26 hex
// digits of their SHA-256, so a write repeated after a crash puts the
// same ids.
func memoryID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "mem-" + hex.EncodeToString(sum[:13])
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
