package lb

import (
	"time"

	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The service controller deletes a load balancer in one sync: GetLoadBalancer,
// then, if it exists, EnsureLoadBalancerDeleted, at once and on the same
// worker (no other sync of the Service runs in between). Delete reuses what
// that Get just described instead of describing both load balancer types a
// second time: two to three calls fewer per deleted Service.

// lookupMaxAge bounds how old a Get's result may be for Delete to reuse it.
// The two calls are milliseconds apart; anything older (a Get whose Delete
// never came, a Delete called on its own) describes afresh.
const lookupMaxAge = 10 * time.Second

// lookup is what Get found for one Service.
type lookup struct {
	at  time.Time
	uid types.UID
	// classic is the Classic load balancer, nil when absent.
	classic *elbtypes.LoadBalancerDescription
	// nlb is the NLB, nil when absent or not looked up (nlbKnown false:
	// Get stops at a Classic load balancer).
	nlb      *elbv2types.LoadBalancer
	nlbKnown bool
}

// rememberLookup records what Get found for svc, and forgets lookups too
// old to be reused.
func (r *Reconciler) rememberLookup(name string, svc *corev1.Service, l lookup) {
	now := r.Clock.Now()
	l.at, l.uid = now, svc.UID
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, old := range r.lookups {
		if now.Sub(old.at) > lookupMaxAge {
			delete(r.lookups, k)
		}
	}
	r.lookups[name] = l
}

// forgetLookup drops what Get found for the load balancer called name:
// Ensure and Update call it before they change anything, so a Delete that
// follows them never trusts a Get from before.
func (r *Reconciler) forgetLookup(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.lookups, name)
}

// takeLookup returns, once, what Get found for svc moments ago; nil when
// there is nothing fresh for this very Service (same name and UID).
func (r *Reconciler) takeLookup(name string, svc *corev1.Service) *lookup {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.lookups[name]
	if !ok {
		return nil
	}
	delete(r.lookups, name)
	if l.uid != svc.UID || r.Clock.Since(l.at) > lookupMaxAge {
		return nil
	}
	return &l
}
