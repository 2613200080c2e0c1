package awscloud

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/apimachinery/pkg/types"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/utils/clock"

	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// zoneRefreshInterval rate-limits re-reading the zone list when a zone name
// is unknown (a new Local Zone opted in, or a bad name).
const zoneRefreshInterval = time.Minute

// zoneIDs maps zone names to zone IDs. Zones do not change, so one call per
// process serves every node; an unknown name re-reads at most once a minute.
type zoneIDs struct {
	api   ec2Calls
	clock clock.PassiveClock

	mu       sync.Mutex
	ids      map[string]string
	loadedAt time.Time
}

func newZoneIDs(api ec2Calls, clk clock.PassiveClock) *zoneIDs {
	return &zoneIDs{api: api, clock: clk, ids: map[string]string{}}
}

// ID returns the zone ID of zone name.
func (z *zoneIDs) ID(ctx context.Context, name string) (string, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if id, ok := z.ids[name]; ok {
		return id, nil
	}
	if !z.loadedAt.IsZero() && z.clock.Since(z.loadedAt) < zoneRefreshInterval {
		return "", fmt.Errorf("availability zone %q is not in this region's zone list", name)
	}
	// AllAvailabilityZones includes opted-in Local and Wavelength zones.
	out, err := z.api.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{AllAvailabilityZones: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("describe availability zones: %w", err)
	}
	z.loadedAt = z.clock.Now()
	for _, az := range out.AvailabilityZones {
		z.ids[aws.ToString(az.ZoneName)] = aws.ToString(az.ZoneId)
	}
	if id, ok := z.ids[name]; ok {
		return id, nil
	}
	return "", fmt.Errorf("availability zone %q is not in this region's zone list", name)
}

// zonesFacet answers zone questions from the shared instance view.
type zonesFacet struct{ c *Cloud }

// GetZone would return the CCM host's zone; the CCM may run off EC2, and
// nothing in the external controllers asks, so it says so.
func (z zonesFacet) GetZone(context.Context) (cloudprovider.Zone, error) {
	return cloudprovider.Zone{}, fmt.Errorf("the AWS CCM does not report its own zone: it may run off EC2")
}

// GetZoneByProviderID returns the zone of the instance behind providerID.
func (z zonesFacet) GetZoneByProviderID(ctx context.Context, providerID string) (cloudprovider.Zone, error) {
	id, err := providerid.Parse(providerID)
	if err != nil {
		return cloudprovider.Zone{}, err
	}
	return z.zoneOf(ctx, id.InstanceID)
}

// zoneOf returns the zone of instance id.
func (z zonesFacet) zoneOf(ctx context.Context, id string) (cloudprovider.Zone, error) {
	obs, err := z.c.view.ByID(ctx, id)
	if err != nil {
		return cloudprovider.Zone{}, err
	}
	if obs.Instance == nil {
		return cloudprovider.Zone{}, cloudprovider.InstanceNotFound
	}
	return cloudprovider.Zone{FailureDomain: obs.Instance.Zone, Region: z.c.env.Region}, nil
}

// GetZoneByNodeName returns the zone of a node by its name.
func (z zonesFacet) GetZoneByNodeName(ctx context.Context, nodeName types.NodeName) (cloudprovider.Zone, error) {
	name := string(nodeName)
	if id, ok := providerid.InstanceIDFromNodeName(name); ok {
		return z.zoneOf(ctx, id)
	}
	inst, err := z.c.view.ByName(ctx, name)
	if err != nil {
		return cloudprovider.Zone{}, err
	}
	return cloudprovider.Zone{FailureDomain: inst.Zone, Region: z.c.env.Region}, nil
}
