package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// fakeBuild writes small zips where make build puts the real ones, so
// the stack synthesizes without building the Lambdas.
func fakeBuild(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, fn := range []string{"api", "worker", "sweeper"} {
		f, err := os.Create(filepath.Join(dir, fn+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		w, _ := zw.Create("bootstrap")
		_, _ = w.Write([]byte("#!/bin/sh\n"))
		_ = zw.Close()
		_ = f.Close()
	}
	return dir
}

type template struct {
	Resources map[string]struct {
		Type       string         `json:"Type"`
		Properties map[string]any `json:"Properties"`
	} `json:"Resources"`
	Outputs map[string]any `json:"Outputs"`
}

func synth(t *testing.T, props *StackProps) (assertions.Template, template) {
	t.Helper()
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	if props.BuildDir == "" {
		props.BuildDir = fakeBuild(t)
	}
	stack, err := NewBatonStack(app, "Test", props)
	if err != nil {
		t.Fatal(err)
	}
	tpl := assertions.Template_FromStack(stack, nil)
	b, err := json.Marshal(tpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var raw template
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	return tpl, raw
}

func ofType(raw template, typ string) []map[string]any {
	var out []map[string]any
	for _, r := range raw.Resources {
		if r.Type == typ {
			out = append(out, r.Properties)
		}
	}
	return out
}

func TestStack(t *testing.T) {
	tpl, raw := synth(t, &StackProps{Stage: "dev", Providers: []string{"bedrock"}, WorkerTimeoutSeconds: 120})

	t.Run("resource counts", func(t *testing.T) {
		for typ, n := range map[string]float64{
			"AWS::DynamoDB::Table": 1, "AWS::SQS::Queue": 2, "AWS::Lambda::Function": 3,
			"AWS::Lambda::EventSourceMapping": 1, "AWS::ApiGateway::RestApi": 1, "AWS::CloudWatch::Alarm": 2,
			"AWS::Events::Rule": 1,
		} {
			tpl.ResourceCountIs(jsii.String(typ), jsii.Number(n))
		}
	})

	t.Run("functions are arm64 provided.al2023", func(t *testing.T) {
		fns := ofType(raw, "AWS::Lambda::Function")
		for _, f := range fns {
			if f["Runtime"] != "provided.al2023" || f["Handler"] != "bootstrap" {
				t.Errorf("function %v", f)
			}
			if a, _ := f["Architectures"].([]any); len(a) != 1 || a[0] != "arm64" {
				t.Errorf("architectures %v", f["Architectures"])
			}
			vars := f["Environment"].(map[string]any)["Variables"].(map[string]any)
			for _, k := range []string{"BATON_TABLE", "BATON_QUEUE_URL", "BATON_PROVIDERS"} {
				if vars[k] == nil {
					t.Errorf("%s missing from %v", k, vars)
				}
			}
			if f["LoggingConfig"] == nil {
				t.Errorf("function without its log group (retention): %v", f)
			}
		}
	})

	t.Run("worker event source reports batch item failures", func(t *testing.T) {
		tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"BatchSize":             10,
			"ScalingConfig":         map[string]any{"MaximumConcurrency": 50},
		})
	})

	t.Run("queue timeouts and dead letters", func(t *testing.T) { checkQueueRules(t, raw) })

	t.Run("table", func(t *testing.T) {
		tpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"BillingMode":                      "PAY_PER_REQUEST",
			"TimeToLiveSpecification":          map[string]any{"AttributeName": "ttl", "Enabled": true},
			"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
			"KeySchema": []any{
				map[string]any{"AttributeName": "PK", "KeyType": "HASH"},
				map[string]any{"AttributeName": "SK", "KeyType": "RANGE"},
			},
		})
		tpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionPolicy": "Delete"})
	})

	t.Run("rest api stage", func(t *testing.T) {
		tpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), map[string]any{
			"StageName": "dev",
			"MethodSettings": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"ThrottlingRateLimit": 50, "ThrottlingBurstLimit": 100})}),
			"AccessLogSetting": assertions.Match_ObjectLike(&map[string]any{}),
		})
		tpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Resource"), map[string]any{"PathPart": "v1"})
		tpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Resource"), map[string]any{"PathPart": "{proxy+}"})
	})

	t.Run("alarms and outputs", func(t *testing.T) {
		tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"MetricName": "ApproximateNumberOfMessagesVisible", "Threshold": 1})
		tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{"MetricName": "Errors", "Namespace": "AWS/Lambda"})
		for _, k := range []string{"ApiUrl", "TableName", "QueueUrl"} {
			if raw.Outputs[k] == nil {
				t.Errorf("output %s missing", k)
			}
		}
	})

	t.Run("least privilege", func(t *testing.T) {
		for _, p := range ofType(raw, "AWS::IAM::Policy") {
			stmts := p["PolicyDocument"].(map[string]any)["Statement"].([]any)
			for _, s := range stmts {
				st := s.(map[string]any)
				if hasStar(st["Action"]) && hasStar(st["Resource"]) {
					t.Errorf("wildcard action on wildcard resource: %v", st)
				}
			}
		}
		b, _ := json.Marshal(raw)
		if strings.Contains(string(b), "FullAccess") {
			t.Error("a managed FullAccess policy is attached")
		}
	})
}

