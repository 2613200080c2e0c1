package installcmd_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/awsccmctl/awsccmctl/internal/cli/exitcode"
	"github.com/awsccmctl/awsccmctl/internal/cli/root"
	"github.com/awsccmctl/awsccmctl/internal/install"
)

// run executes awsccmctl (the real root command, so AWSCCMCTL_* variables
// are handled as for users) and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := root.Execute(context.Background(), root.Streams{Out: &out, Err: &errOut}, args)
	return out.String(), errOut.String(), err
}

// splitDocs returns the documents of a YAML stream.
func splitDocs(s string) []string { return strings.Split(s, "\n---\n") }

// workload decodes the last document, the DaemonSet or Deployment.
func workload(t *testing.T, stream string) (kind string, spec *corev1.PodSpec, replicas int32) {
	t.Helper()
	docs := splitDocs(stream)
	last := []byte(docs[len(docs)-1])
	var tm struct{ Kind string }
	if err := yaml.Unmarshal(last, &tm); err != nil {
		t.Fatal(err)
	}
	switch tm.Kind {
	case "DaemonSet":
		var ds appsv1.DaemonSet
		if err := yaml.UnmarshalStrict(last, &ds); err != nil {
			t.Fatal(err)
		}
		return tm.Kind, &ds.Spec.Template.Spec, 0
	case "Deployment":
		var d appsv1.Deployment
		if err := yaml.UnmarshalStrict(last, &d); err != nil {
			t.Fatal(err)
		}
		return tm.Kind, &d.Spec.Template.Spec, *d.Spec.Replicas
	}
	t.Fatalf("last document is a %q", tm.Kind)
	return "", nil, 0
}

