package rbac

import (
	"context"
	"crypto/tls"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	cloudproviderapi "k8s.io/cloud-provider/api"

	"github.com/awsccmctl/awsccmctl/internal/childproc"
	"github.com/awsccmctl/awsccmctl/internal/install"
	"github.com/awsccmctl/awsccmctl/internal/install/apply"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
	"github.com/awsccmctl/awsccmctl/pkg/cloudconfig"
	"github.com/awsccmctl/awsccmctl/pkg/providerid"
)

// The demo fixture's cluster (test/awsemu/testdata/demo.yaml).
const (
	region      = "us-east-1"
	vpc         = "vpc-0demo000000000001"
	clusterID   = "demo"
	running1    = "i-0a1b2c3d4e5f60001" // ip-10-0-1-10.ec2.internal, us-east-1a
	running2    = "i-0a1b2c3d4e5f60002" // ip-10-0-2-20.ec2.internal, us-east-1b
	terminated  = "i-0a1b2c3d4e5f60005"
	saUserGroup = "system:serviceaccounts"
)

// rendered returns the install's objects as awsccmctl renders them for the
// demo cluster, off EC2 (region, VPC and cluster ID in the cloud config).
func rendered(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	v := install.Values{ClusterName: clusterID, CloudConfig: &cloudconfig.Config{Global: cloudconfig.Global{
		Region: region, VPC: vpc, KubernetesClusterID: clusterID}}}
	v.Default()
	b, err := install.Render(v)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := apply.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func ofKind(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if slices.Contains(kinds, u.GetKind()) {
			out = append(out, u)
		}
	}
	return out
}

func convert[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	var obj T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &obj); err != nil {
		t.Fatal(err)
	}
	return &obj
}

// ccm is one run of the CCM binary as the rendered DaemonSet runs it.
type ccm struct {
	proc   *childproc.Process
	port   int
	log    string
	start  time.Time
	sa     string // system:serviceaccount:<ns>:<name>
	token  string
	stopCh func()
}

// startCCM runs the binary with the rendered container's arguments, and
// only the ServiceAccount's token to talk to the apiserver (also for the
// delegated authentication and authorization of its secure port).
func startCCM(t *testing.T, objs []*unstructured.Unstructured, name string) *ccm {
	t.Helper()
	return startCCMWith(t, objs, name, nil)
}

// startCCMWith is startCCM with more flags (or other values of them).
func startCCMWith(t *testing.T, objs []*unstructured.Unstructured, name string, flags map[string]string) *ccm {
	t.Helper()
	ctx := context.Background()
	sa := convert[corev1.ServiceAccount](t, ofKind(objs, "ServiceAccount")[0])
	cfg, err := env.cp.ServiceAccountConfig(ctx, sa.Namespace, sa.Name)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "sa.kubeconfig")
	if err := env.cp.WriteKubeconfig(kubeconfig, cfg); err != nil {
		t.Fatal(err)
	}
	cm := convert[corev1.ConfigMap](t, ofKind(objs, "ConfigMap")[0])
	cloudConf := filepath.Join(dir, install.CloudConfigKey)
	if err := os.WriteFile(cloudConf, []byte(cm.Data[install.CloudConfigKey]), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := childproc.FreePort(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ds := convert[appsv1.DaemonSet](t, ofKind(objs, "DaemonSet")[0])
	c := ds.Spec.Template.Spec.Containers[0]
	// In the cluster the Pod gets its token and the apiserver's address
	// from the ServiceAccount mount; here the kubeconfig carries both.
	var args []string
	if len(c.Command) > 1 {
		args = slices.Clone(c.Command[1:]) // Command[0] is the binary
	}
	with := map[string]string{
		"cloud-config":                 cloudConf,
		"kubeconfig":                   kubeconfig,
		"authentication-kubeconfig":    kubeconfig,
		"authorization-kubeconfig":     kubeconfig,
		"secure-port":                  strconv.Itoa(port),
		"bind-address":                 "127.0.0.1",
		"node-monitor-period":          "1s",
		"node-status-update-frequency": "2s",
	}
	maps.Copy(with, flags)
	args = override(append(args, c.Args...), with)
	cmd := exec.CommandContext(context.Background(), env.ccmPath, args...)
	cmd.Env = append(os.Environ(), env.aws.Env().List()...)
	logPath := filepath.Join(dir, name+".log")
	start := time.Now()
	proc, err := childproc.StartLogged(name, cmd, logPath)
	if err != nil {
		t.Fatal(err)
	}
	r := &ccm{proc: proc, port: port, log: logPath, start: start,
		sa: "system:serviceaccount:" + sa.Namespace + ":" + sa.Name, token: cfg.BearerToken}
	stopped := false
	r.stopCh = func() {
		if !stopped {
			stopped = true
			_ = proc.Stop(5 * time.Second)
		}
	}
	t.Cleanup(func() {
		r.stopCh()
		if t.Failed() {
			t.Logf("CCM log tail (%s):\n%s", logPath, childproc.LogTail(logPath, 6000))
		}
	})
	return r
}

// override replaces or adds --name=value flags.
func override(args []string, with map[string]string) []string {
	var out []string
	for _, a := range args {
		name := strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0]
		if _, ok := with[name]; !ok {
			out = append(out, a)
		}
	}
	keys := make([]string, 0, len(with))
	for k := range with {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, "--"+k+"="+with[k])
	}
	return out
}

