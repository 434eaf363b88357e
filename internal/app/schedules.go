package app

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
	"github.com/baton-agents/baton/internal/runspec"
	"github.com/baton-agents/baton/internal/schedules"
)

// Schedules are the deployment's schedule settings (scheduled runs,
// internal/schedules).
type Schedules struct {
	// Group, RoleARN and QueueARN are the EventBridge Scheduler schedule
	// group the API keeps each schedule in, the role its schedules send
	// with, and the intake queue they send to (BATON_SCHEDULE_GROUP,
	// BATON_SCHEDULER_ROLE_ARN, BATON_INTAKE_QUEUE_ARN; the API
	// function's). Without a group, schedules are fired by baton dev's
	// in-process scheduler.
	Group, RoleARN, QueueARN string
	// MinInterval is the smallest gap between fire times a schedule may
	// have (BATON_SCHEDULE_MIN_INTERVAL, default 1m); MaxPerTenant caps
	// each tenant's schedules (BATON_MAX_SCHEDULES, default 100; -1: no
	// cap).
	MinInterval  time.Duration
	MaxPerTenant int
}

// SchedulesFromEnv reads the schedule settings (baton dev passes its
// flags' values).
func SchedulesFromEnv(get func(k, def string) string) (Schedules, error) {
	s := Schedules{Group: get("BATON_SCHEDULE_GROUP", ""), RoleARN: get("BATON_SCHEDULER_ROLE_ARN", ""), QueueARN: get("BATON_INTAKE_QUEUE_ARN", "")}
	if v := get("BATON_SCHEDULE_MIN_INTERVAL", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Minute {
			return s, fmt.Errorf("BATON_SCHEDULE_MIN_INTERVAL: want a duration of 1m or more, got %q", v)
		}
		s.MinInterval = d
	}
	if v := get("BATON_MAX_SCHEDULES", ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 || n == 0 {
			return s, fmt.Errorf("BATON_MAX_SCHEDULES: want a whole number of schedules per tenant (-1: no cap), got %q", v)
		}
		s.MaxPerTenant = n
	}
	if s.Group != "" && (s.RoleARN == "" || s.QueueARN == "") {
		return s, fmt.Errorf("BATON_SCHEDULE_GROUP needs BATON_SCHEDULER_ROLE_ARN and BATON_INTAKE_QUEUE_ARN")
	}
	return s, nil
}

// openSchedules builds the schedule service: with the deployment's
// EventBridge Scheduler where the function manages schedules (the API,
// whose features link the Scheduler client), and for the intake, which
// fires them.
func (a *App) openSchedules(ctx context.Context, st stores, f Features, loadAWS awsenv.Loader, clock core.Clock) error {
	c := a.Config.Schedules
	var sched core.Scheduler
	if c.Group != "" && f.Scheduler != nil {
		aws, err := loadAWS(ctx)
		if err != nil {
			return fmt.Errorf("schedules: %w", err)
		}
		sched = f.Scheduler(aws, c.Group, c.RoleARN, c.QueueARN)
	}
	a.Schedules = schedules.New(st.store, a.Runner, runspec.Validator{Agents: a.Agents, Providers: a.Config.Providers}, sched, clock, a.Log,
		schedules.Config{MinInterval: c.MinInterval, MaxPerTenant: c.MaxPerTenant})
	a.API.Schedules = a.Schedules
	if a.Intake != nil {
		a.Intake.Schedules, a.Intake.MaxReceives = a.Schedules, a.Config.MaxReceives
	}
	return nil
}
