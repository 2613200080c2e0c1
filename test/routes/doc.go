// Package routes runs the real route controller of k8s.io/cloud-provider,
// inside the CCM (ccmapp.NewCommand with --controllers=route), against a
// real kube-apiserver and the AWS emulator: Nodes with pod CIDRs get
// routes, a terminated instance's route turns blackhole and is cleaned, a
// full route table gives the Node a Warning event without a storm of
// CreateRoute calls, an ambiguous route table gives it one Warning event
// and no route until it is fixed, a Node whose instance has two network
// interfaces is routed to its primary one with that interface's
// source/destination check off, and foreign routes are never touched.
//
// It is a suite of its own because test/integration's CCM runs with routes
// off and its tests count that CCM's AWS calls.
package routes