// scrapeMetrics asks the CCM's secure port for /metrics with a bearer
// token: the CCM must review the token (TokenReview) and the request
// (SubjectAccessReview) with its own rights.
func (c *ccm) scrapeMetrics(t *testing.T) int {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // #nosec G402 -- self-signed serving cert of a local test process
	var code int
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", c.port), nil)
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := client.Do(req)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet
		}
		_ = resp.Body.Close()
		code = resp.StatusCode
		return true, nil
	})
	if err != nil {
		t.Fatalf("the CCM's secure port never answered: %v", err)
	}
	return code
}

// registerNode creates a Node as an external kubelet does (uninitialized
// taint), with the given readiness.
func registerNode(t *testing.T, cs kubernetes.Interface, name, providerID string, ready bool) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Spec: corev1.NodeSpec{ProviderID: providerID, Taints: []corev1.Taint{{Key: cloudproviderapi.TaintExternalCloudProvider, Value: "true", Effect: corev1.TaintEffectNoSchedule}}}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}) })
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("waiting %s for %s: %v", timeout, what, err)
	}
}

func initialized(cs kubernetes.Interface, name string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // poll predicate: not ready yet, keep waiting
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == cloudproviderapi.TaintExternalCloudProvider {
				return false, nil
			}
		}
		return n.Spec.ProviderID != "", nil
	}
}

// request is one audited request of the CCM.
type request struct {
	verb, group, resource, subresource, namespace, name string
	code                                                int32
}

func (r request) String() string {
	res := r.resource
	if r.subresource != "" {
		res += "/" + r.subresource
	}
	if r.group != "" {
		res = r.group + ":" + res
	}
	where := r.name
	if r.namespace != "" {
		where = r.namespace + "/" + r.name
	}
	return fmt.Sprintf("%s %s %s -> %d", r.verb, res, where, r.code)
}

// requestsOf reads the audit log: the requests user made since since.
func requestsOf(t *testing.T, user string, since time.Time) []request {
	t.Helper()
	events, err := readAudit()
	if err != nil {
		t.Fatal(err)
	}
	var out []request
	for _, e := range events {
		if e.User.Username != user || e.StageTimestamp.Time.Before(since) || e.ObjectRef == nil || e.ResponseStatus == nil {
			continue
		}
		out = append(out, request{verb: e.Verb, group: e.ObjectRef.APIGroup, resource: e.ObjectRef.Resource,
			subresource: e.ObjectRef.Subresource, namespace: e.ObjectRef.Namespace, name: e.ObjectRef.Name, code: e.ResponseStatus.Code})
	}
	return out
}

func readAudit() ([]auditv1.Event, error) { return testbed.ReadAuditLog(env.cp.AuditLogPath) }

func forbidden(rs []request) []string {
	var out []string
	for _, r := range rs {
		if r.code == http.StatusForbidden && !slices.Contains(out, r.String()) {
			out = append(out, r.String())
		}
	}
	sort.Strings(out)
	return out
}

// ruleUse says, per verb of each rule, whether an allowed request used it.
func ruleUse(rules []rbacv1.PolicyRule, rs []request) (unused []string) {
	for _, rule := range rules {
		for _, verb := range rule.Verbs {
			used := slices.ContainsFunc(rs, func(r request) bool {
				res := r.resource
				if r.subresource != "" {
					res += "/" + r.subresource
				}
				return r.code < 400 && r.verb == verb && slices.Contains(rule.APIGroups, r.group) && slices.Contains(rule.Resources, res) &&
					(len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, r.name))
			})
			if !used {
				unused = append(unused, fmt.Sprintf("%s %v %v%s", verb, rule.APIGroups, rule.Resources, names(rule.ResourceNames)))
			}
		}
	}
	return unused
}

func names(n []string) string {
	if len(n) == 0 {
		return ""
	}
	return fmt.Sprintf(" (names %v)", n)
}

