package install

import (
	"regexp"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
)

// imageReference is the distribution reference grammar
// (github.com/distribution/reference regexp.go, what the kubelet and
// containerd parse images with): [domain/]path[:tag][@digest].
var imageReference = func() *regexp.Regexp {
	const (
		alnum      = `[a-z0-9]+`
		separator  = `(?:[._]|__|[-]+)`
		component  = alnum + `(?:` + separator + alnum + `)*`
		domainPart = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		domain     = `(?:` + domainPart + `(?:\.` + domainPart + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?`
		tag        = `[\w][\w.-]{0,127}`
		digest     = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^(?:` + domain + `/)?` + component + `(?:/` + component + `)*` +
		`(?P<tag>:` + tag + `)?(?P<digest>@` + digest + `)?$`)
}()

// maxImageNameLength is the reference grammar's limit on the name part.
const maxImageNameLength = 255

// ValidateImage checks a CCM image reference the way every install target
// (manifests, apply, kops) needs it: a reference the kubelet can pull, with
// a tag or digest. The error is a *fielderr.Error on field "image", so the
// commands can name their flag.
func ValidateImage(image string) error {
	m := imageReference.FindStringSubmatch(image)
	switch {
	case image == "":
		return fielderr.Errorf("image", " %q: empty; want [registry/]repository:tag or @sha256:digest, e.g. %s", image, DefaultImage())
	case m == nil:
		return fielderr.Errorf("image", " %q: not an image reference; want [registry/]repository:tag or @sha256:digest, e.g. %s", image, DefaultImage())
	case m[imageReference.SubexpIndex("tag")] == "" && m[imageReference.SubexpIndex("digest")] == "":
		return fielderr.Errorf("image", " %q: pin a tag or digest (an untagged image means :latest, which changes under the cluster)", image)
	}
	if name := splitImage(image).Repository; len(name) > maxImageNameLength {
		return fielderr.Errorf("image", ": the repository name is %d characters long, at most %d are allowed", len(name), maxImageNameLength)
	}
	return nil
}
