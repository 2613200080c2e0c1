package awschecks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	elb "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancing/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbv2types "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/awsccmctl/awsccmctl/internal/clustertag"
	"github.com/awsccmctl/awsccmctl/internal/lbnames"
	"github.com/awsccmctl/awsccmctl/internal/preflight"
)

const (
	lbPageSize = 400 // load balancers per DescribeLoadBalancers page, the API maximum
	lbTagBatch = 20  // load balancers per DescribeTags, the API maximum
	lbClassic  = "classic"
)

// existingLB is a load balancer of the region.
type existingLB struct {
	name, arn, dnsName string
	typ                string // lbClassic, or the ELBv2 type (network, application, gateway)
	tags               map[string]string
}

func (lb *existingLB) describe() string {
	if lb.typ == lbClassic {
		return "a Classic ELB"
	}
	return "an ELBv2 " + lb.typ + " load balancer"
}

// addTagsCmd and removeTagsCmd are the AWS CLI commands changing its tags.
func (lb *existingLB) addTagsCmd(kv ...string) string {
	var pairs []string
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, fmt.Sprintf("Key=%s,Value=%s", kv[i], kv[i+1]))
	}
	if lb.typ == lbClassic {
		return fmt.Sprintf("aws elb add-tags --load-balancer-names %s --tags %s", lb.name, strings.Join(pairs, " "))
	}
	return fmt.Sprintf("aws elbv2 add-tags --resource-arns %s --tags %s", lb.arn, strings.Join(pairs, " "))
}

func (lb *existingLB) removeTagsCmd(keys ...string) string {
	if lb.typ == lbClassic {
		return fmt.Sprintf("aws elb remove-tags --load-balancer-names %s --tags Key=%s", lb.name, strings.Join(keys, " Key="))
	}
	return fmt.Sprintf("aws elbv2 remove-tags --resource-arns %s --tag-keys %s", lb.arn, strings.Join(keys, " "))
}

func (lb *existingLB) deleteCmd() string {
	if lb.typ == lbClassic {
		return "aws elb delete-load-balancer --load-balancer-name " + lb.name
	}
	return "aws elbv2 delete-load-balancer --load-balancer-arn " + lb.arn
}

// lbInventory is every load balancer of the region: Classic and ELBv2 names
// are separate namespaces, DNS names are unique.
type lbInventory struct {
	classic, v2 map[string]*existingLB // by name
	byDNS       map[string]*existingLB // by lower-case DNS name
}

// listLoadBalancers lists the region's load balancers: one paginated
// DescribeLoadBalancers per API, 400 a page. Looking names up instead would
// cost a call per missing name, since an unknown name fails the whole call.
func listLoadBalancers(ctx context.Context, c ELB, v ELBv2) (*lbInventory, error) {
	inv := &lbInventory{classic: map[string]*existingLB{}, v2: map[string]*existingLB{}, byDNS: map[string]*existingLB{}}
	add := func(m map[string]*existingLB, lb *existingLB) {
		m[lb.name] = lb
		inv.byDNS[strings.ToLower(lb.dnsName)] = lb
	}
	p := elb.NewDescribeLoadBalancersPaginator(c.DescribeLoadBalancers, &elb.DescribeLoadBalancersInput{PageSize: aws.Int32(lbPageSize)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list Classic load balancers: %w", err)
		}
		for _, d := range out.LoadBalancerDescriptions {
			add(inv.classic, &existingLB{name: aws.ToString(d.LoadBalancerName), dnsName: aws.ToString(d.DNSName), typ: lbClassic})
		}
	}
	p2 := elbv2.NewDescribeLoadBalancersPaginator(v.DescribeLoadBalancers, &elbv2.DescribeLoadBalancersInput{PageSize: aws.Int32(lbPageSize)})
	for p2.HasMorePages() {
		out, err := p2.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list ELBv2 load balancers: %w", err)
		}
		for _, lb := range out.LoadBalancers {
			add(inv.v2, &existingLB{name: aws.ToString(lb.LoadBalancerName), arn: aws.ToString(lb.LoadBalancerArn),
				dnsName: aws.ToString(lb.DNSName), typ: string(lb.Type)})
		}
	}
	return inv, nil
}

