// Package deploy puts the rendered CCM on a cluster and takes it off again,
// as `awsccmctl install apply` and `install uninstall` do: Objects turns
// install values into the objects to apply, Apply diffs and applies them
// with server-side apply (package apply) and, asked to wait, waits for the
// CCM to take over (rollout, its Lease held by one of its Pods, every Node
// initialised) and ends with preflight's post-install checks; Uninstall
// deletes exactly what the recorded install created. Values that do not
// match the recorded install are a *MismatchError and change nothing. Progress goes to a writer; the report comes back as a value for
// the caller to print.
package deploy
