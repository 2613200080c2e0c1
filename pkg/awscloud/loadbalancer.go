package awscloud

import cloudprovider "k8s.io/cloud-provider"

// LoadBalancer is not implemented yet. Returning false makes the service
// controller log that it is not started instead of failing every Service:
// no load balancer is created, changed or deleted until it lands.
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) { return nil, false }
