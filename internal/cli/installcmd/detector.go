package installcmd

import (
	"context"
	"io"

	"github.com/awsccmctl/awsccmctl/internal/awsapi"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/deploy"
)

// newDetector builds the autodetection with the real clients: EC2 through
// the same client factory as the CCM (credentials chain, endpoint
// overrides of the cloud config).
func newDetector(clients deploy.Clients, v install.Values, log io.Writer) Detector {
	d := Detector{Kube: clients.Kube, Log: log}
	d.EC2 = func(ctx context.Context, region string) (EC2Describer, error) {
		c, err := awsapi.NewClients(ctx, awsapi.Options{Region: region, CloudConfig: v.CloudConfig})
		if err != nil {
			return nil, err
		}
		return c.EC2, nil
	}
	return d
}