func hasStar(v any) bool {
	switch x := v.(type) {
	case string:
		return x == "*"
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && s == "*" {
				return true
			}
		}
	}
	return false
}

func TestProdRetainsTableAndPropsAreChecked(t *testing.T) {
	tpl, _ := synth(t, &StackProps{Stage: "prod"})
	tpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{"DeletionPolicy": "Retain"})
	app := awscdk.NewApp(nil)
	if _, err := NewBatonStack(app, "Bad", &StackProps{WorkerTimeoutSeconds: 901, BuildDir: t.TempDir()}); err == nil {
		t.Fatal("worker timeout over 900 s accepted")
	}
}

// checkQueueRules: the step queue is FIFO without content-based dedup, its
// visibility timeout is at least six times the worker's timeout, and it
// redrives to a FIFO dead-letter queue after five receives.
func checkQueueRules(t *testing.T, raw template) {
	t.Helper()
	var workerTimeout float64
	for _, f := range ofType(raw, "AWS::Lambda::Function") {
		if to, _ := f["Timeout"].(float64); to > workerTimeout {
			workerTimeout = to
		}
	}
	if workerTimeout == 0 {
		t.Fatal("no function timeout found")
	}
	var main, dead int
	for _, q := range ofType(raw, "AWS::SQS::Queue") {
		if q["FifoQueue"] != true {
			t.Errorf("queue not FIFO: %v", q)
		}
		if rp, ok := q["RedrivePolicy"].(map[string]any); ok {
			main++
			if rp["maxReceiveCount"] != float64(5) {
				t.Errorf("maxReceiveCount %v", rp["maxReceiveCount"])
			}
			if q["ContentBasedDeduplication"] != false {
				t.Errorf("content-based dedup must be off: %v", q)
			}
			if vt, _ := q["VisibilityTimeout"].(float64); vt < 6*workerTimeout {
				t.Errorf("visibility timeout %v < 6 × worker timeout %v", vt, workerTimeout)
			}
		} else {
			dead++
		}
	}
	if main != 1 || dead != 1 {
		t.Errorf("queues: %d with redrive, %d without", main, dead)
	}
}

func TestWorkerGrants(t *testing.T) {
	model := "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-sonnet-20241022-v2:0"
	tpl, raw := synth(t, &StackProps{Providers: []string{"bedrock"}, BedrockModelArns: []string{model},
		SSMParameterArns: []string{"arn:aws:ssm:us-east-1:123456789012:parameter/baton/key"},
		Env:              map[string]string{"BATON_BEDROCK_REGION": "us-east-1"}})
	tpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), map[string]any{
		"PolicyDocument": assertions.Match_ObjectLike(&map[string]any{
			"Statement": assertions.Match_ArrayWith(&[]any{assertions.Match_ObjectLike(&map[string]any{
				"Action": []any{"bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"}, "Resource": model})}),
		}),
	})
	found := 0
	for _, f := range ofType(raw, "AWS::Lambda::Function") {
		if f["Environment"].(map[string]any)["Variables"].(map[string]any)["BATON_BEDROCK_REGION"] == "us-east-1" {
			found++
		}
	}
	if found != 3 {
		t.Fatalf("extra env on %d functions", found)
	}
}
