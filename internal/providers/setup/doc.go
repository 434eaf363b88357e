// Package setup builds the model providers a deployment enables, once at
// cold start: Router takes the names listed in BATON_PROVIDERS and the
// providers.Config read from the environment, resolves each enabled
// provider's API key (from the environment, an SSM SecureString parameter
// or a Secrets Manager secret, through the shared secrets.Resolver),
// builds the AWS clients it needs (internal/awsenv), and
// returns a core.ModelRouter. An unknown provider name, or an enabled
// provider whose configuration is missing or whose key cannot be read,
// is an error that says what to set; nothing is built for providers that
// are not enabled.
package setup
