package awsemu

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// IMDSv2 headers.
const (
	imdsTokenHeader    = "X-Aws-Ec2-Metadata-Token"
	imdsTokenTTLHeader = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"
)

// imdsState is the instance metadata service of one instance (read from
// EC2 on every request) and the session tokens it handed out.
type imdsState struct {
	*common
	ec2 *ec2State

	mu        sync.RWMutex // guards the state below
	instance  string       // the instance IMDS answers as
	available bool
	tokens    map[string]time.Time // token -> expiry
}

// SetIMDSInstance selects which instance IMDS answers as.
func (s *Server) SetIMDSInstance(id string) {
	s.imds.mu.Lock()
	defer s.imds.mu.Unlock()
	s.imds.instance = id
}

// SetIMDSAvailable turns IMDS on or off; when off every IMDS request gets
// HTTP 503.
func (s *Server) SetIMDSAvailable(available bool) {
	s.imds.mu.Lock()
	defer s.imds.mu.Unlock()
	s.imds.available = available
}

// serve answers one request as instance as ("" means the one
// SetIMDSInstance chose); path is below /latest/.
func (s *imdsState) serve(w http.ResponseWriter, r *http.Request, path, as string) {
	s.mu.RLock()
	available, id := s.available, s.instance
	s.mu.RUnlock()
	if as != "" {
		id = as
	}
	if !available {
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	if path == "api/token" {
		s.token(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	in, haveInstance := s.ec2.instance(id)
	if !s.authorized(r, in, haveInstance) {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if !haveInstance {
		http.NotFound(w, r)
		return
	}
	body, ok := s.lookup(&in, strings.TrimSuffix(path, "/"))
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

// token serves PUT /latest/api/token.
func (s *imdsState) token(w http.ResponseWriter, r *http.Request) {
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
	if len(s.tokens) > 1000 {
		for t, exp := range s.tokens {
			if now.After(exp) {
				delete(s.tokens, t)
			}
		}
	}
	s.tokens[token] = now.Add(time.Duration(ttl) * time.Second)
	s.mu.Unlock()
	w.Header().Set(imdsTokenTTLHeader, strconv.Itoa(ttl))
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(token))
}

// authorized checks the session token. Without a token the request is
// allowed only if the instance has httpTokens "optional" (IMDSv1).
func (s *imdsState) authorized(r *http.Request, in Instance, haveInstance bool) bool {
	token := r.Header.Get(imdsTokenHeader)
	if token == "" {
		return haveInstance && in.HTTPTokens == "optional"
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	exp, ok := s.tokens[token]
	return ok && time.Now().Before(exp)
}

// imdsLookup returns the value of a metadata leaf, or the listing of a
// directory (children one per line, directories with a trailing "/").
func (s *imdsState) lookup(in *Instance, path string) (string, bool) {
	tree := s.tree(in)
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
// below /latest/.
func (s *imdsState) tree(in *Instance) map[string]string {
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
	md("security-groups", strings.Join(s.ec2.securityGroupNames(in.SecurityGroupIDs), "\n"))
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
		if sn, ok := s.ec2.subnet(e.SubnetID); ok {
			md(p+"subnet-id", sn.ID)
			md(p+"subnet-ipv4-cidr-block", sn.CIDR)
			md(p+"vpc-id", sn.VPCID)
			if v, ok := s.ec2.vpc(sn.VPCID); ok {
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
