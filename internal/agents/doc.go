// Package agents loads the operator's agent registry: a JSON file listing
// agents (slug, model, system prompt, server tools with their executors,
// policies, budgets, limits, and the request fields callers may
// override). API callers never register agents or server tools.
// Registry.Executors hands the tools' executor configurations
// (toolspec.Tools) to executors.NewRouter.
package agents
