package main

import (
	"encoding/json"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// intakeTransformer is the EventBridge rule's input transformer: the
// event's detail carries tenant, agent, messages and (optionally)
// metadata, and the event id is the idempotency key, so EventBridge's
// retries of one event start one run.
var intakeTransformer = struct {
	paths    map[string]string
	template string
}{
	paths: map[string]string{"id": "$.id", "tenant": "$.detail.tenant", "agent": "$.detail.agent",
		"messages": "$.detail.messages", "metadata": "$.detail.metadata"},
	template: `{"tenant": <tenant>, "idempotency_key": <id>, "agent": <agent>, "messages": <messages>, "metadata": <metadata>}`,
}

// addIntake defines the intake queue (standard) and its dead-letter
// queue, the intake function (consumes the queue with
// ReportBatchItemFailures, sends refused messages to the dead-letter
// queue) and, when props.IntakeEventPattern is set, the EventBridge rule
// that feeds the queue. The caller grants the table and the step queue.
func addIntake(stack awscdk.Stack, props *StackProps, fn func(string, awscdk.Duration, float64) awslambda.Function) (f awslambda.Function, queue, dlq awssqs.Queue) {
	dlq = awssqs.NewQueue(stack, jsii.String("IntakeDLQ"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	queue = awssqs.NewQueue(stack, jsii.String("IntakeQueue"), &awssqs.QueueProps{
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(6 * intakeTimeoutSeconds)),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(intakeMaxReceives)},
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
	})
	f = fn("Intake", awscdk.Duration_Seconds(jsii.Number(intakeTimeoutSeconds)), 256)
	f.AddEnvironment(jsii.String("BATON_INTAKE_DLQ_URL"), dlq.QueueUrl(), nil)
	dlq.GrantSendMessages(f)
	f.AddEventSource(awslambdaeventsources.NewSqsEventSource(queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(10),
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	awscdk.NewCfnOutput(stack, jsii.String("IntakeQueueUrl"), &awscdk.CfnOutputProps{Value: queue.QueueUrl()})
	awscdk.NewCfnOutput(stack, jsii.String("IntakeDeadLetterQueueUrl"), &awscdk.CfnOutputProps{Value: dlq.QueueUrl()})
	if props.IntakeEventPattern != "" {
		var pattern map[string]any
		_ = json.Unmarshal([]byte(props.IntakeEventPattern), &pattern) // Validate checked it
		rule := awsevents.NewCfnRule(stack, jsii.String("IntakeRule"), &awsevents.CfnRuleProps{
			Description:  jsii.String("Start Baton runs from matching events, through the intake queue"),
			EventPattern: pattern,
			Targets: []any{&awsevents.CfnRule_TargetProperty{
				Id: jsii.String("IntakeQueue"), Arn: queue.QueueArn(),
				InputTransformer: &awsevents.CfnRule_InputTransformerProperty{
					InputPathsMap: &intakeTransformer.paths, InputTemplate: jsii.String(intakeTransformer.template),
				},
			}},
		})
		if props.IntakeEventBus != "" {
			rule.SetEventBusName(jsii.String(props.IntakeEventBus))
		}
		queue.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("events.amazonaws.com"), nil)},
			Actions:    jsii.Strings("sqs:SendMessage"),
			Resources:  jsii.Strings(*queue.QueueArn()),
			Conditions: &map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": rule.AttrArn()}},
		}))
	}
	return f, queue, dlq
}
