package awsemu

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// AddTags, RemoveTags and DescribeTags of both load-balancing APIs, and
// the Tags parameter of their create calls.

// elbMaxTags is how many tags one load balancer (Classic or ELBv2) holds.
const elbMaxTags = 50

type xmlLBTag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

func xmlLBTags(tags map[string]string) []xmlLBTag {
	out := make([]xmlLBTag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, xmlLBTag{Key: k, Value: tags[k]})
	}
	return out
}

// xmlLBTagDescription is one TagDescriptions member: Classic names the
// load balancer, ELBv2 the resource's ARN.
type xmlLBTagDescription struct {
	LoadBalancerName string     `xml:"LoadBalancerName,omitempty"`
	ResourceArn      string     `xml:"ResourceArn,omitempty"`
	Tags             []xmlLBTag `xml:"Tags>member"`
}

type lbDescribeTagsResult struct {
	TagDescriptions []xmlLBTagDescription `xml:"TagDescriptions>member"`
}

// parseLBTags decodes Tags.member.N (Key, Value).
func parseLBTags(form url.Values) ([]xmlLBTag, *apiError) {
	const param = "Tags"
	var out []xmlLBTag
	seen := map[string]bool{}
	for _, n := range indexedKeys(form, param+".member") {
		p := param + ".member." + strconv.Itoa(n)
		t := xmlLBTag{Key: form.Get(p + ".Key"), Value: form.Get(p + ".Value")}
		switch {
		case t.Key == "" || len(t.Key) > 128 || len(t.Value) > 256:
			return nil, errELBValidation("Tag key must be 1-128 characters and value at most 256 characters")
		case strings.HasPrefix(strings.ToLower(t.Key), "aws:"):
			return nil, errELBValidation("Tag keys starting with 'aws:' are reserved")
		case seen[t.Key]:
			return nil, newAPIError(http.StatusBadRequest, "DuplicateTagKeys", "Tag key '%s' is duplicated", t.Key)
		}
		seen[t.Key] = true
		out = append(out, t)
	}
	return out, nil
}

// addLBTags merges tags into m, enforcing the per-resource limit.
func addLBTags(m *map[string]string, tags []xmlLBTag) *apiError {
	n := len(*m)
	for _, t := range tags {
		if _, ok := (*m)[t.Key]; !ok {
			n++
		}
	}
	if n > elbMaxTags {
		return newAPIError(http.StatusBadRequest, "TooManyTags", "The quota for the number of tags that can be assigned to a load balancer has been reached")
	}
	if *m == nil {
		*m = map[string]string{}
	}
	for _, t := range tags {
		(*m)[t.Key] = t.Value
	}
	return nil
}

// lbTagger serves AddTags, RemoveTags and DescribeTags, which Classic ELB
// and ELBv2 define alike: 1 to 20 resources a call, all found before
// anything changes (the first unknown one fails the whole call), at most
// 50 tags a resource. The APIs differ in wire names and in what a
// resource is: a Classic load balancer by name; an ELBv2 load balancer,
// target group or listener by ARN.
type lbTagger struct {
	s *elbState
	// resources is the list parameter naming the resources:
	// LoadBalancerNames or ResourceArns.
	resources string
	// keys is RemoveTags' list of keys, Tags or TagKeys, and keysOf
	// decodes it (Tags.member.N.Key or TagKeys.member.N).
	keys   string
	keysOf func(url.Values) []string
	// find returns the tags of one resource. Callers hold s.mu.
	find func(id string) (*map[string]string, *apiError)
	// entry renders one TagDescriptions member.
	entry func(id string, tags []xmlLBTag) xmlLBTagDescription
}

func (s *elbState) classicTagger() lbTagger {
	return lbTagger{
		s: s, resources: "LoadBalancerNames", keys: "Tags",
		keysOf: func(form url.Values) []string {
			var keys []string
			for _, n := range indexedKeys(form, "Tags.member") {
				keys = append(keys, form.Get("Tags.member."+strconv.Itoa(n)+".Key"))
			}
			return keys
		},
		find: func(name string) (*map[string]string, *apiError) {
			if lb, ok := s.classic.get(name); ok {
				return &lb.Tags, nil
			}
			return nil, errLBNotFound("There is no ACTIVE Load Balancer named '%s'", name)
		},
		entry: func(name string, tags []xmlLBTag) xmlLBTagDescription {
			return xmlLBTagDescription{LoadBalancerName: name, Tags: tags}
		},
	}
}

