// Package leadermigration renders the LeaderMigrationConfiguration files
// (KEP-2436) that hand the cloud controllers from an in-tree
// kube-controller-manager to this CCM, and holds the names that are wire
// contracts of that hand-over.
//
// Three traps found on a real in-tree kube-controller-manager 1.26 shape it
// (docs/migrate-from-intree.md):
//   - the file lists both spellings of every migrated controller: the
//     kube-controller-manager's ("route", "service", "cloud-node-lifecycle")
//     and cloud-provider's ("node-route-controller", "service-lb-controller",
//     "cloud-node-lifecycle-controller"). cloud-provider matches names without
//     resolving aliases, so a file with only the documented names lets both
//     managers run the service and node-lifecycle loops at once;
//   - it never carries resourceLock: current CCMs refuse to start on it;
//   - after the cut-over the kube-controller-manager runs without leader
//     migration, or it can win the migration lease and run nothing.
package leadermigration
