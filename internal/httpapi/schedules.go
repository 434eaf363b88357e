package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/baton-agents/baton/internal/schedules"
)

// Scheduled runs (internal/schedules): a tenant's schedules and the
// record of their fire times. Every route works in the caller's tenant.

// Page sizes of the schedule lists.
const (
	defaultSchedulesLimit = 50
	maxSchedulesLimit     = 100
)

// scheduleService is the deployment's schedule service (API.Schedules).
func (a *API) scheduleService() (*schedules.Service, error) {
	if a.Schedules == nil {
		return nil, errf(http.StatusNotImplemented, "not_implemented", "this deployment has no schedules")
	}
	return a.Schedules, nil
}

// createSchedule answers POST /v1/schedules: 201 and the schedule.
func (a *API) createSchedule(ctx context.Context, r *request, _ []string) (int, any, error) {
	svc, err := a.scheduleService()
	if err != nil {
		return 0, nil, err
	}
	var b schedules.Body
	if err := decodeStrict(r.body, &b, false); err != nil {
		return 0, nil, err
	}
	v, err := svc.Create(ctx, r.tenant, r.principal(), b)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, v, nil
}

// listSchedules answers GET /v1/schedules?limit=&cursor=.
func (a *API) listSchedules(ctx context.Context, r *request, _ []string) (int, any, error) {
	svc, err := a.scheduleService()
	if err != nil {
		return 0, nil, err
	}
	limit, err := intQuery(r, "limit", defaultSchedulesLimit, 1, maxSchedulesLimit)
	if err != nil {
		return 0, nil, err
	}
	cursor, _ := r.query("cursor")
	list, next, err := svc.List(ctx, r.tenant, limit, cursor)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"schedules": list, "next_cursor": nullable(next)}, nil
}

// getSchedule answers GET /v1/schedules/{id}.
func (a *API) getSchedule(ctx context.Context, r *request, p []string) (int, any, error) {
	svc, err := a.scheduleService()
	if err != nil {
		return 0, nil, err
	}
	v, err := svc.Get(ctx, r.tenant, p[0])
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, v, nil
}

// patchSchedule answers PATCH /v1/schedules/{id}: the fields given
// change ({"paused": true} pauses, {"paused": false} resumes).
func (a *API) patchSchedule(ctx context.Context, r *request, p []string) (int, any, error) {
	svc, err := a.scheduleService()
	if err != nil {
		return 0, nil, err
	}
	var b schedules.Body
	if err := decodeStrict(r.body, &b, false); err != nil {
		return 0, nil, err
	}
	v, err := svc.Update(ctx, r.tenant, p[0], r.principal(), b)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, v, nil
}

// deleteSchedule answers DELETE /v1/schedules/{id}: 204.
func (a *API) deleteSchedule(ctx context.Context, r *request, p []string) (int, any, error) {
	svc, err := a.scheduleService()
	if err != nil {
		return 0, nil, err
	}
	if err := svc.Delete(ctx, r.tenant, p[0]); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, rawBody{}, nil
}

// listTriggers answers GET /v1/schedules/{id}/triggers?limit=&cursor=:
// the schedule's fire times and what came of each, latest first.
func (a *API) listTriggers(ctx context.Context, r *request, p []string) (int, any, error) {
	svc, err := a.scheduleService()
	if err != nil {
		return 0, nil, err
	}
	limit, err := intQuery(r, "limit", defaultSchedulesLimit, 1, maxSchedulesLimit)
	if err != nil {
		return 0, nil, err
	}
	cursor, _ := r.query("cursor")
	list, next, err := svc.Triggers(ctx, r.tenant, p[0], limit, cursor)
	if err != nil {
		return 0, nil, err
	}
	out := make([]triggerView, len(list))
	for i, t := range list {
		out[i] = triggerView{FireTime: t.FireTime, Outcome: t.Outcome, RunID: t.RunID, Reason: t.Reason, RecordedAt: t.RecordedAt}
	}
	return http.StatusOK, map[string]any{"triggers": out, "next_cursor": nullable(next)}, nil
}

// triggerView is a trigger as the API answers it.
type triggerView struct {
	FireTime   time.Time `json:"fire_time"`
	Outcome    string    `json:"outcome"`
	RunID      string    `json:"run_id,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	RecordedAt time.Time `json:"recorded_at"`
}

// nullable is a next_cursor: null on the last page.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
