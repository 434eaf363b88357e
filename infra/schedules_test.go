package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// functionsByPrefix maps each Baton function (Api, Worker, Sweeper,
// Intake) to its logical id.
func functionsByPrefix(t *testing.T, raw template) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id, r := range raw.Resources {
		if r.Type != "AWS::Lambda::Function" {
			continue
		}
		for _, p := range []string{"Api", "Worker", "Sweeper", "Intake"} {
			if strings.HasPrefix(id, p) {
				out[p] = id
			}
		}
	}
	if len(out) != 4 {
		t.Fatalf("functions %v", out)
	}
	return out
}

// statementsOn lists the statements of the policies attached to role
// (a logical id).
func statementsOn(raw template, role string) []map[string]any {
	var out []map[string]any
	for _, p := range ofType(raw, "AWS::IAM::Policy") {
		for _, r := range p["Roles"].([]any) {
			if logicalRef(r) != role {
				continue
			}
			for _, s := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				out = append(out, s.(map[string]any))
			}
		}
	}
	return out
}

// TestSchedules: the stack's schedule group; a role only EventBridge
// Scheduler may assume, for the schedules of that group in this account,
// whose one permission is sending to the intake queue; the API function
// alone may keep the schedules of that group and pass that role, to
// EventBridge Scheduler alone; the API knows the group, the role and the
// queue; the API and the intake function carry the limits.
func TestSchedules(t *testing.T) {
	_, raw := synth(t, &StackProps{Stage: "dev"})
	fns := functionsByPrefix(t, raw)
	var group, role, queue string
	for id, r := range raw.Resources {
		switch {
		case r.Type == "AWS::Scheduler::ScheduleGroup":
			if group != "" {
				t.Errorf("two schedule groups: %s, %s", group, id)
			}
			group = id
		case r.Type == "AWS::IAM::Role" && strings.Contains(nagText(r.Properties["AssumeRolePolicyDocument"]), "scheduler.amazonaws.com"):
			if role != "" {
				t.Errorf("two roles EventBridge Scheduler may assume: %s, %s", role, id)
			}
			role = id
		case r.Type == "AWS::SQS::Queue" && strings.HasPrefix(id, "IntakeQueue"):
			queue = id
		}
	}
	if group == "" || role == "" || queue == "" {
		t.Fatalf("group %q, role %q, intake queue %q", group, role, queue)
	}

	t.Run("the group is named after the stack", func(t *testing.T) {
		if p := raw.Resources[group].Properties; !reflect.DeepEqual(p, map[string]any{"Name": "Test-schedules"}) {
			t.Errorf("schedule group %v", p)
		}
		if nagText(raw.Outputs["ScheduleGroupName"].(map[string]any)["Value"]) != "<"+group+">" {
			t.Errorf("output %v", raw.Outputs["ScheduleGroupName"])
		}
	})

	t.Run("the role: EventBridge Scheduler, this account, this group; sending to the intake queue only", func(t *testing.T) {
		r := raw.Resources[role].Properties
		stmts := r["AssumeRolePolicyDocument"].(map[string]any)["Statement"].([]any)
		want := map[string]any{
			"Action": "sts:AssumeRole", "Effect": "Allow",
			"Principal": map[string]any{"Service": "scheduler.amazonaws.com"},
			"Condition": map[string]any{"StringEquals": map[string]any{
				"aws:SourceAccount": map[string]any{"Ref": "AWS::AccountId"},
				"aws:SourceArn":     map[string]any{"Fn::GetAtt": []any{group, "Arn"}},
			}},
		}
		if len(stmts) != 1 || !reflect.DeepEqual(stmts[0], want) {
			t.Errorf("trust policy %v\nwant the one statement %v", stmts, want)
		}
		if r["ManagedPolicyArns"] != nil || r["Policies"] != nil {
			t.Errorf("the role has more policies: %v", r)
		}
		got := statementsOn(raw, role)
		want = map[string]any{"Action": "sqs:SendMessage", "Effect": "Allow", "Resource": map[string]any{"Fn::GetAtt": []any{queue, "Arn"}}}
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("the role's statements %v, want the one %v", got, want)
		}
		// The intake queue is encrypted with SQS's own key: no KMS key
		// to grant.
		if enc := raw.Resources[queue].Properties["SqsManagedSseEnabled"]; enc != true {
			t.Errorf("intake queue encryption %v", raw.Resources[queue].Properties)
		}
	})

	t.Run("the API keeps the group's schedules and passes the role, to EventBridge Scheduler only", func(t *testing.T) {
		for name, fn := range fns {
			fnRole := logicalRef(raw.Resources[fn].Properties["Role"])
			var manage, pass []map[string]any
			for _, st := range statementsOn(raw, fnRole) {
				for _, a := range strs(st["Action"]) {
					if strings.HasPrefix(a, "scheduler:") {
						manage = append(manage, st)
						break
					}
					if a == "iam:PassRole" {
						pass = append(pass, st)
					}
				}
			}
			if name != "Api" {
				if len(manage)+len(pass) > 0 {
					t.Errorf("%s may %v %v", name, manage, pass)
				}
				continue
			}
			wantManage := map[string]any{"Effect": "Allow",
				"Action":   []any{"scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule", "scheduler:GetSchedule"},
				"Resource": "arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/Test-schedules/*"}
			if len(manage) != 1 {
				t.Fatalf("API scheduler statements %v", manage)
			}
			manage[0]["Resource"] = nagText(manage[0]["Resource"])
			if !reflect.DeepEqual(manage[0], wantManage) {
				t.Errorf("API scheduler statement %v\nwant %v", manage[0], wantManage)
			}
			wantPass := map[string]any{"Effect": "Allow", "Action": "iam:PassRole",
				"Resource":  map[string]any{"Fn::GetAtt": []any{role, "Arn"}},
				"Condition": map[string]any{"StringEquals": map[string]any{"iam:PassedToService": "scheduler.amazonaws.com"}}}
			if len(pass) != 1 || !reflect.DeepEqual(pass[0], wantPass) {
				t.Errorf("API PassRole statements %v\nwant the one %v", pass, wantPass)
			}
		}
	})

	t.Run("an alarm on dropped fire times", func(t *testing.T) {
		var found bool
		for _, a := range ofType(raw, "AWS::CloudWatch::Alarm") {
			if a["Namespace"] != "AWS/Scheduler" {
				continue
			}
			found = true
			dims := a["Dimensions"].([]any)
			if a["MetricName"] != "InvocationDroppedCount" || a["Statistic"] != "Sum" || a["Threshold"] != float64(1) || len(dims) != 1 ||
				!reflect.DeepEqual(dims[0], map[string]any{"Name": "ScheduleGroup", "Value": map[string]any{"Ref": group}}) {
				t.Errorf("alarm %v", a)
			}
		}
		if !found {
			t.Error("no alarm on EventBridge Scheduler's dropped invocations")
		}
	})

	t.Run("environment", func(t *testing.T) {
		checkScheduleEnv(t, raw, fns, "1m", "100")
		api := raw.Resources[fns["Api"]].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		for k, want := range map[string]string{"BATON_SCHEDULE_GROUP": "<" + group + ">", "BATON_SCHEDULER_ROLE_ARN": "<" + role + ".Arn>", "BATON_INTAKE_QUEUE_ARN": "<" + queue + ".Arn>"} {
			if got := nagText(api[k]); got != want {
				t.Errorf("API %s = %s, want %s", k, got, want)
			}
		}
		for _, name := range []string{"Worker", "Sweeper", "Intake"} {
			vars := raw.Resources[fns[name]].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			for _, k := range []string{"BATON_SCHEDULE_GROUP", "BATON_SCHEDULER_ROLE_ARN", "BATON_INTAKE_QUEUE_ARN"} {
				if vars[k] != nil {
					t.Errorf("%s has %s", name, k)
				}
			}
		}
	})

	t.Run("limits from the props", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev", Schedules: SchedulesProps{MinInterval: "15m", MaxPerTenant: "20"}})
		checkScheduleEnv(t, raw, functionsByPrefix(t, raw), "15m", "20")
	})
}

