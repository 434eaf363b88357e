// Package app wires a deployed Baton from its configuration: AWS clients,
// the DynamoDB store, the SQS step queue, the agent registry, model
// providers and tool executors, the engine, and the API and worker
// handlers. Each Lambda main calls Build once at cold start.
package app
