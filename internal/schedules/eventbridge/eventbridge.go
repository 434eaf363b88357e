// Package eventbridge is core.Scheduler on Amazon EventBridge Scheduler:
// one EventBridge schedule per Baton schedule, in the stack's schedule
// group, named by the schedule's id, whose target sends a ScheduleFire
// to the intake queue at each fire time (through the stack's scheduler
// role, which may only send to that queue). Only the API function links
// it (app.Features.Scheduler).
package eventbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/baton-agents/baton/core"
)

// FireTimePlaceholder is the context attribute EventBridge Scheduler
// replaces, in a target's input, with the fire time (RFC 3339, UTC).
const FireTimePlaceholder = "<aws.scheduler.scheduled-time>"

// maxEventAge is how long EventBridge Scheduler retries sending a fire
// time to the queue.
const maxEventAge = 24 * time.Hour

// startSlack is how far in the past a StartDate may be: EventBridge
// Scheduler refuses one more than 5 minutes earlier than the request.
const startSlack = 4 * time.Minute

// Scheduler syncs Baton schedules to EventBridge Scheduler.
type Scheduler struct {
	client                *scheduler.Client
	group, role, queueARN string
	now                   func() time.Time
}

// New is a Scheduler whose schedules live in group and send to the
// queue queueARN as roleARN. cfg.BaseEndpoint, when set, replaces the
// service's endpoint.
func New(cfg aws.Config, group, roleARN, queueARN string) *Scheduler {
	return &Scheduler{client: scheduler.NewFromConfig(cfg), group: group, role: roleARN, queueARN: queueARN, now: time.Now}
}

// Sync creates s's EventBridge schedule, or replaces its whole definition
// when it exists.
func (e *Scheduler) Sync(ctx context.Context, s core.Schedule, spec core.ScheduleSpec) error {
	input, err := fireInput(s)
	if err != nil {
		return err
	}
	start, end, enabled, err := bounds(spec, s, e.now())
	if err != nil {
		return fmt.Errorf("eventbridge scheduler: schedule %s: %w", s.ID, err)
	}
	state := types.ScheduleStateEnabled
	if !enabled {
		state = types.ScheduleStateDisabled
	}
	target := &types.Target{
		Arn:         aws.String(e.queueARN),
		RoleArn:     aws.String(e.role),
		Input:       aws.String(input),
		RetryPolicy: &types.RetryPolicy{MaximumEventAgeInSeconds: aws.Int32(int32(maxEventAge / time.Second))},
	}
	desc := aws.String(fmt.Sprintf("Baton schedule %s of tenant %s", s.ID, s.Tenant))
	window := &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff}
	tz := aws.String(spec.Timezone)
	if spec.Timezone == "" {
		tz = aws.String("UTC")
	}
	_, err = e.client.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name: aws.String(s.ID), GroupName: aws.String(e.group), Description: desc,
		ScheduleExpression: aws.String(spec.Expression), ScheduleExpressionTimezone: tz,
		StartDate: start, EndDate: end, State: state, FlexibleTimeWindow: window, Target: target,
		ActionAfterCompletion: types.ActionAfterCompletionNone,
	})
	var conflict *types.ConflictException
	if !errors.As(err, &conflict) {
		return wrap(err, "create", s.ID)
	}
	_, err = e.client.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
		Name: aws.String(s.ID), GroupName: aws.String(e.group), Description: desc,
		ScheduleExpression: aws.String(spec.Expression), ScheduleExpressionTimezone: tz,
		StartDate: start, EndDate: end, State: state, FlexibleTimeWindow: window, Target: target,
		ActionAfterCompletion: types.ActionAfterCompletionNone,
	})
	return wrap(err, "update", s.ID)
}

// Remove deletes s's EventBridge schedule; one that is gone is no error.
func (e *Scheduler) Remove(ctx context.Context, s core.Schedule) error {
	_, err := e.client.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(s.ID), GroupName: aws.String(e.group)})
	var missing *types.ResourceNotFoundException
	if errors.As(err, &missing) {
		return nil
	}
	return wrap(err, "delete", s.ID)
}

func wrap(err error, op, id string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("eventbridge scheduler: %s schedule %s: %w", op, id, err)
}

// fireInput is the target's input: {"schedule_fire": {…}}, its fire_time
// the placeholder EventBridge Scheduler fills in (not HTML-escaped, which
// would hide it).
func fireInput(s core.Schedule) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Fire core.ScheduleFire `json:"schedule_fire"`
	}{core.ScheduleFire{Tenant: s.Tenant, ScheduleID: s.ID, FireTime: FireTimePlaceholder}})
	if err != nil {
		return "", fmt.Errorf("eventbridge scheduler: schedule %s input: %w", s.ID, err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// bounds are the StartDate, EndDate and state of spec's EventBridge
// schedule at now. EventBridge Scheduler refuses a StartDate more than
// 5 minutes in the past, and starts a rate schedule's period at its
// StartDate (without one, at the request's time, which an update would
// move): a rate schedule is anchored at spec.Start, else at the
// schedule's creation (truncated to the minute), moved forward by whole
// periods to the first fire time that is not in the past; another
// expression's past start bounds nothing and is left out. A schedule
// whose end has passed fires no more: it is disabled, without its end.
func bounds(spec core.ScheduleSpec, s core.Schedule, now time.Time) (start, end *time.Time, enabled bool, err error) {
	enabled = spec.Enabled
	start = spec.Start
	every, isRate, err := ratePeriod(spec.Expression)
	if err != nil {
		return nil, nil, false, err
	}
	if isRate && start == nil && !s.CreatedAt.IsZero() {
		anchor := s.CreatedAt.UTC().Truncate(time.Minute)
		start = &anchor
	}
	if start != nil && start.Before(now.Add(-startSlack)) {
		if !isRate {
			start = nil
		} else {
			behind := now.Sub(*start)
			next := start.Add((behind + every - 1) / every * every)
			start = &next
		}
	}
	end = spec.End
	if end != nil && (!end.After(now) || (start != nil && !start.Before(*end))) {
		return start, nil, false, nil
	}
	return start, end, enabled, nil
}

// ratePeriod is the period of a rate(N unit) expression (isRate false
// for another expression).
func ratePeriod(expr string) (every time.Duration, isRate bool, err error) {
	body, ok := strings.CutPrefix(expr, "rate(")
	if !ok {
		return 0, false, nil
	}
	body, ok = strings.CutSuffix(body, ")")
	n, unit, ok2 := strings.Cut(body, " ")
	v, err := strconv.Atoi(n)
	units := map[string]time.Duration{"minute": time.Minute, "minutes": time.Minute, "hour": time.Hour, "hours": time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour}
	if !ok || !ok2 || err != nil || v <= 0 || units[unit] == 0 {
		return 0, true, fmt.Errorf("expression %q is not rate(N minutes|hours|days)", expr)
	}
	return time.Duration(v) * units[unit], true, nil
}
