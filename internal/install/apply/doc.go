// Package apply puts rendered manifests on a cluster and takes them off
// again: server-side apply with one field manager (safe to re-run, and
// conflicts with other managers are reported, not overwritten, unless
// forced), client and server dry runs, a unified diff against the live
// objects, uninstall of exactly what install created, and waits for the
// workload's rollout and the CCM's Lease.
//
// It works on unstructured objects through the dynamic client and a
// discovery-backed REST mapper, so any document the templates render can
// be applied without a typed client per kind.
package apply
