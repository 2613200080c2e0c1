package awsemu

import (
	"fmt"
	"time"
)

// hiddenUntil is the visibility time of a hidden instance: far enough in
// the future that no test outlives it.
var hiddenUntil = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// HideInstances makes instances invisible to Describe* calls (absent from
// filtered lists, InvalidInstanceID.NotFound by ID) until ShowInstances,
// while every call still succeeds. That is what a CCM sees when its cloud
// config names the wrong region or VPC, or its credentials are another
// account's: nothing fails, nothing is found. No IDs hides every instance
// there is now; instances added later are visible.
func (s *Server) HideInstances(ids ...string) error {
	return s.setVisibleAt(hiddenUntil, ids)
}

// ShowInstances undoes HideInstances (and any pending visibility delay) for
// ids, or for every instance when there are none.
func (s *Server) ShowInstances(ids ...string) error {
	return s.setVisibleAt(time.Time{}, ids)
}

func (s *Server) setVisibleAt(at time.Time, ids []string) error {
	e := s.ec2
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(ids) == 0 {
		for _, rec := range e.instances.list() {
			rec.visibleAt = at
		}
		return nil
	}
	// Check every ID first so a typo changes nothing.
	recs := make([]*instanceRec, 0, len(ids))
	for _, id := range ids {
		rec, ok := e.instances.get(id)
		if !ok {
			return fmt.Errorf("awsemu: instance %s does not exist", id)
		}
		recs = append(recs, rec)
	}
	for _, rec := range recs {
		rec.visibleAt = at
	}
	return nil
}