func arg(spec *corev1.PodSpec, name string) string {
	for _, a := range spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// TestManifestsStdoutIsRender: the stream install manifests writes decodes,
// document by document, into the typed objects install applies, and they
// carry what the flags asked for and refer to each other (a rendering bug
// breaks one of these, which comparing the command with install.Render
// alone would not see).
func TestManifestsStdoutIsRender(t *testing.T) {
	const image, cluster, ns = "registry.example.com/ccm:v1", "prod", "ccm-system"
	out, _, err := run(t, "install", "manifests", "--image", image, "--cluster-name", cluster, "--namespace", ns,
		"--region", "eu-west-1", "--workload", "deployment", "--replicas", "3")
	if err != nil {
		t.Fatal(err)
	}
	var (
		sa    corev1.ServiceAccount
		cr    rbacv1.ClusterRole
		crb   rbacv1.ClusterRoleBinding
		rb    rbacv1.RoleBinding
		cm    corev1.ConfigMap
		dep   appsv1.Deployment
		kinds []string
	)
	typed := map[string]any{"ServiceAccount": &sa, "ClusterRole": &cr, "ClusterRoleBinding": &crb, "RoleBinding": &rb, "ConfigMap": &cm, "Deployment": &dep}
	for i, doc := range splitDocs(out) {
		doc += "\n" // splitDocs takes the newline before "---" away
		var tm struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, doc)
		}
		obj, ok := typed[tm.Kind]
		if !ok {
			t.Fatalf("document %d is a %s %s, not an object install applies", i, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("document %d (%s): %v", i, tm.Kind, err)
		}
		kinds = append(kinds, tm.Kind)
	}
	if want := []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "RoleBinding", "ConfigMap", "Deployment"}; !slices.Equal(kinds, want) {
		t.Fatalf("documents %v, want %v in apply order", kinds, want)
	}

	// --namespace: every namespaced object but the RoleBinding, which
	// must sit next to the Role it binds in kube-system.
	for _, o := range []metav1.Object{&sa, &cm, &dep} {
		if o.GetNamespace() != ns {
			t.Errorf("%s in namespace %q, want --namespace %s", o.GetName(), o.GetNamespace(), ns)
		}
	}
	if rb.Namespace != "kube-system" || rb.RoleRef.Name != "extension-apiserver-authentication-reader" {
		t.Errorf("RoleBinding %s/%s binds %s, want kube-system's extension-apiserver-authentication-reader", rb.Namespace, rb.Name, rb.RoleRef.Name)
	}
	// The bindings grant the ServiceAccount the Pods run as.
	if crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != cr.Name {
		t.Errorf("ClusterRoleBinding refers to %s %s, want ClusterRole %s", crb.RoleRef.Kind, crb.RoleRef.Name, cr.Name)
	}
	for _, subjects := range [][]rbacv1.Subject{crb.Subjects, rb.Subjects} {
		if len(subjects) != 1 || subjects[0].Kind != "ServiceAccount" || subjects[0].Name != sa.Name || subjects[0].Namespace != ns {
			t.Errorf("binding subjects %+v, want ServiceAccount %s/%s", subjects, ns, sa.Name)
		}
	}
	if len(cr.Rules) == 0 {
		t.Error("the ClusterRole grants nothing")
	}

	// --workload, --replicas, --image, --cluster-name; the Pods run as the
	// ServiceAccount and read the ConfigMap's cloud config.
	pod := dep.Spec.Template.Spec
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want --replicas 3", dep.Spec.Replicas)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want one", len(pod.Containers))
	}
	if got := pod.Containers[0].Image; got != image {
		t.Errorf("image %q, want --image %s", got, image)
	}
	if got := arg(&pod, "cluster-name"); got != cluster {
		t.Errorf("--cluster-name=%q, want %q", got, cluster)
	}
	if pod.ServiceAccountName != sa.Name {
		t.Errorf("Pods run as %q, want ServiceAccount %q", pod.ServiceAccountName, sa.Name)
	}
	if !mountsConfigMap(&pod, cm.Name, filepath.Dir(arg(&pod, "cloud-config"))) {
		t.Errorf("--cloud-config=%s is not in a volume of ConfigMap %s (volumes %+v)", arg(&pod, "cloud-config"), cm.Name, pod.Volumes)
	}
	conf := cm.Data[filepath.Base(arg(&pod, "cloud-config"))]
	if !strings.Contains(conf, "Region = eu-west-1") {
		t.Errorf("cloud config lacks --region eu-west-1:\n%s", conf)
	}
	// A changed cloud config rolls the Pods: the template carries its hash.
	if got, want := dep.Spec.Template.Annotations[install.AnnotationCloudConfigHash], fmt.Sprintf("%x", sha256.Sum256([]byte(conf))); got != want {
		t.Errorf("%s = %q, want the cloud config's %q", install.AnnotationCloudConfigHash, got, want)
	}

	// The command writes what install.Render renders for these values.
	v := install.Values{Image: image, ClusterName: cluster, Namespace: ns, Region: "eu-west-1", Workload: install.WorkloadDeployment, Replicas: ptr[int32](3)}
	v.Default()
	want, err := install.Render(v)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("stdout differs from install.Render:\n%s", out)
	}
}

// mountsConfigMap says whether the Pod's container mounts ConfigMap name
// at dir.
func mountsConfigMap(pod *corev1.PodSpec, name, dir string) bool {
	for _, v := range pod.Volumes {
		if v.ConfigMap == nil || v.ConfigMap.Name != name {
			continue
		}
		for _, m := range pod.Containers[0].VolumeMounts {
			if m.Name == v.Name && m.MountPath == dir {
				return true
			}
		}
	}
	return false
}

