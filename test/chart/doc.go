// Package chart holds awsccmctl's Helm chart to Helm's own code.
//
// Helm is not a dependency of the product: chart-check (hack/tools/helm,
// the Helm v3 Go library in its own module, built by hack/build-testbed.sh)
// renders, lints, schema-validates and installs charts, and the helpers
// here (Render, Lint, Schema, Install, Upgrade, Uninstall) run it and
// decode its JSON. Helm's refusals (a schema violation, a lint error, an
// ownership conflict) come back as a *RefusedError carrying Helm's message;
// anything else chart-check cannot do fails the test.
//
// chart-check is a test-bed binary: without it these tests skip, or fail
// when $CI is set. The release tests also need the test bed's
// kube-apiserver (one per package, started by TestMain).
package chart
