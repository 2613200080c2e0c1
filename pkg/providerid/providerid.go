package providerid

import (
	"fmt"
	"regexp"
	"strings"
)

// Scheme is the providerID scheme of the AWS cloud provider (wire contract).
const Scheme = "aws"

// instanceIDPattern matches EC2 instance IDs: "i-" then 8 or 17 hex digits.
var instanceIDPattern = regexp.MustCompile(`^i-[0-9a-f]{8}([0-9a-f]{9})?$`)

// ID is a parsed providerID.
type ID struct {
	// Zone is the availability zone, empty when the providerID did not carry one.
	Zone string
	// InstanceID is the EC2 instance ID, e.g. i-0123456789abcdef0.
	InstanceID string
}

// String renders the canonical form aws:///<zone>/<instance-id>.
func (id ID) String() string { return Format(id.Zone, id.InstanceID) }

// Format renders the canonical providerID aws:///<zone>/<instance-id>.
func Format(zone, instanceID string) string {
	return fmt.Sprintf("%s:///%s/%s", Scheme, zone, instanceID)
}

// IsInstanceID reports whether s is a well-formed EC2 instance ID.
func IsInstanceID(s string) bool { return instanceIDPattern.MatchString(s) }

// Parse accepts the forms the in-tree and upstream providers accept:
// aws:///<zone>/<id>, aws:////<id> (no zone), aws://<zone>/<id> and a bare
// instance ID. Anything else is an error that says what was expected.
func Parse(providerID string) (ID, error) {
	s := strings.TrimSpace(providerID)
	if s == "" {
		return ID{}, fmt.Errorf("providerID is empty")
	}
	if !strings.Contains(s, "://") {
		if IsInstanceID(s) {
			return ID{InstanceID: s}, nil
		}
		return ID{}, fmt.Errorf("providerID %q: want aws:///<zone>/<instance-id> or a bare instance ID", providerID)
	}
	scheme, rest, _ := strings.Cut(s, "://")
	if scheme != Scheme {
		return ID{}, fmt.Errorf("providerID %q: scheme %q is not %q", providerID, scheme, Scheme)
	}
	// rest is "/<zone>/<id>", "//<id>" or "<zone>/<id>".
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	var zone, instance string
	switch len(parts) {
	case 2:
		zone, instance = parts[0], parts[1]
	case 1:
		instance = parts[0]
	default:
		return ID{}, fmt.Errorf("providerID %q: want aws:///<zone>/<instance-id>", providerID)
	}
	if !IsInstanceID(instance) {
		return ID{}, fmt.Errorf("providerID %q: %q is not an EC2 instance ID (i-<hex>)", providerID, instance)
	}
	if zone != "" && !zonePattern.MatchString(zone) {
		return ID{}, fmt.Errorf("providerID %q: %q is not an availability zone name", providerID, zone)
	}
	return ID{Zone: zone, InstanceID: instance}, nil
}

// zonePattern matches AZ names, including Local and Wavelength zones
// (us-east-1a, us-west-2-lax-1a, us-east-1-wl1-bos-wlz-1).
var zonePattern = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+$`)

// InstanceIDFromNodeName returns the instance ID of a resource-based node
// name ("i-0123456789abcdef0" or "i-0123456789abcdef0.us-east-1.compute.internal").
func InstanceIDFromNodeName(name string) (string, bool) {
	head, _, _ := strings.Cut(name, ".")
	if IsInstanceID(head) {
		return head, true
	}
	return "", false
}
