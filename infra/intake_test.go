package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
)

// logicalRef is the logical id a {"Ref": id} or {"Fn::GetAtt": [id, …]}
// names.
func logicalRef(v any) string {
	m, _ := v.(map[string]any)
	if r, ok := m["Ref"].(string); ok {
		return r
	}
	if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) > 0 {
		s, _ := ga[0].(string)
		return s
	}
	return ""
}

// roleGrants maps each action granted to the function's role to the
// logical ids of its resources.
func roleGrants(raw template, fnID string) map[string][]string {
	role := logicalRef(raw.Resources[fnID].Properties["Role"])
	out := map[string][]string{}
	for _, p := range ofType(raw, "AWS::IAM::Policy") {
		var mine bool
		for _, r := range p["Roles"].([]any) {
			mine = mine || logicalRef(r) == role
		}
		if !mine {
			continue
		}
		for _, s := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			st := s.(map[string]any)
			res, ok := st["Resource"].([]any)
			if !ok {
				res = []any{st["Resource"]}
			}
			for _, a := range strs(st["Action"]) {
				for _, r := range res {
					out[a] = append(out[a], logicalRef(r))
				}
			}
		}
	}
	return out
}

// checkIntake: a standard intake queue redrives to a standard dead-letter
// queue after 5 receives, with a visibility timeout of at least six times
// the intake function's timeout; the intake function knows the
// dead-letter queue, consumes the intake queue through an event source
// mapping that reports batch item failures, and may send to the
// dead-letter queue and the step queue and read and write the table; no
// other function consumes the intake queue or sends to its dead-letter
// queue.
func checkIntake(t *testing.T, raw template) {
	t.Helper()
	var queue, dlq string
	for id, r := range raw.Resources {
		if r.Type != "AWS::SQS::Queue" || r.Properties["FifoQueue"] == true {
			continue
		}
		if rp, ok := r.Properties["RedrivePolicy"].(map[string]any); ok {
			queue, dlq = id, logicalRef(rp["deadLetterTargetArn"])
			if rp["maxReceiveCount"] != float64(5) {
				t.Errorf("intake maxReceiveCount %v", rp["maxReceiveCount"])
			}
		}
	}
	if queue == "" || dlq == "" || raw.Resources[dlq].Type != "AWS::SQS::Queue" || raw.Resources[dlq].Properties["FifoQueue"] == true {
		t.Fatalf("no standard intake queue with a standard dead-letter queue (queue %q, dlq %q)", queue, dlq)
	}
	var fn string
	for id, r := range raw.Resources {
		if r.Type == "AWS::Lambda::Function" && logicalRef(r.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)["BATON_INTAKE_DLQ_URL"]) == dlq {
			if fn != "" {
				t.Errorf("two functions know the intake dead-letter queue: %s, %s", fn, id)
			}
			fn = id
		}
	}
	if fn == "" || !strings.HasPrefix(fn, "Intake") {
		t.Fatalf("no intake function with BATON_INTAKE_DLQ_URL (found %q)", fn)
	}
	props := raw.Resources[fn].Properties
	if !strings.HasSuffix(props["Code"].(map[string]any)["S3Key"].(string), ".zip") || props["Handler"] != "bootstrap" {
		t.Errorf("intake function %v", props)
	}
	timeout, _ := props["Timeout"].(float64)
	if vt, _ := raw.Resources[queue].Properties["VisibilityTimeout"].(float64); timeout == 0 || vt < 6*timeout {
		t.Errorf("intake visibility timeout %v < 6 × function timeout %v", vt, timeout)
	}
	if timeout >= 120 {
		t.Errorf("intake function timeout %v s must stay under the 2 min in-flight lease", timeout)
	}
	var mappings int
	for _, m := range ofType(raw, "AWS::Lambda::EventSourceMapping") {
		if logicalRef(m["EventSourceArn"]) != queue {
			continue
		}
		mappings++
		if logicalRef(m["FunctionName"]) != fn {
			t.Errorf("the intake queue feeds %v", m["FunctionName"])
		}
		if rt, _ := m["FunctionResponseTypes"].([]any); len(rt) != 1 || rt[0] != "ReportBatchItemFailures" {
			t.Errorf("intake event source mapping %v", m)
		}
	}
	if mappings != 1 {
		t.Errorf("%d event source mappings on the intake queue", mappings)
	}
	var table, steps string
	for id, r := range raw.Resources {
		switch {
		case r.Type == "AWS::DynamoDB::Table":
			table = id
		case r.Type == "AWS::SQS::Queue" && r.Properties["FifoQueue"] == true && r.Properties["RedrivePolicy"] != nil:
			steps = id
		}
	}
	g := roleGrants(raw, fn)
	for action, want := range map[string]string{"sqs:ReceiveMessage": queue, "sqs:DeleteMessage": queue, "sqs:SendMessage": dlq, "dynamodb:PutItem": table, "dynamodb:Query": table} {
		if !slices.Contains(g[action], want) {
			t.Errorf("the intake function lacks %s on %s (has %v)", action, want, g[action])
		}
	}
	if !slices.Contains(g["sqs:SendMessage"], steps) {
		t.Errorf("the intake function may not send steps (sqs:SendMessage on %v)", g["sqs:SendMessage"])
	}
	for _, a := range []string{"bedrock:InvokeModel", "bedrock:ApplyGuardrail"} {
		if len(g[a]) > 0 {
			t.Errorf("the intake function holds %s", a)
		}
	}
	for id, r := range raw.Resources {
		if r.Type != "AWS::Lambda::Function" || id == fn {
			continue
		}
		other := roleGrants(raw, id)
		if slices.Contains(other["sqs:ReceiveMessage"], queue) || slices.Contains(other["sqs:SendMessage"], dlq) {
			t.Errorf("%s may consume the intake queue or send to its dead-letter queue", id)
		}
	}
}

