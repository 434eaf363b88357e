// Package awsenv loads the AWS configuration once per process (at cold
// start in a Lambda, and only when something needs AWS), with the
// deployment's region and placeholder credentials for emulators on
// loopback endpoints, and builds the SDK clients Baton uses from it
// (DynamoDB, SQS, Lambda, SSM, Secrets Manager, Bedrock runtime),
// optionally pointed at local endpoints such as DynamoDB Local, fauxqs or
// LocalStack. The stores, the model providers, the tool executors and
// the secret resolver all get their clients here.
package awsenv