// fetchTags reads the tags of the given load balancers, 20 per call.
func fetchTags(ctx context.Context, c ELB, v ELBv2, lbs []*existingLB) error {
	var classic, arns []string
	byName, byArn := map[string]*existingLB{}, map[string]*existingLB{}
	for _, lb := range lbs {
		if lb.typ == lbClassic {
			classic, byName[lb.name] = append(classic, lb.name), lb
		} else {
			arns, byArn[lb.arn] = append(arns, lb.arn), lb
		}
	}
	for batch := range slices.Chunk(classic, lbTagBatch) {
		out, err := c.DescribeTags(ctx, &elb.DescribeTagsInput{LoadBalancerNames: batch})
		if err != nil {
			return fmt.Errorf("read the tags of %d Classic load balancers: %w", len(batch), err)
		}
		for _, d := range out.TagDescriptions {
			if lb := byName[aws.ToString(d.LoadBalancerName)]; lb != nil {
				lb.tags = classicTags(d.Tags)
			}
		}
	}
	for batch := range slices.Chunk(arns, lbTagBatch) {
		out, err := v.DescribeTags(ctx, &elbv2.DescribeTagsInput{ResourceArns: batch})
		if err != nil {
			return fmt.Errorf("read the tags of %d ELBv2 load balancers: %w", len(batch), err)
		}
		for _, d := range out.TagDescriptions {
			if lb := byArn[aws.ToString(d.ResourceArn)]; lb != nil {
				lb.tags = v2Tags(d.Tags)
			}
		}
	}
	return nil
}

