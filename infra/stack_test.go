package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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
	for _, fn := range []string{"api", "worker", "sweeper", "intake"} {
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
			"AWS::DynamoDB::Table": 1, "AWS::SQS::Queue": 4, "AWS::Lambda::Function": 4,
			"AWS::Lambda::EventSourceMapping": 2, "AWS::ApiGateway::RestApi": 1, "AWS::CloudWatch::Alarm": 7, "AWS::CloudWatch::Dashboard": 1,
			"AWS::Events::Rule": 1,
		} {
			tpl.ResourceCountIs(jsii.String(typ), jsii.Number(n))
		}
	})

	t.Run("functions are arm64 provided.al2023", func(t *testing.T) {
		fns := ofType(raw, "AWS::Lambda::Function")
		chainers := 0
		defer func() {
			if chainers != 1 {
				t.Errorf("%d functions chain steps, want the worker alone", chainers)
			}
		}()
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
			// The worker keeps its batch hidden for the step queue's
			// visibility timeout (six times its 120 s timeout).
			if vars["BATON_STEP_VISIBILITY"] != "720s" {
				t.Errorf("BATON_STEP_VISIBILITY %v, want 720s", vars["BATON_STEP_VISIBILITY"])
			}
			// Only the worker chains steps: for up to 32 steps an
			// invocation, while half its 120 s timeout is left.
			if _, ok := vars["BATON_CHAIN_STEPS"]; ok {
				chainers++
				if vars["BATON_CHAIN_STEPS"] != "32" || vars["BATON_CHAIN_MIN_REMAINING"] != "60s" {
					t.Errorf("worker chain settings %v %v", vars["BATON_CHAIN_STEPS"], vars["BATON_CHAIN_MIN_REMAINING"])
				}
			}
			// Every function sets a held run's due time from the lease.
			if vars["BATON_CHAIN_LEASE"] != "120s" {
				t.Errorf("BATON_CHAIN_LEASE %v, want the worker's timeout", vars["BATON_CHAIN_LEASE"])
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

	t.Run("table indexes: due runs and the run list", func(t *testing.T) {
		tpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
			"GlobalSecondaryIndexes": []any{
				map[string]any{"IndexName": "GSI1",
					"KeySchema": []any{
						map[string]any{"AttributeName": "GSI1PK", "KeyType": "HASH"},
						map[string]any{"AttributeName": "GSI1SK", "KeyType": "RANGE"},
					},
					"Projection": map[string]any{"ProjectionType": "KEYS_ONLY"}},
				map[string]any{"IndexName": "GSI2",
					"KeySchema": []any{
						map[string]any{"AttributeName": "GSI2PK", "KeyType": "HASH"},
						map[string]any{"AttributeName": "GSI2SK", "KeyType": "RANGE"},
					},
					"Projection": map[string]any{"ProjectionType": "INCLUDE", "NonKeyAttributes": []any{"session", "status", "agent", "created_at"}}},
			},
		})
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
		// The worker may keep the messages of its batch hidden
		// (ExtendVisibility), through its event source's grant.
		if !strings.Contains(string(b), `"sqs:ChangeMessageVisibility"`) {
			t.Error("no function may change a step message's visibility")
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
	for _, m := range ofType(raw, "AWS::Lambda::EventSourceMapping") {
		if ref, _ := m["FunctionName"].(map[string]any)["Ref"].(string); strings.HasPrefix(ref, "Worker") {
			workerTimeout, _ = raw.Resources[ref].Properties["Timeout"].(float64)
		}
	}
	if workerTimeout == 0 {
		t.Fatal("no worker timeout found")
	}
	var main, dead int
	for _, q := range ofType(raw, "AWS::SQS::Queue") {
		if q["FifoQueue"] != true {
			continue // the intake queues (checkIntake)
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

// resourcePath is the path of an API Gateway resource, from its parents.
func resourcePath(raw template, id string) string {
	r, ok := raw.Resources[id]
	if !ok || r.Type != "AWS::ApiGateway::Resource" {
		return ""
	}
	parent, _ := r.Properties["ParentId"].(map[string]any)["Ref"].(string)
	return resourcePath(raw, parent) + "/" + r.Properties["PathPart"].(string)
}

// apiMethod is one API Gateway method of the template.
type apiMethod struct {
	path, method string
	integration  map[string]any
	uri          string // the integration URI's literal parts
	target       string // the logical id of the function it invokes
}

func apiMethods(t *testing.T, raw template) map[string]apiMethod {
	t.Helper()
	out := map[string]apiMethod{}
	for _, m := range ofType(raw, "AWS::ApiGateway::Method") {
		res, _ := m["ResourceId"].(map[string]any)["Ref"].(string)
		am := apiMethod{path: resourcePath(raw, res), method: m["HttpMethod"].(string), integration: m["Integration"].(map[string]any)}
		join, _ := am.integration["Uri"].(map[string]any)["Fn::Join"].([]any)
		if len(join) != 2 {
			t.Fatalf("integration URI of %s %s: %v", am.method, am.path, am.integration["Uri"])
		}
		for _, part := range join[1].([]any) {
			switch p := part.(type) {
			case string:
				am.uri += p
			case map[string]any:
				if ga, ok := p["Fn::GetAtt"].([]any); ok {
					am.target = ga[0].(string)
				}
			}
		}
		out[am.method+" "+am.path] = am
	}
	return out
}

// checkRoutes: every path under /v1 and /a2a reaches the API function;
// GET /v1/runs/{run_id}/stream, POST /v1/agents/{agent}/agui and POST
// /a2a/{agent} (A2A JSON-RPC, whose streaming methods answer with
// server-sent events) through a streaming integration (STREAM,
// InvokeWithResponseStream's response-streaming-invocations URI, 15
// minutes) unless buffered, every other method through the ordinary
// buffered proxy integration; the API function may run 15 minutes and
// knows the stream route's transfer mode.
func checkRoutes(t *testing.T, raw template, buffered bool) {
	t.Helper()
	methods := apiMethods(t, raw)
	var apiFn string
	for _, want := range []string{"ANY /v1/{proxy+}", "ANY /v1/runs", "ANY /v1/runs/{run_id}", "ANY /v1/runs/{run_id}/{proxy+}", "ANY /v1/runs/{run_id}/stream", "GET /v1/runs/{run_id}/stream",
		"ANY /v1/agents", "ANY /v1/agents/{agent}", "ANY /v1/agents/{agent}/{proxy+}", "ANY /v1/agents/{agent}/agui", "POST /v1/agents/{agent}/agui",
		"ANY /a2a/{agent}", "POST /a2a/{agent}", "GET /a2a/{agent}/.well-known/agent-card.json",
		"ANY /console", "ANY /console/{proxy+}"} {
		m, ok := methods[want]
		if !ok {
			t.Errorf("no method %s (have %v)", want, methods)
			continue
		}
		if apiFn == "" {
			apiFn = m.target
		}
		if m.target == "" || m.target != apiFn || m.integration["Type"] != "AWS_PROXY" {
			t.Errorf("%s: integration %v", want, m.integration)
		}
	}
	if len(methods) != 16 {
		t.Errorf("%d methods: %v", len(methods), methods)
	}
	for key, m := range methods {
		streamed := (key == "GET /v1/runs/{run_id}/stream" || key == "POST /v1/agents/{agent}/agui" || key == "POST /a2a/{agent}") && !buffered
		mode, _ := m.integration["ResponseTransferMode"].(string)
		switch {
		case streamed && (mode != "STREAM" || m.integration["TimeoutInMillis"] != float64(900000) ||
			!strings.Contains(m.uri, ":lambda:path/2021-11-15/functions/") || !strings.HasSuffix(m.uri, "/response-streaming-invocations")):
			t.Errorf("%s is not a streaming integration: %v (URI %s)", key, m.integration, m.uri)
		case !streamed && (mode != "" && mode != "BUFFERED" || m.integration["TimeoutInMillis"] != nil ||
			!strings.Contains(m.uri, ":lambda:path/2015-03-31/functions/") || !strings.HasSuffix(m.uri, "/invocations")):
			t.Errorf("%s is not the buffered integration: %v (URI %s)", key, m.integration, m.uri)
		}
	}

	fn := raw.Resources[apiFn].Properties
	if fn["Timeout"] != float64(900) {
		t.Errorf("API function timeout %v, want 900 s (a stream's 15 minutes)", fn["Timeout"])
	}
	want := "STREAM"
	if buffered {
		want = "BUFFERED"
	}
	if v := fn["Environment"].(map[string]any)["Variables"].(map[string]any)["BATON_STREAM_TRANSFER"]; v != want {
		t.Errorf("API function BATON_STREAM_TRANSFER %v, want %s", v, want)
	}

	// API Gateway may invoke the function on the stream route:
	// InvokeWithResponseStream needs lambda:InvokeFunction.
	found := false
	for _, p := range ofType(raw, "AWS::Lambda::Permission") {
		b, _ := json.Marshal(p["SourceArn"])
		ga, _ := p["FunctionName"].(map[string]any)["Fn::GetAtt"].([]any)
		if p["Action"] == "lambda:InvokeFunction" && p["Principal"] == "apigateway.amazonaws.com" && len(ga) > 0 && ga[0] == apiFn &&
			strings.HasSuffix(strings.TrimSuffix(string(b), `"]]}`), "/GET/v1/runs/*/stream") {
			found = true
		}
	}
	if !found {
		t.Error("no permission for API Gateway to invoke the API function on GET /v1/runs/*/stream")
	}
	found = false
	for _, p := range ofType(raw, "AWS::Lambda::Permission") {
		b, _ := json.Marshal(p["SourceArn"])
		if p["Action"] == "lambda:InvokeFunction" && strings.HasSuffix(strings.TrimSuffix(string(b), `"]]}`), "/POST/v1/agents/*/agui") {
			found = true
		}
	}
	if !found {
		t.Error("no permission for API Gateway to invoke the API function on POST /v1/agents/*/agui")
	}
	// The A2A methods: through one API-wide statement (the function
	// policy's 20 KB, TestFunctionPolicySize), none of their own.
	var restAPI string
	for id, r := range raw.Resources {
		if r.Type == "AWS::ApiGateway::RestApi" {
			restAPI = id
		}
	}
	found = false
	for _, p := range ofType(raw, "AWS::Lambda::Permission") {
		b, _ := json.Marshal(p["SourceArn"])
		ga, _ := p["FunctionName"].(map[string]any)["Fn::GetAtt"].([]any)
		sa := strings.TrimSuffix(string(b), `"]]}`)
		if strings.Contains(sa, "a2a") {
			t.Errorf("a permission of its own for an A2A method: %s", b)
		}
		if p["Action"] == "lambda:InvokeFunction" && p["Principal"] == "apigateway.amazonaws.com" && len(ga) > 0 && ga[0] == apiFn &&
			strings.HasSuffix(sa, `{"Ref":"`+restAPI+`"},"/*/*/*`) {
			found = true
		}
	}
	if !found {
		t.Error("no permission for API Gateway to invoke the API function on the A2A routes (the API's */*/*)")
	}
	// The agent card is public (A2A discovery), and so, in API Gateway,
	// is everything else of the public tree: the function authenticates
	// POST /a2a/{agent} like every /v1 route.
	for _, m := range ofType(raw, "AWS::ApiGateway::Method") {
		res, _ := m["ResourceId"].(map[string]any)["Ref"].(string)
		if path := resourcePath(raw, res); strings.HasPrefix(path, "/a2a") {
			if at, _ := m["AuthorizationType"].(string); at != "NONE" || m["AuthorizerId"] != nil {
				t.Errorf("%s %s: authorization %q %v, want NONE (the function authenticates; the card is public)", m["HttpMethod"], path, at, m["AuthorizerId"])
			}
		}
	}
}

func TestRoutes(t *testing.T) {
	t.Run("stream route streams", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev"})
		checkRoutes(t, raw, false)
	})
	t.Run("CORS origins reach the API function; preflights reach it through ANY", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev", CORSOrigins: []string{"https://app.example.com", "http://localhost:5173"}})
		methods := apiMethods(t, raw)
		for _, m := range []string{"ANY /v1/{proxy+}", "ANY /v1/runs/{run_id}/stream"} {
			if _, ok := methods[m]; !ok {
				t.Errorf("no %s: OPTIONS on the AG-UI or stream route would not reach the function", m)
			}
		}
		for _, r := range raw.Resources {
			if r.Type != "AWS::Lambda::Function" {
				continue
			}
			env, _ := r.Properties["Environment"].(map[string]any)
			v, _ := env["Variables"].(map[string]any)
			if _, api := v["BATON_STREAM_TRANSFER"]; api && v["BATON_CORS_ORIGINS"] != "https://app.example.com,http://localhost:5173" {
				t.Errorf("API function BATON_CORS_ORIGINS %v", v["BATON_CORS_ORIGINS"])
			} else if !api && v["BATON_CORS_ORIGINS"] != nil {
				t.Errorf("BATON_CORS_ORIGINS on another function: %v", v)
			}
		}
	})
	t.Run("with one origin, API Gateway's own errors carry it", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev", CORSOrigins: []string{"https://app.example.com"}})
		n := 0
		for _, r := range raw.Resources {
			if r.Type != "AWS::ApiGateway::GatewayResponse" {
				continue
			}
			n++
			if h, _ := r.Properties["ResponseParameters"].(map[string]any); h["gatewayresponse.header.Access-Control-Allow-Origin"] != "'https://app.example.com'" {
				t.Errorf("gateway response %v", r.Properties)
			}
		}
		if n != 2 {
			t.Errorf("%d gateway responses, want DEFAULT_4XX and DEFAULT_5XX", n)
		}
		_, raw = synth(t, &StackProps{Stage: "dev", CORSOrigins: []string{"https://a.example.com", "https://b.example.com"}})
		for _, r := range raw.Resources {
			if r.Type == "AWS::ApiGateway::GatewayResponse" {
				t.Errorf("two origins cannot share a static header: %v", r.Properties)
			}
		}
	})
	t.Run("buffered stream route", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "local", BufferedStream: true})
		checkRoutes(t, raw, true)
	})
}

