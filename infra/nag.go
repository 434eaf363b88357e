package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// cdk-nag (AwsSolutions and Serverless packs) runs over the synthesized
// template in the infra tests (nag/nag.js, nag_test.go). What it finds
// is fixed in the stack (TLS-only queue policies, execution logging), or
// acknowledged here, on the resources it concerns, each rule with the
// reason it does not apply to Baton. The acknowledgements are the cdk_nag
// metadata of each resource, the form cdk-nag has always written into
// templates.

// nagRule is an acknowledged cdk-nag rule (a finding id such as
// AwsSolutions-IAM5[Resource::…] acknowledges that finding only).
type nagRule struct{ id, reason string }

// nagByType are the rules acknowledged on every resource of a type.
var nagByType = map[string][]nagRule{
	"AWS::Lambda::Function": {
		{"Serverless-LambdaDLQ", "No function is invoked asynchronously with work to lose: API Gateway invokes the API synchronously, the worker and the intake function take SQS batches whose failed messages the queues' redrive policies dead-letter, and the sweeper's schedule invokes it every minute to redo whatever is due."},
		{"Serverless-LambdaTracing", "Tracing is OpenTelemetry, opt-in per deployment (otelLayerArn, docs/telemetry.md); X-Ray active tracing would bill every request of every deployment."},
	},
	"AWS::Lambda::EventSourceMapping": {
		{"Serverless-LambdaEventSourceMappingDestination", "Failed SQS messages are dead-lettered by the source queue's redrive policy (steps after 5 receives, intake after 5), with an alarm on each dead-letter queue."},
	},
	"AWS::ApiGateway::RestApi": {
		{"AwsSolutions-APIG2", "The API function validates every body strictly against the documented schema (events/, /v1/openapi.json): unknown fields, wrong types and bad values are 400s with the field named, before anything is stored."},
	},
	"AWS::ApiGateway::Stage": {
		{"AwsSolutions-APIG3", "A WAF web ACL is a per-deployment choice with its own cost; the stage throttling and Baton's per-tenant rate limits (docs/limits.md) guard the API. Associate a web ACL with the stage where one is wanted."},
		{"Serverless-APIGWXrayEnabled", "Tracing is OpenTelemetry from the functions, opt-in per deployment (otelLayerArn, docs/telemetry.md)."},
	},
	"AWS::Cognito::UserPool": {
		{"AwsSolutions-COG2", "Users may enrol a TOTP second factor (MFA optional): whether it is required is the organisation's sign-in policy; set Mfa to REQUIRED on the pool where it is."},
		{"AwsSolutions-COG8", "The pool is on Cognito's Essentials plan; threat protection (the Plus plan) is billed per monthly active user and left to the deployment to turn on."},
	},
	"AWS::Events::Rule": {
		{"Serverless-EventBusDLQ", "The sweep schedule's target is idempotent and runs every minute: a failed invocation's work is done by the next one."},
	},
}

// nagAPIMethod are the rules acknowledged on the API's methods: Baton
// authorizes every request itself (its tokens, or JWTs of the configured
// OIDC issuer or Cognito user pool, verified in the function on every
// request, docs/auth.md); the /iam/ tree is authorized by API Gateway
// with AWS_IAM.
var (
	nagAPIMethod = nagRule{"AwsSolutions-APIG4", "The API function authenticates every request: Baton's hashed tokens or JWTs of the configured OIDC issuer or Cognito user pool, verified on each request (docs/auth.md). An API Gateway authorizer would only add a cache in front."}
	nagA2ACard   = nagRule{"AwsSolutions-APIG4", "An A2A agent card is public by the A2A specification: clients discover there the agent's skills and how to authenticate (bearer); it holds nothing of a tenant's, and POST /a2a/{agent} beside it is authenticated by the API function."}
	nagCognito   = nagRule{"AwsSolutions-COG4", "Cognito is one of the identity options: the function verifies the user pool's JWTs itself when one is configured (docs/auth.md), beside Baton's tokens and IAM callers (AWS_IAM under /iam/)."}
)

// acknowledgeNagRules puts the acknowledgements on the stack's resources.
func acknowledgeNagRules(stack awscdk.Stack, table awsdynamodb.Table) {
	tableID := *stack.GetLogicalId(table.Node().DefaultChild().(awscdk.CfnElement))
	for _, c := range *stack.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		res, ok := c.(awscdk.CfnResource)
		if !ok {
			continue
		}
		typ := *res.CfnResourceType()
		rules := append([]nagRule(nil), nagByType[typ]...)
		path := *c.Node().Path()
		switch typ {
		case "AWS::ApiGateway::Method":
			if m, ok := c.(awsapigateway.CfnMethod); !ok || m.AuthorizationType() == nil || *m.AuthorizationType() != "AWS_IAM" {
				if strings.Contains(path, "/agent-card.json/GET/") {
					rules = append(rules, nagA2ACard)
				} else {
					rules = append(rules, nagAPIMethod)
				}
			}
			rules = append(rules, nagCognito)
		case "AWS::SQS::Queue":
			if strings.HasSuffix(path, "DLQ/Resource") {
				rules = append(rules, nagRule{"Serverless-SQSRedrivePolicy", "This is a dead-letter queue: the end of a redrive, watched by an alarm."})
			}
		case "AWS::IAM::Role":
			rules = append(rules, nagRule{"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]", "AWS's basic Lambda execution policy: writing the function's own logs, nothing else."},
				nagRule{"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]", "AWS's policy for API Gateway's account-level role that writes execution and access logs."})
		case "AWS::IAM::Policy":
			rules = append(rules, nagRule{"AwsSolutions-IAM5[Resource::<" + tableID + ".Arn>/index/*]", "The table's own secondary indexes (the due index and the run list), which the functions query; no other table."},
				nagRule{"AwsSolutions-IAM5[Resource::" + nagText(stack.Resolve(schedulesArn(stack))) + "]", "The schedules of the stack's own schedule group, one per Baton schedule, named by its id as tenants create them: the API function keeps them (create, update, delete, read); no other group's."})
		}
		if len(rules) == 0 {
			continue
		}
		sort.Slice(rules, func(i, j int) bool { return rules[i].id < rules[j].id })
		list := make([]map[string]string, len(rules))
		for i, r := range rules {
			list[i] = map[string]string{"id": r.id, "reason": r.reason}
		}
		res.AddMetadata(jsii.String("cdk_nag"), map[string]any{"rules_to_suppress": list})
	}
}

// nagText writes a template value as cdk-nag names it in a finding: a
// Ref as <id>, a GetAtt as <id.Attr>, an Fn::Join joined.
func nagText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if r, ok := x["Ref"].(string); ok {
			return "<" + r + ">"
		}
		if ga, ok := x["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
			return "<" + fmt.Sprint(ga[0]) + "." + fmt.Sprint(ga[1]) + ">"
		}
		if j, ok := x["Fn::Join"].([]any); ok && len(j) == 2 {
			parts, _ := j[1].([]any)
			out := make([]string, len(parts))
			for i, p := range parts {
				out[i] = nagText(p)
			}
			return strings.Join(out, fmt.Sprint(j[0]))
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}
