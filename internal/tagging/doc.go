// Package tagging is the tagging controller: it puts the tags of --tags on
// the EC2 instance of every Node and takes them off when the Node goes, as
// kubernetes/cloud-provider-aws's tagging controller does (same controller
// name, flags and Node label), but in batches.
//
// Nodes come from the shared Node informer into a rate-limited work queue.
// One worker takes what the queue holds after a short window and tags all
// of it with one CreateTags call per 1,000 instances (EC2's per-call
// limit), or none when the shared instance view (internal/instances) shows
// the tags already there. EC2 fails a whole call for one bad instance (an
// unknown ID, one past the 50-tag limit, one IAM or an SCP denies), so
// such a call is bisected until only the bad instances fail (ec2.go says
// which errors are one instance's and which the whole call's): one bad
// instance does not hold up the others, and only its Node gets a Warning
// event. Instances expected to fail (foreign per the view, or refused
// before) are called apart. A tagged Node
// gets the label k8s.io/cloud-provider-aws with a checksum of the tags,
// upstream's marker that it needs no more work until the tags change.
// When a Node is deleted, DeleteTags removes the configured tags (with
// their values, so a tag someone changed since is left alone) unless the
// instance is already gone or terminated.
package tagging