// TestFunctionPolicySize: the API function's resource policy, one
// statement for each permission API Gateway has on it, stays under
// Lambda's 20 KB with every route of both trees (IAM principals mapped):
// each statement estimated as Lambda stores it, its Sid the
// CloudFormation physical id (stack name, logical id, suffix; at most
// 100 characters), its ARNs
// resolved in a long region.
func TestFunctionPolicySize(t *testing.T) {
	_, raw := synth(t, &StackProps{Stage: "staging", IAMPrincipals: `{"arn:aws:iam::123456789012:role/ingest":{"tenant":"acme","scopes":["runs:write"]}}`})
	const (
		fnArn   = "arn:aws:lambda:ap-southeast-2:123456789012:function:Baton-staging-ApiF0C7DAB2-AbCdEfGhIjKl"
		apiArn  = "arn:aws:execute-api:ap-southeast-2:123456789012:abcdef1234/"
		envelop = `{"Version":"2012-10-17","Id":"default","Statement":[]}`
	)
	size, n := len(envelop), 0
	for id, r := range raw.Resources {
		if r.Type != "AWS::Lambda::Permission" || r.Properties["Principal"] != "apigateway.amazonaws.com" {
			continue
		}
		var path string
		if join, ok := r.Properties["SourceArn"].(map[string]any)["Fn::Join"].([]any); ok {
			for _, part := range join[1].([]any) {
				if s, ok := part.(string); ok {
					path += s
				}
			}
		}
		sid := "Baton-staging-" + id
		sid = sid[:min(len(sid), 87)] + "-AbCdEfGhIjKl" // a statement id has at most 100 characters
		stmt, _ := json.Marshal(map[string]any{
			"Sid": sid, "Effect": "Allow", "Principal": map[string]string{"Service": "apigateway.amazonaws.com"},
			"Action": "lambda:InvokeFunction", "Resource": fnArn, "Condition": map[string]any{"ArnLike": map[string]string{"AWS:SourceArn": apiArn + path}},
		})
		size += len(stmt) + 1
		n++
	}
	if size > 20*1024 {
		t.Errorf("the API function's resource policy: %d statements, about %d bytes, over Lambda's 20 KB", n, size)
	}
	t.Logf("%d statements, about %d bytes", n, size)
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
	if found != 4 {
		t.Fatalf("extra env on %d functions", found)
	}
}

