package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// nagReport is nag/nag.js's output.
type nagReport struct {
	Violations []struct {
		Plugin, Rule, Severity string
		Resources              []string
	} `json:"violations"`
	Acknowledged []struct {
		Rule, Resource, Reason string
	} `json:"acknowledged"`
}

// runNag runs cdk-nag's AwsSolutions and Serverless packs (npm cdk-nag,
// installed by make node-tools) over a template file.
func runNag(t *testing.T, templateFile string) nagReport {
	t.Helper()
	if _, err := os.Stat(filepath.Join("nag", "node_modules", "cdk-nag")); err != nil {
		t.Fatalf("cdk-nag is not installed in infra/nag (make node-tools): %v", err)
	}
	cmd := exec.Command("node", filepath.Join("nag", "nag.js"), templateFile)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nag.js: %v\n%s", err, stderr.String())
	}
	var r nagReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("nag.js output: %v\n%s", err, out)
	}
	return r
}

// writeTemplate synthesizes props and writes the template to a file.
func writeTemplate(t *testing.T, props *StackProps) string {
	t.Helper()
	tpl, _ := synth(t, props)
	b, err := json.Marshal(tpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "template.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// checkNag: no finding of either pack is left unacknowledged, warnings
// included, and every acknowledgement says why.
func checkNag(t *testing.T, r nagReport) {
	t.Helper()
	for _, v := range r.Violations {
		t.Errorf("cdk-nag %s %s (%s) on %v", v.Plugin, v.Rule, v.Severity, v.Resources)
	}
	if len(r.Acknowledged) == 0 {
		t.Fatal("no acknowledgements reached cdk-nag")
	}
	for _, a := range r.Acknowledged {
		if len(a.Reason) < 40 {
			t.Errorf("%s on %s: reason %q says too little", a.Rule, a.Resource, a.Reason)
		}
	}
}

// TestCDKNag runs cdk-nag over the stack with every option on (IAM
// routes, a created Cognito user pool, limits, CORS, intake, OTel), and
// shows the check can fail: the same template without the
// acknowledgements has findings.
func TestCDKNag(t *testing.T) {
	f := writeTemplate(t, &StackProps{Stage: "dev", CORSOrigins: []string{"https://app.example.com"},
		IAMPrincipals:      `{"arn:aws:iam::123456789012:role/ingest":{"tenant":"acme"}}`,
		JWT:                JWTProps{CreateCognitoUserPool: true},
		Limits:             LimitsProps{TenantRate: "5/s", MaxActiveRuns: 10},
		IntakeEventPattern: `{"source":["acme.crm"]}`,
		OTelLayerArn:       "arn:aws:lambda:us-east-1:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1",
		StackProps:         awscdk.StackProps{Env: &awscdk.Environment{Region: jsii.String("us-east-1")}}})
	checkNag(t, runNag(t, f))

	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var tpl map[string]any
	_ = json.Unmarshal(b, &tpl)
	for _, r := range tpl["Resources"].(map[string]any) {
		delete(r.(map[string]any), "Metadata")
	}
	b, _ = json.Marshal(tpl)
	bare := filepath.Join(t.TempDir(), "bare.json")
	_ = os.WriteFile(bare, b, 0o644)
	rules := map[string]bool{}
	for _, v := range runNag(t, bare).Violations {
		rules[strings.SplitN(v.Rule, "[", 2)[0]] = true
	}
	for _, want := range []string{"AwsSolutions-APIG4", "AwsSolutions-IAM4", "Serverless-LambdaDLQ"} {
		if !rules[want] {
			t.Errorf("without acknowledgements, cdk-nag found no %s (found %v)", want, rules)
		}
	}
}
