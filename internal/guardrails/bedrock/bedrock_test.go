package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/guardrails"
)

const testSecretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY"

// bedrockFixture is testdata/<case>.json: one recorded
// ApplyGuardrail response. The request the case must send is
// testdata/<case>.request.json (rewritten when
// BATON_UPDATE_GOLDEN is set).
type bedrockFixture struct {
	Comment string            `json:"comment"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

type recordedRequest struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// replayBedrock serves the case's recorded response once, on 127.0.0.1,
// and returns its URL and the requests it received.
func replayBedrock(t *testing.T, name string) (string, func() []recordedRequest) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx bedrockFixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	var (
		mu   sync.Mutex
		reqs []recordedRequest
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, recordedRequest{Method: r.Method, Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		for k, v := range fx.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(fx.Status)
		_, _ = w.Write(fx.Body)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, func() []recordedRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reqs)
	}
}

// sdkClient is the real bedrockruntime client pointed at endpoint, with
// static credentials and one attempt per call (the throttling case is
// served once).
func sdkClient(endpoint string) *bedrockruntime.Client {
	return bedrockruntime.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", testSecretKey, ""),
	}, func(o *bedrockruntime.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.RetryMaxAttempts = 1
	})
}

// applyGuardrailBody is the JSON body of ApplyGuardrail (the identifier
// and version travel in the path), typed with the SDK's enums.
type applyGuardrailBody struct {
	Source  types.GuardrailContentSource `json:"source"`
	Content []struct {
		Text *struct {
			Text       *string                           `json:"text"`
			Qualifiers []types.GuardrailContentQualifier `json:"qualifiers,omitempty"`
		} `json:"text"`
	} `json:"content"`
	OutputScope types.GuardrailOutputScope `json:"outputScope,omitempty"`
}

// checkRequest checks one recorded request: POST
// /guardrail/{guardrailIdentifier}/version/{guardrailVersion}/apply,
// SigV4-signed in region without the secret, a body of the SDK's shape
// with the wanted source and texts, equal to the golden request.
func checkRequest(t *testing.T, name string, r recordedRequest, cfg guardrails.BedrockConfig, region string, source types.GuardrailContentSource, texts []string) {
	t.Helper()
	if r.Method != http.MethodPost {
		t.Errorf("method %s, want POST", r.Method)
	}
	if want := "/guardrail/" + cfg.GuardrailID + "/version/" + cfg.GuardrailVersion + "/apply"; r.Path != want {
		t.Errorf("path %s, want %s", r.Path, want)
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/"+region+"/bedrock/aws4_request") {
		t.Errorf("not SigV4-signed for bedrock in %s with the test credentials: %q", region, auth)
	}
	if strings.Contains(auth, testSecretKey) || bytes.Contains(r.Body, []byte(testSecretKey)) {
		t.Error("the secret key was sent")
	}
	var body applyGuardrailBody
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("request body is not an ApplyGuardrail body: %v\n%s", err, r.Body)
	}
	if body.Source != source || !slices.Contains(types.GuardrailContentSource("").Values(), body.Source) {
		t.Errorf("source %q, want %q", body.Source, source)
	}
	var got []string
	for i, c := range body.Content {
		if c.Text == nil || c.Text.Text == nil {
			t.Errorf("content[%d] is not a text block", i)
			continue
		}
		if len(c.Text.Qualifiers) > 0 {
			t.Errorf("content[%d] has qualifiers %v", i, c.Text.Qualifiers)
		}
		got = append(got, *c.Text.Text)
	}
	if !reflect.DeepEqual(got, texts) {
		t.Errorf("content texts %q, want %q", got, texts)
	}
	golden := filepath.Join("testdata", name+".request.json")
	if os.Getenv("BATON_UPDATE_GOLDEN") != "" {
		var v any
		_ = json.Unmarshal(r.Body, &v)
		b, _ := json.MarshalIndent(v, "", "  ")
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden request (BATON_UPDATE_GOLDEN=1 writes it): %v", err)
	}
	var gv, wv any
	if err := json.Unmarshal(r.Body, &gv); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &wv); err != nil {
		t.Fatalf("golden %s: %v", golden, err)
	}
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("request body differs from %s\n got: %s\nwant: %s", golden, r.Body, want)
	}
}

var testGuardrail = guardrails.BedrockConfig{GuardrailID: "gr1example", GuardrailVersion: "3"}

func TestBedrockRecordedTraffic(t *testing.T) {
	const newest = "Call me back at +1 206 555 0100 after lunch."
	history := []core.Message{
		{Role: core.RoleSystem, Content: "You are a banking assistant."},
		{Role: core.RoleUser, Content: "Hi, what can you do?"},
		{Role: core.RoleAssistant, Content: "I can answer questions about your account."},
		{Role: core.RoleUser, Content: "Which fund should I buy this year?"},
		{Role: core.RoleUser, Content: "Keep it short."},
	}
	reply := "You can reach Jane at jane.doe@example.com; her account is ACCT-993211."
	args := map[string]any{"ssn": "123-45-6789", "account": "ACCT-993211", "amount": json.Number("12")}
	eu := testGuardrail
	eu.Region = "eu-west-1"
	cases := []struct {
		name    string
		cfg     guardrails.BedrockConfig
		subject guardrails.Subject
		source  types.GuardrailContentSource
		texts   []string
		want    guardrails.Verdict
		// secrets must not appear in a denial's reason.
		secrets []string
	}{
		{name: "input_allowed", cfg: testGuardrail, subject: guardrails.Subject{Stage: guardrails.StageInput, Messages: history},
			source: types.GuardrailContentSourceInput, texts: []string{"Which fund should I buy this year?", "Keep it short."},
			want: guardrails.Verdict{Allow: true}},
		{name: "input_masked", cfg: testGuardrail, subject: guardrails.Subject{Stage: guardrails.StageInput, Messages: []core.Message{{Role: core.RoleUser, Content: newest}}},
			source: types.GuardrailContentSourceInput, texts: []string{newest},
			want: guardrails.Verdict{Allow: true, Replacement: aws.String("Call me back at {PHONE} after lunch.")}},
		{name: "input_blocked", cfg: testGuardrail, subject: guardrails.Subject{Stage: guardrails.StageInput, Messages: history[:4]},
			source: types.GuardrailContentSourceInput, texts: []string{"Which fund should I buy this year?"},
			want:    guardrails.Verdict{Reason: `bedrock guardrail gr1example (version 3) blocked the input: a custom blocked word; content filter MISCONDUCT (confidence HIGH); denied topic "Investment advice"`},
			secrets: []string{"pump and dump", "bob@example.com", "Which fund", "INSULTS", "Sorry"}},
		{name: "output_masked", cfg: eu, subject: guardrails.Subject{Stage: guardrails.StageOutput, Message: core.Message{Role: core.RoleAssistant, Content: reply}},
			source: types.GuardrailContentSourceOutput, texts: []string{reply},
			want: guardrails.Verdict{Allow: true, Replacement: aws.String("You can reach Jane at {EMAIL}; her account is {internal-account}.")}},
		{name: "output_blocked", cfg: testGuardrail, subject: guardrails.Subject{Stage: guardrails.StageOutput, Message: core.Message{Role: core.RoleAssistant, Content: "Well darn, it is probably 42."}},
			source: types.GuardrailContentSourceOutput, texts: []string{"Well darn, it is probably 42."},
			want:    guardrails.Verdict{Reason: `bedrock guardrail gr1example (version 3) blocked the reply: contextual grounding GROUNDING (score 0.21 below threshold 0.75); managed word list PROFANITY`},
			secrets: []string{"darn", "42", "RELEVANCE"}},
		{name: "tool_blocked", cfg: testGuardrail, subject: guardrails.Subject{Stage: guardrails.StageTool, Tool: "ability/transfer", Args: args},
			source: types.GuardrailContentSourceInput, texts: []string{`{"account":"ACCT-993211","amount":12,"ssn":"123-45-6789"}`},
			want:    guardrails.Verdict{Reason: `bedrock guardrail gr1example (version 3) blocked the arguments of tool "ability/transfer": sensitive information US_SOCIAL_SECURITY_NUMBER; sensitive information regex "internal-account"`},
			secrets: []string{"123-45-6789", "ACCT-993211"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, requests := replayBedrock(t, tc.name)
			rule, err := New(tc.cfg, sdkClient(url))
			if err != nil {
				t.Fatal(err)
			}
			got, err := rule.Check(context.Background(), tc.subject)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("verdict %s, want %s", show(got), show(tc.want))
			}
			for _, s := range tc.secrets {
				if strings.Contains(got.Reason, s) {
					t.Errorf("the reason echoes %q: %s", s, got.Reason)
				}
			}
			reqs := requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			region := "us-east-1"
			if tc.cfg.Region != "" {
				region = tc.cfg.Region
			}
			checkRequest(t, tc.name, reqs[0], tc.cfg, region, tc.source, tc.texts)
		})
	}
}

func TestBedrockRecordedErrors(t *testing.T) {
	subject := guardrails.Subject{Stage: guardrails.StageOutput, Message: core.Message{Role: core.RoleAssistant, Content: "Paris."}}
	cases := []struct {
		name     string
		as       func(error) bool
		contains []string
	}{
		{"validation", func(err error) bool { var e *types.ValidationException; return errors.As(err, &e) },
			[]string{"bedrock guardrail gr1example (version 3)", "StatusCode: 400", "0a5d2b0c-0000-4000-8000-000000000007", "does not exist"}},
		{"throttled", func(err error) bool { var e *types.ThrottlingException; return errors.As(err, &e) },
			[]string{"StatusCode: 429", "Too many requests"}},
		{"access_denied", func(err error) bool { var e *types.AccessDeniedException; return errors.As(err, &e) },
			[]string{"StatusCode: 403", "bedrock:ApplyGuardrail"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, requests := replayBedrock(t, tc.name)
			rule, err := New(testGuardrail, sdkClient(url))
			if err != nil {
				t.Fatal(err)
			}
			v, err := rule.Check(context.Background(), subject)
			if err == nil {
				t.Fatalf("no error; verdict %s", show(v))
			}
			if !tc.as(err) {
				t.Errorf("error %T is not the SDK's %s type: %v", err, tc.name, err)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if reqs := requests(); len(reqs) != 1 {
				t.Errorf("%d requests, want 1", len(reqs))
			} else {
				checkRequest(t, "error", reqs[0], testGuardrail, "us-east-1", types.GuardrailContentSourceOutput, []string{"Paris."})
			}
		})
	}
}

func show(v guardrails.Verdict) string {
	b, _ := json.Marshal(struct {
		Allow       bool
		Reason      string
		Replacement *string
	}{v.Allow, v.Reason, v.Replacement})
	return string(b)
}

// fakeBedrock answers ApplyGuardrail with out and records the inputs.
type fakeBedrock struct {
	out   *bedrockruntime.ApplyGuardrailOutput
	calls []*bedrockruntime.ApplyGuardrailInput
}

func (f *fakeBedrock) ApplyGuardrail(_ context.Context, in *bedrockruntime.ApplyGuardrailInput, _ ...func(*bedrockruntime.Options)) (*bedrockruntime.ApplyGuardrailOutput, error) {
	f.calls = append(f.calls, in)
	return f.out, nil
}

func anonymized(pii ...types.GuardrailPiiEntityType) []bedrockAssessment {
	return []bedrockAssessment{{pii: pii}}
}

// bedrockAssessment abbreviates an assessment that anonymized pii.
type bedrockAssessment struct {
	pii []types.GuardrailPiiEntityType
}

func intervened(outputs []string, as []bedrockAssessment) *bedrockruntime.ApplyGuardrailOutput {
	out := &bedrockruntime.ApplyGuardrailOutput{Action: types.GuardrailActionGuardrailIntervened}
	for _, o := range outputs {
		out.Outputs = append(out.Outputs, types.GuardrailOutputContent{Text: aws.String(o)})
	}
	for _, a := range as {
		p := &types.GuardrailSensitiveInformationPolicyAssessment{}
		for _, e := range a.pii {
			p.PiiEntities = append(p.PiiEntities, types.GuardrailPiiEntityFilter{Type: e, Action: types.GuardrailSensitiveInformationPolicyActionAnonymized, Match: aws.String("secret"), Detected: aws.Bool(true)})
		}
		out.Assessments = append(out.Assessments, types.GuardrailAssessment{SensitiveInformationPolicy: p})
	}
	return out
}

func TestBedrockVerdicts(t *testing.T) {
	user := func(s string) core.Message { return core.Message{Role: core.RoleUser, Content: s} }
	two := []core.Message{user("my mail is a@b.c"), user("thanks")}
	cases := []struct {
		name    string
		subject guardrails.Subject
		out     *bedrockruntime.ApplyGuardrailOutput
		calls   int
		want    guardrails.Verdict
		err     string
	}{
		{name: "empty reply is not sent", subject: guardrails.Subject{Stage: guardrails.StageOutput, Message: core.Message{Role: core.RoleAssistant}}, want: guardrails.Verdict{Allow: true}},
		{name: "turn after tool results is not sent", subject: guardrails.Subject{Stage: guardrails.StageInput, Messages: []core.Message{
			user("plan my week"), {Role: core.RoleToolCall, Content: "x"}, {Role: core.RoleToolResult, Content: "y"}}}, want: guardrails.Verdict{Allow: true}},
		{name: "masked earlier user message denies", subject: guardrails.Subject{Stage: guardrails.StageInput, Messages: two}, calls: 1,
			out:  intervened([]string{"my mail is {EMAIL}", "thanks"}, anonymized(types.GuardrailPiiEntityTypeEmail)),
			want: guardrails.Verdict{Reason: "bedrock guardrail gr1example (version 3) blocked the input: sensitive information (EMAIL) in an earlier user message, which cannot be masked"}},
		{name: "masked newest of two", subject: guardrails.Subject{Stage: guardrails.StageInput, Messages: []core.Message{user("hi"), user("mail a@b.c")}}, calls: 1,
			out:  intervened([]string{"hi", "mail {EMAIL}"}, anonymized(types.GuardrailPiiEntityTypeEmail)),
			want: guardrails.Verdict{Allow: true, Replacement: aws.String("mail {EMAIL}")}},
		{name: "masked tool arguments deny", subject: guardrails.Subject{Stage: guardrails.StageTool, Tool: "t"}, calls: 1,
			out:  intervened([]string{"{}"}, anonymized(types.GuardrailPiiEntityTypeName, types.GuardrailPiiEntityTypeEmail)),
			want: guardrails.Verdict{Reason: `bedrock guardrail gr1example (version 3) blocked the arguments of tool "t": sensitive information (EMAIL, NAME) in the arguments, which cannot be masked`}},
		{name: "misaligned outputs are an error", subject: guardrails.Subject{Stage: guardrails.StageInput, Messages: two}, calls: 1,
			out: intervened([]string{"my mail is {EMAIL} thanks"}, anonymized(types.GuardrailPiiEntityTypeEmail)),
			err: "returned 1 outputs for 2 texts"},
		{name: "unknown intervention denies", subject: guardrails.Subject{Stage: guardrails.StageOutput, Message: core.Message{Content: "x"}}, calls: 1,
			out:  intervened(nil, []bedrockAssessment{{}}),
			want: guardrails.Verdict{Reason: "bedrock guardrail gr1example (version 3) blocked the reply: the guardrail intervened"}},
		{name: "unknown action is an error", subject: guardrails.Subject{Stage: guardrails.StageOutput, Message: core.Message{Content: "x"}}, calls: 1,
			out: &bedrockruntime.ApplyGuardrailOutput{Action: "MAYBE"}, err: `unknown action "MAYBE"`},
		{name: "unknown stage is an error", subject: guardrails.Subject{Stage: "later"}, err: `unknown stage "later"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeBedrock{out: tc.out}
			rule, err := New(testGuardrail, f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := rule.Check(context.Background(), tc.subject)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("verdict %s, want %s", show(got), show(tc.want))
			}
			if len(f.calls) != tc.calls {
				t.Errorf("%d calls, want %d", len(f.calls), tc.calls)
			}
		})
	}
}