func TestGuardrailGrants(t *testing.T) {
	arns := []string{
		"arn:aws:bedrock:us-east-1:123456789012:guardrail/gr1example",
		"arn:aws:bedrock:eu-west-1:123456789012:guardrail/gr2example",
	}
	t.Run("none when not configured", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev"})
		if got := applyGuardrailGrants(t, raw); len(got) != 0 {
			t.Errorf("bedrock:ApplyGuardrail granted without bedrockGuardrailArns: %v", got)
		}
	})
	t.Run("exactly the configured guardrails, to the worker only", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev", BedrockGuardrailArns: arns})
		got := applyGuardrailGrants(t, raw)
		var fns []string
		for fn, resources := range got {
			fns = append(fns, fn)
			if !slices.Equal(resources, arns) {
				t.Errorf("%s may apply %v, want exactly %v", fn, resources, arns)
			}
		}
		slices.Sort(fns)
		if len(fns) != 1 || !strings.HasPrefix(fns[0], "Worker") {
			t.Errorf("bedrock:ApplyGuardrail granted to %v, want the worker function only", fns)
		}
	})
	t.Run("only guardrail ARNs", func(t *testing.T) {
		for _, bad := range []string{"gr1example", "arn:aws:bedrock:us-east-1:123456789012:guardrail/*", "*"} {
			app := awscdk.NewApp(nil)
			if _, err := NewBatonStack(app, "Bad", &StackProps{BuildDir: t.TempDir(), BedrockGuardrailArns: []string{bad}}); err == nil {
				t.Errorf("guardrail ARN %q accepted", bad)
			}
		}
	})
}

