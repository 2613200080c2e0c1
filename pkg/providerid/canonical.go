package providerid

import (
	"errors"
	"fmt"
	"strings"
)

// canonicalHint is the form ParseCanonical wants, with an example.
const canonicalHint = "want aws:///<zone>/<instance-id>, e.g. aws:///us-east-1a/i-0123456789abcdef0"

// ParseCanonical accepts only the canonical form aws:///<zone>/<instance-id>,
// the one a kubelet's --provider-id should carry (what the CCM itself
// writes). Every error has the same shape, `providerID "<s>": want
// aws:///<zone>/<instance-id>, e.g. …: <what is wrong>`, whatever the input,
// so a bare instance ID and a malformed one are told the same thing.
func ParseCanonical(s string) (ID, error) {
	fail := func(why string) (ID, error) {
		return ID{}, fmt.Errorf("providerID %q: %s: %s", s, canonicalHint, why)
	}
	rest, ok := strings.CutPrefix(s, Scheme+":///")
	if !ok {
		return fail("it does not start with " + Scheme + ":///")
	}
	zone, instance, ok := strings.Cut(rest, "/")
	switch {
	case !ok || strings.Contains(instance, "/"):
		return fail("want exactly a zone and an instance ID after " + Scheme + ":///")
	case zone == "":
		return fail("the zone is missing")
	case !zonePattern.MatchString(zone):
		return fail(fmt.Sprintf("%q is not an availability zone name", zone))
	case !IsInstanceID(instance):
		return fail(fmt.Sprintf("%q is not an EC2 instance ID (i- and 8 or 17 hex digits)", instance))
	}
	return ID{Zone: zone, InstanceID: instance}, nil
}

// ErrNotCanonical is ParseCanonicalOrZoneless's error for a providerID
// Parse accepts in a spelling other than aws:///<zone>/<instance-id> or
// aws:////<instance-id>.
var ErrNotCanonical = errors.New("want the canonical aws:///<zone>/<instance-id>")

// ParseCanonicalOrZoneless accepts the providerIDs a kubelet should register
// a Node with: the canonical aws:///<zone>/<instance-id>, or
// aws:////<instance-id> without the zone, which the CCM accepts and
// resolves from the instance (so such a Node needs no re-registration).
// The other spellings Parse allows (aws://<zone>/<id>, a bare instance ID)
// are not what a Node should carry: they fail with ErrNotCanonical. Any
// other input fails with Parse's error.
func ParseCanonicalOrZoneless(s string) (ID, error) {
	id, err := Parse(s)
	if err != nil {
		return ID{}, err
	}
	if id.String() != s {
		return ID{}, ErrNotCanonical
	}
	return id, nil
}