// TestFromJSON: a rule object decodes into its configuration, a
// misconfigured one is refused (guardrails.BedrockConfig.Validate, whose
// cases are in package guardrails), and a client is required.
func TestFromJSON(t *testing.T) {
	r, err := NewFromJSON(json.RawMessage(`{"type":"bedrock","guardrail_id":"gr1example","guardrail_version":2,"region":"eu-central-1"}`), &fakeBedrock{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.(*rule).cfg, (guardrails.BedrockConfig{GuardrailID: "gr1example", GuardrailVersion: "2", Region: "eu-central-1"}); got != want {
		t.Errorf("config %+v, want %+v", got, want)
	}
	if _, err := NewFromJSON(json.RawMessage(`{"type":"bedrock","guardrail_id":"gr1"}`), &fakeBedrock{}); err == nil || !strings.Contains(err.Error(), "guardrail_version is required") {
		t.Errorf("a rule without a version: %v", err)
	}
	if _, err := New(testGuardrail, nil); err == nil {
		t.Error("a nil client was accepted")
	}
}

// TestLazy: the rule of app.Features.BedrockGuardrails needs the AWS
// configuration only on its first check, and says so when it fails to
// load.
func TestLazy(t *testing.T) {
	if _, err := Lazy(testGuardrail, nil); err == nil {
		t.Error("no AWS configuration was accepted")
	}
	loads := 0
	r, err := Lazy(testGuardrail, func(context.Context) (aws.Config, error) { loads++; return aws.Config{}, errors.New("no credentials") })
	if err != nil {
		t.Fatal(err)
	}
	if loads != 0 {
		t.Fatalf("the AWS configuration was loaded %d times before a check", loads)
	}
	subject := guardrails.Subject{Stage: guardrails.StageOutput, Message: core.Message{Role: core.RoleAssistant, Content: "Paris."}}
	for range 2 {
		if _, err := r.Check(context.Background(), subject); err == nil || !strings.Contains(err.Error(), "load the AWS configuration for Bedrock Guardrails: no credentials") {
			t.Errorf("check without AWS: %v", err)
		}
	}
	if loads != 1 {
		t.Errorf("the AWS configuration was loaded %d times, want 1", loads)
	}
}