// checkScheduleEnv: the API and the intake function carry the limits,
// the worker and the sweeper do not.
func checkScheduleEnv(t *testing.T, raw template, fns map[string]string, interval, max string) {
	t.Helper()
	for name, fn := range fns {
		vars := raw.Resources[fn].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		got := []any{vars["BATON_SCHEDULE_MIN_INTERVAL"], vars["BATON_MAX_SCHEDULES"]}
		want := []any{nil, nil}
		if name == "Api" || name == "Intake" {
			want = []any{interval, max}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: BATON_SCHEDULE_MIN_INTERVAL, BATON_MAX_SCHEDULES = %v, want %v", name, got, want)
		}
	}
}

// TestScheduleLimitsAreChecked: scheduleMinInterval is a Go duration of
// at least a minute, maxSchedulesPerTenant a whole number from 1 to a
// million; unset, they are 1m and 100.
func TestScheduleLimitsAreChecked(t *testing.T) {
	for _, c := range []struct {
		s    SchedulesProps
		want string // "" accepted
	}{
		{SchedulesProps{}, ""},
		{SchedulesProps{MinInterval: "1m", MaxPerTenant: "1"}, ""},
		{SchedulesProps{MinInterval: "1h30m", MaxPerTenant: "1000000"}, ""},
		{SchedulesProps{MinInterval: "59s"}, `scheduleMinInterval: want a duration of at least 1m (1m, 15m, 1h), got "59s"`},
		{SchedulesProps{MinInterval: "5"}, `scheduleMinInterval: want a duration of at least 1m (1m, 15m, 1h), got "5"`},
		{SchedulesProps{MinInterval: "-1h"}, `scheduleMinInterval: want a duration of at least 1m (1m, 15m, 1h), got "-1h"`},
		{SchedulesProps{MaxPerTenant: "0"}, `maxSchedulesPerTenant: want a whole number of schedules from 1 to 1000000, got "0"`},
		{SchedulesProps{MaxPerTenant: "-3"}, `maxSchedulesPerTenant: want a whole number of schedules from 1 to 1000000, got "-3"`},
		{SchedulesProps{MaxPerTenant: "12.5"}, `maxSchedulesPerTenant: want a whole number of schedules from 1 to 1000000, got "12.5"`},
		{SchedulesProps{MaxPerTenant: "1000001"}, `maxSchedulesPerTenant: want a whole number of schedules from 1 to 1000000, got "1000001"`},
		{SchedulesProps{MaxPerTenant: "99999999999999999999"}, `maxSchedulesPerTenant: want a whole number of schedules from 1 to 1000000, got "99999999999999999999"`},
	} {
		p := &StackProps{Schedules: c.s}
		p.defaults()
		err := p.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
			t.Errorf("%+v: got %v, want %q", c.s, err, c.want)
		}
	}
	p := &StackProps{}
	p.defaults()
	if p.Schedules != (SchedulesProps{MinInterval: "1m", MaxPerTenant: "100"}) {
		t.Errorf("defaults %+v", p.Schedules)
	}
	if _, err := NewBatonStack(awscdk.NewApp(nil), "Bad", &StackProps{BuildDir: t.TempDir(), Schedules: SchedulesProps{MinInterval: "30s"}}); err == nil {
		t.Error("a stack with scheduleMinInterval 30s was built")
	}
}

// TestScheduleGroupNameFits: a long stack name still gives a group name
// of at most 64 characters.
func TestScheduleGroupNameFits(t *testing.T) {
	app := awscdk.NewApp(nil)
	long := strings.Repeat("Baton", 20)
	got := scheduleGroupName(awscdk.NewStack(app, jsii.String(long), nil))
	if len(got) != 64 || !strings.HasSuffix(got, "-schedules") || !strings.HasPrefix(got, long[:54]) {
		t.Errorf("group name %q (%d characters)", got, len(got))
	}
}