// applyGuardrailGrants returns, by the logical id of the function whose
// role holds it, the resources of each bedrock:ApplyGuardrail statement;
// such a statement must grant that action alone.
func applyGuardrailGrants(t *testing.T, raw template) map[string][]string {
	t.Helper()
	return grantsOf(t, raw, "bedrock:ApplyGuardrail")
}

// grantsOf maps each function to the resources its role's policies allow
// action on (in statements that grant that action alone).
func grantsOf(t *testing.T, raw template, action string) map[string][]string {
	t.Helper()
	fnOfRole := map[string]string{}
	for id, r := range raw.Resources {
		if r.Type != "AWS::Lambda::Function" {
			continue
		}
		if att, ok := r.Properties["Role"].(map[string]any)["Fn::GetAtt"].([]any); ok && len(att) == 2 {
			fnOfRole[att[0].(string)] = id
		}
	}
	out := map[string][]string{}
	for _, p := range ofType(raw, "AWS::IAM::Policy") {
		for _, s := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			st := s.(map[string]any)
			actions := strs(st["Action"])
			if !slices.Contains(actions, action) {
				continue
			}
			if len(actions) != 1 || st["Effect"] != "Allow" {
				t.Errorf("%s statement %v", action, st)
			}
			for _, role := range p["Roles"].([]any) {
				ref, _ := role.(map[string]any)["Ref"].(string)
				fn, ok := fnOfRole[ref]
				if !ok {
					t.Errorf("%s granted to role %v of no function", action, role)
					continue
				}
				out[fn] = append(out[fn], strs(st["Resource"])...)
			}
		}
	}
	return out
}

