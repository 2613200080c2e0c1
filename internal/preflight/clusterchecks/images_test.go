package clusterchecks

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/awsccmctl/awsccmctl/internal/preflight"
	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestECRImages seeds Pods in the real apiserver and pins the
// images-ecr-credential-provider finding.
func TestECRImages(t *testing.T) {
	real := quietClient(testbed.Get(t).Config)
	const (
		app     = "123456789012.dkr.ecr.us-east-1.amazonaws.com/shop/app:v3"
		migrate = "123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com/shop/migrate@sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
		cn      = "210987654321.dkr.ecr.cn-north-1.amazonaws.com.cn/tools/agent:1.2"
	)
	cases := []struct {
		name    string
		seed    func(*seed)
		status  preflight.Status
		message string
	}{
		{name: "no ECR images", status: preflight.StatusPass,
			seed: func(s *seed) {
				s.nodes(v137, w1)
				s.pod(workload(metav1.NamespaceDefault, "web", w1, "public.ecr.aws/nginx/nginx:1.29"))
				s.pod(workload(metav1.NamespaceDefault, "lookalike", w1, "registry.example.com/123456789012.dkr.ecr.us-east-1.amazonaws.com/app:v1"))
			},
			message: "no Pod uses an image from a private ECR registry (2 Pods)"},
		{name: "ECR images on two Nodes and unscheduled", status: preflight.StatusWarn,
			seed: func(s *seed) {
				s.nodes(v137, w1, w2)
				withInit := workload(metav1.NamespaceDefault, "shop-0", w1, app)
				withInit.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: migrate}}
				s.pod(withInit)
				s.pod(workload(metav1.NamespaceDefault, "shop-1", w2, app))
				s.pod(workload(kubeSystem, "agent-pending", "", cn))
				s.pod(workload(metav1.NamespaceDefault, "web", w2, "registry.k8s.io/pause:3.10"))
			},
			message: "3 Pods on 2 Nodes (" + w1 + ", " + w2 + "), 1 not scheduled yet use 3 images from private ECR registries: " + migrate + ", " + app + ", " + cn +
				"; the in-tree AWS provider gave the kubelet built-in ECR credentials, which were removed in Kubernetes 1.27, so the kubelet of those Nodes needs the " +
				"ecr-credential-provider image credential provider or it cannot pull an ECR image it has not cached; `awsccmctl preflight --node` on a node verifies it (check kubelet-ecr-credential-provider)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSeed(t, real)
			tc.seed(s)
			rep, err := preflight.Run(context.Background(), Checks(Input{Client: real, Mode: preflight.ModePreMigrate}),
				preflight.Options{Mode: preflight.ModePreMigrate, Categories: []string{CategoryCluster, CategoryImages}})
			if err != nil {
				t.Fatal(err)
			}
			f := finding(rep, IDImagesECRProvider)
			if f.Status != tc.status || f.Message != tc.message {
				t.Errorf("%s = %s\n  %s\nwant %s\n  %s", f.ID, f.Status, f.Message, tc.status, tc.message)
			}
			if tc.status != preflight.StatusPass {
				for _, w := range []string{"--image-credential-provider-config=<that file>", `"*.dkr.ecr.*.amazonaws.com"`, "AmazonEC2ContainerRegistryReadOnly"} {
					if !strings.Contains(f.Remediation, w) {
						t.Errorf("remediation lacks %q: %s", w, f.Remediation)
					}
				}
			}
		})
	}
}
