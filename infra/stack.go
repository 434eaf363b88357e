package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// StackProps configures the Baton stack.
type StackProps struct {
	awscdk.StackProps
	// Stage names the deployment; "prod" retains the table on delete.
	Stage string
	// BuildDir holds api.zip, worker.zip and sweeper.zip (make build).
	BuildDir string
	// Providers are the model providers the deployment enables
	// (BATON_PROVIDERS), e.g. "bedrock" or "scripted".
	Providers []string
	// WorkerTimeoutSeconds is the worker Lambda timeout (default 120); the
	// queue's visibility timeout is six times it.
	WorkerTimeoutSeconds float64
	// WorkerMaxConcurrency caps concurrent worker invocations (default 50).
	WorkerMaxConcurrency float64
	// ChainSteps is the most steps a worker invocation continues after
	// its message's own instead of sending them through the queue
	// (chained steps, BATON_CHAIN_STEPS; default 32, -1 turns chaining
	// off). A step is chained only while the invocation has half its
	// timeout left (BATON_CHAIN_MIN_REMAINING), and is the invocation's
	// for its timeout (BATON_CHAIN_LEASE, on every function) before the
	// sweeper sends it.
	ChainSteps float64
	// ThrottleRate and ThrottleBurst are the API stage's throttling.
	ThrottleRate  float64
	ThrottleBurst float64
	// Env adds environment variables to every function (e.g.
	// BATON_OPENAI_API_KEY_SSM, BATON_BEDROCK_REGION).
	Env map[string]string
	// BedrockModelArns are the foundation models or inference profiles the
	// worker may invoke (bedrock:InvokeModel).
	BedrockModelArns []string
	// SecretArns and SSMParameterArns are the secrets (provider keys, http
	// tool signing secrets) the worker may read.
	SecretArns       []string
	SSMParameterArns []string
	// ToolFunctionArns are the Lambda functions of lambda tools (only the
	// worker invokes them).
	ToolFunctionArns []string
	// HookFunctionArns are the Lambda functions of lambda hooks (the
	// pre-tool mediator, the completion policy, guardrail hooks), which
	// every function may call.
	HookFunctionArns []string
	// BedrockGuardrailArns are the Amazon Bedrock guardrails the agents'
	// "bedrock" guardrail rules apply (bedrock:ApplyGuardrail on exactly
	// these ARNs, granted to the functions that run the step machine: the
	// worker and the API). None: no grant.
	BedrockGuardrailArns []string
	// BufferedStream puts GET /v1/runs/{run_id}/stream on the buffered
	// integration like every other route (25 s windows, the client
	// reconnects) instead of a response-streaming one, for an API Gateway
	// without response streaming (LocalStack 4.4 predates it). It sets the
	// API function's BATON_STREAM_TRANSFER to match.
	BufferedStream bool
	// CORSOrigins are the browser origins allowed to call the API (the
	// API function's BATON_CORS_ORIGINS). Preflights (OPTIONS) reach the
	// function through the routes' ANY methods; with one origin, API
	// Gateway's own error answers (throttling, a timeout) carry it too.
	// None: no browser origin.
	CORSOrigins []string
	// EventBus is the EventBridge bus run notifications go to, a name or
	// an ARN (default "default", the account's default bus): the
	// functions' BATON_EVENT_BUS, and events:PutEvents on that bus alone
	// for the functions that commit transitions (API, worker, sweeper).
	EventBus string
	// IntakeEventPattern, when set (JSON), adds an EventBridge rule on
	// IntakeEventBus (a name or ARN; default the account's default bus)
	// whose matching events start runs through the intake queue, shaped by
	// the input transformer of intakeTransformer.
	IntakeEventPattern string
	IntakeEventBus     string
	// OTelLayerArn, when set, adds this OpenTelemetry collector layer
	// (the AWS Distro for OpenTelemetry Lambda layer for arm64) to the API
	// and worker functions and sends their traces to it over OTLP/HTTP
	// (context otelLayerArn); empty: no tracing (observability.go).
	OTelLayerArn string
	// JWT makes the API accept JWTs of an OIDC issuer or a Cognito user
	// pool beside Baton's tokens (identity.go).
	JWT JWTProps
	// Limits are the per-tenant limits (limits.go).
	Limits LimitsProps
	// Schedules are the limits of scheduled runs (schedules.go).
	Schedules SchedulesProps
	// IAMPrincipals, a JSON object of IAM role or user ARNs to
	// {"tenant": …, "scopes": […]}, adds the routes again under /iam/
	// with AWS_IAM authorization for service callers (identity.go).
	IAMPrincipals string
}

