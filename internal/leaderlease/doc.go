// Package leaderlease reads leader-election Leases: who holds one, when it
// was acquired and last renewed, and for how long the holder keeps it. The
// migration's gates, preflight's conflict checks and install's wait for a
// leader read Leases through it, so they agree on what a Lease says.
//
// The Lease names themselves belong to their owners: the CCM's to package
// install (install.LeaseName), kube-controller-manager's and Leader
// Migration's to package leadermigration.
package leaderlease
