package core

import (
	"context"
	"errors"
	"time"
)

// Long-term memory: what an agent remembers of each end user across
// sessions. A memory belongs to a scope, (tenant, subject): the subject
// is the end user (the caller's identity, or the memory_subject a run
// names when its agent and the caller's scopes allow it), or, for an
// agent that declares an agent-wide scope, AgentSubject(agent): shared
// knowledge of the agent in its tenant. No read or write crosses scopes:
// every store call names one.
//
// A run of an agent with memory recalls the scope's most relevant
// memories before its first model turn (PlanRecall: one piece of I/O of
// the model_turn step, as compaction is), puts them in the model's
// context as quoted data (RenderMemories), and may call the memory tools
// (memory/remember, memory/recall, memory/forget: server tools executed
// through the ledger like any other). When it completes, its finishing
// commit stores an outbox record whose delivery runs the extraction
// once (StepMemoryExtract): the configured model condenses the run into
// facts, which are written with the run id as the write's Once key, so a
// second delivery writes nothing.

// Memory limits.
const (
	// MaxMemoryText caps one memory's text, in bytes.
	MaxMemoryText = 2000
	// MaxMemoryWrite caps the memories one write puts or deletes
	// (DynamoDB's transactions take 100 items; the write's markers take
	// two of them).
	MaxMemoryWrite = 25
	// AgentSubjectPrefix starts the subject of an agent-wide scope.
	AgentSubjectPrefix = "agent:"
)

// Memory sources (Memory.Source, MemoryWrittenData.Source).
const (
	MemoryFromTool       = "tool"
	MemoryFromExtraction = "extraction"
	MemoryFromSummary    = "summary"
)

// ErrErased is a memory write refused because its scope was erased at
// or after the write's Since (the start of the run that wrote it): an
// erasure wins over what runs that began before it would write later.
var ErrErased = errors.New("the subject's memories were erased after this run began")

// ErrMemoryDone is a write whose Once key an earlier write of the scope
// already used: nothing was written.
var ErrMemoryDone = errors.New("memory write already done")

// MemoryScope names whose memories a call reads or writes.
type MemoryScope struct {
	Tenant  string `json:"tenant"`
	Subject string `json:"subject"`
}

// Validate refuses a scope without a tenant or a subject.
func (s MemoryScope) Validate() error {
	if s.Tenant == "" || s.Subject == "" {
		return invalid("a memory scope needs a tenant and a subject")
	}
	return nil
}

// AgentSubject is the subject of agent's agent-wide memory scope.
func AgentSubject(agent string) string { return AgentSubjectPrefix + agent }

