package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// JWTProps makes the API accept the JWTs of an OIDC issuer beside Baton's
// own tokens (the API function's BATON_JWT_* variables; docs/auth.md).
// Set Issuer and Audience for any issuer (Auth0, Okta, Entra, …), or a
// Cognito user pool: an existing one (CognitoUserPoolID with
// CognitoAppClientID) or one the stack creates (CreateCognitoUserPool).
type JWTProps struct {
	Issuer   string
	Audience string
	// JWKSURL is the issuer's JWKS (default Issuer/.well-known/jwks.json).
	JWKSURL string
	// TenantClaim names the tenant claim (default tenant; custom:tenant
	// for Cognito).
	TenantClaim string
	// ScopeClaim names the scope claim (default scope, then scp;
	// cognito:groups for a pool the stack creates).
	ScopeClaim string
	// ScopeMap maps the issuer's scopes (or groups) to Baton's:
	// "from=scope+scope,…".
	ScopeMap string
	// CognitoUserPoolID and CognitoAppClientID trust an existing user
	// pool of the stack's region: its ID tokens carry the app client id
	// as aud and the tenant in custom:tenant.
	CognitoUserPoolID  string
	CognitoAppClientID string
	// CreateCognitoUserPool creates a user pool (no self sign-up, the
	// tenant an immutable custom:tenant attribute that no app client may
	// write), an app client, and two groups whose names are mapped to
	// scopes: baton-users (runs:read, runs:write, results:submit) and
	// baton-approvers (runs:read, approvals:decide).
	CreateCognitoUserPool bool
}

// cognitoGroups are the groups of a user pool the stack creates, and the
// scopes each grants.
var cognitoGroups = map[string][]string{
	"baton-users":     {"runs:read", "runs:write", "results:submit"},
	"baton-approvers": {"runs:read", "approvals:decide"},
}

// Cognito's identifiers.
var (
	cognitoPoolIDRe   = regexp.MustCompile(`^[a-z]{2}-[a-z]+-\d_[0-9A-Za-z]+$`)
	cognitoClientIDRe = regexp.MustCompile(`^[0-9a-z]{1,128}$`)
)

func (j JWTProps) enabled() bool {
	return j.Issuer != "" || j.CognitoUserPoolID != "" || j.CreateCognitoUserPool
}

func (j JWTProps) validate() error {
	ways := 0
	for _, on := range []bool{j.Issuer != "", j.CognitoUserPoolID != "", j.CreateCognitoUserPool} {
		if on {
			ways++
		}
	}
	switch {
	case ways > 1:
		return fmt.Errorf("jwt: set one of jwtIssuer, cognitoUserPoolId or cognitoUserPool=create")
	case j.Issuer != "" && !strings.HasPrefix(j.Issuer, "https://"):
		return fmt.Errorf("jwt: issuer %q is not an https URL", j.Issuer)
	case j.Issuer != "" && j.Audience == "":
		return fmt.Errorf("jwt: jwtAudience is required with jwtIssuer")
	case j.CognitoUserPoolID != "" && !cognitoPoolIDRe.MatchString(j.CognitoUserPoolID):
		return fmt.Errorf("jwt: %q is not a Cognito user pool id (like us-east-1_AbC123)", j.CognitoUserPoolID)
	case j.CognitoUserPoolID != "" && !cognitoClientIDRe.MatchString(j.CognitoAppClientID):
		return fmt.Errorf("jwt: cognitoAppClientId is required with cognitoUserPoolId (the app client whose ID tokens the API accepts)")
	case !j.enabled() && (j.Audience != "" || j.JWKSURL != "" || j.TenantClaim != "" || j.ScopeClaim != "" || j.ScopeMap != ""):
		return fmt.Errorf("jwt: the other jwt settings need jwtIssuer, cognitoUserPoolId or cognitoUserPool=create")
	}
	return nil
}

