package awsemu

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The Go API to the EC2 model (instances, security groups) and the reads
// other services make of it. Each takes the EC2 lock itself, so EC2 code,
// which holds it already, uses the tables directly.

// storeInstance adds a defaulted, validated instance. Callers hold s.mu.
func (s *ec2State) storeInstance(in Instance, visibleAt time.Time) {
	s.instances.put(in.ID, &instanceRec{Instance: in, visibleAt: visibleAt})
	for _, e := range in.ENIs {
		s.eniOwner[e.ID] = in.ID
	}
}

// visibleInstance returns the instance if Describe* may see it at now.
// Callers hold s.mu.
func (s *ec2State) visibleInstance(id string, now time.Time) (*instanceRec, bool) {
	rec, ok := s.instances.get(id)
	if !ok || now.Before(rec.visibleAt) {
		return nil, false
	}
	return rec, true
}

// AddInstance adds an instance; an empty ID gets a fresh one. Defaults are
// filled as for fixtures and references are checked. With a visibility delay
// set, Describe* calls do not see it until the delay has passed.
func (s *Server) AddInstance(in Instance) error {
	e := s.ec2
	e.mu.Lock()
	defer e.mu.Unlock()
	in = in.clone()
	if in.ID == "" {
		in.ID = e.newID("i")
	}
	if !strings.HasPrefix(in.ID, "i-") {
		return fmt.Errorf("awsemu: instance id %q must start with \"i-\"", in.ID)
	}
	if _, dup := e.instances.get(in.ID); dup {
		return fmt.Errorf("awsemu: instance %s already exists", in.ID)
	}
	sn, _ := e.subnets.get(in.SubnetID)
	in.applyDefaults(e.region, sn, time.Now().UTC().Truncate(time.Second))

	subnets := map[string]*Subnet{}
	for _, x := range e.subnets.list() {
		subnets[x.ID] = x
	}
	vpcs := map[string]*VPC{}
	for _, x := range e.vpcs.list() {
		vpcs[x.ID] = x
	}
	zones := map[string]bool{}
	for _, z := range e.zones {
		zones[z.Name] = true
	}
	sgs := map[string]bool{}
	for _, x := range e.securityGroups.list() {
		sgs[x.ID] = true
	}
	errs := validateInstance(&in, subnets, vpcs, zones, sgs)
	for _, eni := range in.ENIs {
		if owner, ok := e.eniOwner[eni.ID]; ok {
			errs = append(errs, fmt.Errorf("network interface %s is already attached to %s", eni.ID, owner))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("awsemu: instance %s: %w", in.ID, err)
	}
	var visibleAt time.Time
	if e.visibilityDelay > 0 {
		visibleAt = time.Now().Add(e.visibilityDelay)
	}
	e.storeInstance(in, visibleAt)
	return nil
}

// RemoveInstance deletes an instance entirely, as EC2 does about an hour
// after termination; later calls get InvalidInstanceID.NotFound.
func (s *Server) RemoveInstance(id string) error {
	e := s.ec2
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, ok := e.instances.get(id)
	if !ok {
		return fmt.Errorf("awsemu: instance %s does not exist", id)
	}
	for _, eni := range rec.ENIs {
		delete(e.eniOwner, eni.ID)
	}
	e.instances.remove(id)
	return nil
}

// SetInstanceState sets an instance's state name (pending, running,
// shutting-down, terminated, stopping, stopped). Terminated instances stay
// visible, as in EC2.
func (s *Server) SetInstanceState(id, state string) error {
	if _, ok := instanceStateCodes[state]; !ok {
		return fmt.Errorf("awsemu: invalid instance state %q", state)
	}
	e := s.ec2
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, ok := e.instances.get(id)
	if !ok {
		return fmt.Errorf("awsemu: instance %s does not exist", id)
	}
	rec.State = state
	return nil
}

// Instance returns a copy of an instance, visible to Describe* or not.
func (s *Server) Instance(id string) (Instance, bool) { return s.ec2.instance(id) }

// Instances returns copies of all instances in insertion order.
func (s *Server) Instances() []Instance {
	e := s.ec2
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]Instance, 0, len(e.instances.order))
	for _, rec := range e.instances.list() {
		out = append(out, rec.clone())
	}
	return out
}

// SetVisibilityDelay makes instances added later with AddInstance invisible
// to Describe* calls (NotFound for their IDs, absent from filtered lists)
// for d after being added, modelling EC2 eventual consistency. 0 disables it.
func (s *Server) SetVisibilityDelay(d time.Duration) {
	s.ec2.mu.Lock()
	defer s.ec2.mu.Unlock()
	s.ec2.visibilityDelay = d
}

// AddSecurityGroup adds an empty security group to a VPC of the server, as
// a user creating one outside the CCM would.
func (s *Server) AddSecurityGroup(id, name, vpcID string) error {
	e := s.ec2
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.vpcs.get(vpcID); !ok {
		return fmt.Errorf("add security group %s: no VPC %s", id, vpcID)
	}
	if _, ok := e.securityGroups.get(id); ok {
		return fmt.Errorf("add security group %s: it exists", id)
	}
	e.securityGroups.put(id, &SecurityGroup{ID: id, Name: name, Description: name, VPCID: vpcID, Tags: map[string]string{}})
	return nil
}

// SecurityGroups returns copies of all security groups (fixture groups
// included) in creation order.
func (s *Server) SecurityGroups() []SecurityGroup {
	return s.SecurityGroupsNamed("")
}

// SecurityGroupsNamed returns copies of the security groups whose name
// starts with prefix, in creation order.
func (s *Server) SecurityGroupsNamed(prefix string) []SecurityGroup {
	e := s.ec2
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := []SecurityGroup{}
	for _, sg := range e.securityGroups.list() {
		if strings.HasPrefix(sg.Name, prefix) {
			out = append(out, sg.clone())
		}
	}
	return out
}

// copyOf returns f of the resource id of t, read under the lock: other
// services get copies, never the stored records.
func copyOf[T, R any](s *ec2State, t *table[T], id string, f func(*T) R) (R, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	x, ok := t.get(id)
	if !ok {
		var zero R
		return zero, false
	}
	return f(x), true
}

// instance returns a copy of an instance, visible to Describe* or not.
func (s *ec2State) instance(id string) (Instance, bool) {
	return copyOf(s, &s.instances, id, (*instanceRec).clone)
}

// instanceStatus returns an instance's VPC and state name, visible to
// Describe* or not: what load balancers check of their instances.
func (s *ec2State) instanceStatus(id string) (vpcID, state string, ok bool) {
	st, ok := copyOf(s, &s.instances, id, func(r *instanceRec) [2]string { return [2]string{r.VPCID, r.State} })
	return st[0], st[1], ok
}

func (s *ec2State) subnet(id string) (Subnet, bool) {
	return copyOf(s, &s.subnets, id, (*Subnet).clone)
}

func (s *ec2State) vpc(id string) (VPC, bool) { return copyOf(s, &s.vpcs, id, (*VPC).clone) }

func (s *ec2State) securityGroup(id string) (SecurityGroup, bool) {
	return copyOf(s, &s.securityGroups, id, (*SecurityGroup).clone)
}

// securityGroupNames returns the name of each group ("" for an unknown one).
func (s *ec2State) securityGroupNames(ids []string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, g := range s.xmlGroups(ids) {
		out = append(out, g.GroupName)
	}
	return out
}

// securityGroupCount counts all security groups.
func (s *ec2State) securityGroupCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.securityGroups.order)
}
