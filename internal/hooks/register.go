package hooks

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/baton-agents/baton/internal/guardrails"
	"github.com/baton-agents/baton/internal/toolspec"
)

// init registers the guardrail hooks as the guardrails' http and lambda
// rule types.
func init() {
	c := func(raw json.RawMessage, d guardrails.Deps) (guardrails.Rule, error) {
		if d.Remote == nil {
			return nil, errors.New("http and lambda rules need the process's endpoint builder, which it was built without")
		}
		return RuleFromJSON(context.Background(), d.Remote, raw)
	}
	guardrails.Register(toolspec.TypeHTTP, c)
	guardrails.Register(toolspec.TypeLambda, c)
}
