package guardrails

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
)

func TestBedrockConfig(t *testing.T) {
	for _, tc := range []struct {
		json string
		want BedrockConfig
		err  string
	}{
		{json: `{"type":"bedrock","guardrail_id":"gr1example","guardrail_version":"DRAFT"}`, want: BedrockConfig{GuardrailID: "gr1example", GuardrailVersion: "DRAFT"}},
		{json: `{"type":"bedrock","guardrail_id":"gr1example","guardrail_version":2,"region":"eu-central-1"}`, want: BedrockConfig{GuardrailID: "gr1example", GuardrailVersion: "2", Region: "eu-central-1"}},
		{json: `{"guardrail_id":"arn:aws:bedrock:us-east-1:123456789012:guardrail/gr1example","guardrail_version":"12"}`,
			want: BedrockConfig{GuardrailID: "arn:aws:bedrock:us-east-1:123456789012:guardrail/gr1example", GuardrailVersion: "12"}},
		{json: `{"guardrail_version":"1"}`, err: "guardrail_id is required"},
		{json: `{"guardrail_id":"Not An Id","guardrail_version":"1"}`, err: "neither a guardrail id nor a guardrail ARN"},
		{json: `{"guardrail_id":"gr1"}`, err: "guardrail_version is required"},
		{json: `{"guardrail_id":"gr1","guardrail_version":"draft"}`, err: `guardrail_version "draft" must be`},
		{json: `{"guardrail_id":"gr1","guardrail_version":0}`, err: `guardrail_version "0" must be`},
		{json: `{"guardrail_id":"gr1","guardrail_version":1.5}`, err: `guardrail_version "1.5" must be`},
		{json: `{"guardrail_id":"gr1","guardrail_version":true}`, err: "a version number or"},
		{json: `{"guardrail_id":"gr1","guardrail_version":"1","region":"mars"}`, err: `region "mars" is not an AWS region`},
	} {
		var got BedrockConfig
		err := json.Unmarshal([]byte(tc.json), &got)
		if err == nil {
			err = got.Validate()
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one containing %q", tc.json, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.json, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: config %+v, want %+v", tc.json, got, tc.want)
		}
	}
}

// TestBedrockLinking: a bedrock rule is validated in every process; it
// is built by Deps.Bedrock where that is linked, refused where the checks
// run without it, and, where they never run (ValidateOnly), kept as a
// rule that denies — whatever on_error says — if it is ever checked.
func TestBedrockLinking(t *testing.T) {
	const rule = `{"type":"bedrock","guardrail_id":"gr1example","guardrail_version":"3"}`
	build := func(cfg string, d Deps) (core.Guardrails, error) {
		var c Config
		if err := json.Unmarshal([]byte(cfg), &c); err != nil {
			t.Fatal(err)
		}
		return Build(&c, d)
	}
	loadAWS := func(context.Context) (aws.Config, error) { return aws.Config{Region: "eu-west-1"}, nil }
	for name, d := range map[string]Deps{"linked": {Bedrock: func(BedrockConfig, awsenv.Loader) (Rule, error) { return nil, errors.New("unreachable") }, AWS: loadAWS}, "unlinked": {}, "validate only": {ValidateOnly: true}} {
		if _, err := build(`{"input":[{"type":"bedrock","guardrail_id":"gr1"}]}`, d); err == nil || !strings.HasPrefix(err.Error(), "guardrails.input[0] (bedrock): bedrock rule: guardrail_version is required") {
			t.Errorf("%s: an invalid rule: %v", name, err)
		}
	}

	var got []BedrockConfig
	linked := Deps{AWS: loadAWS, Bedrock: func(cfg BedrockConfig, load awsenv.Loader) (Rule, error) {
		if ac, _ := load(context.Background()); ac.Region != "eu-west-1" {
			t.Errorf("the rule got another AWS configuration: %+v", ac)
		}
		got = append(got, cfg)
		return regexRule(t, "secret"), nil
	}}
	g, err := build(`{"output":[`+rule+`]}`, linked)
	if err != nil {
		t.Fatal(err)
	}
	if want := (BedrockConfig{GuardrailID: "gr1example", GuardrailVersion: "3"}); len(got) != 1 || got[0] != want {
		t.Errorf("Deps.Bedrock got %+v, want %+v", got, want)
	}
	if r := out(g, "a secret"); r.Allowed {
		t.Errorf("the rule Deps.Bedrock built is not the one checked: %+v", r)
	}
	linked.AWS = nil
	if _, err := build(`{"output":[`+rule+`]}`, linked); err == nil || !strings.Contains(err.Error(), "bedrock rules need the AWS configuration") {
		t.Errorf("without AWS: %v", err)
	}

	if _, err := build(`{"tool":[`+rule+`]}`, Deps{}); err == nil || !strings.Contains(err.Error(), "guardrails.tool[0] (bedrock): this process runs steps but does not link Amazon Bedrock Guardrails") {
		t.Errorf("unlinked where checks run: %v", err)
	}

	g, err = build(`{"on_error":"allow","output":[`+rule+`]}`, Deps{ValidateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if r := out(g, "hi"); r.Allowed || r.Reason != "bedrock guardrail gr1example (version 3) is not linked into this process: guardrails are checked where steps run" {
		t.Errorf("validate only, checked anyway: %+v", r)
	}
}

// regexRule is a declarative rule denying pattern at the output stage.
func regexRule(t *testing.T, pattern string) Rule {
	t.Helper()
	r, err := newRegex(json.RawMessage(`{"type":"regex","pattern":"`+pattern+`"}`), Deps{Stage: StageOutput})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