func (s *elbState) v2Tagger() lbTagger {
	return lbTagger{
		s: s, resources: "ResourceArns", keys: "TagKeys",
		keysOf: func(form url.Values) []string { return memberValues(form, "TagKeys") },
		find: func(arn string) (*map[string]string, *apiError) {
			switch elbv2Resource(arn) {
			case "loadbalancer":
				if lb, ok := s.v2.get(arn); ok {
					return &lb.Tags, nil
				}
				return nil, errLBNotFound("Load balancer '%s' not found", arn)
			case "targetgroup":
				if tg, ok := s.targetGroups.get(arn); ok {
					return &tg.Tags, nil
				}
				return nil, errTargetGroupNotFound()
			case "listener":
				if l, ok := s.listeners.get(arn); ok {
					return &l.Tags, nil
				}
				return nil, errListenerNotFound()
			}
			return nil, errELBValidation("'%s' is not a valid ARN of a taggable resource", arn)
		},
		entry: func(arn string, tags []xmlLBTag) xmlLBTagDescription {
			return xmlLBTagDescription{ResourceArn: arn, Tags: tags}
		},
	}
}

// ids decodes and counts the resources of a request.
func (t lbTagger) ids(form url.Values) ([]string, *apiError) {
	ids := memberValues(form, t.resources)
	return ids, checkCount(strings.ToLower(t.resources[:1])+t.resources[1:], ids, elbMaxTagResources)
}

// targets finds the tags of each resource, once per resource, in request
// order. Callers hold t.s.mu.
func (t lbTagger) targets(ids []string) (uniq []string, tags []*map[string]string, apiErr *apiError) {
	for _, id := range ids {
		m, apiErr := t.find(id)
		if apiErr != nil {
			return nil, nil, apiErr
		}
		if !slices.Contains(uniq, id) {
			uniq, tags = append(uniq, id), append(tags, m)
		}
	}
	return uniq, tags, nil
}

func (t lbTagger) describe(form url.Values) (any, *apiError) {
	ids, apiErr := t.ids(form)
	if apiErr != nil {
		return nil, apiErr
	}
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	ids, tags, apiErr := t.targets(ids)
	if apiErr != nil {
		return nil, apiErr
	}
	var res lbDescribeTagsResult
	for i, id := range ids {
		res.TagDescriptions = append(res.TagDescriptions, t.entry(id, xmlLBTags(*tags[i])))
	}
	return res, nil
}

func (t lbTagger) add(form url.Values) (any, *apiError) {
	ids, apiErr := t.ids(form)
	if apiErr != nil {
		return nil, apiErr
	}
	add, apiErr := parseLBTags(form)
	if apiErr != nil {
		return nil, apiErr
	}
	if len(add) == 0 {
		return nil, errELBValidation("Tags must not be empty")
	}
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	_, tags, apiErr := t.targets(ids)
	if apiErr != nil {
		return nil, apiErr
	}
	for _, m := range tags { // check every limit before changing anything
		probe := maps.Clone(*m)
		if apiErr := addLBTags(&probe, add); apiErr != nil {
			return nil, apiErr
		}
	}
	for _, m := range tags {
		_ = addLBTags(m, add)
	}
	return struct{}{}, nil
}

func (t lbTagger) remove(form url.Values) (any, *apiError) {
	ids, apiErr := t.ids(form)
	if apiErr != nil {
		return nil, apiErr
	}
	keys := t.keysOf(form)
	if len(keys) == 0 {
		return nil, errELBValidation("%s must not be empty", t.keys)
	}
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	_, tags, apiErr := t.targets(ids)
	if apiErr != nil {
		return nil, apiErr
	}
	for _, m := range tags {
		for _, k := range keys {
			delete(*m, k)
		}
	}
	return struct{}{}, nil
}
