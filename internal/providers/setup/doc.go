// Package setup builds the model providers a deployment enables: Router
// takes the names listed in BATON_PROVIDERS and the providers.Config read
// from the environment, and returns a core.ModelRouter. An unknown
// provider name, or an enabled provider whose configuration is missing, is
// an error at cold start that says what to set. Each enabled provider is
// built on its first model call: its API key resolved (from the
// environment, an SSM SecureString parameter or a Secrets Manager secret,
// through the shared secrets.Resolver) and the AWS clients it needs built
// (internal/awsenv); a key that cannot be read fails that call with a
// retryable error, so the step runs again later. Nothing is built for
// providers that are not enabled.
package setup
