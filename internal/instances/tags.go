package instances

import (
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// keptTags returns the tags whose keys are in keys: a view of 5,000
// instances keeps a few keys each, not every tag EC2 returns.
func keptTags(tags []ec2types.Tag, keys []string) map[string]string {
	var out map[string]string
	for _, t := range tags {
		k := aws.ToString(t.Key)
		if !slices.Contains(keys, k) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(keys))
		}
		out[k] = aws.ToString(t.Value)
	}
	return out
}

// HasTags reports whether the instance carries every tag of want with its
// value. Only keys kept by the view (Options.TagKeys) can match.
func (i *Instance) HasTags(want map[string]string) bool {
	for k, v := range want {
		if got, ok := i.Tags[k]; !ok || got != v {
			return false
		}
	}
	return true
}
