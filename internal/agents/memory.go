package agents

import "github.com/baton-agents/baton/core"

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

// EmbedderSpec names the model that embeds an agent's memories.
type EmbedderSpec struct {
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"`
	// Dimensions of the vectors (Titan v2: 256, 512 or 1024; default
	// 256).
	Dimensions int `json:"dimensions,omitempty"`
}
