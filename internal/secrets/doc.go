// Package secrets resolves secrets by reference, once per cold start: an
// environment variable, an SSM SecureString parameter (decrypted) or a
// Secrets Manager secret (its SecretString, or its SecretBinary). Each
// reference is read at most once however many users share it; the SSM and
// Secrets Manager clients are built only when a reference needs them.
// Values are kept in memory only and never appear in errors. Model
// providers resolve their API keys and tool executors their signing
// secrets with the same Resolver.
package secrets
