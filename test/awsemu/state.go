package awsemu

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Region returns the emulated region.
func (s *Server) Region() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.region
}

// storeInstance adds a defaulted, validated instance. Callers hold s.mu.
func (s *Server) storeInstance(in Instance, visibleAt time.Time) {
	s.instances.put(in.ID, &instanceRec{Instance: in, visibleAt: visibleAt})
	for _, e := range in.ENIs {
		s.eniOwner[e.ID] = in.ID
	}
}

// AddInstance adds an instance; an empty ID gets a fresh one. Defaults are
// filled as for fixtures and references are checked. With a visibility delay
// set, Describe* calls do not see it until the delay has passed.
func (s *Server) AddInstance(in Instance) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in = in.clone()
	if in.ID == "" {
		in.ID = s.newID("i")
	}
	if !strings.HasPrefix(in.ID, "i-") {
		return fmt.Errorf("awsemu: instance id %q must start with \"i-\"", in.ID)
	}
	if _, dup := s.instances.get(in.ID); dup {
		return fmt.Errorf("awsemu: instance %s already exists", in.ID)
	}
	sn, _ := s.subnets.get(in.SubnetID)
	in.applyDefaults(s.region, sn, time.Now().UTC().Truncate(time.Second))

	subnets := map[string]*Subnet{}
	for _, x := range s.subnets.list() {
		subnets[x.ID] = x
	}
	vpcs := map[string]*VPC{}
	for _, x := range s.vpcs.list() {
		vpcs[x.ID] = x
	}
	zones := map[string]bool{}
	for _, z := range s.zones {
		zones[z.Name] = true
	}
	sgs := map[string]bool{}
	for _, x := range s.securityGroups.list() {
		sgs[x.ID] = true
	}
	errs := validateInstance(&in, subnets, vpcs, zones, sgs)
	for _, e := range in.ENIs {
		if owner, ok := s.eniOwner[e.ID]; ok {
			errs = append(errs, fmt.Errorf("network interface %s is already attached to %s", e.ID, owner))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("awsemu: instance %s: %w", in.ID, err)
	}
	var visibleAt time.Time
	if s.visibilityDelay > 0 {
		visibleAt = time.Now().Add(s.visibilityDelay)
	}
	s.storeInstance(in, visibleAt)
	return nil
}

// RemoveInstance deletes an instance entirely, as EC2 does about an hour
// after termination; later calls get InvalidInstanceID.NotFound.
func (s *Server) RemoveInstance(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.instances.get(id)
	if !ok {
		return fmt.Errorf("awsemu: instance %s does not exist", id)
	}
	for _, e := range rec.ENIs {
		delete(s.eniOwner, e.ID)
	}
	s.instances.remove(id)
	return nil
}

// SetInstanceState sets an instance's state name (pending, running,
// shutting-down, terminated, stopping, stopped). Terminated instances stay
// visible, as in EC2.
func (s *Server) SetInstanceState(id, state string) error {
	if _, ok := instanceStateCodes[state]; !ok {
		return fmt.Errorf("awsemu: invalid instance state %q", state)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.instances.get(id)
	if !ok {
		return fmt.Errorf("awsemu: instance %s does not exist", id)
	}
	rec.State = state
	return nil
}

// Instance returns a copy of an instance, visible to Describe* or not.
func (s *Server) Instance(id string) (Instance, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, ok := s.instances.get(id)
	if !ok {
		return Instance{}, false
	}
	return rec.clone(), true
}

// Instances returns copies of all instances in insertion order.
func (s *Server) Instances() []Instance {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Instance, 0, len(s.instances.order))
	for _, rec := range s.instances.list() {
		out = append(out, rec.clone())
	}
	return out
}

// SetVisibilityDelay makes instances added later with AddInstance invisible
// to Describe* calls (NotFound for their IDs, absent from filtered lists)
// for d after being added, modelling EC2 eventual consistency. 0 disables it.
func (s *Server) SetVisibilityDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.visibilityDelay = d
}

// SetIMDSInstance selects which instance IMDS answers as.
func (s *Server) SetIMDSInstance(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.imdsInstance = id
}

// SetIMDSAvailable turns IMDS on or off; when off every IMDS request gets
// HTTP 503.
func (s *Server) SetIMDSAvailable(available bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.imdsAvailable = available
}

// visibleInstance returns the instance if Describe* may see it at now.
// Callers hold s.mu.
func (s *Server) visibleInstance(id string, now time.Time) (*instanceRec, bool) {
	rec, ok := s.instances.get(id)
	if !ok || now.Before(rec.visibleAt) {
		return nil, false
	}
	return rec, true
}

// AddSecurityGroup adds an empty security group to a VPC of the server, as
// a user creating one outside the CCM would.
func (s *Server) AddSecurityGroup(id, name, vpcID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.vpcs.get(vpcID); !ok {
		return fmt.Errorf("add security group %s: no VPC %s", id, vpcID)
	}
	if _, ok := s.securityGroups.get(id); ok {
		return fmt.Errorf("add security group %s: it exists", id)
	}
	s.securityGroups.put(id, &SecurityGroup{ID: id, Name: name, Description: name, VPCID: vpcID, Tags: map[string]string{}})
	return nil
}

// ClearIngress removes every ingress rule of a security group.
func (s *Server) ClearIngress(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.securityGroups.get(id)
	if !ok {
		return fmt.Errorf("clear ingress of %s: no such security group", id)
	}
	g.Ingress = nil
	return nil
}
