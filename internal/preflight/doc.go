// Package preflight is the check engine behind `awsccmctl preflight`.
//
// A check is a value with a stable ID (users pass it to --ignore-checks and
// alert on it), a category, a title, a severity and a Run function that
// returns a status, a message and a remediation: the exact flag, file, tag or
// command to change. Builders choose which checks run, so the selection is
// testable on its own. Checks only read: none may change the cluster or AWS.
package preflight
