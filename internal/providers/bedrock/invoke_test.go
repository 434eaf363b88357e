package bedrock

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/baton-agents/baton/internal/providers"
)

func TestInvokeModel(t *testing.T) {
	var path, auth, ctype, body string
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		path, auth, ctype = r.URL.EscapedPath(), r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		if strings.Contains(body, "throttle") {
			w.Header().Set("X-Amzn-ErrorType", "ThrottlingException")
			w.WriteHeader(429)
			io.WriteString(w, `{"message":"Too many requests, please wait before trying again."}`)
			return
		}
		io.WriteString(w, `{"embedding":[0.6,0.8],"inputTextTokenCount":2}`)
	}))
	defer srv.Close()
	client := NewClient(aws.Config{Region: "us-west-2", Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", testSecretAK, "")}, "us-east-1", srv.URL)
	invoke := InvokeModel(client)
	out, err := invoke(context.Background(), "amazon.titan-embed-text-v2:0", []byte(`{"inputText":"hi","dimensions":256,"normalize":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"embedding":[0.6,0.8],"inputTextTokenCount":2}` || body != `{"inputText":"hi","dimensions":256,"normalize":true}` {
		t.Fatalf("out %s body %s", out, body)
	}
	if path != "/model/amazon.titan-embed-text-v2%3A0/invoke" || ctype != "application/json" ||
		!strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/us-east-1/bedrock/aws4_request") {
		t.Fatalf("path %s content type %s auth %s", path, ctype, auth)
	}
	calls = 0
	_, err = invoke(context.Background(), "amazon.titan-embed-text-v2:0", []byte(`{"inputText":"throttle"}`))
	var pe *providers.Error
	if !errors.As(err, &pe) || !pe.Transient || pe.Status != 429 || pe.Code != "ThrottlingException" || calls != 1 {
		t.Fatalf("a throttled call is one transient *providers.Error (the caller retries): %#v, %d calls", err, calls)
	}
}

func TestLazyInvokeModel(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"embedding":[1]}`)
	}))
	defer srv.Close()
	loads := 0
	fail := errors.New("no credentials")
	invoke := LazyInvokeModel(func(context.Context) (aws.Config, error) {
		if loads++; loads == 1 {
			return aws.Config{}, fail
		}
		return aws.Config{Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", testSecretAK, "")}, nil
	}, "us-east-1", srv.URL)
	var pe *providers.Error
	if _, err := invoke(context.Background(), "m", []byte(`{}`)); !errors.As(err, &pe) || !pe.Transient || !errors.Is(err, fail) {
		t.Fatalf("a failed load is a transient error: %v", err)
	}
	for range 2 {
		if out, err := invoke(context.Background(), "m", []byte(`{}`)); err != nil || string(out) != `{"embedding":[1]}` {
			t.Fatalf("%s %v", out, err)
		}
	}
	if loads != 2 {
		t.Fatalf("loaded %d times, want 2 (the failure, then once)", loads)
	}
}
