package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/baton-agents/baton/core"
)

// Page sizes of GET /v1/runs.
const (
	defaultRunsLimit = 20
	maxRunsLimit     = 100
)

// listRuns answers GET /v1/runs?status=&limit=&cursor=: the tenant's
// runs, newest first, as {"runs": […], "next_cursor": "…" | null}.
func (a *API) listRuns(ctx context.Context, r *request, _ []string) (int, any, error) {
	limit, err := intQuery(r, "limit", defaultRunsLimit, 1, maxRunsLimit)
	if err != nil {
		return 0, nil, err
	}
	status, _ := r.query("status")
	if status != "" && !slices.Contains(core.RunStatuses, core.RunStatus(status)) {
		names := make([]string, len(core.RunStatuses))
		for i, s := range core.RunStatuses {
			names[i] = string(s)
		}
		return 0, nil, errf(http.StatusBadRequest, "invalid_query", "status must be one of %s", strings.Join(names, ", "))
	}
	cursor, _ := r.query("cursor")
	page, err := a.Runner.List(ctx, r.tenant, core.RunListQuery{Status: core.RunStatus(status), Limit: limit, Cursor: cursor})
	if errors.Is(err, core.ErrInvalidInput) {
		return 0, nil, errf(http.StatusBadRequest, "invalid_cursor", "cursor is not a next_cursor this list returned")
	}
	if err != nil {
		return 0, nil, err
	}
	var next *string
	if page.Next != "" {
		next = &page.Next
	}
	return http.StatusOK, map[string]any{"runs": page.Runs, "next_cursor": next}, nil
}
