// Package fakesystemd is a test bed node's systemd, as far as systemctl
// goes: the node step of `migrate-from-intree` run in a Pod
// (`--chroot-systemctl`) runs the host's /usr/bin/systemctl chrooted into
// the node's root, and on the test bed that program is this package's
// client, which asks the node's Server.
//
// A Server listens on a unix socket at <root>/run/fakesystemd.sock (the
// client's /run/fakesystemd.sock inside the chroot) and answers each
// command line through the Handler the test gives: Units serves
// daemon-reload, start, stop, restart and is-active on Unit values such as
// fakekubelet.Service (the kubelet stand-in started from the node's
// kubeadm-flags.env). Every call is kept (Calls) and logged to
// <root>/var/log/fakesystemd.log. The work is done in the test process, so
// whatever the handler starts is the test's child and dies with it.
//
// The client (package main in ./systemctl) sends its arguments, prints the
// reply and exits with its status. BuildSystemctl builds it with
// CGO_ENABLED=0, a static binary that runs in a chroot without libc, and
// InstallSystemctl puts it at <root>/usr/bin/systemctl. $FAKESYSTEMD_SOCKET
// points the client elsewhere, for a run outside a chroot.
//
// Unix socket addresses hold at most 107 bytes; a socket under a longer
// path (test folders named after long test names) is bound and dialled
// through /proc/self/fd/<folder descriptor>/fakesystemd.sock (wire.Reachable).
package fakesystemd
