package awsemu

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IMDSv2 headers.
const (
	imdsTokenHeader    = "X-Aws-Ec2-Metadata-Token"
	imdsTokenTTLHeader = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"
)

// serveIMDS answers the instance metadata service; path is below /latest/.
func (s *Server) serveIMDS(w http.ResponseWriter, r *http.Request, path string) {
	s.countCall("imds", path)
	if apiErr, ok := s.applyFault(r.Context(), "imds", path, 0); !ok {
		return
	} else if apiErr != nil {
		http.Error(w, apiErr.Code, apiErr.Status)
		return
	}
	s.mu.RLock()
	available := s.imdsAvailable
	s.mu.RUnlock()
	if !available {
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	if path == "api/token" {
		s.imdsToken(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec, haveInstance := s.instances.get(s.imdsInstance)
	if !s.imdsAuthorized(r, rec) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if !haveInstance {
		http.NotFound(w, r)
		return
	}
	body, ok := s.imdsLookup(&rec.Instance, strings.TrimSuffix(path, "/"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	if strings.HasPrefix(path, "dynamic/") && strings.HasSuffix(path, "/document") {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/plain")
	}
	_, _ = w.Write([]byte(body))
}

// imdsToken serves PUT /latest/api/token.
func (s *Server) imdsToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	ttl, err := strconv.Atoi(r.Header.Get(imdsTokenTTLHeader))
	if err != nil || ttl < 1 || ttl > 21600 {
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token := base64.StdEncoding.EncodeToString(b)
	now := time.Now()
	s.mu.Lock()
	if len(s.imdsTokens) > 1000 {
		for t, exp := range s.imdsTokens {
			if now.After(exp) {
				delete(s.imdsTokens, t)
			}
		}
	}
	s.imdsTokens[token] = now.Add(time.Duration(ttl) * time.Second)
	s.mu.Unlock()
	w.Header().Set(imdsTokenTTLHeader, strconv.Itoa(ttl))
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(token))
}

// imdsAuthorized checks the session token. Without a token the request is
// allowed only if the instance has httpTokens "optional" (IMDSv1). Callers
// hold s.mu.
func (s *Server) imdsAuthorized(r *http.Request, rec *instanceRec) bool {
	token := r.Header.Get(imdsTokenHeader)
	if token == "" {
		return rec != nil && rec.HTTPTokens == "optional"
	}
	exp, ok := s.imdsTokens[token]
	return ok && time.Now().Before(exp)
}

// imdsLookup returns the value of a metadata leaf, or the listing of a
// directory (children one per line, directories with a trailing "/").
// Callers hold s.mu.
func (s *Server) imdsLookup(in *Instance, path string) (string, bool) {
	tree := s.imdsTree(in)
	if v, ok := tree[path]; ok {
		return v, true
	}
	var children []string
	for k := range tree {
		rest, ok := strings.CutPrefix(k, path+"/")
		if !ok {
			continue
		}
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[:i+1]
		}
		if !slices.Contains(children, rest) {
			children = append(children, rest)
		}
	}
	if len(children) == 0 {
		return "", false
	}
	slices.Sort(children)
	return strings.Join(children, "\n"), true
}

// imdsTree returns every metadata leaf of an instance keyed by its path
// below /latest/. Callers hold s.mu.
func (s *Server) imdsTree(in *Instance) map[string]string {
	m := map[string]string{}
	md := func(k, v string) {
		if v != "" {
			m["meta-data/"+k] = v
		}
	}
	md("ami-id", in.ImageID)
	md("ami-launch-index", "0")
	md("instance-id", in.ID)
	md("instance-type", in.Type)
	md("instance-life-cycle", "on-demand")
	md("reservation-id", in.ReservationID)
	md("hostname", in.PrivateDNSName)
	md("local-hostname", in.PrivateDNSName)
	md("local-ipv4", in.PrivateIP)
	md("public-hostname", in.PublicDNSName)
	md("public-ipv4", in.PublicIP)
	md("placement/availability-zone", in.AvailabilityZone)
	md("placement/availability-zone-id", s.zoneID(in.AvailabilityZone))
	md("placement/region", s.region)
	md("services/domain", "amazonaws.com")
	md("services/partition", "aws")
	var sgNames []string
	for _, g := range s.xmlGroups(in.SecurityGroupIDs) {
		sgNames = append(sgNames, g.GroupName)
	}
	md("security-groups", strings.Join(sgNames, "\n"))
	if in.IAMInstanceProfileArn != "" {
		info, _ := json.Marshal(map[string]string{"Code": "Success", "InstanceProfileArn": in.IAMInstanceProfileArn,
			"InstanceProfileId": "AIPAEMULATOR" + in.ID[2:], "LastUpdated": ec2Time(in.LaunchTime)})
		md("iam/info", string(info))
	}
	for _, e := range in.ENIs {
		if e.DeviceIndex == 0 {
			md("mac", e.MAC)
		}
		p := "network/interfaces/macs/" + e.MAC + "/"
		md(p+"mac", e.MAC)
		md(p+"device-number", strconv.Itoa(int(e.DeviceIndex)))
		md(p+"interface-id", e.ID)
		md(p+"owner-id", s.account)
		md(p+"security-group-ids", strings.Join(in.SecurityGroupIDs, "\n"))
		md(p+"local-ipv4s", strings.Join(e.PrivateIPs, "\n"))
		md(p+"ipv6s", strings.Join(e.IPv6, "\n"))
		if len(e.PrivateIPs) > 0 {
			md(p+"local-hostname", privateDNSName(e.PrivateIPs[0], s.region))
		}
		if e.DeviceIndex == 0 && in.PublicIP != "" {
			md(p+"public-ipv4s", in.PublicIP)
			md(p+"public-hostname", in.PublicDNSName)
		}
		if sn, ok := s.subnets.get(e.SubnetID); ok {
			md(p+"subnet-id", sn.ID)
			md(p+"subnet-ipv4-cidr-block", sn.CIDR)
			md(p+"vpc-id", sn.VPCID)
			if v, ok := s.vpcs.get(sn.VPCID); ok {
				md(p+"vpc-ipv4-cidr-block", v.CIDR)
				md(p+"vpc-ipv4-cidr-blocks", v.CIDR)
			}
		} else {
			md(p+"subnet-id", e.SubnetID)
			md(p+"vpc-id", in.VPCID)
		}
	}
	doc, _ := json.MarshalIndent(map[string]any{
		"accountId":        s.account,
		"architecture":     "x86_64",
		"availabilityZone": in.AvailabilityZone,
		"imageId":          in.ImageID,
		"instanceId":       in.ID,
		"instanceType":     in.Type,
		"pendingTime":      in.LaunchTime.UTC().Format(time.RFC3339),
		"privateIp":        in.PrivateIP,
		"region":           s.region,
		"version":          "2017-09-30",
	}, "", "  ")
	m["dynamic/instance-identity/document"] = string(doc)
	return m
}
