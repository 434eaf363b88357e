package agents

import (
	"fmt"
	"strings"

	"github.com/baton-agents/baton/core"
)

// OverrideMemorySubject lets a run request name the end user whose
// memories the run uses ("memory_subject"), when the caller's scopes
// also allow it.
const OverrideMemorySubject = "memory_subject"

// Memory scopes of an agent (MemorySpec.Scope).
const (
	// MemoryScopeUser: each end user's own memories (the default).
	MemoryScopeUser = "user"
	// MemoryScopeAgent: one agent-wide scope per tenant, shared by its
	// users (core.AgentSubject).
	MemoryScopeAgent = "agent"
)

// MemorySpec is an agent's long-term memory, as the agents file
// declares it ("memory"). It is a declaration: the composition root
// builds the embedder and the store calls from it.
type MemorySpec struct {
	// Scope is MemoryScopeUser (default) or MemoryScopeAgent.
	Scope string `json:"scope,omitempty"`
	// Tools offers the model memory/remember, memory/recall and
	// memory/forget.
	Tools      bool            `json:"tools,omitempty"`
	Extraction *ExtractionSpec `json:"extraction,omitempty"`
	Recall     *RecallSpec     `json:"recall,omitempty"`
	Embedder   *EmbedderSpec   `json:"embedder,omitempty"`
}

// ExtractionSpec turns on the extraction of facts and preferences when
// a run completes.
type ExtractionSpec struct {
	Enabled bool `json:"enabled"`
	// Prompt replaces the default extraction prompt.
	Prompt string `json:"prompt,omitempty"`
	// Model replaces the run's model for the extraction call.
	Model *core.ModelSpec `json:"model,omitempty"`
	// Summary also stores a short summary of the session.
	Summary bool `json:"summary,omitempty"`
	// MaxFacts caps the memories one extraction writes (default 10, at
	// most core.MaxMemoryWrite).
	MaxFacts int `json:"max_facts,omitempty"`
}

// RecallSpec is how many memories a run recalls before its first model
// turn, within how many (estimated) tokens; TopK 0 takes the default,
// a negative TopK recalls nothing at the start (the recall tool still
// works).
type RecallSpec struct {
	TopK      int `json:"top_k,omitempty"`
	MaxTokens int `json:"max_tokens,omitempty"`
}

// Embedder providers (EmbedderSpec.Provider).
const (
	// EmbedderScripted is the deterministic embedder of tests and baton
	// dev (the default).
	EmbedderScripted = "scripted"
	// EmbedderOpenAI is an OpenAI-compatible /embeddings endpoint (the
	// deployment's OpenAI settings).
	EmbedderOpenAI = "openai"
	// EmbedderBedrock is Amazon Titan Text Embeddings v2 on Bedrock.
	EmbedderBedrock = "bedrock"
)

// TitanV2 is the model of the bedrock embedder: Amazon Titan Text
// Embeddings v2.
const TitanV2 = "amazon.titan-embed-text-v2:0"

// EmbedderSpec names the model that embeds an agent's memories.
type EmbedderSpec struct {
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"`
	// Dimensions of the vectors (Titan v2: 256, 512 or 1024; default
	// 256).
	Dimensions int `json:"dimensions,omitempty"`
}

// Memory bounds of the agents file.
const (
	maxRecallTopK      = 50
	maxRecallMaxTokens = 8000
	// DefaultExtractionFacts is how many memories an extraction writes
	// at most when the agent does not say.
	DefaultExtractionFacts = 10
)

