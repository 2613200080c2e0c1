// Package apply puts rendered manifests on a cluster and takes them off
// again: server-side apply with one field manager (safe to re-run, and
// conflicts with other managers are reported, not overwritten, unless
// forced), client and server dry runs, a unified diff against the live
// objects, an ApplySet-style inventory of an install (a ConfigMap listing
// the objects it created and those it adopted) from which uninstall deletes
// exactly what the install created and hands adopted objects back (the
// managed-by label marks only what awsccmctl created; see adopt.go), and
// waits for the workload's rollout,
// for one of its Pods to hold the CCM's Lease, or for its Pods to be Ready.
//
// It works on unstructured objects through the dynamic client and a
// discovery-backed REST mapper, so any document the templates render can
// be applied without a typed client per kind.
package apply
