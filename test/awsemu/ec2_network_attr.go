package awsemu

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Network interface attributes: EC2 keeps the source/destination check per
// interface. An instance's sourceDestCheck attribute is its primary
// interface's, which is why ModifyInstanceAttribute may change it only on
// an instance with a single interface (ec2_routes.go), and
// ModifyNetworkInterfaceAttribute changes one interface's.

// eniSourceDestCheck is e's check: its own, else the instance's (on unless
// turned off).
func (in *Instance) eniSourceDestCheck(e *ENI) bool {
	if e.SourceDestCheck != nil {
		return *e.SourceDestCheck
	}
	return in.SourceDestCheck == nil || *in.SourceDestCheck
}

// sourceDestCheck is what DescribeInstances reports for the instance: its
// primary interface's check.
func (in *Instance) sourceDestCheck() bool {
	for i := range in.ENIs {
		if in.ENIs[i].DeviceIndex == 0 {
			return in.eniSourceDestCheck(&in.ENIs[i])
		}
	}
	return in.SourceDestCheck == nil || *in.SourceDestCheck
}

// errMultipleInterfaces is EC2's answer to an instance-level change of an
// attribute that belongs to each interface (sourceDestCheck, groupSet) on
// an instance with several: code and message as EC2 returns them.
func errMultipleInterfaces(id string) *apiError {
	return newAPIError(http.StatusBadRequest, "InvalidInstanceID",
		"There are multiple interfaces attached to instance '%s'. Please specify an interface ID for the operation instead.", id)
}

// attachedENI finds a network interface of a visible instance. Callers
// hold s.mu.
func (s *ec2State) attachedENI(id string, now time.Time) (*ENI, *apiError) {
	if !strings.HasPrefix(id, "eni-") {
		return nil, newAPIError(http.StatusBadRequest, "InvalidNetworkInterfaceID.Malformed", "Invalid id: \"%s\" (expecting \"eni-...\")", id)
	}
	notFound := newAPIError(http.StatusBadRequest, "InvalidNetworkInterfaceID.NotFound", "The networkInterface ID '%s' does not exist", id)
	rec, ok := s.visibleInstance(s.eniOwner[id], now)
	if !ok || rec.State == "terminated" { // deleted with its instance
		return nil, notFound
	}
	for i := range rec.ENIs {
		if rec.ENIs[i].ID == id {
			return &rec.ENIs[i], nil
		}
	}
	return nil, notFound
}

// modifyNetworkInterfaceAttribute sets one interface's SourceDestCheck
// (SourceDestCheck.Value, what the SDKs send). The emulator models no
// other attribute.
func (s *ec2State) modifyNetworkInterfaceAttribute(form url.Values) (any, *apiError) {
	id := form.Get("NetworkInterfaceId")
	if id == "" {
		return nil, errMissingParameter("networkInterfaceId")
	}
	if !form.Has("SourceDestCheck.Value") {
		return nil, errInvalidParameterValue("awsemu models only the sourceDestCheck attribute of ModifyNetworkInterfaceAttribute")
	}
	raw := form.Get("SourceDestCheck.Value")
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return nil, errInvalidParameterValue("Value (%s) for parameter sourceDestCheck is invalid. Expected: 'true' or 'false'.", raw)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	eni, apiErr := s.attachedENI(id, time.Now())
	if apiErr != nil {
		return nil, apiErr
	}
	eni.SourceDestCheck = &v
	return returnResult{Return: true}, nil
}
