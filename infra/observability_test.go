package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

func TestObservability(t *testing.T) {
	tpl, raw := synth(t, &StackProps{Stage: "dev", Providers: []string{"bedrock"}, WorkerTimeoutSeconds: 120})
	t.Run("alarms", func(t *testing.T) {
		tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"Namespace": "Baton", "MetricName": "InDoubt", "Statistic": "Sum", "Threshold": 1, "ComparisonOperator": "GreaterThanOrEqualToThreshold"})
		tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"Namespace": "Baton", "MetricName": "StepDuration", "ExtendedStatistic": "p99", "Threshold": stepP99AlarmMs,
			"Dimensions": []any{map[string]any{"Name": "Outcome", "Value": "ok"}, map[string]any{"Name": "StepKind", "Value": "model_turn"}}})
		rate := false
		for _, a := range ofType(raw, "AWS::CloudWatch::Alarm") {
			b, _ := json.Marshal(a)
			if strings.Contains(string(b), "100 * errors / MAX([invocations, 1])") && a["Threshold"] == float64(workerErrorRateAlarm) {
				rate = true
			}
		}
		if !rate {
			t.Error("no worker error-rate alarm")
		}
	})
	t.Run("dashboard", func(t *testing.T) {
		ds := ofType(raw, "AWS::CloudWatch::Dashboard")
		if len(ds) != 1 || ds[0]["DashboardName"] != "Baton-dev" {
			t.Fatalf("dashboards %v", ds)
		}
		b, _ := json.Marshal(ds[0]["DashboardBody"])
		for _, m := range []string{"Steps", "StepDuration", "ModelLatency", "InputTokens", "OutputTokens", "ToolErrors", "RunsFinished", "InDoubt", "LockConflicts", "ApproximateNumberOfMessagesVisible"} {
			if !strings.Contains(string(b), m) {
				t.Errorf("dashboard lacks %s", m)
			}
		}
	})
	t.Run("no OpenTelemetry layer by default", func(t *testing.T) {
		for _, f := range ofType(raw, "AWS::Lambda::Function") {
			vars := f["Environment"].(map[string]any)["Variables"].(map[string]any)
			if f["Layers"] != nil || vars["OTEL_TRACES_EXPORTER"] != nil {
				t.Errorf("function with a layer or OTEL settings: %v", f)
			}
		}
	})
	t.Run("the OpenTelemetry layer switch", func(t *testing.T) {
		const arn = "arn:aws:lambda:us-east-1:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1"
		_, raw := synth(t, &StackProps{Stage: "dev", Providers: []string{"bedrock"}, WorkerTimeoutSeconds: 120, OTelLayerArn: arn})
		traced := 0
		for _, f := range ofType(raw, "AWS::Lambda::Function") {
			vars := f["Environment"].(map[string]any)["Variables"].(map[string]any)
			layers, _ := f["Layers"].([]any)
			if len(layers) == 1 && layers[0] == arn && vars["OTEL_TRACES_EXPORTER"] == "otlp" && vars["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://localhost:4318" {
				traced++
			}
		}
		if traced != 2 {
			t.Fatalf("%d functions traced through the layer, want 2 (api, worker)", traced)
		}
	})
}
