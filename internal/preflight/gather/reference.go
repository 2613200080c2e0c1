package gather

import (
	"github.com/awsccmctl/awsccmctl/internal/nodefiles"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/preflight/awschecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/clusterchecks"
	"github.com/awsccmctl/awsccmctl/internal/preflight/nodechecks"
)

// ReferenceChecks returns every check preflight can run, as the reference
// lists them (hack/gen-docs writes docs/reference/preflight-checks.md from
// it): node mode, cluster mode and AWS, with the severities of
// pre-install. The checks are built on empty input and must not be run.
func ReferenceChecks() (node, cluster, aws []preflight.Check) {
	return nodechecks.Checks(nodechecks.Input{Node: &nodefiles.Node{}, Mode: preflight.ModePreInstall}),
		clusterchecks.Checks(clusterchecks.Input{Mode: preflight.ModePreInstall}),
		awschecks.Checks(awschecks.Input{Mode: preflight.ModePreInstall})
}