// Intake queue settings: the intake function is quick (one validation,
// one conditional write, one send) and its timeout stays under the
// in-flight lease of an idempotency key (2 min, internal/app).
const (
	intakeTimeoutSeconds = 30
	intakeMaxReceives    = 5
)

// Stream route limits: API Gateway streams a response for at most 15
// minutes, so the API function may run that long (a stream ends 10 s
// before the invocation's deadline and the client reconnects with
// Last-Event-ID); buffered routes still end after API Gateway's 29 s.
const (
	apiTimeoutSeconds    = 900
	streamTimeoutSeconds = 900
)

func (p *StackProps) defaults() {
	if p.Stage == "" {
		p.Stage = "dev"
	}
	if p.BuildDir == "" {
		p.BuildDir = "../build"
	}
	if p.WorkerTimeoutSeconds <= 0 {
		p.WorkerTimeoutSeconds = 120
	}
	if p.WorkerMaxConcurrency <= 0 {
		p.WorkerMaxConcurrency = 50
	}
	if p.ChainSteps == 0 {
		p.ChainSteps = 32
	}
	if p.ThrottleRate <= 0 {
		p.ThrottleRate = 50
	}
	if p.ThrottleBurst <= 0 {
		p.ThrottleBurst = 100
	}
	if p.EventBus == "" {
		p.EventBus = "default"
	}
	p.Schedules.defaults()
}

// Validate checks the props.
func (p *StackProps) Validate() error {
	if p.WorkerTimeoutSeconds > 900 {
		return fmt.Errorf("worker timeout %vs exceeds Lambda's 900 s", p.WorkerTimeoutSeconds)
	}
	if 6*p.WorkerTimeoutSeconds > 43200 {
		return fmt.Errorf("6 × worker timeout exceeds SQS's 12 h visibility timeout")
	}
	if strings.Contains(p.EventBus, "*") {
		return fmt.Errorf("eventBus: %q: name one bus, without wildcards", p.EventBus)
	}
	if p.IntakeEventPattern != "" {
		var pattern map[string]any
		if err := json.Unmarshal([]byte(p.IntakeEventPattern), &pattern); err != nil || len(pattern) == 0 {
			return fmt.Errorf("intakeEventPattern: want a JSON event pattern object: %v", err)
		}
	}
	for _, arn := range p.BedrockGuardrailArns {
		if !*awscdk.Token_IsUnresolved(jsii.String(arn)) && !guardrailArn.MatchString(arn) {
			return fmt.Errorf("bedrockGuardrailArns: %q is not a guardrail ARN (arn:aws:bedrock:REGION:ACCOUNT:guardrail/ID)", arn)
		}
	}
	if err := p.Limits.validate(); err != nil {
		return err
	}
	if err := p.Schedules.validate(); err != nil {
		return err
	}
	if err := validateIAMPrincipals(p.IAMPrincipals); err != nil {
		return err
	}
	return p.JWT.validate()
}

// guardrailArn is the ARN of one Bedrock guardrail (no wildcards).
var guardrailArn = regexp.MustCompile(`^arn:aws(-[a-z]+)*:bedrock:[a-z0-9-]+:[0-9]{12}:guardrail/[a-z0-9]+$`)

// addGatewayCORS lets a page read API Gateway's own 4XX and 5XX answers
// (throttled, timed out: the function never saw the request) when there
// is one allowed origin; the function answers everything else, with the
// request's origin when it is allowed.
func addGatewayCORS(rest awsapigateway.RestApi, origins []string) {
	if len(origins) != 1 || origins[0] == "*" {
		return
	}
	for name, t := range map[string]awsapigateway.ResponseType{"Default4xx": awsapigateway.ResponseType_DEFAULT_4XX(), "Default5xx": awsapigateway.ResponseType_DEFAULT_5XX()} {
		rest.AddGatewayResponse(jsii.String(name), &awsapigateway.GatewayResponseOptions{Type: t, ResponseHeaders: &map[string]*string{
			"Access-Control-Allow-Origin":   jsii.String("'" + origins[0] + "'"),
			"Access-Control-Expose-Headers": jsii.String("'Retry-After, X-Request-Id'"),
			"Vary":                          jsii.String("'Origin'"),
		}})
	}
}

