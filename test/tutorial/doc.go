// Package tutorial runs the commands of docs/getting-started.md and of the
// install how-tos (docs/install-existing-cluster.md, docs/install-kubeadm.md)
// as written, each page in one bash, the way a reader following the page
// would: the pages are only as good as their commands. A block that cannot
// run on the test bed, or ends there with a known exit code, says so in an
// HTML comment right before it (<!-- tutorial: skip: REASON --> or
// <!-- tutorial: exit N: REASON -->); the tests count and print the skipped
// ones, and nothing is skipped without such a marker.
package tutorial
