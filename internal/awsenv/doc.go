// Package awsenv builds the AWS SDK clients once per process (at cold
// start in a Lambda), optionally pointed at local endpoints such as
// DynamoDB Local, fauxqs or LocalStack.
package awsenv
