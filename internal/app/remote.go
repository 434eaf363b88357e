package app

import (
	"context"
	"fmt"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/agents"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/executors"
	"github.com/baton-agents/baton/internal/toolspec"
)

// remoteAgentTasks cancels remote tasks with the executors of the agents'
// remote agent tools (durable.RemoteTasks).
type remoteAgentTasks struct{ router *executors.Router }

func (r remoteAgentTasks) CancelRemoteTask(ctx context.Context, tenant, agent, tool, taskID string) error {
	e, _ := r.router.Lookup(agent, tool)
	c, ok := e.(core.RemoteTaskCanceller)
	if !ok {
		return fmt.Errorf("agent %s has no remote agent tool %s in this deployment", agent, tool)
	}
	return c.CancelTask(ctx, tenant, taskID)
}

// remoteAgents is router's canceller of remote tasks, or nil when no
// agent has a remote agent tool (runs then store no such records).
func remoteAgents(reg *agents.Registry, router *executors.Router) durable.RemoteTasks {
	if len(a2aTools(reg)) == 0 {
		return nil
	}
	return remoteAgentTasks{router}
}

// remoteAgentsOnly builds the executors of the agents' remote agent tools
// alone, for a process that executes no tools (nil: there are none).
func remoteAgentsOnly(reg *agents.Registry, a2a executors.Factory) (durable.RemoteTasks, error) {
	tools := a2aTools(reg)
	if len(tools) == 0 {
		return nil, nil
	}
	router, err := executors.NewRouter(tools, executors.NewGoRegistry(), map[string]executors.Factory{toolspec.TypeA2A: a2a})
	if err != nil {
		return nil, err
	}
	return remoteAgentTasks{router}, nil
}

// a2aTools are the agents' tools whose executor is a remote agent.
func a2aTools(reg *agents.Registry) toolspec.Tools {
	out := toolspec.Tools{}
	for slug, tools := range reg.Executors() {
		for name, ex := range tools {
			if ex.Type == toolspec.TypeA2A {
				if out[slug] == nil {
					out[slug] = map[string]toolspec.Executor{}
				}
				out[slug][name] = ex
			}
		}
	}
	return out
}
