package a2aserver

import (
	"context"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/durable"
)

// ListTasks paging: the default and largest page, and how many pages of
// the tenant's runs one call reads at most while filtering.
const (
	defaultPageSize = 50
	maxPageSize     = 100
	maxListReads    = 10
)

// list is ListTasks: the caller's tasks of the route's agent, newest
// first, filtered by contextId, state and status time. The page token is
// the cursor in the tenant's runs where the page stopped; a page may
// hold fewer tasks than pageSize and still have a next page (filtering
// reads at most maxListReads pages of runs per call). totalSize is the
// number of tasks in the page: Baton does not count a tenant's runs.
func (h Handler) list(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	c := callerOf(ctx)
	size := req.PageSize
	switch {
	case size == 0:
		size = defaultPageSize
	case size < 1 || size > maxPageSize:
		return nil, a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf("pageSize must be 1 to %d, got %d", maxPageSize, size))
	}
	if err := checkHistory(req.HistoryLength); err != nil {
		return nil, err
	}
	history := req.HistoryLength
	if history == nil {
		zero := 0
		history = &zero
	}
	out := &a2a.ListTasksResponse{Tasks: []*a2a.Task{}}
	cursor := req.PageToken
	for reads := 0; reads < maxListReads && len(out.Tasks) < size; reads++ {
		page, err := h.Runner.List(ctx, c.Tenant, core.RunListQuery{Limit: size - len(out.Tasks), Cursor: cursor})
		if err != nil {
			return nil, h.rpcError(ctx, err)
		}
		for _, r := range page.Runs {
			if r.Agent != c.Agent || req.ContextID != "" && r.SessionID != req.ContextID {
				continue
			}
			snap, err := h.Runner.Get(ctx, c.Tenant, r.RunID)
			if err != nil {
				continue // gone meanwhile
			}
			st := snap.State
			if req.Status != "" && TaskState(st.Status, st.Error) != req.Status {
				continue
			}
			if req.StatusTimestampAfter != nil && !st.UpdatedAt.After(*req.StatusTimestampAfter) {
				continue
			}
			// A task needs the run's view (its transcript) only for its
			// history, its answer or what it waits for.
			v := durable.View{RunID: st.RunID, SessionID: st.SessionID, Agent: st.Config.Agent, Status: st.Status, UpdatedAt: st.UpdatedAt}
			v.Result.Error = st.Error
			if *history > 0 || req.IncludeArtifacts && st.Status == core.StatusCompleted || TaskState(st.Status, st.Error) == a2a.TaskStateInputRequired {
				if v, err = h.view(ctx, snap); err != nil {
					return nil, err
				}
			}
			t := taskOf(v, history)
			if !req.IncludeArtifacts {
				t.Artifacts = nil
			}
			out.Tasks = append(out.Tasks, t)
		}
		cursor = page.Next
		if cursor == "" {
			break
		}
	}
	out.NextPageToken, out.PageSize, out.TotalSize = cursor, size, len(out.Tasks)
	return out, nil
}
