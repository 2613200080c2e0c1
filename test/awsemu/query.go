package awsemu

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// indexedKeys returns the N of every "prefix.N..." key, ascending.
func indexedKeys(form url.Values, prefix string) []int {
	prefix += "."
	seen := map[int]bool{}
	for k := range form {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			rest = rest[:i]
		}
		if n, err := strconv.Atoi(rest); err == nil && n > 0 {
			seen[n] = true
		}
	}
	idx := make([]int, 0, len(seen))
	for n := range seen {
		idx = append(idx, n)
	}
	slices.Sort(idx)
	return idx
}

// indexedValues returns the values of prefix.1, prefix.2, ... (ec2query
// lists such as InstanceId.N) in index order.
func indexedValues(form url.Values, prefix string) []string {
	var out []string
	for _, n := range indexedKeys(form, prefix) {
		if v, ok := form[prefix+"."+strconv.Itoa(n)]; ok && len(v) > 0 {
			out = append(out, v[0])
		}
	}
	return out
}

// memberValues returns an awsQuery list such as Names.member.N.
func memberValues(form url.Values, prefix string) []string {
	return indexedValues(form, prefix+".member")
}

// filter is one EC2 Filter.N: values are ORed, filters are ANDed.
type filter struct {
	Name   string
	Values []string
}

// parseFilters decodes Filter.N.Name / Filter.N.Value.M and rejects names not
// in known (a known entry ending in ':' is a prefix such as "tag:").
func parseFilters(form url.Values, known ...string) ([]filter, *apiError) {
	var out []filter
	for _, n := range indexedKeys(form, "Filter") {
		p := "Filter." + strconv.Itoa(n)
		f := filter{Name: form.Get(p + ".Name"), Values: indexedValues(form, p+".Value")}
		if f.Name == "" {
			return nil, errInvalidParameterValue("Filter.%d.Name is required", n)
		}
		if !slices.ContainsFunc(known, func(k string) bool {
			return k == f.Name || strings.HasSuffix(k, ":") && strings.HasPrefix(f.Name, k) && len(f.Name) > len(k)
		}) {
			return nil, errInvalidParameterValue("The filter '%s' is invalid", f.Name)
		}
		out = append(out, f)
	}
	return out, nil
}

// tagFilters are the filter names every taggable EC2 resource supports.
var tagFilters = []string{"tag:", "tag-key", "tag-value"}

// matchFilters reports whether a resource passes all filters. values returns
// the resource's values for a filter name; one matching value is enough.
func matchFilters(filters []filter, values func(name string) []string) bool {
	for _, f := range filters {
		if !slices.ContainsFunc(values(f.Name), func(v string) bool {
			return slices.ContainsFunc(f.Values, func(p string) bool { return globMatch(p, v) })
		}) {
			return false
		}
	}
	return true
}

// tagValues answers the tag:<key>, tag-key and tag-value filters.
func tagValues(tags map[string]string, name string) []string {
	switch {
	case name == "tag-key":
		return slices.Sorted(maps.Keys(tags))
	case name == "tag-value":
		var vs []string
		for _, k := range slices.Sorted(maps.Keys(tags)) {
			vs = append(vs, tags[k])
		}
		return vs
	case strings.HasPrefix(name, "tag:"):
		if v, ok := tags[name[len("tag:"):]]; ok {
			return []string{v}
		}
	}
	return nil
}

// globMatch matches s against an EC2 filter value where '*' is any run of
// characters and '?' is one character.
func globMatch(pattern, s string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// tagParam is one Tag.N of CreateTags/DeleteTags.
type tagParam struct {
	Key, Value string
	HasValue   bool
}

// parseTags decodes Tag.N.Key / Tag.N.Value.
func parseTags(form url.Values) []tagParam {
	var out []tagParam
	for _, n := range indexedKeys(form, "Tag") {
		p := "Tag." + strconv.Itoa(n)
		vals, has := form[p+".Value"]
		t := tagParam{Key: form.Get(p + ".Key"), HasValue: has}
		if has && len(vals) > 0 {
			t.Value = vals[0]
		}
		out = append(out, t)
	}
	return out
}

// pageParams decodes MaxResults (0 when absent) and NextToken.
func pageParams(form url.Values, minResults, maxResults int) (limit, offset int, apiErr *apiError) {
	if v := form.Get("MaxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < minResults || n > maxResults {
			return 0, 0, errInvalidParameterValue("Value ( %s ) for parameter maxResults is invalid. Expecting a value between %d and %d.", v, minResults, maxResults)
		}
		limit = n
	}
	if tok := form.Get("NextToken"); tok != "" {
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		n, ok := strings.CutPrefix(string(raw), "awsemu:")
		if offset, err2 := strconv.Atoi(n); err == nil && ok && err2 == nil && offset >= 0 {
			return limit, offset, nil
		}
		return 0, 0, errInvalidParameterValue("Invalid NextToken: %s", tok)
	}
	return limit, 0, nil
}

// paginate cuts one page out of items; next is "" on the last page.
func paginate[T any](items []T, limit, offset int) (page []T, next string) {
	if offset > len(items) {
		offset = len(items)
	}
	items = items[offset:]
	if limit == 0 || len(items) <= limit {
		return items, ""
	}
	return items[:limit], base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "awsemu:%d", offset+limit))
}
