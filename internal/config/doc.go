// Package config reads a Lambda's configuration from its environment,
// once, at cold start: a struct with defaults and Validate.
package config
