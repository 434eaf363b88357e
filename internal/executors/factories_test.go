package executors

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/toolspec"
	"github.com/baton-agents/baton/toolsig"
)

// agentsWith binds the tools t/tool0, t/tool1, … of agent "a" to the
// given executor objects.
func agentsWith(t *testing.T, executors ...string) toolspec.Tools {
	t.Helper()
	tools := map[string]toolspec.Executor{}
	for i, ex := range executors {
		var v any
		if err := json.Unmarshal([]byte(ex), &v); err != nil {
			t.Fatal(err)
		}
		e, err := toolspec.Parse(v)
		if err != nil {
			t.Fatal(err)
		}
		tools[fmt.Sprintf("t/tool%d", i)] = e
	}
	return toolspec.Tools{"a": tools}
}

// fakeAWS emulates the three AWS APIs the factories use: SSM GetParameter
// and Secrets Manager GetSecretValue (AWS JSON 1.1, X-Amz-Target) and
// Lambda Invoke (REST).
type fakeAWS struct {
	*httptest.Server
	calls callLog[awsCall]
}

// awsCall is one request seen by fakeAWS: its X-Amz-Target (or path)
// and its JSON body.
type awsCall struct {
	target string
	body   map[string]any
}

func newFakeAWS(t *testing.T) *fakeAWS {
	f := &fakeAWS{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		target := r.Header.Get("X-Amz-Target")
		if target == "" {
			target = r.URL.Path
		}
		f.calls.add(awsCall{target: target, body: m})
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch {
		case target == "AmazonSSM.GetParameter" && m["Name"] == "/baton/tool-secret":
			fmt.Fprintf(w, `{"Parameter":{"Name":"/baton/tool-secret","Type":"SecureString","Value":%q,"Version":1}}`, "ssm-"+testSecret)
		case target == "AmazonSSM.GetParameter":
			w.Header().Set("X-Amzn-ErrorType", "ParameterNotFound")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"__type":"ParameterNotFound","message":"not found"}`)
		case target == "secretsmanager.GetSecretValue":
			fmt.Fprintf(w, `{"ARN":%q,"Name":"tool","SecretString":%q}`, m["SecretId"], "sm-"+testSecret)
		case strings.HasSuffix(target, "/invocations"):
			io.WriteString(w, `{"from":"lambda"}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"__type":"UnknownOperationException"}`)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func nowForTest() time.Time { return time.Now() }

func (f *fakeAWS) seen() []string {
	var out []string
	for _, c := range f.calls.all() {
		out = append(out, c.target)
	}
	return out
}

func TestFactoriesResolveSecretsOnceAtBuild(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]byte{} // signature check per path
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ok := map[string]string{"/env": "env-" + testSecret, "/ssm": "ssm-" + testSecret, "/arn": "sm-" + testSecret}[r.URL.Path]
		err := toolsig.Verify([]byte(ok), r.Header.Get(toolsig.HeaderTimestamp), r.Header.Get(toolsig.HeaderSignature), b, nowForTest())
		mu.Lock()
		got[r.URL.Path] = []byte(fmt.Sprint(err))
		mu.Unlock()
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	fa := newFakeAWS(t)
	loads := 0
	envReads := 0
	f := Factories(context.Background(), Options{
		AWSConfig: func(context.Context) (aws.Config, error) { loads++; return awsConfigFor(fa.URL), nil },
		Getenv: func(k string) string {
			envReads++
			if k == "TOOL_SECRET" {
				return "env-" + testSecret
			}
			return ""
		},
		Now: nowForTest,
	})
	reg := agentsWith(t,
		`{"type":"http","url":"`+srv.URL+`/env","secret_env":"TOOL_SECRET"}`,
		`{"type":"http","url":"`+srv.URL+`/env","secret_env":"TOOL_SECRET","timeout":"5s"}`,
		`{"type":"http","url":"`+srv.URL+`/ssm","secret_ssm":"/baton/tool-secret"}`,
		`{"type":"http","url":"`+srv.URL+`/ssm","secret_ssm":"/baton/tool-secret"}`,
		`{"type":"http","url":"`+srv.URL+`/arn","secret_arn":"arn:aws:secretsmanager:us-east-1:123456789012:secret:tool-AbCdEf"}`,
		`{"type":"lambda","function":"lookup"}`,
		`{"type":"lambda","function":"lookup2"}`,
		`{"type":"go","handler":"echo"}`,
	)
	r, err := NewRouter(reg, NewGoRegistry(), f)
	if err != nil {
		t.Fatal(err)
	}
	if loads != 1 || envReads != 1 {
		t.Fatalf("AWS config loaded %d times, env read %d times; want 1 and 1", loads, envReads)
	}
	want := "[AmazonSSM.GetParameter secretsmanager.GetSecretValue]"
	if s := fmt.Sprint(fa.seen()); s != want {
		t.Fatalf("AWS calls at build %s, want %s (each secret once)", s, want)
	}
	if body := fa.calls.all()[0].body; body["WithDecryption"] != true {
		t.Fatalf("GetParameter without decryption: %v", body)
	}
	for i := 0; i < 8; i++ {
		call := testCall
		call.Agent, call.ToolName = "a", fmt.Sprintf("t/tool%d", i)
		out, err := r.Execute(context.Background(), call)
		if err != nil {
			t.Fatalf("tool%d: %v", i, err)
		}
		if res := core.NormalizeToolOutput(core.ToolDeclaration{Name: call.ToolName}, out, nil); !res.Success {
			t.Fatalf("tool%d: %+v", i, res)
		}
	}
	for _, p := range []string{"/env", "/ssm", "/arn"} {
		if string(got[p]) != "<nil>" {
			t.Fatalf("%s: signature with the resolved secret: %s", p, got[p])
		}
	}
	if n := len(fa.seen()); n != 4 {
		t.Fatalf("AWS calls after executing: %v (want the two secrets at build and two invocations)", fa.seen())
	}
}

func TestFactoriesErrors(t *testing.T) {
	noAWS := Factories(context.Background(), Options{Getenv: func(string) string { return "" }})
	for _, c := range []struct{ ex, want string }{
		{`{"type":"http","url":"http://127.0.0.1:9/x"}`, "a signing secret is required"},
		{`{"type":"http","url":"http://127.0.0.1:9/x","secret_env":"A","secret_ssm":"/b"}`, "set only one of"},
		{`{"type":"http","url":"http://127.0.0.1:9/x","secret_env":"MISSING_SECRET"}`, "environment variable MISSING_SECRET is unset or empty"},
		{`{"type":"http","url":"http://127.0.0.1:9/x","secret_ssm":"/b"}`, "AWS configuration is not available"},
		{`{"type":"lambda","function":"f"}`, "AWS configuration is not available"},
	} {
		_, err := NewRouter(agentsWith(t, c.ex), NewGoRegistry(), noAWS)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "agent a tool t/tool0") {
			t.Errorf("%s: err = %v, want %q", c.ex, err, c.want)
		}
	}

	fa := newFakeAWS(t)
	withAWS := Factories(context.Background(), Options{AWSConfig: func(context.Context) (aws.Config, error) { return awsConfigFor(fa.URL), nil }})
	_, err := NewRouter(agentsWith(t, `{"type":"http","url":"http://127.0.0.1:9/x","secret_ssm":"/nope"}`), NewGoRegistry(), withAWS)
	if err == nil || !strings.Contains(err.Error(), "secret_ssm: read SSM parameter /nope") || !strings.Contains(err.Error(), "ParameterNotFound") {
		t.Fatalf("missing parameter: %v", err)
	}

	// An http-only registry never loads AWS.
	loaded := false
	lazy := Factories(context.Background(), Options{
		AWSConfig: func(context.Context) (aws.Config, error) { loaded = true; return aws.Config{}, nil },
		Getenv:    func(string) string { return testSecret },
	})
	if _, err := NewRouter(agentsWith(t, `{"type":"http","url":"http://127.0.0.1:9/x","secret_env":"S"}`), NewGoRegistry(), lazy); err != nil || loaded {
		t.Fatalf("http only: err %v, AWS loaded %v", err, loaded)
	}
}
