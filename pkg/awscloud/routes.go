package awscloud

import cloudprovider "k8s.io/cloud-provider"

// Routes is not implemented yet. Returning false makes the route controller
// log that routes are not configured, whatever --configure-cloud-routes says.
func (c *Cloud) Routes() (cloudprovider.Routes, bool) { return nil, false }
