package kubeadmconfig

import (
	"regexp"
	"strings"
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/testbed"
)

// TestMergeRefusesUnknownFields: a field kubeadm's types do not have (a
// typo, a field in the wrong case, a field in an extraArgs item, in the
// KubeletConfiguration) is an error naming the document and the field's
// path, all at once; before, Merge printed a file kubeadm then refused. The
// real kubeadm refuses each fixture too, on a field Merge names.
func TestMergeRefusesUnknownFields(t *testing.T) {
	for _, c := range []struct {
		file    string
		kubeadm func(testing.TB) string
		want    []string
	}{
		{"invalid-unknown-fields.yaml", func(t testing.TB) string { return testbed.Tool(t, testbed.KubeadmBinary) }, []string{
			`document 1 (InitConfiguration): unknown field "nodeRegistration.kubeletExtraArg"`,
			`document 1 (InitConfiguration): unknown field "localAPIEndpoint.bindport" (field names are case-sensitive: bindPort)`,
			`document 2 (ClusterConfiguration): unknown field "controllerManager.extraArgs[0].valeu"`,
			`document 3 (KubeletConfiguration): unknown field "maxPod"`,
		}},
		{"invalid-v1beta3-unknown-field.yaml", testbed.KubeadmV1beta3, []string{
			`document 1 (InitConfiguration): unknown field "nodeRegistration.taint"`,
		}},
	} {
		t.Run(c.file, func(t *testing.T) {
			in := readMergeFixture(t, c.file)
			out, err := Merge(in, Options{ProviderID: providerID, NodeName: nodeName})
			if err == nil {
				t.Fatalf("merged:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(c.want) {
				t.Errorf("%d problems, want %d:\n%v", n, len(c.want), err)
			}
			msg, kerr := kubeadmValidate(t, c.kubeadm(t), string(in))
			m := regexp.MustCompile(`strict decoding error: unknown field "([^"]+)"`).FindStringSubmatch(msg)
			if kerr == nil || m == nil {
				t.Fatalf("kubeadm config validate accepted the file, or not for an unknown field: %v\n%s", kerr, msg)
			}
			if !strings.Contains(err.Error(), `unknown field "`+m[1]+`"`) {
				t.Errorf("kubeadm refuses field %q, which Merge does not name:\n%v", m[1], err)
			}
		})
	}
}

// TestCheckFields: the other ways a document strays from kubeadm's types.
func TestCheckFields(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      []string
	}{
		{"a key given twice", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\ncaCertPath: /a\ncaCertPath: /b\n",
			[]string{`document 1 (JoinConfiguration): field "caCertPath" given twice`}},
		{"kube-proxy", "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmod: ipvs\n",
			[]string{`document 1 (KubeProxyConfiguration): unknown field "mod"`}},
		{"a list where an object goes", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nnodeRegistration: [a]\n",
			[]string{`document 1 (InitConfiguration): nodeRegistration: kubeadm.k8s.io/v1beta4 wants an object (field: value lines) here, not a list`}},
		{"merge keys and anchors are read", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer: &c\n  certSANs: [a]\ncontrollerManager:\n  <<: *c\n  extraArgs: []\n",
			[]string{`document 1 (ClusterConfiguration): unknown field "controllerManager.certSANs"`}},
		{"a kind kubeadm does not read", "apiVersion: example.com/v1\nkind: Anything\nwhatever: 1\n", nil},
		{"null values", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nnodeRegistration:\nbootstrapTokens: ~\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			docs, err := splitDocuments([]byte(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			errs := checkFields(docs[0], 0)
			if len(errs) != len(c.want) {
				t.Fatalf("%d problems %v, want %d", len(errs), errs, len(c.want))
			}
			for i, w := range c.want {
				if errs[i].Error() != w {
					t.Errorf("problem %q, want %q", errs[i], w)
				}
			}
		})
	}
}
