package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// Observability settings.
const (
	// metricsNamespace is the namespace of the EMF metrics the runner
	// writes (internal/durable.MetricsNamespace).
	metricsNamespace = "Baton"
	// stepP99AlarmMs is the p99 model-turn step duration that alarms.
	stepP99AlarmMs = 60000
	// workerErrorRateAlarm is the worker's failed-invocation percentage
	// that alarms.
	workerErrorRateAlarm = 5
)

// addObservability adds the alarms on Baton's EMF metrics and the
// worker's error rate, and the dashboard; with props.OTelLayerArn it
// adds that collector layer (the AWS Distro for OpenTelemetry Lambda
// layer) to the API and worker functions and points their traces at it.
func addObservability(stack awscdk.Stack, props *StackProps, api, worker awslambda.Function, dlq awssqs.Queue) {
	five := awscdk.Duration_Minutes(jsii.Number(5))
	baton := func(name, stat string, dims map[string]*string) awscloudwatch.Metric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(metricsNamespace), MetricName: jsii.String(name),
			Statistic: jsii.String(stat), Period: five, DimensionsMap: &dims})
	}
	alarmOnAny(stack, "InDoubtResults", "A Baton tool call's outcome is unknown (in_doubt): check the tool's side effects", baton("InDoubt", "Sum", nil))
	stepP99 := baton("StepDuration", "p99", map[string]*string{"StepKind": jsii.String("model_turn"), "Outcome": jsii.String("ok")})
	awscloudwatch.NewAlarm(stack, jsii.String("StepDurationP99"), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String("Baton model-turn steps are slow (p99 step duration)"),
		Metric:             stepP99,
		Threshold:          jsii.Number(stepP99AlarmMs),
		EvaluationPeriods:  jsii.Number(3),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	sum := &awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}
	errorRate := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("100 * errors / MAX([invocations, 1])"),
		Label:      jsii.String("worker error rate (%)"),
		Period:     five,
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"errors": worker.MetricErrors(sum), "invocations": worker.MetricInvocations(sum),
		},
	})
	awscloudwatch.NewAlarm(stack, jsii.String("WorkerErrorRate"), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String("More than 5% of the Baton worker's invocations failed"),
		Metric:             errorRate,
		Threshold:          jsii.Number(workerErrorRateAlarm),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	search := func(label, dims, name, stat string) awscloudwatch.IMetric {
		return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String("SEARCH('{" + metricsNamespace + dims + "} MetricName=\"" + name + "\"', '" + stat + "', 300)"),
			Label:      jsii.String(label), Period: five,
		})
	}
	graph := func(title string, metrics ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Left: &metrics, Width: jsii.Number(8)})
	}
	awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String("Baton-" + props.Stage),
		Widgets: &[]*[]awscloudwatch.IWidget{
			{
				graph("Steps by kind and outcome; chained or queued", search("steps", ",StepKind,Outcome", "Steps", "Sum"), search("delivery", ",Delivery", "StepDeliveries", "Sum")),
				graph("Step duration p99 (ms)", search("p99", ",StepKind,Outcome", "StepDuration", "p99")),
				graph("Model latency p99 (ms)", search("p99", ",Provider", "ModelLatency", "p99")),
			},
			{
				graph("Tokens", search("input", ",Provider", "InputTokens", "Sum"), search("output", ",Provider", "OutputTokens", "Sum")),
				graph("Tool errors by error_type", search("errors", ",ErrorType", "ToolErrors", "Sum")),
				graph("Runs by final status", search("runs", ",Status", "RunsFinished", "Sum")),
			},
			{
				graph("in_doubt, lock conflicts", baton("InDoubt", "Sum", nil), baton("LockConflicts", "Sum", nil)),
				graph("Worker error rate (%)", errorRate),
				graph("Dead letters", dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")})),
			},
		},
	})
	if props.OTelLayerArn == "" {
		return
	}
	layer := awslambda.LayerVersion_FromLayerVersionArn(stack, jsii.String("OTelCollectorLayer"), jsii.String(props.OTelLayerArn))
	for _, f := range []awslambda.Function{api, worker} {
		f.AddLayers(layer)
		f.AddEnvironment(jsii.String("OTEL_TRACES_EXPORTER"), jsii.String("otlp"), nil)
		f.AddEnvironment(jsii.String("OTEL_EXPORTER_OTLP_PROTOCOL"), jsii.String("http/protobuf"), nil)
		f.AddEnvironment(jsii.String("OTEL_EXPORTER_OTLP_ENDPOINT"), jsii.String("http://localhost:4318"), nil)
	}
}
