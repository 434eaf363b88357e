//go:build e2e

package tests

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// TestIAMEndToEnd: baton dev with IAM principals and local access keys
// serves the routes under /iam/ to requests signed with the AWS SDK's
// SigV4 signer: a mapped role starts and reads runs of its tenant (the
// tenant's token sees them too) and follows a run's stream; a bad
// signature is API Gateway's 403, an unmapped principal Baton's 403, and a
// Baton token is no credential there.
func TestIAMEndToEnd(t *testing.T) { eachStore(t, iamEndToEnd) }

func iamEndToEnd(t *testing.T, args []string) {
	principals := `{"arn:aws:iam::123456789012:role/ingest":{"tenant":"acme","scopes":["runs:write","runs:read"]}}`
	d := startDev(t, append(append([]string(nil), args...), "--iam-principals", principals,
		"--iam-key", "AKIDINGEST:ingest-secret=arn:aws:sts::123456789012:assumed-role/ingest/job-1,AKIDOTHER:other-secret=arn:aws:iam::123456789012:user/other"))
	signed := func(method, path, body string, creds aws.Credentials, hdr ...string) (int, []byte, http.Header) {
		t.Helper()
		req, err := http.NewRequest(method, d.base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		sum := sha256.Sum256([]byte(body))
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "execute-api", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b, resp.Header
	}
	ingest := aws.Credentials{AccessKeyID: "AKIDINGEST", SecretAccessKey: "ingest-secret"}
	st, b, _ := signed("POST", "/iam/v1/runs", `{"agent":"e2e","messages":[{"role":"user","content":"hi"}],"model":{"provider":"scripted","turns":[{"content":"Hello."}]}}`, ingest)
	var run map[string]any
	_ = json.Unmarshal(b, &run)
	if st != 202 || run["run_id"] == nil {
		t.Fatalf("signed start: %d %s", st, b)
	}
	id := run["run_id"].(string)
	st, b, _ = signed("GET", "/iam/v1/runs/"+id+"?wait=10", "", ingest)
	if st != 200 || !strings.Contains(string(b), `"status":"completed"`) {
		t.Fatalf("signed read: %d %s", st, b)
	}
	if r := d.call(t, "GET", "/v1/runs/"+id, tokAcme, ""); r.status != 200 {
		t.Fatalf("acme's token reads the role's run: %d", r.status)
	}
	if r := d.call(t, "GET", "/v1/runs/"+id, tokGlobex, ""); r.status != 404 {
		t.Fatalf("globex's token reads acme's run: %d", r.status)
	}
	st, b, hdr := signed("GET", "/iam/v1/runs/"+id+"/stream", "", ingest)
	if st != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") || !strings.Contains(string(b), "event: end") {
		t.Fatalf("signed stream: %d %v %s", st, hdr, b)
	}
	if st, b, _ := signed("GET", "/iam/v1/runs", "", aws.Credentials{AccessKeyID: "AKIDINGEST", SecretAccessKey: "guess"}); st != 403 || !strings.Contains(string(b), "signature") {
		t.Fatalf("wrong secret: %d %s", st, b)
	}
	st, b, _ = signed("GET", "/iam/v1/runs", "", aws.Credentials{AccessKeyID: "AKIDOTHER", SecretAccessKey: "other-secret"})
	if st != 403 || !strings.Contains(string(b), "not mapped to a Baton tenant") {
		t.Fatalf("unmapped principal: %d %s", st, b)
	}
	if r := d.call(t, "GET", "/iam/v1/runs", tokAcme, ""); r.status != 403 {
		t.Fatalf("a Baton token under /iam/: %d %v", r.status, r.body)
	}
}
