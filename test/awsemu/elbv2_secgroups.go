package awsemu

import (
	"net/http"
	"net/url"
	"slices"
)

// SetSecurityGroups replaces the security groups of a load balancer. As in
// AWS ("Security groups for your Network Load Balancer"): an NLB created
// without security groups can never get one (InvalidConfigurationRequest,
// with AWS's message), an NLB created with some can change them; every
// group must exist in the load balancer's VPC (InvalidSecurityGroup). A
// group a load balancer uses cannot be deleted (DependencyViolation, see
// ec2State.sgUser), so the list is the load balancer's hold on them.

type setSecurityGroupsResult struct {
	SecurityGroupIDs []string `xml:"SecurityGroupIds>member"`
}

func (s *elbState) setV2SecurityGroups(form url.Values) (any, *apiError) {
	sgs := memberValues(form, "SecurityGroups")
	s.mu.Lock()
	defer s.mu.Unlock()
	lb, apiErr := s.v2LB(form)
	if apiErr != nil {
		return nil, apiErr
	}
	if lb.Type == LBTypeNetwork && len(lb.SecurityGroups) == 0 {
		return nil, newAPIError(http.StatusBadRequest, "InvalidConfigurationRequest",
			"You cannot set security groups on a Network Load Balancer which was created without any security groups.")
	}
	if len(sgs) == 0 {
		return nil, errMissingParameter("SecurityGroups")
	}
	if _, apiErr := s.checkSecurityGroups(sgs, lb.VPCID); apiErr != nil {
		return nil, apiErr
	}
	lb.SecurityGroups = slices.Clone(sgs)
	return setSecurityGroupsResult{SecurityGroupIDs: lb.SecurityGroups}, nil
}
