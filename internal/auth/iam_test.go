package auth

import (
	"strings"
	"testing"
)

var scopes = []string{"runs:write", "runs:read", "results:submit", "approvals:decide"}

func TestParseIAMPrincipals(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[]`, "want a JSON object"},
		{`{"arn:aws:iam::123456789012:role/ingest":{"tenant":"acme","extra":1}}`, "want a JSON object"},
		{`{"arn:aws:sts::123456789012:assumed-role/ingest/s1":{"tenant":"acme"}}`, "want an IAM role or user ARN"},
		{`{"arn:aws:iam::12345:role/ingest":{"tenant":"acme"}}`, "want an IAM role or user ARN"},
		{`{"ingest":{"tenant":"acme"}}`, "want an IAM role or user ARN"},
		{`{"arn:aws:iam::123456789012:role/ingest":{"tenant":"x/../acme"}}`, "tenant"},
		{`{"arn:aws:iam::123456789012:role/ingest":{"tenant":"acme#RUN#x"}}`, "tenant"},
		{`{"arn:aws:iam::123456789012:role/ingest":{"tenant":""}}`, "tenant"},
		{`{"arn:aws:iam::123456789012:role/ingest":{"tenant":"acme","scopes":["admin"]}}`, "unknown scope"},
		{`{"arn:aws:iam::123456789012:role/ingest":{"tenant":"acme"},"arn:aws:iam::123456789012:role/svc/ingest":{"tenant":"globex"}}`, "listed twice"},
	} {
		if _, err := ParseIAMPrincipals(tc.in, scopes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestIAMResolve(t *testing.T) {
	m, err := ParseIAMPrincipals(`{
	  "arn:aws:iam::123456789012:role/service/ingest": {"tenant": "acme", "scopes": ["runs:write", "runs:read"]},
	  "arn:aws:iam::123456789012:user/ci": {"tenant": "globex"}}`, scopes)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		arn, tenant string
		scopes      int
	}{
		{"arn:aws:sts::123456789012:assumed-role/ingest/worker-session", "acme", 2},
		{"arn:aws:iam::123456789012:role/ingest", "acme", 2},
		{"arn:aws:iam::123456789012:user/ci", "globex", 4},
		{"arn:aws:sts::210987654321:assumed-role/ingest/worker-session", "", 0},
		{"arn:aws:iam::123456789012:user/ci2", "", 0},
		{"arn:aws:iam::123456789012:role/ci", "", 0},
		{"arn:aws-cn:sts::123456789012:assumed-role/ingest/s", "", 0},
		{"", "", 0},
	} {
		id, ok := m.Resolve(tc.arn, "AKIAEXAMPLE")
		if ok != (tc.tenant != "") || id.Tenant != tc.tenant || len(id.Scopes) != tc.scopes {
			t.Errorf("%s: %+v %v, want tenant %q with %d scopes", tc.arn, id, ok, tc.tenant, tc.scopes)
		}
		if ok && (id.Subject != tc.arn || id.TokenID != "AKIAEXAMPLE") {
			t.Errorf("%s: subject %q token id %q", tc.arn, id.Subject, id.TokenID)
		}
	}
}
