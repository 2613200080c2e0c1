package ccmapp

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/cloud-provider/app"
	cloudcontrollerconfig "k8s.io/cloud-provider/app/config"
)

// configureControllers adjusts the library's completed config before any
// controller is built (the cloud initializer runs between Complete and
// the controllers' construction): the controllers' shared informers keep
// trimmed objects, and each controller's client has a bounded number of
// requests in flight.
func configureControllers(c *cloudcontrollerconfig.CompletedConfig) {
	c.SharedInformers = informers.NewSharedInformerFactoryWithOptions(c.VersionedClient, app.ResyncPeriod(c)(),
		informers.WithTransform(trimForCache))
	c.ClientBuilder = boundedClientBuilder{inner: c.ClientBuilder, max: MaxInFlightPerController}
}

// trimForCache is the shared informers' transform: it drops from each
// cached object what no controller of this binary reads, before the
// object is stored.
//
//   - metadata.managedFields of every object: no controller reads them,
//     and a PUT without them keeps the stored ones (the apiserver's field
//     manager takes the live object's when the request has none).
//   - A Node's status.images, status.volumesInUse and
//     status.volumesAttached: the kubelet's, read by the scheduler and the
//     attach/detach controller, by none of the cloud controllers (node,
//     node lifecycle, service, route, tagging). The cloud node controller
//     writes Nodes with a PUT, which ignores status, and patches status
//     with a two-way diff of the cached object and its copy, in which the
//     dropped fields are equal and so absent.
//
// Everything a controller reads stays: labels, annotations, taints,
// providerID, podCIDRs, addresses, conditions, nodeInfo, capacity and
// allocatable. The transform may see an object twice; it is idempotent.
func trimForCache(obj any) (any, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		o, err := trimForCache(d.Obj)
		d.Obj = o
		return d, err
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	if n, ok := obj.(*corev1.Node); ok {
		n.Status.Images = nil
		n.Status.VolumesInUse = nil
		n.Status.VolumesAttached = nil
	}
	return obj, nil
}
