// Command chart-check runs a Helm chart through the Helm Go library
// (helm.sh/helm/v3, pinned by hack/tools/helm/go.mod) and prints what Helm
// made of it as JSON, so awsccmctl's tests can hold the chart to Helm's own
// rendering, schema validation, lint and release handling rather than to
// our reading of Helm.
//
// It lives in its own module because Helm brings about 180 requirements
// (OCI registries, credential helpers, kubectl) that must not enter the
// product's version selection or binaries.
//
// Usage:
//
//	chart-check render --chart DIR [--values FILE]... [--set k=v]... --release NAME --namespace NS [--kube-version v1.37.0]
//	chart-check lint --chart DIR [--values FILE]... [--set k=v]... [--namespace NS] [--kube-version v1.37.0]
//	chart-check schema --chart DIR [--values FILE]... [--set k=v]...
//	chart-check install|upgrade --chart DIR --release NAME --namespace NS --kubeconfig FILE [--values FILE]... [--set k=v]... [--take-ownership] [--wait] [--timeout 5m]
//	chart-check uninstall --release NAME --namespace NS --kubeconfig FILE [--wait] [--timeout 5m]
//
// --values and --set merge as helm's own flags do (files in order, then each
// --set).
//
// render does what `helm template` does: an Install action with DryRun,
// ClientOnly and Replace, schema validation on, hooks kept. It prints
// {"objects": [...], "hooks": [...], "notes": "...", "error": ""}, each
// object the JSON of one manifest document, in Helm's install order.
// --kube-version defaults to v1.37.0, the product's Kubernetes minor: the
// library's own default is v1.20.0 (the helm binary gets its version from
// its build flags, a library user does not).
//
// lint runs Helm's linter in strict mode (a warning fails as an error does)
// and prints {"messages": [{"severity", "path", "message"}], "errors": [...]}.
//
// schema validates the values, coalesced with the chart's values.yaml as an
// install does, against the chart's values.schema.json and nothing else; it
// prints {"error": ""}.
//
// install, upgrade and uninstall run the real actions against the cluster
// of the kubeconfig (its current context), storing releases in Secrets as
// helm does by default (install --take-ownership adopts existing objects
// that lack Helm's ownership metadata, as helm's flag does), and print {"release", "namespace", "revision",
// "status", "notes", "error"} ("info" instead of "notes" for uninstall).
// Helm's logs go to stderr.
//
// Exit status: 0 Helm accepted; 3 Helm refused (a render, schema, lint or
// release error; the JSON's "error" holds Helm's message); 2 a usage error
// or a failure of chart-check itself (also on stderr, no JSON).
package main
