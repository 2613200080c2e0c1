package kubeadmconfig

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
)

// Which kubeadm minors read which configuration API (kubeadm's own release
// notes: v1beta3 arrived in 1.22, v1beta4 in 1.31 (kubernetes/kubernetes#125029),
// and 1.36 removed v1beta3 (kubernetes/kubernetes#136016), so 1.35 is the
// last kubeadm that reads it).
var (
	v1beta3Since = version.MajorMinor(1, 22)
	v1beta3Until = version.MajorMinor(1, 35) // last minor that reads it
	v1beta4Since = version.MajorMinor(1, 31)
)

// shortVersion is a version kubeadm would refuse only for its form: 1.31
// or v1.31, without the patch.
var shortVersion = regexp.MustCompile(`^v?[0-9]+\.[0-9]+$`)

// NormalizeVersion returns s as kubeadm's kubernetesVersion wants it:
// v<major>.<minor>.<patch>[-pre][+build]. kubeadm refuses "1.31", so a
// missing "v" is added and a missing patch becomes .0 (1.31 → v1.31.0).
// Labels such as stable or latest are refused: the version picks the API
// version, so it must be a version.
func NormalizeVersion(s string) (string, error) {
	n := s
	if shortVersion.MatchString(n) {
		n += ".0"
	}
	if len(n) > 0 && n[0] != 'v' {
		n = "v" + n
	}
	v, err := version.ParseSemantic(n)
	if err != nil {
		return "", fielderr.Errorf(FieldKubernetesVersion, " %q: want a version such as v1.37.1 or 1.37 (labels like stable are not accepted): %w", s, err)
	}
	return "v" + v.String(), nil
}

// reads reports whether kubeadm of minor v reads apiVersion.
func reads(v *version.Version, apiVersion string) bool {
	mm := version.MajorMinor(v.Major(), v.Minor())
	switch apiVersion {
	case V1beta3:
		return mm.AtLeast(v1beta3Since) && mm.LessThan(v1beta3Until.AddMinor(1))
	case V1beta4:
		return mm.AtLeast(v1beta4Since)
	}
	return false
}

// readers describes which kubeadm minors read apiVersion, for messages.
func readers(apiVersion string) string {
	if apiVersion == V1beta3 {
		return fmt.Sprintf("kubeadm %d.%d to %d.%d read it", v1beta3Since.Major(), v1beta3Since.Minor(), v1beta3Until.Major(), v1beta3Until.Minor())
	}
	return fmt.Sprintf("kubeadm %d.%d and later read it", v1beta4Since.Major(), v1beta4Since.Minor())
}