// Memory is one remembered fact or preference.
type Memory struct {
	ID      string `json:"id"`
	Subject string `json:"subject"`
	Text    string `json:"text"`
	// Source is MemoryFromTool, MemoryFromExtraction or MemoryFromSummary.
	Source      string    `json:"source,omitempty"`
	SourceRunID string    `json:"source_run_id,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	// Vector is the text's embedding, scaled to unit length and
	// quantized to int8 (Embedder names the model that made it); nil
	// when the memory was written without one.
	Vector   []int8 `json:"-"`
	Embedder string `json:"-"`
}

// Validate refuses a memory a store must not keep.
func (m Memory) Validate() error {
	if err := ValidateMemoryID(m.ID); err != nil {
		return err
	}
	switch {
	case m.Text == "":
		return invalid("a memory needs a text")
	case len(m.Text) > MaxMemoryText:
		return invalid("a memory's text is %d bytes; the limit is %d", len(m.Text), MaxMemoryText)
	case len(m.Vector) > MaxMemoryDims:
		return invalid("a memory's vector has %d dimensions; the limit is %d", len(m.Vector), MaxMemoryDims)
	}
	return nil
}

// MemoryWrite is one all-or-nothing write to a scope.
type MemoryWrite struct {
	Scope MemoryScope
	// Put stores memories, each replacing the scope's memory of the
	// same id.
	Put []Memory
	// Delete removes memories by id (an unknown id is no error).
	Delete []string
	// Once, when set, makes the write happen at most once in the scope:
	// a later write with the same Once writes nothing and returns
	// ErrMemoryDone. The store keeps the ids the write put under it
	// (MemoryOnce).
	Once string
	// Since, when set, refuses the write with ErrErased when the scope
	// was erased at or after Since.
	Since time.Time
}

// Validate checks a write's size, its Once key and its memories: each
// id is put or deleted at most once.
func (w MemoryWrite) Validate() error {
	if err := w.Scope.Validate(); err != nil {
		return err
	}
	if n := len(w.Put) + len(w.Delete); n > MaxMemoryWrite {
		return invalid("a memory write takes at most %d memories, got %d", MaxMemoryWrite, n)
	}
	if len(w.Once) > MaxMemoryOnce || !printableText(w.Once) {
		return invalid("a memory write's once key must be printable text of at most %d bytes", MaxMemoryOnce)
	}
	seen := make(map[string]bool, len(w.Put)+len(w.Delete))
	for _, m := range w.Put {
		if err := m.Validate(); err != nil {
			return err
		}
		if m.Subject != w.Scope.Subject {
			return invalid("memory %s names subject %q in a write to %q", m.ID, m.Subject, w.Scope.Subject)
		}
		if seen[m.ID] {
			return invalid("memory %s is written twice in one write", m.ID)
		}
		seen[m.ID] = true
	}
	for _, id := range w.Delete {
		if err := ValidateMemoryID(id); err != nil {
			return err
		}
		if seen[id] {
			return invalid("memory %s is written twice in one write", id)
		}
		seen[id] = true
	}
	return nil
}

// MemoryStore keeps memories by scope. Both durable stores implement it.
type MemoryStore interface {
	// WriteMemories applies w atomically: ErrErased, ErrMemoryDone, or
	// ErrInvalidInput (w.Validate) and nothing is written.
	WriteMemories(ctx context.Context, w MemoryWrite) error
	// Memories pages the scope's memories in id order (with their
	// vectors): at most limit (0: the store's page size) after cursor
	// (""), and the cursor of the next page ("" at the end). A cursor
	// the store did not hand out is ErrInvalidInput.
	Memories(ctx context.Context, scope MemoryScope, cursor string, limit int) ([]Memory, string, error)
	// Memory reads one memory of the scope: ErrNotFound when the scope
	// has none of that id.
	Memory(ctx context.Context, scope MemoryScope, id string) (Memory, error)
	// DeleteMemory removes one memory of the scope: ErrNotFound when the
	// scope has none of that id.
	DeleteMemory(ctx context.Context, scope MemoryScope, id string) error
	// EraseMemories erases the scope: it records the erasure at at
	// (later writes whose Since is at or before it are refused), then
	// deletes every memory of the scope, and returns how many it
	// deleted. Erasing again is no error.
	EraseMemories(ctx context.Context, scope MemoryScope, at time.Time) (int, error)
	// MemoryOnce returns the ids the write of Once key once put in the
	// scope: ErrNotFound when no write used it.
	MemoryOnce(ctx context.Context, scope MemoryScope, once string) ([]string, error)
}

// MemoryPolicy is a run's memory configuration (RunConfig.Memory),
// resolved when the run starts: whose scope it uses and what it does
// with it. The rest of the agent's memory configuration (its embedder,
// its extraction prompt) stays in the agents file.
type MemoryPolicy struct {
	// Subject is the scope's subject: the end user, or
	// AgentSubject(agent) for an agent-wide scope.
	Subject string `json:"subject"`
	// TopK, when positive, recalls up to TopK memories before the first
	// model turn, within MaxTokens (estimated) of context.
	TopK      int `json:"top_k,omitempty"`
	MaxTokens int `json:"max_tokens,omitempty"`
	// Extract runs the extraction when the run completes.
	Extract bool `json:"extract,omitempty"`
}

// Default memory recall budget.
const (
	DefaultRecallTopK      = 5
	DefaultRecallMaxTokens = 500
)

// RecallRequest asks for the scope's memories most relevant to Query.
type RecallRequest struct {
	Scope MemoryScope `json:"scope"`
	RunID string      `json:"run_id"`
	// Agent and AgentVersion name the run's agent (its embedder).
	Agent        string `json:"agent,omitempty"`
	AgentVersion string `json:"agent_version,omitempty"`
	Query        string `json:"query"`
	TopK         int    `json:"top_k"`
	MaxTokens    int    `json:"max_tokens"`
}

// RecalledMemory is one memory a recall returned, with its score.
type RecalledMemory struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
	Score     float64   `json:"score"`
}

// MemoryRecaller recalls memories (package memory).
type MemoryRecaller interface {
	Recall(ctx context.Context, req RecallRequest) ([]RecalledMemory, error)
}

// ExtractRequest asks for the extraction of one finished run.
type ExtractRequest struct {
	Scope        MemoryScope `json:"scope"`
	RunID        string      `json:"run_id"`
	Agent        string      `json:"agent,omitempty"`
	AgentVersion string      `json:"agent_version,omitempty"`
	// Model is the run's model (the extraction's, unless the agent's
	// extraction names another).
	Model ModelSpec `json:"model"`
	// Since is when the run started: an erasure of the scope after it
	// wins over the extraction.
	Since time.Time `json:"since"`
	// Messages are the run's own messages.
	Messages []Message `json:"messages"`
}

// MemoryExtractor runs extractions (package memory). Extract writes at
// most once per run (the run id is the write's Once key): a second call
// for a run writes nothing and returns what the first wrote.
type MemoryExtractor interface {
	Extract(ctx context.Context, req ExtractRequest) (MemoryWritten, error)
}

// MemoryWritten is the outcome of a memory write of a run: which
// memories it added, updated and deleted. Applied to the run (an
// extraction's, after the run finished), it records memory_written.
type MemoryWritten struct {
	Source  string   `json:"source"`
	Added   []string `json:"added,omitempty"`
	Updated []string `json:"updated,omitempty"`
	Deleted []string `json:"deleted,omitempty"`
	// Erased: the scope was erased after the run began; nothing was
	// written.
	Erased bool `json:"erased,omitempty"`
	// Usage is the extraction's model usage.
	Usage map[string]any `json:"usage,omitempty"`
	// Error, when set, is why an extraction gave up: nothing was
	// written.
	Error string `json:"error,omitempty"`
}

// MemoryRecalledData is the memory_recalled event's data: which
// memories a recall put in the model's context (their ids; the texts
// are not in the event log).
type MemoryRecalledData struct {
	IDs    []string `json:"ids"`
	Count  int      `json:"count"`
	Tokens int      `json:"tokens"`
	Error  string   `json:"error,omitempty"`
}

// MemoryWrittenData is the memory_written event's data.
type MemoryWrittenData struct {
	Source  string   `json:"source"`
	Added   []string `json:"added,omitempty"`
	Updated []string `json:"updated,omitempty"`
	Deleted []string `json:"deleted,omitempty"`
	Erased  bool     `json:"erased,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Memory events.
const (
	EventMemoryRecalled = "memory_recalled"
	EventMemoryWritten  = "memory_written"
)

// StepMemoryExtract is the queue message of a run's extraction: its
// RunID is the finished run.
const StepMemoryExtract StepKind = "memory_extract"

// MemoryExtractID is the Once key of a run's extraction write.
func MemoryExtractID(runID string) string { return "extract:" + runID }

// MaxSubjectLen caps a memory subject, in bytes.
const MaxSubjectLen = 256

// DefaultMemorySubject is the subject of a caller's own memories: its
// identity (a JWT's subject, an IAM principal, a token's label); "" when
// the caller has none.
func DefaultMemorySubject(p *Principal) string {
	if p == nil {
		return ""
	}
	return p.ActorID
}

// ValidateSubject refuses a subject a caller may not name: empty, longer
// than MaxSubjectLen, or holding control characters.
func ValidateSubject(s string) error {
	if s == "" {
		return invalid("a memory subject must not be empty")
	}
	if len(s) > MaxSubjectLen {
		return invalid("a memory subject is at most %d bytes, got %d", MaxSubjectLen, len(s))
	}
	if !printableText(s) {
		return invalid("a memory subject must be printable text")
	}
	return nil
}

// ExecutorMemory is the executor kind of the memory tools, which the
// deployment's memory service executes (package memory).
const ExecutorMemory = "memory"

// The memory tools.
const (
	ToolMemoryRemember = "memory/remember"
	ToolMemoryRecall   = "memory/recall"
	ToolMemoryForget   = "memory/forget"
)

// MemoryTools are the declarations of the memory tools an agent with
// memory tools offers its model.
func MemoryTools() []ToolDeclaration {
	str := func(desc string, max int) map[string]any {
		return map[string]any{"type": "string", "description": desc, "minLength": 1, "maxLength": max}
	}
	obj := func(name string, prop map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": map[string]any{name: prop}, "required": []any{name}, "additionalProperties": false}
	}
	// The memory tools may run again after an interrupted attempt: a
	// remembered memory's id comes from the call, a forgotten one stays
	// forgotten, a recall only reads.
	safe := func() map[string]any { return map[string]any{RuntimeRetrySafe: true} }
	return []ToolDeclaration{
		{Name: ToolMemoryRemember, Source: ExecutorMemory, Executor: ExecutorMemory, Scope: ScopeRun, Runtime: safe(),
			Description: "Remember a fact or preference of the user for later conversations. Write one self-contained sentence.",
			Parameters:  obj("text", str("The fact or preference, one sentence.", MaxMemoryText))},
		{Name: ToolMemoryRecall, Source: ExecutorMemory, Executor: ExecutorMemory, Scope: ScopeRun, Runtime: safe(),
			Description: "Search what you remember of the user. Returns the most relevant memories, each with its id.",
			Parameters:  obj("query", str("What to look for.", MaxMemoryText))},
		{Name: ToolMemoryForget, Source: ExecutorMemory, Executor: ExecutorMemory, Scope: ScopeRun, Runtime: safe(),
			Description: "Forget one memory of the user by its id (from memory/recall).",
			Parameters:  obj("id", str("The memory's id.", 200))},
	}
}

// ScopeMemoriesSubject is the caller scope that lets a request name a
// memory subject other than the caller's own (a run's memory_subject,
// the subject of GET and DELETE /v1/memories).
const ScopeMemoriesSubject = "memories:subject"
