package main

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// SchedulesProps are the limits of scheduled runs (docs/schedules.md),
// on the API function (which refuses a schedule over them) and the intake
// function (which starts the runs of their fire times).
type SchedulesProps struct {
	// MinInterval is the shortest time a schedule may leave between two
	// fire times, a Go duration of at least 1m (EventBridge Scheduler's
	// finest): BATON_SCHEDULE_MIN_INTERVAL, context scheduleMinInterval,
	// default "1m".
	MinInterval string
	// MaxPerTenant is the most schedules a tenant may have, a whole
	// number: BATON_MAX_SCHEDULES, context maxSchedulesPerTenant, default
	// 100.
	MaxPerTenant string
}

// maxSchedules bounds MaxPerTenant: EventBridge Scheduler's default quota
// of schedules in an account and Region.
const maxSchedules = 1_000_000

var wholeNumber = regexp.MustCompile(`^[1-9][0-9]*$`)

func (s *SchedulesProps) defaults() {
	if s.MinInterval == "" {
		s.MinInterval = "1m"
	}
	if s.MaxPerTenant == "" {
		s.MaxPerTenant = "100"
	}
}

func (s SchedulesProps) validate() error {
	if d, err := time.ParseDuration(s.MinInterval); err != nil || d < time.Minute {
		return fmt.Errorf("scheduleMinInterval: want a duration of at least 1m (1m, 15m, 1h), got %q", s.MinInterval)
	}
	if n, err := strconv.Atoi(s.MaxPerTenant); !wholeNumber.MatchString(s.MaxPerTenant) || err != nil || n > maxSchedules {
		return fmt.Errorf("maxSchedulesPerTenant: want a whole number of schedules from 1 to %d, got %q", maxSchedules, s.MaxPerTenant)
	}
	return nil
}

// scheduleGroupName is the stack's schedule group: the stack's name and
// "-schedules", within the 64 characters a group name may have.
func scheduleGroupName(stack awscdk.Stack) string {
	name := *stack.StackName()
	const suffix, max = "-schedules", 64
	if len(name) > max-len(suffix) {
		name = name[:max-len(suffix)]
	}
	return name + suffix
}

// schedulesArn is the ARN of every schedule in the stack's group.
func schedulesArn(stack awscdk.Stack) *string {
	return stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("scheduler"), Resource: jsii.String("schedule"),
		ResourceName: jsii.String(scheduleGroupName(stack) + "/*")})
}

// addSchedules defines the EventBridge Scheduler side of scheduled runs
// (internal/schedules/eventbridge): the stack's schedule group, which
// holds one schedule per Baton schedule; the role its schedules send as,
// which EventBridge Scheduler may assume for the schedules of that group
// only and which may only send to the intake queue (SSE-SQS: no key of
// ours to grant); and the API function's right to keep the schedules of
// that group, and to pass that role to EventBridge Scheduler alone. The
// API and intake functions get the limits.
func addSchedules(stack awscdk.Stack, props *StackProps, api, intake awslambda.Function, queue awssqs.Queue) {
	group := awsscheduler.NewCfnScheduleGroup(stack, jsii.String("ScheduleGroup"), &awsscheduler.CfnScheduleGroupProps{
		Name: jsii.String(scheduleGroupName(stack)),
	})
	role := awsiam.NewRole(stack, jsii.String("SchedulerRole"), &awsiam.RoleProps{
		Description: jsii.String("EventBridge Scheduler sends the fire times of Baton's schedules to the intake queue as this role"),
		// EventBridge Scheduler names the schedule group as the source
		// (its confused-deputy guidance: the group's ARN, never a
		// schedule's).
		AssumedBy: awsiam.NewPrincipalWithConditions(awsiam.NewServicePrincipal(jsii.String("scheduler.amazonaws.com"), nil), &map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": stack.Account(), "aws:SourceArn": group.AttrArn()},
		}),
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("sqs:SendMessage"), Resources: &[]*string{queue.QueueArn()},
	}))
	api.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule", "scheduler:GetSchedule"),
		Resources: &[]*string{schedulesArn(stack)},
	}))
	api.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("iam:PassRole"), Resources: &[]*string{role.RoleArn()},
		Conditions: &map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "scheduler.amazonaws.com"}},
	}))
	for k, v := range map[string]*string{"BATON_SCHEDULE_GROUP": group.Ref(), "BATON_SCHEDULER_ROLE_ARN": role.RoleArn(), "BATON_INTAKE_QUEUE_ARN": queue.QueueArn()} {
		api.AddEnvironment(jsii.String(k), v, nil)
	}
	for _, f := range []awslambda.Function{api, intake} {
		f.AddEnvironment(jsii.String("BATON_SCHEDULE_MIN_INTERVAL"), jsii.String(props.Schedules.MinInterval), nil)
		f.AddEnvironment(jsii.String("BATON_MAX_SCHEDULES"), jsii.String(props.Schedules.MaxPerTenant), nil)
	}
	// A fire time EventBridge Scheduler could not send within its retry
	// policy's 24 hours is dropped: its run never starts, and no trigger
	// records it.
	alarmOnAny(stack, "ScheduleDrops", "EventBridge Scheduler dropped fire times of Baton schedules (the intake queue refused them for 24 hours): their runs did not start",
		awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/Scheduler"), MetricName: jsii.String("InvocationDroppedCount"),
			DimensionsMap: &map[string]*string{"ScheduleGroup": group.Ref()}, Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5))}))
	awscdk.NewCfnOutput(stack, jsii.String("ScheduleGroupName"), &awscdk.CfnOutputProps{Value: group.Ref()})
}
