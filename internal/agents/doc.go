// Package agents loads the operator's agent registry: a JSON file listing
// agents (slug, model, system prompt, server tools with their executors,
// policies, budgets, limits, compaction, and the request fields callers
// may override). API callers never register agents or server tools.
// Parse checks each agent's configuration as core.RunConfig.Validate
// does (the compaction thresholds and options among it);
// Registry.CheckCompactionModels checks, once the enabled model providers
// are known, that every compaction.model can be called.
// Registry.Executors hands the tools' executor configurations
// (toolspec.Tools) to executors.NewRouter.
package agents
