package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
	"github.com/baton-agents/baton/internal/evals"
	"github.com/baton-agents/baton/internal/runspec"
)

// evalBody is the body of POST /v1/evals.
type evalBody struct {
	Name         string            `json:"name"`
	Agent        string            `json:"agent"`
	Alias        string            `json:"alias"`
	AgentVersion string            `json:"agent_version"`
	Tools        string            `json:"tools"`
	Judge        string            `json:"judge"`
	Concurrency  *int              `json:"concurrency"`
	Dataset      []json.RawMessage `json:"dataset"`
	DatasetFrom  string            `json:"dataset_from"`
}

// startEval answers POST /v1/evals: one run per case of the dataset, at
// most concurrency at once, scored as each ends (202 and the eval).
func (a *API) startEval(ctx context.Context, r *request, _ []string) (int, any, error) {
	var b evalBody
	if err := decodeStrict(r.body, &b, false); err != nil {
		return 0, nil, err
	}
	req := durable.EvalRequest{Name: b.Name, Agent: b.Agent, Alias: b.Alias, Version: b.AgentVersion, Tools: b.Tools, Judge: b.Judge,
		DatasetFrom: b.DatasetFrom, Principal: r.principal()}
	// Each case is read on its own, so a case of the wrong shape is
	// refused with its place, as a bad line of a JSONL dataset is.
	for i, raw := range b.Dataset {
		var c evals.Case
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		if err := dec.Decode(&c); err != nil {
			return 0, nil, &apiError{Status: 400, Code: "invalid_dataset", Message: fmt.Sprintf("dataset[%d] (line %d): not a case: %s", i, i+1, strings.TrimPrefix(err.Error(), "json: ")),
				Details: map[string]any{"line": i + 1}}
		}
		req.Cases = append(req.Cases, c)
	}
	switch {
	case (len(b.Dataset) == 0) == (b.DatasetFrom == ""):
		return 0, nil, errf(400, "invalid_request", "give a dataset, or dataset_from (an eval whose dataset to run again), one of them")
	case strings.TrimSpace(b.Agent) == "":
		return 0, nil, errf(400, "invalid_request", "agent is required")
	case len(b.Name) > 200:
		return 0, nil, errf(400, "invalid_request", "name is at most 200 characters")
	case b.Concurrency != nil && (*b.Concurrency < 1 || *b.Concurrency > durable.MaxEvalConcurrency):
		return 0, nil, errf(400, "invalid_request", "concurrency is 1 to %d", durable.MaxEvalConcurrency)
	}
	if b.Concurrency != nil {
		req.Concurrency = *b.Concurrency
	}
	if err := runspec.VersionChoice(b.Alias, b.AgentVersion); err != nil {
		return 0, nil, err
	}
	if b.Tools != "" && !core.ValidForkTools(b.Tools) {
		return 0, nil, errf(400, "invalid_request", "tools must be reuse, replay or live, got %q", b.Tools)
	}
	v, err := a.Runner.StartEval(ctx, r.tenant, req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, v, nil
}

// getEval answers GET /v1/evals/{eval_id}: progress, totals and cases.
func (a *API) getEval(ctx context.Context, r *request, p []string) (int, any, error) {
	if err := checkRunID(p[0]); err != nil {
		return 0, nil, err
	}
	v, err := a.Runner.Eval(ctx, r.tenant, p[0])
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, v, nil
}

// listEvals answers GET /v1/evals?limit=&cursor=: the tenant's evals,
// newest first.
func (a *API) listEvals(ctx context.Context, r *request, _ []string) (int, any, error) {
	limit, err := intQuery(r, "limit", 20, 1, 100)
	if err != nil {
		return 0, nil, err
	}
	cursor, _ := r.query("cursor")
	evs, next, err := a.Runner.Evals(ctx, r.tenant, limit, cursor)
	if err != nil {
		return 0, nil, err
	}
	var nextp *string
	if next != "" {
		nextp = &next
	}
	return http.StatusOK, map[string]any{"evals": evs, "next_cursor": nextp}, nil
}

// cancelEval answers POST /v1/evals/{eval_id}/cancel.
func (a *API) cancelEval(ctx context.Context, r *request, p []string) (int, any, error) {
	if err := checkRunID(p[0]); err != nil {
		return 0, nil, err
	}
	if err := decodeStrict(r.body, &struct{}{}, true); err != nil {
		return 0, nil, err
	}
	v, err := a.Runner.CancelEval(ctx, r.tenant, p[0])
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, v, nil
}