// run applies objs, runs the CCM with them through node initialization,
// a Node deletion and a /metrics request, and returns what it asked the
// apiserver.
func run(t *testing.T, objs []*unstructured.Unstructured, nodeSuffix string) []request {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(env.cp.Config)
	applyRBAC(t, objs)
	c := startCCM(t, objs, "ccm"+nodeSuffix)
	if code := c.scrapeMetrics(t); code != http.StatusForbidden && code != http.StatusOK {
		t.Errorf("GET /metrics with the ServiceAccount's token: HTTP %d, want 403 (authorization denied) or 200 — anything else means the review itself failed", code)
	}
	// Initialization: one Node named after its private DNS name, one with
	// a providerID.
	n1, n2 := "ip-10-0-1-10.ec2.internal", "rbac-node-2"+nodeSuffix
	registerNode(t, cs, n1, "", true)
	registerNode(t, cs, n2, providerid.Format("us-east-1b", running2), true)
	for _, n := range []string{n1, n2} {
		waitFor(t, 60*time.Second, "Node "+n+" initialized", initialized(cs, n))
	}
	// A load balancer: the service controller adds its finalizer, writes
	// the status and removes the finalizer again, all through the rules.
	exerciseLoadBalancer(t, cs, "rbac-lb"+nodeSuffix)
	// Deletion: a NotReady Node whose instance is terminated.
	gone := "rbac-gone" + nodeSuffix
	registerNode(t, cs, gone, providerid.Format("us-east-1c", terminated), false)
	waitFor(t, 60*time.Second, "Node "+gone+" deleted", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Nodes().Get(ctx, gone, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	c.stopCh()
	return requestsOf(t, c.sa, c.start)
}

// TestRenderedRBACIsEnough: the CCM, with the rendered RBAC and nothing
// else, is never refused by the apiserver.
func TestRenderedRBACIsEnough(t *testing.T) {
	objs := rendered(t)
	rs := run(t, objs, "")
	if len(rs) == 0 {
		t.Fatal("the audit log shows no request of the CCM's ServiceAccount: is the audit policy right?")
	}
	if f := forbidden(rs); len(f) > 0 {
		t.Errorf("the apiserver refused the CCM %d kinds of request with the rendered RBAC:\n  %s", len(f), strings.Join(f, "\n  "))
	}
	role := convert[rbacv1.ClusterRole](t, ofKind(objs, "ClusterRole")[0])
	unused := ruleUse(role.Rules, rs)
	t.Logf("%d requests, none forbidden; ClusterRole verbs not exercised by this run (the route controller has nothing to do without cloud routes): %v", len(rs), unused)
}

// TestARemovedRuleIsCaught is the proof's control: without the events rule
// the same run must show forbidden event writes, or the proof above could
// pass without looking.
func TestARemovedRuleIsCaught(t *testing.T) {
	objs := rendered(t)
	roleObj := ofKind(objs, "ClusterRole")[0]
	role := convert[rbacv1.ClusterRole](t, roleObj)
	kept := slices.DeleteFunc(slices.Clone(role.Rules), func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "events") })
	if len(kept) == len(role.Rules) {
		t.Fatal("the rendered ClusterRole has no events rule to remove")
	}
	rules, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&rbacv1.ClusterRole{Rules: kept})
	if err != nil {
		t.Fatal(err)
	}
	roleObj.Object["rules"] = rules["rules"]
	t.Cleanup(func() { // put the full role back for the other tests
		ac, _ := apply.NewClient(env.cp.Config)
		_, _ = ac.Apply(context.Background(), ofKind(rendered(t), "ClusterRole"), apply.Options{Force: true})
	})
	rs := run(t, objs, "-reduced")
	f := forbidden(rs)
	if !slices.ContainsFunc(f, func(s string) bool { return strings.HasPrefix(s, "create events ") }) {
		t.Errorf("without the events rule the CCM was never refused an event (forbidden: %v): the audit-based proof does not see refusals", f)
	}
}

// createInternalLoadBalancer creates an internal Classic load-balancer
// Service named name in default.
func createInternalLoadBalancer(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Annotations: map[string]string{"service.beta.kubernetes.io/aws-load-balancer-internal": "true"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := cs.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// exerciseLoadBalancer creates an internal Classic load-balancer Service,
// waits for its hostname, deletes it and waits until the CCM has released
// it (removed the cleanup finalizer).
func exerciseLoadBalancer(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	createInternalLoadBalancer(t, cs, name)
	waitFor(t, 60*time.Second, "Service "+name+" load balancer", func(ctx context.Context) (bool, error) {
		s, err := cs.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
		return err == nil && len(s.Status.LoadBalancer.Ingress) > 0 && s.Status.LoadBalancer.Ingress[0].Hostname != "", nil
	})
	if err := cs.CoreV1().Services("default").Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "Service "+name+" released", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Services("default").Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// applyRBAC applies the rendered ServiceAccount and RBAC, which the CCM
// runs with.
func applyRBAC(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ac, err := apply.NewClient(env.cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ac.Apply(context.Background(), ofKind(objs, "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "RoleBinding"), apply.Options{Force: true}); err != nil {
		t.Fatal(err)
	}
}