func TestIntake(t *testing.T) {
	t.Run("queue, dead-letter queue, function, mapping, grants, alarm; no rule", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev"})
		checkIntake(t, raw)
		var rules int
		for _, r := range ofType(raw, "AWS::Events::Rule") {
			if r["EventPattern"] != nil {
				rules++
			}
		}
		if rules != 0 {
			t.Errorf("%d event pattern rules without intakeEventPattern", rules)
		}
		var alarmed bool
		for _, a := range ofType(raw, "AWS::CloudWatch::Alarm") {
			b, _ := json.Marshal(a["Dimensions"])
			alarmed = alarmed || a["MetricName"] == "ApproximateNumberOfMessagesVisible" && strings.Contains(string(b), "IntakeDLQ")
		}
		if !alarmed {
			t.Error("no alarm on the intake dead-letter queue")
		}
		for _, k := range []string{"IntakeQueueUrl", "IntakeDeadLetterQueueUrl"} {
			if raw.Outputs[k] == nil {
				t.Errorf("output %s missing", k)
			}
		}
	})
	t.Run("event rule when configured", func(t *testing.T) {
		pattern := `{"source":["shop.orders"],"detail-type":["OrderPlaced"]}`
		_, raw := synth(t, &StackProps{Stage: "dev", IntakeEventPattern: pattern, IntakeEventBus: "orders"})
		checkIntake(t, raw)
		var rule string
		for id, r := range raw.Resources {
			if r.Type == "AWS::Events::Rule" && r.Properties["EventPattern"] != nil {
				rule = id
			}
		}
		if rule == "" {
			t.Fatal("no event rule")
		}
		p := raw.Resources[rule].Properties
		if b, _ := json.Marshal(p["EventPattern"]); string(b) != `{"detail-type":["OrderPlaced"],"source":["shop.orders"]}` || p["EventBusName"] != "orders" {
			t.Errorf("rule %v", p)
		}
		targets := p["Targets"].([]any)
		tg := targets[0].(map[string]any)
		it, _ := tg["InputTransformer"].(map[string]any)
		if len(targets) != 1 || !strings.HasPrefix(logicalRef(tg["Arn"]), "IntakeQueue") || it == nil ||
			!strings.Contains(it["InputTemplate"].(string), `"idempotency_key": <id>`) || it["InputPathsMap"].(map[string]any)["id"] != "$.id" {
			t.Errorf("rule target %v", tg)
		}
		// EventBridge may send to the queue, for this rule only.
		var allowed bool
		for _, qp := range ofType(raw, "AWS::SQS::QueuePolicy") {
			b, _ := json.Marshal(qp)
			allowed = allowed || strings.Contains(string(b), "events.amazonaws.com") && strings.Contains(string(b), rule) && strings.Contains(string(b), "aws:SourceArn")
		}
		if !allowed {
			t.Error("no queue policy lets the rule send to the intake queue")
		}
	})
	t.Run("a bad pattern is refused", func(t *testing.T) {
		if _, err := NewBatonStack(awscdk.NewApp(nil), "Bad", &StackProps{BuildDir: t.TempDir(), IntakeEventPattern: "{not json"}); err == nil {
			t.Error("a bad intakeEventPattern was accepted")
		}
	})
}
