package executors

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/toolspec"
)

// Handler is a Go tool handler.
type Handler func(ctx context.Context, call core.ToolCall) (any, error)

// GoRegistry holds Go handlers by name.
type GoRegistry struct {
	mu       sync.RWMutex
	handlers map[string]Handler
}

// NewGoRegistry returns a registry with the built-in handlers: "echo"
// returns the call's parameters.
func NewGoRegistry() *GoRegistry {
	r := &GoRegistry{handlers: map[string]Handler{}}
	r.Register("echo", func(_ context.Context, c core.ToolCall) (any, error) {
		return map[string]any{"echo": c.Parameters}, nil
	})
	return r
}

// Register adds or replaces a handler.
func (r *GoRegistry) Register(name string, h Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[name] = h
}

// Lookup returns a handler.
func (r *GoRegistry) Lookup(name string) (Handler, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h, ok := r.handlers[name]
	return h, ok
}

// Names lists the registered handlers.
func (r *GoRegistry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.handlers)
}

// Router executes a call with the executor its agent configured for the
// tool.
type Router struct {
	byAgent map[string]map[string]core.ToolExecutor
}

var _ core.ToolExecutor = (*Router)(nil)

// Factory builds executors of one type (http, lambda) from their
// configuration, once per cold start; Factories returns the built-in ones.
// tool is the tool's name, for error messages.
type Factory func(tool string, ex toolspec.Executor) (core.ToolExecutor, error)

// NewRouter builds the executors of every agent's server tools once, at
// cold start. factories adds executor types beyond go; a configured type
// without a factory is an error, so a deployment never starts with a tool
// it cannot run.
func NewRouter(tools toolspec.Tools, goHandlers *GoRegistry, factories map[string]Factory) (*Router, error) {
	r := &Router{byAgent: map[string]map[string]core.ToolExecutor{}}
	for _, slug := range sortedKeys(tools) {
		m := map[string]core.ToolExecutor{}
		for _, name := range sortedKeys(tools[slug]) {
			ex := tools[slug][name]
			switch {
			case ex.Type == toolspec.TypeGo:
				h, ok := goHandlers.Lookup(ex.Handler)
				if !ok {
					return nil, fmt.Errorf("agent %s tool %s: no Go handler named %q is registered (have %v)", slug, name, ex.Handler, goHandlers.Names())
				}
				m[name] = core.ToolExecutorFunc(h)
			case factories[ex.Type] != nil:
				e, err := factories[ex.Type](name, ex)
				if err != nil {
					return nil, fmt.Errorf("agent %s tool %s: %w", slug, name, err)
				}
				m[name] = e
			default:
				return nil, fmt.Errorf("agent %s tool %s: executor type %q is not available in this build", slug, name, ex.Type)
			}
		}
		r.byAgent[slug] = m
	}
	return r, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the executor of agent's tool.
func (r *Router) Lookup(agent, tool string) (core.ToolExecutor, bool) {
	e, ok := r.byAgent[agent][tool]
	return e, ok
}

// Execute runs call with its tool's executor.
func (r *Router) Execute(ctx context.Context, call core.ToolCall) (any, error) {
	e, ok := r.byAgent[call.Agent][call.ToolName]
	if !ok {
		return nil, fmt.Errorf("no executor for tool %s of agent %s", call.ToolName, call.Agent)
	}
	return e.Execute(ctx, call)
}