// addJWT sets the API function's BATON_JWT_* variables, creating the
// user pool first when asked to.
func addJWT(stack awscdk.Stack, props *StackProps, api awslambda.Function) {
	j := props.JWT
	if !j.enabled() {
		return
	}
	region := *stack.Region()
	env := map[string]*string{}
	set := func(k, v string) {
		if v != "" {
			env[k] = jsii.String(v)
		}
	}
	switch {
	case j.CreateCognitoUserPool:
		pool := awscognito.NewUserPool(stack, jsii.String("Users"), &awscognito.UserPoolProps{
			UserPoolName:      jsii.String("baton-" + props.Stage),
			SelfSignUpEnabled: jsii.Bool(false),
			SignInAliases:     &awscognito.SignInAliases{Email: jsii.Bool(true)},
			AutoVerify:        &awscognito.AutoVerifiedAttrs{Email: jsii.Bool(true)},
			StandardAttributes: &awscognito.StandardAttributes{
				Email: &awscognito.StandardAttribute{Required: jsii.Bool(true), Mutable: jsii.Bool(true)}},
			CustomAttributes: &map[string]awscognito.ICustomAttribute{
				"tenant": awscognito.NewStringAttribute(&awscognito.StringAttributeProps{MinLen: jsii.Number(1), MaxLen: jsii.Number(64), Mutable: jsii.Bool(false)}),
			},
			PasswordPolicy: &awscognito.PasswordPolicy{MinLength: jsii.Number(12), RequireDigits: jsii.Bool(true), RequireLowercase: jsii.Bool(true),
				RequireUppercase: jsii.Bool(true), RequireSymbols: jsii.Bool(true)},
			Mfa:                awscognito.Mfa_OPTIONAL,
			MfaSecondFactor:    &awscognito.MfaSecondFactor{Otp: jsii.Bool(true), Sms: jsii.Bool(false)},
			AccountRecovery:    awscognito.AccountRecovery_EMAIL_ONLY,
			DeletionProtection: jsii.Bool(props.Stage == "prod"),
			RemovalPolicy:      map[bool]awscdk.RemovalPolicy{true: awscdk.RemovalPolicy_RETAIN, false: awscdk.RemovalPolicy_DESTROY}[props.Stage == "prod"],
		})
		// The tenant is readable but no app client writes it: only an
		// administrator sets it, when creating the user.
		write := awscognito.NewClientAttributes().WithStandardAttributes(&awscognito.StandardAttributesMask{Email: jsii.Bool(true)})
		read := write.WithCustomAttributes(jsii.String("tenant"))
		client := pool.AddClient(jsii.String("Api"), &awscognito.UserPoolClientOptions{
			AuthFlows:                  &awscognito.AuthFlow{UserSrp: jsii.Bool(true)},
			GenerateSecret:             jsii.Bool(false),
			ReadAttributes:             read,
			WriteAttributes:            write,
			IdTokenValidity:            awscdk.Duration_Hours(jsii.Number(1)),
			PreventUserExistenceErrors: jsii.Bool(true),
		})
		var names []string
		for g := range cognitoGroups {
			names = append(names, g)
		}
		sort.Strings(names)
		var mapping []string
		for _, g := range names {
			awscognito.NewCfnUserPoolGroup(stack, jsii.String("Group-"+g), &awscognito.CfnUserPoolGroupProps{
				UserPoolId: pool.UserPoolId(), GroupName: jsii.String(g),
				Description: jsii.String("Baton scopes: " + strings.Join(cognitoGroups[g], " ")),
			})
			mapping = append(mapping, g+"="+strings.Join(cognitoGroups[g], "+"))
		}
		env["BATON_JWT_ISSUER"] = awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("https://cognito-idp."), jsii.String(region), jsii.String(".amazonaws.com/"), pool.UserPoolId()})
		env["BATON_JWT_AUDIENCE"] = client.UserPoolClientId()
		set("BATON_JWT_TENANT_CLAIM", cmpOr(j.TenantClaim, "custom:tenant"))
		set("BATON_JWT_SCOPE_CLAIM", cmpOr(j.ScopeClaim, "cognito:groups"))
		set("BATON_JWT_SCOPE_MAP", cmpOr(j.ScopeMap, strings.Join(mapping, ",")))
		awscdk.NewCfnOutput(stack, jsii.String("UserPoolId"), &awscdk.CfnOutputProps{Value: pool.UserPoolId(), Description: jsii.String("the Cognito user pool whose ID tokens the API accepts")})
		awscdk.NewCfnOutput(stack, jsii.String("UserPoolClientId"), &awscdk.CfnOutputProps{Value: client.UserPoolClientId(), Description: jsii.String("its app client (the tokens' aud)")})
	case j.CognitoUserPoolID != "":
		poolRegion, _, _ := strings.Cut(j.CognitoUserPoolID, "_")
		set("BATON_JWT_ISSUER", "https://cognito-idp."+poolRegion+".amazonaws.com/"+j.CognitoUserPoolID)
		set("BATON_JWT_AUDIENCE", j.CognitoAppClientID)
		set("BATON_JWT_TENANT_CLAIM", cmpOr(j.TenantClaim, "custom:tenant"))
		set("BATON_JWT_SCOPE_CLAIM", j.ScopeClaim)
		set("BATON_JWT_SCOPE_MAP", j.ScopeMap)
	default:
		set("BATON_JWT_ISSUER", j.Issuer)
		set("BATON_JWT_AUDIENCE", j.Audience)
		set("BATON_JWT_TENANT_CLAIM", j.TenantClaim)
		set("BATON_JWT_SCOPE_CLAIM", j.ScopeClaim)
		set("BATON_JWT_SCOPE_MAP", j.ScopeMap)
	}
	set("BATON_JWT_JWKS_URL", j.JWKSURL)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		api.AddEnvironment(jsii.String(k), env[k], nil)
	}
}