// TestPrecedence: flag > AWSCCMCTL_* environment > --config file > default.
func TestPrecedence(t *testing.T) {
	cfg := filepath.Join("testdata", "valid-install.yaml")

	out, _, err := run(t, "install", "manifests", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	kind, spec, replicas := workload(t, out)
	if kind != "Deployment" || replicas != 3 || arg(spec, "cluster-name") != "from-file" || spec.Containers[0].Image != "registry.example.com/ccm:v1.37.0" {
		t.Fatalf("file values not used: %s %d %v", kind, replicas, spec.Containers[0].Args)
	}
	if !strings.Contains(out, "Region = eu-west-1") {
		t.Error("the file's region is not in the cloud config")
	}
	if arg(spec, "v") != "2" {
		t.Errorf("default verbosity not used: --v=%s", arg(spec, "v"))
	}

	t.Setenv("AWSCCMCTL_CLUSTER_NAME", "from-env")
	t.Setenv("AWSCCMCTL_REPLICAS", "4")
	out, _, err = run(t, "install", "manifests", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, spec, replicas = workload(t, out)
	if arg(spec, "cluster-name") != "from-env" || replicas != 4 {
		t.Fatalf("env must beat the file: %v, replicas %d", spec.Containers[0].Args, replicas)
	}

	out, _, err = run(t, "install", "manifests", "--config", cfg, "--cluster-name", "from-flag", "--workload", "daemonset")
	if err != nil {
		t.Fatal(err)
	}
	kind, spec, _ = workload(t, out)
	if arg(spec, "cluster-name") != "from-flag" || kind != "DaemonSet" {
		t.Fatalf("flags must beat the env and the file: %s %v", kind, spec.Containers[0].Args)
	}
}

func TestCloudConfigAndRegionFlags(t *testing.T) {
	out, _, err := run(t, "install", "manifests", "--cloud-config", filepath.Join("testdata", "valid-cloud.conf"),
		"--region", "us-west-2", "--configure-cloud-routes", "--cluster-cidr", "10.244.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Region = us-west-2", "KubernetesClusterID = conf-cluster", `"--configure-cloud-routes=true"`, `"--cluster-cidr=10.244.0.0/16"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s", want)
		}
	}
}

// TestUsageErrors: bad input exits 2 with a message naming the flag.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"invalid-workload", []string{"--workload", "statefulset"}, []string{"--workload", "statefulset"}},
		{"invalid-cloud-routes-without-cidr", []string{"--configure-cloud-routes"}, []string{"--cluster-cidr"}},
		{"invalid-all-at-once", []string{"--image", "NOPE", "--workload", "deployment", "--replicas", "0", "--namespace", "A_B"},
			[]string{"--image", "--replicas", "--namespace"}},
		{"invalid-config-unknown-field", []string{"--config", filepath.Join("testdata", "invalid-unknown-field.yaml")},
			[]string{"--config", `unknown field "clusterNmae"`}},
		{"invalid-config-missing", []string{"--config", filepath.Join("testdata", "nope.yaml")}, []string{"--config"}},
		{"invalid-cloud-config", []string{"--cloud-config", filepath.Join("testdata", "invalid-cloud.conf")}, []string{"--cloud-config", "Regoin"}},
		{"invalid-cloud-every-problem", []string{"--cloud-config", filepath.Join("testdata", "invalid-cloud-every-problem.conf")},
			[]string{"--cloud-config", "4 problems", "DisableSecurityGroupIngress", `"Regoin"`, "[Kubernetes]", `VPC "0123456789abcdef0"`}},
		{"invalid-region", []string{"--region", "us-east-1a"}, []string{"--region", `"us-east-1a" is a zone; use its region us-east-1`}},
		{"invalid-flag-value", []string{"--replicas", "many"}, []string{"--replicas"}},
		{"invalid-extra-args", []string{"--extra-args", "cluster-name=x"}, []string{"--extra-args", "cluster-name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, append([]string{"install", "manifests"}, tc.args...)...)
			if code := exitcode.Of(err); code != exitcode.Usage {
				t.Fatalf("exit code %d (%v), want %d", code, err, exitcode.Usage)
			}
			if out != "" {
				t.Errorf("wrote manifests despite the error:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestOutputDir: --output-dir writes the files (install.WriteManifests
// tests what they hold), nothing on stdout, and reports each on stderr.
func TestOutputDir(t *testing.T) {
	dir := t.TempDir()
	out, log, err := run(t, "install", "manifests", "--output-dir", dir, "--workload", "deployment")
	if err != nil || out != "" {
		t.Fatalf("out %q, err %v", out, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 6 || entries[5].Name() != "06-deployment-aws-cloud-controller-manager.yaml" {
		t.Errorf("files %v", entries)
	}
	if strings.Count(log, "wrote "+dir) != 6 {
		t.Errorf("progress on stderr: %q", log)
	}
}
