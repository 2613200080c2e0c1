package kubeadmconfig

import (
	"testing"

	"github.com/awsccmctl/awsccmctl/internal/fielderr"
)

// TestEveryProblemNamesItsField: each problem of the options is a
// *fielderr.Error of one of the fields, so install kubeadm names the flag
// of every problem without reading messages.
func TestEveryProblemNamesItsField(t *testing.T) {
	for name, tc := range map[string]struct {
		o    Options
		want []string
	}{
		"bad API version, provider ID and paths": {
			o: Options{KubernetesVersion: "v1.37.1", APIVersion: "kubeadm.k8s.io/v9", ProviderID: "i-0abc",
				CredentialProvider: &CredentialProvider{ConfigPath: "relative.yaml", BinDir: "/opt/../bin"}},
			want: []string{FieldAPIVersion, FieldProviderID, FieldCredentialProviderConfig, FieldCredentialProviderBinDir},
		},
		"no version to pick the API version": {o: Options{}, want: []string{FieldKubernetesVersion}},
		"version not parsable":               {o: Options{KubernetesVersion: "stable"}, want: []string{FieldKubernetesVersion}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Render(tc.o)
			if err == nil {
				t.Fatal("Render accepted the options")
			}
			var got []string
			for _, p := range fielderr.Problems(err) {
				fe, ok := fielderr.FieldOf(p)
				if !ok {
					t.Errorf("problem without a field: %v", p)
					continue
				}
				got = append(got, fe.Field)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("fields = %q, want %q (err: %v)", got, tc.want, err)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("fields = %q, want %q", got, tc.want)
				}
			}
		})
	}
}
