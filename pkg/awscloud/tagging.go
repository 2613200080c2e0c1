package awscloud

import (
	"github.com/awsccmctl/awsccmctl/internal/instances"
	"github.com/awsccmctl/awsccmctl/internal/tagging"
)

// TaggingDeps is what the tagging controller takes from the provider: its
// EC2 calls (metered, registry-guarded), the shared instance view and the
// cluster ID.
type TaggingDeps struct {
	EC2       tagging.EC2
	Instances *instances.View
	ClusterID string
}

// Tagging returns the tagging controller's dependencies.
func (c *Cloud) Tagging() TaggingDeps {
	return TaggingDeps{EC2: c.tagging, Instances: c.view, ClusterID: c.env.ClusterID}
}
