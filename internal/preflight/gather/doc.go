// Package gather runs `awsccmctl preflight` without the command line: it
// reads what the checks look at (a node's files under a root, or the cluster
// through its API; for the AWS checks the region, the cluster's instances,
// its LoadBalancer Services and the AWS clients), selects the checks for
// node or cluster mode, runs them and returns the report.
//
// The command layer (internal/cli/preflightcmd) parses flags into Options,
// calls Collect and prints the report; `migrate-from-intree plan` calls
// Collect for its pre-migrate report. Errors say what kind of failure they
// are (InputError, UnreachableError) so the callers can choose exit codes.
package gather
