package httpapi

import (
	"context"
	"net/http"

	"github.com/baton-agents/baton/internal/runspec"
)

// forkRun answers POST /v1/runs/{run_id}/fork: a new run on a new session
// from a message of the run, answered like a started run (202 and the
// fork's view). An Idempotency-Key makes a retried fork one fork.
func (a *API) forkRun(ctx context.Context, r *request, p []string) (int, any, error) {
	if err := checkRunID(p[0]); err != nil {
		return 0, nil, err
	}
	var b runspec.ForkBody
	if err := decodeStrict(r.body, &b, false); err != nil {
		return 0, nil, err
	}
	req, err := runspec.Validator{Agents: a.Runner.Agents, Providers: a.Config.Providers}.Fork(p[0], b)
	if err != nil {
		return 0, nil, err
	}
	req.Caller = r.principal()
	snap, err := a.Runner.Fork(ctx, r.tenant, req)
	if err != nil {
		return 0, nil, err
	}
	return a.view(ctx, http.StatusAccepted, snap)
}

// compareRuns answers GET /v1/runs/{a}/compare/{b}: where two runs of the
// caller's tenant diverge, and what each did.
func (a *API) compareRuns(ctx context.Context, r *request, p []string) (int, any, error) {
	for _, id := range p {
		if err := checkRunID(id); err != nil {
			return 0, nil, err
		}
	}
	c, err := a.Runner.Compare(ctx, r.tenant, p[0], p[1])
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c, nil
}
