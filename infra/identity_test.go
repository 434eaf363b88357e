package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// apiEnv is the API function's environment in a synthesized template.
func apiEnv(t *testing.T, raw template) map[string]any {
	t.Helper()
	for _, r := range raw.Resources {
		env, _ := r.Properties["Environment"].(map[string]any)
		v, _ := env["Variables"].(map[string]any)
		if _, api := v["BATON_STREAM_TRANSFER"]; r.Type == "AWS::Lambda::Function" && api {
			return v
		}
	}
	t.Fatal("no API function")
	return nil
}

// TestJWTOptions: each way to trust JWTs sets the API function's
// BATON_JWT_* variables (and only the API's); a created user pool has an
// immutable tenant attribute no app client writes, an app client and the
// groups mapped to scopes; bad settings are refused.
func TestJWTOptions(t *testing.T) {
	t.Run("any OIDC issuer", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev", JWT: JWTProps{Issuer: "https://login.example.com/", Audience: "baton-api", TenantClaim: "org", ScopeMap: "baton:user=runs:read+runs:write"}})
		env := apiEnv(t, raw)
		if env["BATON_JWT_ISSUER"] != "https://login.example.com/" || env["BATON_JWT_AUDIENCE"] != "baton-api" || env["BATON_JWT_TENANT_CLAIM"] != "org" ||
			env["BATON_JWT_SCOPE_MAP"] != "baton:user=runs:read+runs:write" || env["BATON_JWT_JWKS_URL"] != nil {
			t.Fatalf("%v", env)
		}
		for _, r := range raw.Resources {
			env, _ := r.Properties["Environment"].(map[string]any)
			v, _ := env["Variables"].(map[string]any)
			if _, api := v["BATON_STREAM_TRANSFER"]; !api && v["BATON_JWT_ISSUER"] != nil {
				t.Errorf("BATON_JWT_ISSUER on another function")
			}
		}
	})
	t.Run("an existing Cognito user pool", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev", JWT: JWTProps{CognitoUserPoolID: "eu-west-1_AbC123", CognitoAppClientID: "4d2abc9def"}})
		env := apiEnv(t, raw)
		if env["BATON_JWT_ISSUER"] != "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123" || env["BATON_JWT_AUDIENCE"] != "4d2abc9def" || env["BATON_JWT_TENANT_CLAIM"] != "custom:tenant" {
			t.Fatalf("%v", env)
		}
	})
	t.Run("a user pool the stack creates", func(t *testing.T) {
		_, raw := synth(t, &StackProps{Stage: "dev", JWT: JWTProps{CreateCognitoUserPool: true}})
		env := apiEnv(t, raw)
		iss, _ := json.Marshal(env["BATON_JWT_ISSUER"])
		if !strings.Contains(string(iss), "https://cognito-idp.") || !strings.Contains(string(iss), `"Ref":"Users`) || !strings.Contains(mustJSON(env["BATON_JWT_AUDIENCE"]), `"Ref":"UsersApi`) ||
			env["BATON_JWT_TENANT_CLAIM"] != "custom:tenant" || env["BATON_JWT_SCOPE_CLAIM"] != "cognito:groups" ||
			env["BATON_JWT_SCOPE_MAP"] != "baton-approvers=runs:read+approvals:decide,baton-users=runs:read+runs:write+results:submit" {
			t.Fatalf("%v", env)
		}
		var pool, client map[string]any
		groups := 0
		for _, r := range raw.Resources {
			switch r.Type {
			case "AWS::Cognito::UserPool":
				pool = r.Properties
			case "AWS::Cognito::UserPoolClient":
				client = r.Properties
			case "AWS::Cognito::UserPoolGroup":
				groups++
			}
		}
		if pool == nil || client == nil || groups != 2 {
			t.Fatalf("pool %v client %v groups %d", pool, client, groups)
		}
		schema := mustJSON(pool["Schema"])
		if !strings.Contains(schema, `"Name":"tenant"`) || !strings.Contains(schema, `"Mutable":false`) {
			t.Errorf("tenant attribute: %s", schema)
		}
		if admin := mustJSON(pool["AdminCreateUserConfig"]); !strings.Contains(admin, `"AllowAdminCreateUserOnly":true`) {
			t.Errorf("self sign-up: %s", admin)
		}
		if w := mustJSON(client["WriteAttributes"]); strings.Contains(w, "tenant") {
			t.Errorf("an app client may write the tenant: %s", w)
		}
		if r := mustJSON(client["ReadAttributes"]); !strings.Contains(r, "custom:tenant") {
			t.Errorf("the app client cannot read the tenant: %s", r)
		}
	})
	for name, j := range map[string]JWTProps{
		"two ways":                {Issuer: "https://a", Audience: "x", CreateCognitoUserPool: true},
		"http issuer":             {Issuer: "http://a", Audience: "x"},
		"issuer without audience": {Issuer: "https://a"},
		"bad pool id":             {CognitoUserPoolID: "pool", CognitoAppClientID: "abc"},
		"pool without client":     {CognitoUserPoolID: "us-east-1_Abc"},
		"settings without issuer": {Audience: "x"},
	} {
		p := &StackProps{JWT: j}
		p.defaults()
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "jwt") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestIAMOption: mapped IAM principals add every route again under /iam/
// with AWS_IAM authorization on the same function (streams streamed),
// while /v1/ stays without API Gateway authorization; the mapping reaches
// the API function, and the outputs name the base URL and the ARN to
// grant execute-api:Invoke on. Malformed mappings are refused.
func TestIAMOption(t *testing.T) {
	const principals = `{"arn:aws:iam::123456789012:role/ingest":{"tenant":"acme","scopes":["runs:write"]}}`
	_, raw := synth(t, &StackProps{Stage: "dev", IAMPrincipals: principals})
	methods := apiMethods(t, raw)
	auth := map[string]string{}
	for _, m := range ofType(raw, "AWS::ApiGateway::Method") {
		res, _ := m["ResourceId"].(map[string]any)["Ref"].(string)
		at, _ := m["AuthorizationType"].(string)
		auth[m["HttpMethod"].(string)+" "+resourcePath(raw, res)] = at
	}
	for _, want := range []string{"ANY /v1/{proxy+}", "ANY /v1/runs", "ANY /v1/runs/{run_id}", "ANY /v1/runs/{run_id}/{proxy+}", "GET /v1/runs/{run_id}/stream",
		"ANY /v1/agents/{agent}/{proxy+}", "POST /v1/agents/{agent}/agui",
		"ANY /a2a/{agent}", "POST /a2a/{agent}", "GET /a2a/{agent}/.well-known/agent-card.json"} {
		method, path, _ := strings.Cut(want, " ")
		underIAM := method + " /iam" + path
		v1, iam := methods[want], methods[underIAM]
		if iam.method == "" || iam.target != v1.target || iam.uri != v1.uri {
			t.Errorf("%s under /iam/: %+v, want the same integration as %+v", want, iam, v1)
		}
		if a := auth[underIAM]; a != "AWS_IAM" {
			t.Errorf("%s under /iam/: authorization %q", want, a)
		}
		if a := auth[want]; a != "" && a != "NONE" {
			t.Errorf("%s: authorization %q", want, a)
		}
	}
	if env := apiEnv(t, raw); env["BATON_IAM_PRINCIPALS"] != principals {
		t.Fatalf("API env %v", env)
	}
	if raw.Outputs["IamApiUrl"] == nil || !strings.Contains(mustJSON(raw.Outputs["IamInvokeArn"]), "/iam/*") {
		t.Fatalf("outputs %v", raw.Outputs)
	}
	_, plain := synth(t, &StackProps{Stage: "dev"})
	for m := range apiMethods(t, plain) {
		if strings.Contains(m, "/iam/") {
			t.Fatalf("/iam/ routes without IAM principals: %s", m)
		}
	}
	for in, want := range map[string]string{
		`{"arn:aws:sts::123456789012:assumed-role/ingest/s":{"tenant":"acme"}}`: "not an IAM role or user ARN",
		`{"arn:aws:iam::123456789012:role/ingest":{"tenant":"x/../acme"}}`:      "not a tenant name",
		`["arn:aws:iam::123456789012:role/ingest"]`:                             "want a JSON object",
	} {
		p := &StackProps{IAMPrincipals: in}
		p.defaults()
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}
