package root

import (
	"log/slog"

	"k8s.io/klog/v2"
)

// quietClientGo discards what client-go logs through klog, among it
// utilruntime.HandleError's "Unhandled Error" lines that the discovery
// cache (memcache.go) writes when the API server does not answer. The same
// failure comes back as an error, which the command reports once, with its
// exit code; the log lines only repeated it, out of order, in klog's format
// on stderr. awsccmctl's own messages go to its streams, never to klog.
//
// klog is process-wide, so this is too: only the awsccmctl binary builds
// this command tree (the CCM, which logs through klog, never does).
func quietClientGo() {
	klog.SetSlogLogger(slog.New(slog.DiscardHandler))
}
