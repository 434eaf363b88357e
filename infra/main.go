// Command infra is Baton's CDK app: one stack with the DynamoDB table, the
// SQS FIFO step queue and its dead-letter queue, the API, worker and
// sweeper Lambdas (arm64, provided.al2023, code from ../build), a REST API
// under /v1, alarms and outputs. Context values: stage (default dev),
// providers (comma-separated, default bedrock), buildDir (default
// ../build), workerTimeout (seconds, default 120), and the worker's extra
// grants as comma-separated ARNs (or JSON lists): bedrockModelArns,
// secretArns, ssmParameterArns, toolFunctionArns, hookFunctionArns; bedrockGuardrailArns
// (the same form) grants the worker function
// bedrock:ApplyGuardrail on exactly those guardrails; bufferedStream (true or false,
// default true for stage local — LocalStack 4.4 predates API Gateway
// response streaming — and false otherwise) keeps the stream route on the
// buffered integration. intakeEventPattern (a JSON event pattern) adds an
// EventBridge rule, on intakeEventBus (name or ARN; default bus when
// unset), that starts runs through the intake queue (README, "Background
// runs"). jwtIssuer and jwtAudience (with jwksUrl, jwtTenantClaim,
// jwtScopeClaim, jwtScopeMap) make the API accept an OIDC issuer's JWTs;
// cognitoUserPoolId with cognitoAppClientId trusts an existing Cognito
// user pool, cognitoUserPool=create a new one (identity.go, docs/auth.md).
// iamPrincipals (a JSON object of role or user ARNs to {"tenant","scopes"})
// adds the routes under /iam/ with AWS_IAM authorization for SigV4
// callers. tenantRate, tenantBurst, callerRate, callerBurst and tenantMaxActive
// are the per-tenant limits (limits.go, docs/limits.md).
// scheduleMinInterval (a Go duration, at least 1m; default 1m) and
// maxSchedulesPerTenant (default 100) are the limits of scheduled runs
// (schedules.go, docs/deploying.md).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	props := &StackProps{
		Stage:     ctxString(app, "stage", "dev"),
		BuildDir:  ctxString(app, "buildDir", "../build"),
		Providers: strings.Split(ctxString(app, "providers", "bedrock"), ","),
	}
	props.WorkerTimeoutSeconds = ctxFloat(app, "workerTimeout", "seconds")
	props.ChainSteps = ctxFloat(app, "chainSteps", "a number of steps (-1: off)")
	props.BedrockModelArns = ctxList(app, "bedrockModelArns")
	props.SecretArns = ctxList(app, "secretArns")
	props.SSMParameterArns = ctxList(app, "ssmParameterArns")
	props.ToolFunctionArns = ctxList(app, "toolFunctionArns")
	props.HookFunctionArns = ctxList(app, "hookFunctionArns")
	props.BedrockGuardrailArns = ctxList(app, "bedrockGuardrailArns")
	props.EventBus = ctxString(app, "eventBus", "default")
	buffered, err := strconv.ParseBool(ctxString(app, "bufferedStream", strconv.FormatBool(props.Stage == "local")))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bufferedStream: want true or false:", err)
		os.Exit(1)
	}
	props.BufferedStream = buffered
	props.CORSOrigins = ctxList(app, "corsOrigins")
	props.IntakeEventPattern = ctxJSON(app, "intakeEventPattern")
	props.IntakeEventBus = ctxString(app, "intakeEventBus", "")
	props.OTelLayerArn = ctxString(app, "otelLayerArn", "")
	props.JWT = JWTProps{Issuer: ctxString(app, "jwtIssuer", ""), Audience: ctxString(app, "jwtAudience", ""), JWKSURL: ctxString(app, "jwksUrl", ""),
		TenantClaim: ctxString(app, "jwtTenantClaim", ""), ScopeClaim: ctxString(app, "jwtScopeClaim", ""), ScopeMap: ctxString(app, "jwtScopeMap", ""),
		CognitoUserPoolID: ctxString(app, "cognitoUserPoolId", ""), CognitoAppClientID: ctxString(app, "cognitoAppClientId", "")}
	props.Limits = LimitsProps{TenantRate: ctxString(app, "tenantRate", ""), TenantBurst: ctxString(app, "tenantBurst", ""),
		CallerRate: ctxString(app, "callerRate", ""), CallerBurst: ctxString(app, "callerBurst", "")}
	if s := ctxString(app, "tenantMaxActive", ""); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tenantMaxActive: want a whole number of runs:", err)
			os.Exit(1)
		}
		props.Limits.MaxActiveRuns = n
	}
	props.IAMPrincipals = ctxJSON(app, "iamPrincipals")
	props.Schedules = SchedulesProps{MinInterval: ctxString(app, "scheduleMinInterval", ""), MaxPerTenant: ctxString(app, "maxSchedulesPerTenant", "")}
	switch v := ctxString(app, "cognitoUserPool", ""); v {
	case "":
	case "create":
		props.JWT.CreateCognitoUserPool = true
	default:
		fmt.Fprintf(os.Stderr, "cognitoUserPool: want create (or set cognitoUserPoolId), got %q\n", v)
		os.Exit(1)
	}
	props.StackProps.Env = &awscdk.Environment{Account: envPtr("CDK_DEFAULT_ACCOUNT"), Region: envPtr("CDK_DEFAULT_REGION")}
	if _, err := NewBatonStack(app, "Baton-"+props.Stage, props); err != nil {
		fmt.Fprintln(os.Stderr, "baton stack:", err)
		os.Exit(1)
	}
	app.Synth(nil)
}

// ctxJSON reads a JSON context value: a string (-c key='{…}') or an
// object (cdk.json), returned as JSON text ("" when unset).
func ctxJSON(app awscdk.App, key string) string {
	switch v := app.Node().TryGetContext(jsii.String(key)).(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

func ctxString(app awscdk.App, key, def string) string {
	if v := app.Node().TryGetContext(jsii.String(key)); v != nil {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
		return fmt.Sprint(v)
	}
	return def
}

// ctxFloat reads a number context value (0 when not set: the props'
// default), exiting with what it wants when it is not a number.
func ctxFloat(app awscdk.App, key, want string) float64 {
	s := ctxString(app, key, "")
	if s == "" {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: want %s: %v\n", key, want, err)
		os.Exit(1)
	}
	return v
}

// ctxList reads a list context value: comma-separated ("a,b" on the
// command line) or a JSON list (["a","b"] in cdk.json or as -c
// key='["a","b"]').
func ctxList(app awscdk.App, key string) []string {
	return splitList(app.Node().TryGetContext(jsii.String(key)))
}

func splitList(v any) []string {
	var items []string
	switch x := v.(type) {
	case nil:
	case []any:
		for _, e := range x {
			items = append(items, fmt.Sprint(e))
		}
	case string:
		var list []string
		if s := strings.TrimSpace(x); strings.HasPrefix(s, "[") && json.Unmarshal([]byte(s), &list) == nil {
			items = list
		} else {
			items = strings.Split(x, ",")
		}
	default:
		items = strings.Split(fmt.Sprint(x), ",")
	}
	var out []string
	for _, v := range items {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func envPtr(k string) *string {
	if v := os.Getenv(k); v != "" {
		return jsii.String(v)
	}
	return nil
}
