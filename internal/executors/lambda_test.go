package executors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/baton-agents/baton/core"
	"github.com/baton-agents/baton/internal/awsenv"
)

// fakeLambda emulates the Lambda Invoke REST endpoint:
// POST /2015-03-31/functions/{name}/invocations, the function's payload as
// the body, X-Amz-Function-Error for function errors, and AWS JSON error
// bodies with X-Amzn-ErrorType for API errors.
type fakeLambda struct {
	*httptest.Server
	calls callLog[fakeInvocation]
	fn    func(name string, event map[string]any, w http.ResponseWriter, r *http.Request)
}

type fakeInvocation struct {
	function       string
	invocationType string
	signed         bool
	event          map[string]any
}

func newFakeLambda(t *testing.T, fn func(name string, event map[string]any, w http.ResponseWriter, r *http.Request)) *fakeLambda {
	t.Helper()
	f := &fakeLambda{fn: fn}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/")
		name, ok2 := strings.CutSuffix(name, "/invocations")
		if r.Method != http.MethodPost || !ok || !ok2 {
			w.Header().Set("X-Amzn-ErrorType", "UnknownOperationException")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"unknown operation"}`)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var ev map[string]any
		_ = json.Unmarshal(b, &ev)
		f.calls.add(fakeInvocation{function: name, invocationType: r.Header.Get("X-Amz-Invocation-Type"),
			signed: strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256"), event: ev})
		f.fn(name, ev, w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeLambda) invocations() []fakeInvocation { return f.calls.all() }

// awsConfigFor points the real SDK at a local endpoint.
func awsConfigFor(endpoint string) aws.Config {
	return aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")}
}

func TestLambdaExecutor(t *testing.T) {
	f := newFakeLambda(t, func(name string, ev map[string]any, w http.ResponseWriter, r *http.Request) {
		params, _ := ev["parameters"].(map[string]any)
		switch params["mode"] {
		case "ok":
			io.WriteString(w, `{"greeting":"hello","n":12345678901234567890}`)
		case "envelope":
			io.WriteString(w, `{"success":false,"error":"quota reached","error_type":"quota"}`)
		case "throw":
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			io.WriteString(w, `{"errorMessage":"division by zero","errorType":"ZeroDivisionError","stackTrace":["line 1"]}`)
		case "crash":
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			io.WriteString(w, `Runtime exited with error`)
		case "big":
			io.WriteString(w, `"`+strings.Repeat("y", 4096)+`"`)
		case "text":
			io.WriteString(w, `not json`)
		case "null":
			io.WriteString(w, `null`)
		case "missing":
			w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"Type":"User","Message":"Function not found: `+name+`"}`)
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	})
	client := awsenv.Lambda(awsConfigFor(f.URL))
	const arn = "arn:aws:lambda:us-east-1:123456789012:function:lookup"
	ex, err := NewLambda("ability/lookup", LambdaConfig{Function: arn, Client: client, MaxResponseBytes: 1024, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	run := func(mode string) (core.ToolResult, any, error) {
		call := testCall
		call.Parameters = map[string]any{"mode": mode}
		out, err := ex.Execute(context.Background(), call)
		return core.NormalizeToolOutput(call.Declaration, out, err), out, err
	}

	res, _, err := run("ok")
	if err != nil || !res.Success || fmt.Sprint(res.Result) != "map[greeting:hello n:12345678901234567890]" {
		t.Fatalf("ok: %+v %v", res, err)
	}
	inv := f.invocations()[0]
	if inv.function != arn || inv.invocationType != "RequestResponse" || !inv.signed {
		t.Fatalf("invocation %+v", inv)
	}
	if fmt.Sprint(inv.event) != "map[idempotency_key:r-1:call_1 parameters:map[mode:ok] run_id:r-1 session_id:s-1 tool_call_id:call_1 tool_name:ability/lookup]" {
		t.Fatalf("event %v", inv.event)
	}

	for _, c := range []struct {
		mode, errType string
		contains      []string
	}{
		{"envelope", "quota", []string{"quota reached"}},
		{"throw", ErrTypeFunctionError, []string{"lambda function " + arn + " failed (Unhandled)", "ZeroDivisionError", "division by zero"}},
		{"crash", ErrTypeFunctionError, []string{"Runtime exited with error"}},
		{"big", ErrTypeResponseTooLarge, []string{"1024-byte limit"}},
		{"text", ErrTypeInvalidResponse, []string{"not JSON: not json"}},
	} {
		res, _, err := run(c.mode)
		if err != nil || res.Success || res.ErrorType != c.errType {
			t.Fatalf("%s: %+v %v", c.mode, res, err)
		}
		for _, s := range c.contains {
			if !strings.Contains(res.Error, s) {
				t.Fatalf("%s: error %q does not contain %q", c.mode, res.Error, s)
			}
		}
		if c.mode == "throw" && res.Metadata["lambda_error_type"] != "ZeroDivisionError" {
			t.Fatalf("metadata %v", res.Metadata)
		}
	}
	if res, out, err := run("null"); err != nil || !res.Success || out != nil {
		t.Fatalf("null payload: %+v %v %v", res, out, err)
	}

	res, _, err = run("missing")
	if err == nil || res.ErrorType != core.ErrTypeExecutorException || !strings.Contains(err.Error(), "ResourceNotFoundException") {
		t.Fatalf("API error: %+v %v", res, err)
	}

	slow, _ := NewLambda("ability/lookup", LambdaConfig{Function: "lookup", Client: client, Timeout: 150 * time.Millisecond})
	call := testCall
	call.Parameters = map[string]any{"mode": "slow"}
	if _, err := slow.Execute(context.Background(), call); err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 150ms") {
		t.Fatalf("timeout: %v", err)
	}

	if _, err := NewLambda("t/x", LambdaConfig{Client: client}); err == nil {
		t.Fatal("no function accepted")
	}
	if _, err := NewLambda("t/x", LambdaConfig{Function: "f"}); err == nil {
		t.Fatal("no client accepted")
	}
}