// NewBatonStack defines the table, the step queue and its DLQ, the API,
// worker and sweeper Lambdas, the REST API, alarms and outputs.
func NewBatonStack(scope constructs.Construct, id string, props *StackProps) (awscdk.Stack, error) {
	if props == nil {
		props = &StackProps{}
	}
	props.defaults()
	if err := props.Validate(); err != nil {
		return nil, err
	}
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	removal := awscdk.RemovalPolicy_DESTROY
	if props.Stage == "prod" {
		removal = awscdk.RemovalPolicy_RETAIN
	}

	table := awsdynamodb.NewTable(stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String("PK"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:             &awsdynamodb.Attribute{Name: jsii.String("SK"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String("ttl"),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		RemovalPolicy: removal,
	})
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String("GSI1"),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String("GSI1PK"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String("GSI1SK"), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_KEYS_ONLY,
	})
	// GSI2 lists a tenant's runs newest first (GET /v1/runs): its keys
	// never change after a run is created and it projects only what a
	// list entry shows, so a commit writes it only when a status changes.
	// Keep in step with internal/dynamostore/list.go.
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:        jsii.String("GSI2"),
		PartitionKey:     &awsdynamodb.Attribute{Name: jsii.String("GSI2PK"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:          &awsdynamodb.Attribute{Name: jsii.String("GSI2SK"), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType:   awsdynamodb.ProjectionType_INCLUDE,
		NonKeyAttributes: jsii.Strings("session", "status", "agent", "created_at"),
	})

	workerTimeout := awscdk.Duration_Seconds(jsii.Number(props.WorkerTimeoutSeconds))
	dlq := awssqs.NewQueue(stack, jsii.String("StepsDLQ"), &awssqs.QueueProps{
		Fifo:            jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	steps := awssqs.NewQueue(stack, jsii.String("Steps"), &awssqs.QueueProps{
		Fifo:                      jsii.Bool(true),
		ContentBasedDeduplication: jsii.Bool(false),
		VisibilityTimeout:         awscdk.Duration_Seconds(jsii.Number(6 * props.WorkerTimeoutSeconds)),
		DeadLetterQueue:           &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(5)},
		Encryption:                awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:                jsii.Bool(true),
	})

	env := map[string]*string{
		"BATON_TABLE":        table.TableName(),
		"BATON_QUEUE_URL":    steps.QueueUrl(),
		"BATON_PROVIDERS":    jsii.String(strings.Join(props.Providers, ",")),
		"BATON_MAX_RECEIVES": jsii.String("5"),
		"BATON_STALL_AFTER":  jsii.String(fmt.Sprintf("%ds", int(2*6*props.WorkerTimeoutSeconds))),
		// The step queue's visibility timeout: the worker keeps the
		// messages of its batch hidden that long while it handles them.
		"BATON_STEP_VISIBILITY": jsii.String(fmt.Sprintf("%ds", int(6*props.WorkerTimeoutSeconds))),
		"BATON_INTENT_LEASE":    jsii.String(fmt.Sprintf("%ds", int(2*props.WorkerTimeoutSeconds))),
		// How long a step a chaining worker holds is its invocation's
		// (the worker's timeout): every function sets a held run's due
		// time from it, as from BATON_STALL_AFTER.
		"BATON_CHAIN_LEASE": jsii.String(fmt.Sprintf("%ds", int(props.WorkerTimeoutSeconds))),
		"LOG_LEVEL":         jsii.String("info"),
		"BATON_EVENT_BUS":   jsii.String(props.EventBus),
	}
	for k, v := range props.Env {
		env[k] = jsii.String(v)
	}
	props.Limits.addEnv(env)
	fn := func(name string, timeout awscdk.Duration, memory float64) awslambda.Function {
		logs := awslogs.NewLogGroup(stack, jsii.String(name+"Logs"), &awslogs.LogGroupProps{
			Retention:     awslogs.RetentionDays_ONE_MONTH,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		return awslambda.NewFunction(stack, jsii.String(name), &awslambda.FunctionProps{
			Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
			Architecture: awslambda.Architecture_ARM_64(),
			Handler:      jsii.String("bootstrap"),
			Code:         awslambda.Code_FromAsset(jsii.String(filepath.Join(props.BuildDir, strings.ToLower(name)+".zip")), nil),
			Timeout:      timeout,
			MemorySize:   jsii.Number(memory),
			Environment:  &env,
			LogGroup:     logs,
		})
	}
	api := fn("Api", awscdk.Duration_Seconds(jsii.Number(apiTimeoutSeconds)), 512)
	transfer := awsapigateway.ResponseTransferMode_STREAM
	if props.BufferedStream {
		transfer = awsapigateway.ResponseTransferMode_BUFFERED
	}
	api.AddEnvironment(jsii.String("BATON_STREAM_TRANSFER"), jsii.String(string(transfer)), nil)
	if len(props.CORSOrigins) > 0 {
		api.AddEnvironment(jsii.String("BATON_CORS_ORIGINS"), jsii.String(strings.Join(props.CORSOrigins, ",")), nil)
	}
	addJWT(stack, props, api)
	props.Limits.addAPIEnv(api)
	worker := fn("Worker", workerTimeout, 1024)
	chain := "0"
	if props.ChainSteps > 0 {
		chain = fmt.Sprintf("%d", int(props.ChainSteps))
	}
	worker.AddEnvironment(jsii.String("BATON_CHAIN_STEPS"), jsii.String(chain), nil)
	worker.AddEnvironment(jsii.String("BATON_CHAIN_MIN_REMAINING"), jsii.String(fmt.Sprintf("%ds", int(props.WorkerTimeoutSeconds/2))), nil)
	sweeper := fn("Sweeper", awscdk.Duration_Seconds(jsii.Number(60)), 256)

	intakeFn, intakeQueue, intakeDLQ := addIntake(stack, props, fn)
	addSchedules(stack, props, api, intakeFn, intakeQueue)
	for _, f := range []awslambda.Function{api, worker, sweeper, intakeFn} {
		table.GrantReadWriteData(f)
		steps.GrantSendMessages(f)
	}
	allow := func(actions []string, resources []string, fns ...awslambda.Function) {
		if len(resources) == 0 {
			return
		}
		for _, f := range fns {
			f.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions: jsii.Strings(actions...), Resources: jsii.Strings(resources...),
			}))
		}
	}
	allow([]string{"bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"}, props.BedrockModelArns, worker)
	// Secrets sign tools' and hooks' requests; hooks (the pre-tool
	// mediator, the completion policy, guardrail hooks) are built at cold
	// start in every function, since each applies inputs with the agents'
	// step machines (the API: client results and approvals; the sweeper:
	// expiries).
	allow([]string{"secretsmanager:GetSecretValue"}, props.SecretArns, api, worker, sweeper, intakeFn)
	allow([]string{"ssm:GetParameter"}, props.SSMParameterArns, api, worker, sweeper, intakeFn)
	allow([]string{"lambda:InvokeFunction"}, props.ToolFunctionArns, worker)
	allow([]string{"lambda:InvokeFunction"}, props.HookFunctionArns, api, worker, sweeper, intakeFn)
	// Guardrails check the model's input (planning a model turn), its
	// reply (applying it) and tool calls (planning them): all in the
	// worker. The API and the sweeper apply only outside inputs (client
	// results, approvals, steering, cancels, expiries), which no
	// guardrail checks.
	allow([]string{"bedrock:ApplyGuardrail"}, props.BedrockGuardrailArns, worker)
	// Run notifications are published by whichever function commits the
	// transition (the API: approvals, cancels; the worker: steps; the
	// sweeper: expiries and re-sends), on the configured bus only.
	allow([]string{"events:PutEvents"}, []string{eventBusArn(stack, props.EventBus)}, api, worker, sweeper)
	worker.AddEventSource(awslambdaeventsources.NewSqsEventSource(steps, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(10),
		ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency:          jsii.Number(props.WorkerMaxConcurrency),
	}))
	rule := awsevents.NewRule(stack, jsii.String("SweepSchedule"), &awsevents.RuleProps{
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(1))),
		Description: jsii.String("Expire pending Baton items and resend stalled steps"),
	})
	rule.AddTarget(awseventstargets.NewLambdaFunction(sweeper, nil))

	accessLogs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	rest := awsapigateway.NewRestApi(stack, jsii.String("RestApi"), &awsapigateway.RestApiProps{
		RestApiName:    jsii.String("baton-" + props.Stage),
		CloudWatchRole: jsii.Bool(true),
		DeployOptions: &awsapigateway.StageOptions{
			StageName: jsii.String(props.Stage),
			// Execution logs of errors, for every method (the access
			// log has every request).
			LoggingLevel:         awsapigateway.MethodLoggingLevel_ERROR,
			ThrottlingRateLimit:  jsii.Number(props.ThrottleRate),
			ThrottlingBurstLimit: jsii.Number(props.ThrottleBurst),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(accessLogs),
			AccessLogFormat: awsapigateway.AccessLogFormat_JsonWithStandardFields(&awsapigateway.JsonWithStandardFieldProps{
				Caller: jsii.Bool(false), HttpMethod: jsii.Bool(true), Ip: jsii.Bool(true), Protocol: jsii.Bool(true),
				RequestTime: jsii.Bool(true), ResourcePath: jsii.Bool(true), ResponseLength: jsii.Bool(true),
				Status: jsii.Bool(true), User: jsii.Bool(false),
			}),
		},
	})
	addRoutes(rest, api, transfer)
	addIAMRoutes(stack, props, rest, api, transfer)
	addGatewayCORS(rest, props.CORSOrigins)

	perMinute := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum")}
	alarmOnAny(stack, "DeadLetters", "Baton step messages reached the dead-letter queue", dlq.MetricApproximateNumberOfMessagesVisible(perMinute))
	alarmOnAny(stack, "WorkerErrors", "The Baton worker Lambda failed invocations",
		worker.MetricErrors(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}))
	alarmOnAny(stack, "IntakeDeadLetters", "Baton intake messages reached the intake dead-letter queue (refused: see their baton_error_code attribute)",
		intakeDLQ.MetricApproximateNumberOfMessagesVisible(perMinute))

	addObservability(stack, props, api, worker, dlq)
	acknowledgeNagRules(stack, table)

	awscdk.NewCfnOutput(stack, jsii.String("ApiUrl"), &awscdk.CfnOutputProps{Value: rest.Url(), Description: jsii.String("Base URL; the API is under v1/")})
	awscdk.NewCfnOutput(stack, jsii.String("TableName"), &awscdk.CfnOutputProps{Value: table.TableName()})
	awscdk.NewCfnOutput(stack, jsii.String("QueueUrl"), &awscdk.CfnOutputProps{Value: steps.QueueUrl()})
	awscdk.NewCfnOutput(stack, jsii.String("DeadLetterQueueUrl"), &awscdk.CfnOutputProps{Value: dlq.QueueUrl()})
	return stack, nil
}

