// Package awsapi is the one place that builds AWS SDK clients for the CCM and
// the CLI, and the single registry of every AWS action the code may call.
//
// Every client it builds carries two middlewares: a guard that refuses any
// operation missing from the registry (so iam/ and preflight's IAM simulation,
// both generated from the registry, can never fall behind the code), and a
// metrics recorder that counts and times every attempt by service, operation
// and outcome, with throttles counted apart.
package awsapi