// parseMemory checks the agent's memory block and adds the memory tools
// when it asks for them.
func (a *Agent) parseMemory() error {
	m := a.Spec.Memory
	if m == nil {
		if a.allowed[OverrideMemorySubject] {
			return fmt.Errorf("allow_overrides: memory_subject needs a memory block")
		}
		return nil
	}
	switch m.Scope {
	case "", MemoryScopeUser:
	case MemoryScopeAgent:
		if a.allowed[OverrideMemorySubject] {
			return fmt.Errorf("allow_overrides: memory_subject does not go with memory.scope agent (one scope for the whole tenant)")
		}
	default:
		return fmt.Errorf("memory.scope: want %q or %q, got %q", MemoryScopeUser, MemoryScopeAgent, m.Scope)
	}
	if r := m.Recall; r != nil {
		if r.TopK > maxRecallTopK {
			return fmt.Errorf("memory.recall.top_k: at most %d, got %d", maxRecallTopK, r.TopK)
		}
		if r.MaxTokens < 0 || r.MaxTokens > maxRecallMaxTokens {
			return fmt.Errorf("memory.recall.max_tokens: 0 (default %d) to %d, got %d", core.DefaultRecallMaxTokens, maxRecallMaxTokens, r.MaxTokens)
		}
	}
	if x := m.Extraction; x != nil {
		if x.MaxFacts < 0 || x.MaxFacts > core.MaxMemoryWrite {
			return fmt.Errorf("memory.extraction.max_facts: 0 (default %d) to %d, got %d", DefaultExtractionFacts, core.MaxMemoryWrite, x.MaxFacts)
		}
		if x.Model != nil && x.Model.Provider == "" {
			return fmt.Errorf("memory.extraction.model.provider is required")
		}
		if len(x.Prompt) > 16<<10 {
			return fmt.Errorf("memory.extraction.prompt: at most 16 KiB")
		}
	}
	if e := m.Embedder; e != nil {
		switch e.Provider {
		case EmbedderScripted, EmbedderOpenAI:
		case EmbedderBedrock:
			if e.Model != "" && e.Model != TitanV2 {
				return fmt.Errorf("memory.embedder.model: the bedrock embedder is %s, not %q", TitanV2, e.Model)
			}
			if e.Dimensions != 0 && e.Dimensions != 256 && e.Dimensions != 512 && e.Dimensions != 1024 {
				return fmt.Errorf("memory.embedder.dimensions: Titan Text Embeddings v2 takes 256, 512 or 1024, got %d", e.Dimensions)
			}
		default:
			return fmt.Errorf("memory.embedder.provider: want %q, %q or %q, got %q", EmbedderScripted, EmbedderOpenAI, EmbedderBedrock, e.Provider)
		}
		if e.Dimensions < 0 || e.Dimensions > 4096 {
			return fmt.Errorf("memory.embedder.dimensions: 0 (the model's default) to 4096, got %d", e.Dimensions)
		}
	}
	if m.Tools {
		for _, t := range a.Tools {
			if strings.HasPrefix(t.Name, core.ExecutorMemory+"/") {
				return fmt.Errorf("tools: %s: memory/ names are the memory tools (memory.tools)", t.Name)
			}
		}
		a.Tools = append(a.Tools, core.MemoryTools()...)
	}
	return nil
}

// memoryPolicy is a run's memory policy: the agent's, with subject (the
// request's memory_subject, or "" for the caller's own, which the runner
// fills in from the run's principal).
func (a *Agent) memoryPolicy(subject string) *core.MemoryPolicy {
	m := a.Spec.Memory
	if m == nil {
		return nil
	}
	p := &core.MemoryPolicy{Subject: subject, TopK: core.DefaultRecallTopK, MaxTokens: core.DefaultRecallMaxTokens}
	if m.Scope == MemoryScopeAgent {
		p.Subject = core.AgentSubject(a.Spec.Slug)
	}
	if r := m.Recall; r != nil {
		switch {
		case r.TopK < 0:
			p.TopK = 0
		case r.TopK > 0:
			p.TopK = r.TopK
		}
		if r.MaxTokens > 0 {
			p.MaxTokens = r.MaxTokens
		}
	}
	p.Extract = m.Extraction != nil && m.Extraction.Enabled
	return p
}
