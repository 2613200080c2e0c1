package routes

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseClusterCIDRs parses --cluster-cidr: one CIDR, or two of different
// families (dual stack), comma-separated, as the route controller accepts
// them. Empty gives none.
func ParseClusterCIDRs(s string) ([]netip.Prefix, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("--cluster-cidr=%q: %q is not a CIDR: %w\nfix: pass the cluster's pod CIDR, e.g. --cluster-cidr=10.244.0.0/16, or an IPv4 and an IPv6 one, comma-separated", s, strings.TrimSpace(f), err)
		}
		out = append(out, p.Masked())
	}
	switch {
	case len(out) > 2:
		return nil, fmt.Errorf("--cluster-cidr=%q: at most two CIDRs (one IPv4, one IPv6) are allowed", s)
	case len(out) == 2 && out[0].Addr().Is4() == out[1].Addr().Is4():
		return nil, fmt.Errorf("--cluster-cidr=%q: two CIDRs must be of different families (dual stack)", s)
	}
	return out, nil
}