func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, _ := e.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}

func TestSplitList(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want []string
	}{
		{nil, nil},
		{"", nil},
		{"a, b,,c ", []string{"a", "b", "c"}},
		{`["a", " b "]`, []string{"a", "b"}},
		{[]any{"a", "b"}, []string{"a", "b"}},
		{"[not json", []string{"[not json"}},
	} {
		if got := splitList(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("splitList(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHookGrants: hook functions may be invoked, and secrets read, by
// every function (hooks are built wherever the step machine runs); tool
// functions by the worker only.
func TestHookGrants(t *testing.T) {
	tool, hook := "arn:aws:lambda:us-east-1:123456789012:function:tool", "arn:aws:lambda:us-east-1:123456789012:function:hook"
	secret := "arn:aws:secretsmanager:us-east-1:123456789012:secret:hook-AbCdEf"
	_, raw := synth(t, &StackProps{Stage: "dev", ToolFunctionArns: []string{tool}, HookFunctionArns: []string{hook}, SecretArns: []string{secret}})
	prefixes := func(m map[string][]string, resource string) []string {
		var out []string
		for fn, rs := range m {
			if slices.Contains(rs, resource) {
				out = append(out, strings.TrimRightFunc(fn, func(r rune) bool { return r >= '0' && r <= '9' || r >= 'A' && r <= 'F' }))
			}
		}
		slices.Sort(out)
		return out
	}
	invoke := grantsOf(t, raw, "lambda:InvokeFunction")
	if got := prefixes(invoke, tool); !slices.Equal(got, []string{"Worker"}) {
		t.Errorf("the tool function may be invoked by %v, want the worker only", got)
	}
	if got := prefixes(invoke, hook); !slices.Equal(got, []string{"Api", "Intake", "Sweeper", "Worker"}) {
		t.Errorf("the hook function may be invoked by %v, want all four", got)
	}
	if got := prefixes(grantsOf(t, raw, "secretsmanager:GetSecretValue"), secret); !slices.Equal(got, []string{"Api", "Intake", "Sweeper", "Worker"}) {
		t.Errorf("the secret may be read by %v, want all four", got)
	}
}

// TestEventBusGrants: events:PutEvents on the configured bus alone, to
// the API, the worker and the sweeper (each commits transitions), and
// BATON_EVENT_BUS naming it.
func TestEventBusGrants(t *testing.T) {
	check := func(t *testing.T, raw template, wantBus string, wantResource func(string) bool) {
		t.Helper()
		got := grantsOf(t, raw, "events:PutEvents")
		var fns []string
		for fn := range got {
			fns = append(fns, fn)
		}
		slices.Sort(fns)
		if len(fns) != 3 || !strings.HasPrefix(fns[0], "Api") || !strings.HasPrefix(fns[1], "Sweeper") || !strings.HasPrefix(fns[2], "Worker") {
			t.Errorf("events:PutEvents granted to %v, want the api, sweeper and worker functions", fns)
		}
		for _, p := range ofType(raw, "AWS::IAM::Policy") {
			for _, s := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				st := s.(map[string]any)
				if !slices.Contains(strs(st["Action"]), "events:PutEvents") {
					continue
				}
				b, _ := json.Marshal(st["Resource"])
				if !wantResource(string(b)) {
					t.Errorf("events:PutEvents on %s", b)
				}
			}
		}
		for _, f := range ofType(raw, "AWS::Lambda::Function") {
			vars := f["Environment"].(map[string]any)["Variables"].(map[string]any)
			if vars["BATON_EVENT_BUS"] != wantBus {
				t.Errorf("BATON_EVENT_BUS = %v, want %s", vars["BATON_EVENT_BUS"], wantBus)
			}
		}
	}
	t.Run("default bus", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev"})
		check(t, raw, "default", func(r string) bool {
			return strings.Contains(r, ":event-bus/default") && !strings.Contains(r, "*")
		})
	})
	t.Run("a named bus ARN", func(t *testing.T) {
		arn := "arn:aws:events:eu-west-1:123456789012:event-bus/approvals"
		_, raw := synth(t, &StackProps{Stage: "dev", EventBus: arn})
		check(t, raw, arn, func(r string) bool { return r == `"`+arn+`"` })
	})
	t.Run("no wildcards", func(t *testing.T) {
		app := awscdk.NewApp(nil)
		if _, err := NewBatonStack(app, "Bad", &StackProps{BuildDir: t.TempDir(), EventBus: "*"}); err == nil {
			t.Error("eventBus * accepted")
		}
	})
}