func classicTags(ts []elbtypes.Tag) map[string]string {
	m := make(map[string]string, len(ts))
	for _, t := range ts {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func v2Tags(ts []elbv2types.Tag) map[string]string {
	m := make(map[string]string, len(ts))
	for _, t := range ts {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

// lbOutcome is what the CCM would do with one Service's load balancer.
// Problems come first, in report order.
type lbOutcome int

const (
	lbForeignCluster lbOutcome = iota // exists, tagged for another cluster
	lbForeignService                  // exists, its service-name tag names another Service
	lbUntagged                        // exists without this cluster's tags
	lbOtherType                       // only a load balancer of the other type has the name
	lbHostnameLost                    // the Service has a status hostname, no load balancer has its name
	lbProblems                        // outcomes below are fine
	lbAdopt                           // exists, tagged for this cluster and Service
	lbCreate                          // none yet: the CCM creates it
)

var lbOutcomeLabel = map[lbOutcome]string{
	lbForeignCluster: "load balancer tagged for another cluster",
	lbForeignService: "load balancer tagged for another Service",
	lbUntagged:       "load balancer without this cluster's tags",
	lbOtherType:      "only the other type of load balancer has the name, so the CCM would create a second one and leak the first",
	lbHostnameLost:   "status hostname but no load balancer by the name, so the CCM would create one with a new DNS name",
}

// lbService is one Service this CCM provides a load balancer for.
type lbService struct {
	svc  *corev1.Service
	key  string // <namespace>/<name>
	name string // the load balancer name
	kind lbnames.LoadBalancerKind
	// found is the load balancer of the wanted type by that name, other
	// one of the other type.
	found, other *existingLB
}

// verdict is the outcome for one Service, what to show and how to fix it.
type verdict struct {
	outcome   lbOutcome
	item, fix string
}

// judge decides what the CCM would do with s's load balancer.
func (s *lbService) judge(clusterID string, inv *lbInventory) verdict {
	ns, name := s.svc.Namespace, s.svc.Name
	recreate := fmt.Sprintf("otherwise delete and recreate Service %s so it gets a new UID and its own load balancer", s.key)
	if lb := s.found; lb != nil {
		own := clustertag.Key(clusterID)
		var foreign []string
		for _, k := range slices.Sorted(maps.Keys(lb.tags)) {
			if strings.HasPrefix(k, clustertag.Prefix) && k != own {
				foreign = append(foreign, k)
			}
		}
		if v := lb.tags[clustertag.LegacyKey]; v != "" && v != clusterID {
			foreign = append(foreign, clustertag.LegacyKey)
		}
		sn, hasSN := lb.tags[lbnames.ServiceNameTagKey]
		var missing []string
		if !clustertag.Has(lb.tags, clusterID) {
			missing = append(missing, own, string(clustertag.Owned))
		}
		if sn != s.key {
			missing = append(missing, lbnames.ServiceNameTagKey, s.key)
		}
		switch {
		case len(foreign) > 0:
			var shown []string
			for _, k := range foreign {
				shown = append(shown, k+"="+lb.tags[k])
			}
			fix := lb.removeTagsCmd(foreign...)
			if len(missing) > 0 {
				fix = lb.addTagsCmd(missing...) + " && " + fix
			}
			return verdict{lbForeignCluster, fmt.Sprintf("%s (%s: %s)", s.key, s.name, strings.Join(shown, ", ")),
				fmt.Sprintf("if cluster %s now owns %s: %s; %s", clusterID, s.name, fix, recreate)}
		case hasSN && sn != s.key:
			return verdict{lbForeignService, fmt.Sprintf("%s (%s: %s=%s)", s.key, s.name, lbnames.ServiceNameTagKey, sn),
				fmt.Sprintf("if %s is Service %s's: %s; %s", s.name, s.key, lb.addTagsCmd(missing...), recreate)}
		case len(missing) > 0:
			var keys []string
			for i := 0; i < len(missing); i += 2 {
				keys = append(keys, missing[i])
			}
			return verdict{lbUntagged, fmt.Sprintf("%s (%s lacks %s)", s.key, s.name, strings.Join(keys, " and ")), lb.addTagsCmd(missing...)}
		}
		return verdict{outcome: lbAdopt, item: fmt.Sprintf("%s (%s)", s.key, s.name)}
	}
	if lb := s.other; lb != nil {
		wants := "a Classic ELB"
		if s.kind == lbnames.KindNLB {
			wants = "an NLB"
		}
		item := fmt.Sprintf("%s (wants %s, but %s is %s)", s.key, wants, s.name, lb.describe())
		var fix string
		switch {
		case lb.typ == lbClassic:
			fix = fmt.Sprintf("to keep the Classic ELB: kubectl annotate service -n %s %s %s-; to move to an NLB, delete the Classic ELB once the NLB serves: %s",
				ns, name, lbnames.TypeAnnotation, lb.deleteCmd())
		case lb.typ == string(elbv2types.LoadBalancerTypeEnumNetwork):
			fix = fmt.Sprintf("to keep the NLB: kubectl annotate service -n %s %s %s=%s; to move to a Classic ELB, delete the NLB once the Classic ELB serves: %s",
				ns, name, lbnames.TypeAnnotation, lbnames.TypeNLB, lb.deleteCmd())
		default: // an ALB or gateway load balancer holds the NLB's name
			fix = fmt.Sprintf("ELBv2 names are shared by all types, so the CCM cannot create the NLB: delete %s if it is unused (%s); %s", s.name, lb.deleteCmd(), recreate)
		}
		return verdict{lbOtherType, item, fix}
	}
	for _, ing := range s.svc.Status.LoadBalancer.Ingress {
		if ing.Hostname == "" {
			continue
		}
		where := "no load balancer of this region has that DNS name"
		fix := fmt.Sprintf("after the CCM has created %s, point clients and DNS records at Service %s's new status hostname", s.name, s.key)
		if lb := inv.byDNS[strings.ToLower(ing.Hostname)]; lb != nil {
			where = fmt.Sprintf("it is %s, named %s", lb.describe(), lb.name)
			fix += fmt.Sprintf(", then delete the old one: %s", lb.deleteCmd())
		}
		return verdict{lbHostnameLost, fmt.Sprintf("%s (%s; the CCM looks for %s, %s)", s.key, ing.Hostname, s.name, where), fix}
	}
	return verdict{outcome: lbCreate, item: fmt.Sprintf("%s (%s)", s.key, s.name)}
}

// notOursReason says why this CCM leaves a LoadBalancer Service alone.
func notOursReason(svc *corev1.Service) string {
	if c := svc.Spec.LoadBalancerClass; c != nil {
		return "loadBalancerClass " + *c
	}
	return lbnames.TypeAnnotation + ": " + svc.Annotations[lbnames.TypeAnnotation]
}

// lbClients returns the load-balancing calls; ok is false when there are
// none.
func (r *runner) lbClients() (c ELB, v ELBv2, ok bool) {
	c, v = r.in.AWS.ELB, r.in.AWS.ELBv2
	return c, v, c.DescribeLoadBalancers != nil && v.DescribeLoadBalancers != nil
}

// loadBalancers checks what the CCM will do with the load balancers of the
// cluster's LoadBalancer Services. The CCM finds a Service's load balancer
// only by the name derived from the Service UID: an existing one is adopted
// when it carries this cluster's and this Service's tags; otherwise the CCM
// would fight over it, or create a second one with a new DNS name.
func (r *runner) loadBalancers(ctx context.Context) preflight.Result {
	if len(r.in.LoadBalancerServices) == 0 {
		return preflight.Skip("no Services of type LoadBalancer")
	}
	var ours []*lbService
	var elsewhere []string
	for i := range r.in.LoadBalancerServices {
		svc := &r.in.LoadBalancerServices[i]
		key := lbnames.ServiceNameTagValue(svc)
		kind := lbnames.Kind(svc)
		if kind == lbnames.KindNotOurs {
			elsewhere = append(elsewhere, fmt.Sprintf("%s (%s)", key, notOursReason(svc)))
			continue
		}
		ours = append(ours, &lbService{svc: svc, key: key, name: lbnames.LoadBalancerName(svc), kind: kind})
	}
	tail := ""
	if len(elsewhere) > 0 {
		tail = fmt.Sprintf("; %d left to another controller: %s", len(elsewhere), short(elsewhere))
	}
	if len(ours) == 0 {
		return preflight.Pass("none of the %d LoadBalancer Services is this CCM's%s", len(elsewhere), tail)
	}
	set, err := r.instances(ctx)
	if err != nil {
		return describeFailed(err)
	}
	clusterID := r.cluster(set).id
	if clusterID == "" {
		return preflight.Skip("the cluster ID is not known")
	}
	c, v, ok := r.lbClients()
	if !ok {
		return preflight.Skip("no load-balancing clients")
	}
	const grant = "grant the caller elasticloadbalancing:DescribeLoadBalancers and elasticloadbalancing:DescribeTags (attach iam/preflight-policy.json), then run preflight again"
	inv, err := listLoadBalancers(ctx, c, v)
	if err != nil {
		return failedCall(preflight.Fail(grant, "%v", err), err)
	}
	var named []*existingLB
	for _, s := range ours {
		classic, v2 := inv.classic[s.name], inv.v2[s.name]
		if s.kind == lbnames.KindNLB {
			if v2 != nil && v2.typ == string(elbv2types.LoadBalancerTypeEnumNetwork) {
				s.found, v2 = v2, nil
			}
			s.other = cmpOr(classic, v2)
		} else {
			s.found = classic
			if v2 != nil && v2.typ == string(elbv2types.LoadBalancerTypeEnumNetwork) {
				s.other = v2 // another type by the same name does not block a Classic ELB
			}
		}
		if s.found != nil {
			named = append(named, s.found)
		}
	}
	if err := fetchTags(ctx, c, v, named); err != nil {
		return failedCall(preflight.Fail(grant, "%v", err), err)
	}

	items := map[lbOutcome][]string{}
	var fixes []string
	problems := 0
	for _, s := range ours {
		vd := s.judge(clusterID, inv)
		items[vd.outcome] = append(items[vd.outcome], vd.item)
		if vd.outcome < lbProblems {
			problems++
			fixes = append(fixes, vd.fix)
		}
	}
	fine := fmt.Sprintf("%d will be adopted", len(items[lbAdopt]))
	if len(items[lbAdopt]) > 0 {
		fine += ": " + short(items[lbAdopt])
	}
	fine += fmt.Sprintf("; %d will be created", len(items[lbCreate]))
	if len(items[lbCreate]) > 0 {
		fine += ": " + short(items[lbCreate])
	}
	if problems == 0 {
		return preflight.Pass("%d LoadBalancer Services of this CCM: %s%s", len(ours), fine, tail)
	}
	var groups []string
	for o := lbOutcome(0); o < lbProblems; o++ {
		if n := len(items[o]); n > 0 {
			groups = append(groups, fmt.Sprintf("%s (%d): %s", lbOutcomeLabel[o], n, short(items[o])))
		}
	}
	if len(fixes) > listShown {
		fixes = append(fixes[:listShown], fmt.Sprintf("and likewise for the other %d Services", len(fixes)-listShown))
	}
	return preflight.Fail(strings.Join(fixes, "; "),
		"%d of %d LoadBalancer Services of this CCM would not cleanly get their load balancer (the CCM finds it only by the name a<Service UID without dashes>): %s; of the others, %s%s",
		problems, len(ours), strings.Join(groups, "; "), fine, tail)
}

// cmpOr returns the first non-nil load balancer.
func cmpOr(lbs ...*existingLB) *existingLB {
	for _, lb := range lbs {
		if lb != nil {
			return lb
		}
	}
	return nil
}