func cmpOr(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// IAM principals: the keys of IAMPrincipals (the API function checks
// them again, with the tenant names and scopes, at cold start).
var (
	iamPrincipalARN = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:(user|role)/([!-~]+/)?[\w+=,.@-]{1,128}$`)
	tenantName      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
)

func validateIAMPrincipals(s string) error {
	if s == "" {
		return nil
	}
	var m map[string]struct {
		Tenant string   `json:"tenant"`
		Scopes []string `json:"scopes"`
	}
	if err := json.Unmarshal([]byte(s), &m); err != nil || len(m) == 0 {
		return fmt.Errorf("iamPrincipals: want a JSON object of IAM role or user ARNs to {\"tenant\": …, \"scopes\": […]} (%v)", err)
	}
	for arn, p := range m {
		if !iamPrincipalARN.MatchString(arn) {
			return fmt.Errorf("iamPrincipals: %q is not an IAM role or user ARN", arn)
		}
		if !tenantName.MatchString(p.Tenant) {
			return fmt.Errorf("iamPrincipals: %q: tenant %q is not a tenant name (1 to 64 letters, digits, _ and -)", arn, p.Tenant)
		}
	}
	return nil
}

// addIAMRoutes adds the routes again under /iam/ with AWS_IAM
// authorization when IAM principals are mapped: API Gateway checks the
// SigV4 signature and the caller's execute-api:Invoke permission, and
// the function takes the caller from the request context API Gateway
// sets and maps it to its tenant (BATON_IAM_PRINCIPALS).
func addIAMRoutes(stack awscdk.Stack, props *StackProps, rest awsapigateway.RestApi, api awslambda.Function, transfer awsapigateway.ResponseTransferMode) {
	if props.IAMPrincipals == "" {
		return
	}
	api.AddEnvironment(jsii.String("BATON_IAM_PRINCIPALS"), jsii.String(props.IAMPrincipals), nil)
	iam := rest.Root().AddResource(jsii.String("iam"), nil)
	addRouteTree(iam, api, transfer, &awsapigateway.MethodOptions{AuthorizationType: awsapigateway.AuthorizationType_IAM})
	awscdk.NewCfnOutput(stack, jsii.String("IamApiUrl"), &awscdk.CfnOutputProps{
		Value:       awscdk.Fn_Join(jsii.String(""), &[]*string{rest.Url(), jsii.String("iam/")}),
		Description: jsii.String("Base URL for SigV4 callers (service execute-api); the API is under v1/"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("IamInvokeArn"), &awscdk.CfnOutputProps{
		Value:       rest.ArnForExecuteApi(jsii.String("*"), jsii.String("/iam/*"), jsii.String(props.Stage)),
		Description: jsii.String("Grant execute-api:Invoke on this ARN to the roles of BATON_IAM_PRINCIPALS"),
	})
}
