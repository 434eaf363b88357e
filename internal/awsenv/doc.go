// Package awsenv loads the AWS configuration once per process (at cold
// start in a Lambda, and only when something needs AWS), with the
// deployment's region and placeholder credentials for emulators on
// loopback endpoints, and builds from it the SDK clients every function
// may use (DynamoDB, SQS, Lambda, SSM, Secrets Manager, EventBridge),
// optionally pointed at local endpoints such as DynamoDB Local, fauxqs or
// LocalStack: the stores, the tool executors and hooks, the
// notifications and the secret resolver get their clients here. The
// Bedrock runtime client, which only the processes that run steps use,
// is built from the loaded aws.Config by its users (the Bedrock model
// provider, internal/providers/bedrock, and the Bedrock guardrail rule,
// internal/guardrails/bedrock), so that importing awsenv does not link
// it. SSM and Secrets Manager, from which the secret resolver reads each
// secret once, are called through JSONClient (jsonapi.go: their JSON 1.1
// protocol with the loaded configuration's credentials, HTTP client,
// retryer and endpoints) rather than their generated clients, whose
// schema tables every function would otherwise initialise at cold start.
package awsenv