// eventBusArn is the ARN of the bus named bus (or bus, an ARN already).
func eventBusArn(stack awscdk.Stack, bus string) string {
	if strings.HasPrefix(bus, "arn:") {
		return bus
	}
	return *stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("events"), Resource: jsii.String("event-bus"), ResourceName: jsii.String(bus)})
}

// alarmOnAny alarms when metric reaches 1 in one period (missing data is
// not breaching).
func alarmOnAny(stack awscdk.Stack, id, description string, metric awscloudwatch.IMetric) {
	awscloudwatch.NewAlarm(stack, jsii.String(id), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String(description),
		Metric:             metric,
		Threshold:          jsii.Number(1),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}

// addRoutes puts every path under /v1 and /a2a on the API function: GET
// /v1/runs/{run_id}/stream (and the AG-UI and A2A POSTs) on an
// integration of the given transfer mode
// (STREAM: API Gateway invokes the function with InvokeWithResponseStream
// and streams its response for up to 15 minutes), everything else on the
// ordinary buffered proxy integration. API Gateway walks the resource
// tree one path segment at a time and does not fall back to a greedy
// sibling, so each resource on the way to the stream route gets its own
// ANY method (and {run_id} a greedy child) or /v1/runs,
// /v1/runs/{run_id} and /v1/runs/{run_id}/events would find no method.
func addRoutes(rest awsapigateway.RestApi, api awslambda.Function, transfer awsapigateway.ResponseTransferMode) {
	addRouteTree(rest.Root(), api, transfer, nil)
	// The web console: its page and assets, embedded in the API function
	// (internal/console) and public like any site's; what it shows it
	// reads from the /v1 routes with the user's credential. Served by the
	// API function rather than S3 and CloudFront: one origin (no CORS),
	// its security headers set in one place, nothing more to deploy, and
	// the same bytes as baton dev serves.
	site := awsapigateway.NewLambdaIntegration(api, &awsapigateway.LambdaIntegrationOptions{})
	console := rest.Root().AddResource(jsii.String("console"), nil)
	console.AddMethod(jsii.String("ANY"), site, nil)
	console.AddProxy(&awsapigateway.ProxyResourceOptions{DefaultIntegration: site, AnyMethod: jsii.Bool(true)})
}

// addRouteTree puts the /v1 and /a2a resource trees under parent, every
// method with opts (nil: no authorization in API Gateway; the function
// checks the caller, and lets anyone read an A2A agent card).
func addRouteTree(parent awsapigateway.IResource, api awslambda.Function, transfer awsapigateway.ResponseTransferMode, opts *awsapigateway.MethodOptions) {
	integration := &awsapigateway.LambdaIntegrationOptions{}
	if opts != nil {
		// One resource-policy statement per method, not two: the Lambda
		// function policy has a 20 KB limit and the tree is added twice.
		integration.AllowTestInvoke = jsii.Bool(false)
	}
	buffered := awsapigateway.NewLambdaIntegration(api, integration)
	anyMethod := func(r awsapigateway.IResource) {
		r.AddMethod(jsii.String("ANY"), buffered, opts)
	}
	proxy := &awsapigateway.ProxyResourceOptions{DefaultIntegration: buffered, DefaultMethodOptions: opts, AnyMethod: jsii.Bool(true)}
	withProxy := func(r awsapigateway.IResource) { r.AddProxy(proxy) }
	v1 := parent.AddResource(jsii.String("v1"), nil)
	withProxy(v1)
	runs := v1.AddResource(jsii.String("runs"), nil)
	anyMethod(runs)
	run := runs.AddResource(jsii.String("{run_id}"), nil)
	anyMethod(run)
	withProxy(run)
	stream := run.AddResource(jsii.String("stream"), nil)
	anyMethod(stream) // other methods get the API's 404/405, not API Gateway's 403
	streamed := buffered
	if transfer == awsapigateway.ResponseTransferMode_STREAM {
		streamed = awsapigateway.NewLambdaIntegration(api, &awsapigateway.LambdaIntegrationOptions{
			ResponseTransferMode: awsapigateway.ResponseTransferMode_STREAM,
			Timeout:              awscdk.Duration_Seconds(jsii.Number(streamTimeoutSeconds)),
			AllowTestInvoke:      integration.AllowTestInvoke,
		})
	}
	stream.AddMethod(jsii.String("GET"), streamed, opts)
	// POST /v1/agents/{agent}/agui answers with a stream of AG-UI events
	// on the same integration; its other methods (a CORS preflight
	// included) and the paths around it reach the function buffered.
	agents := v1.AddResource(jsii.String("agents"), nil)
	anyMethod(agents)
	agent := agents.AddResource(jsii.String("{agent}"), nil)
	anyMethod(agent)
	withProxy(agent)
	agui := agent.AddResource(jsii.String("agui"), nil)
	anyMethod(agui)
	agui.AddMethod(jsii.String("POST"), streamed, opts)
	// The A2A server: POST /a2a/{agent} is the JSON-RPC binding, whose
	// SendStreamingMessage and SubscribeToTask answer with a stream of
	// server-sent events, so it is on a streamed integration like the
	// AG-UI route; the function authenticates it like every /v1 route.
	// GET /a2a/{agent}/.well-known/agent-card.json is the agent's card,
	// public by the A2A specification (a client discovers there how to
	// authenticate), so it takes no authorization in the public tree
	// (and AWS_IAM, like everything else, under /iam/). ANY on
	// /a2a/{agent} lets the function answer its other methods (a CORS
	// preflight included). API Gateway may invoke the function on these
	// methods through one API-wide resource-policy statement rather than
	// one a method: the function policy has a 20 KB limit, the trees
	// come close to it, and every method of the API reaches this
	// function anyway.
	a2aIntegration := func(mode awsapigateway.ResponseTransferMode) awsapigateway.Integration {
		o := &awsapigateway.LambdaIntegrationOptions{ScopePermissionToMethod: jsii.Bool(false)}
		if mode == awsapigateway.ResponseTransferMode_STREAM {
			o.ResponseTransferMode = mode
			o.Timeout = awscdk.Duration_Seconds(jsii.Number(streamTimeoutSeconds))
		}
		return awsapigateway.NewLambdaIntegration(api, o)
	}
	a2aBuffered := a2aIntegration(awsapigateway.ResponseTransferMode_BUFFERED)
	a2aAgent := parent.AddResource(jsii.String("a2a"), nil).AddResource(jsii.String("{agent}"), nil)
	a2aAgent.AddMethod(jsii.String("ANY"), a2aBuffered, opts)
	a2aAgent.AddMethod(jsii.String("POST"), a2aIntegration(transfer), opts)
	card := a2aAgent.AddResource(jsii.String(".well-known"), nil).AddResource(jsii.String("agent-card.json"), nil)
	card.AddMethod(jsii.String("GET"), a2aBuffered, opts)
}
