package install

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/awsccmctl/awsccmctl/internal/ecrcredential"
)

// ecrCases render the ecr-credential-provider DaemonSet with the default
// host directory and another one.
func ecrCases() map[string]Values {
	return map[string]Values{
		"ecr-credential-provider":        {Image: testImage, ECRCredentialProvider: true},
		"ecr-credential-provider-custom": {Image: testImage, Namespace: "cloud-system", ECRCredentialProvider: true, ECRCredentialProviderBinDir: "/opt/kubelet/credential-providers"},
	}
}

// ecrDaemonSet renders v and returns the objects and the decoded
// ecr-credential-provider DaemonSet, which comes last.
func ecrDaemonSet(t *testing.T, v Values) ([]Object, *appsv1.DaemonSet) {
	t.Helper()
	objs := renderCase(t, v)
	decoded := decodeStrict(t, objs)
	last := objs[len(objs)-1]
	ds, ok := decoded[len(decoded)-1].(*appsv1.DaemonSet)
	if last.Kind != "DaemonSet" || last.Name != ECRDaemonSetName || !ok {
		t.Fatalf("last object is %s %s, want the DaemonSet %s", last.Kind, last.Name, ECRDaemonSetName)
	}
	return objs, ds
}

// TestECRDaemonSetGolden compares the rendering with
// testdata/golden/<case>.yaml (-update rewrites them).
func TestECRDaemonSetGolden(t *testing.T) {
	for name, v := range ecrCases() {
		t.Run(name, func(t *testing.T) {
			v.Default()
			got, err := Render(v)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", name+".yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the rendering (run with -update if the change is intended); got:\n%s", path, got)
			}
		})
	}
	// Off by default: the CCM's objects only.
	for _, o := range renderCase(t, Values{Image: testImage}) {
		if o.Name == ECRDaemonSetName {
			t.Error("the ecr-credential-provider DaemonSet is rendered without ECRCredentialProvider")
		}
	}
}

// TestECRDaemonSetDecodes: the DaemonSet decodes strictly and is what a
// node needs: the CCM image's binary installing itself into the host
// directory it mounts, on every node whatever its taints, with pods the
// CCM DaemonSet's selector does not claim.
func TestECRDaemonSetDecodes(t *testing.T) {
	for name, v := range ecrCases() {
		t.Run(name, func(t *testing.T) {
			v.Default()
			objs, ds := ecrDaemonSet(t, v)
			pod := ds.Spec.Template.Spec
			if ds.Namespace != v.Namespace || len(pod.Containers) != 1 || pod.Containers[0].Image != v.Image {
				t.Fatalf("DaemonSet %s/%s with %d containers", ds.Namespace, ds.Name, len(pod.Containers))
			}
			c := pod.Containers[0]
			wantCmd := []string{"/ecr-credential-provider", "install", "--dir=" + ecrMountPath, "--wait"}
			if !slices.Equal(c.Command, wantCmd) || len(c.Args) != 0 {
				t.Errorf("command %q args %q, want %q", c.Command, c.Args, wantCmd)
			}
			if len(pod.Volumes) != 1 || pod.Volumes[0].HostPath == nil || pod.Volumes[0].HostPath.Path != v.ECRCredentialProviderBinDir ||
				*pod.Volumes[0].HostPath.Type != corev1.HostPathDirectoryOrCreate {
				t.Errorf("volumes %+v, want hostPath %s", pod.Volumes, v.ECRCredentialProviderBinDir)
			}
			if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != ecrMountPath || c.VolumeMounts[0].ReadOnly {
				t.Errorf("mounts %+v", c.VolumeMounts)
			}
			if len(pod.Tolerations) != 1 || pod.Tolerations[0].Operator != corev1.TolerationOpExists || pod.Tolerations[0].Key != "" {
				t.Errorf("tolerations %+v: want every taint tolerated", pod.Tolerations)
			}
			if !pod.HostNetwork || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
				t.Errorf("hostNetwork %v automount %v", pod.HostNetwork, pod.AutomountServiceAccountToken)
			}
			sel := labels.SelectorFromSet(ds.Spec.Selector.MatchLabels)
			if !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
				t.Error("the selector does not match its own pods")
			}
			for _, o := range decodeStrict(t, objs) {
				if ccm, ok := o.(*appsv1.DaemonSet); ok && ccm.Name == AppName {
					if labels.SelectorFromSet(ccm.Spec.Selector.MatchLabels).Matches(labels.Set(ds.Spec.Template.Labels)) {
						t.Error("the CCM DaemonSet's selector claims the ecr-credential-provider pods")
					}
				}
			}
		})
	}
}

// TestECRDaemonSetCommandInstalls runs the rendered command's arguments
// with the real command (its --dir pointed at a temporary directory): it
// installs the binary and keeps running until stopped.
func TestECRDaemonSetCommandInstalls(t *testing.T) {
	_, ds := ecrDaemonSet(t, Values{Image: testImage, ECRCredentialProvider: true})
	args := slices.Clone(ds.Spec.Template.Spec.Containers[0].Command[1:])
	dir := t.TempDir()
	for i, a := range args {
		if a == "--dir="+ecrMountPath {
			args[i] = "--dir=" + dir
		}
	}
	src := filepath.Join(t.TempDir(), "self")
	if err := os.WriteFile(src, []byte("the binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := ecrcredential.NewCommand(ecrcredential.Streams{In: strings.NewReader(""), Out: &out, Err: &out},
		ecrcredential.CommandOptions{Executable: func() (string, error) { return src, nil }})
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	target := filepath.Join(dir, ecrcredential.BinaryName)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(target); err == nil && string(b) == "the binary" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q did not install into %s: %s", args, dir, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("returned before being stopped (%v): the container would restart forever", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("after stop: %v", err)
	}
}

// TestECRDaemonSetServerSideDryRun applies the whole rendering with the
// DaemonSet to the test bed's kube-apiserver with server-side dry run.
func TestECRDaemonSetServerSideDryRun(t *testing.T) {
	a, _ := newDryRunApplier(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	objs, _ := ecrDaemonSet(t, Values{Image: testImage, ECRCredentialProvider: true})
	for _, o := range objs {
		if err := a.apply(ctx, o.YAML); err != nil {
			t.Errorf("%s %s: server-side dry run: %v", o.Kind, o.Name, err)
		}
	}
}

func TestECRValuesValidate(t *testing.T) {
	for _, c := range []struct {
		v    Values
		want string
	}{
		{Values{ECRCredentialProvider: true, ECRCredentialProviderBinDir: "usr/libexec"},
			`ecrCredentialProviderBinDir "usr/libexec": want the kubelet's --image-credential-provider-bin-dir, an absolute clean path on the nodes (default /usr/libexec/kubernetes/kubelet-plugins/credential-provider/exec)`},
		{Values{ECRCredentialProvider: true, ECRCredentialProviderBinDir: "/opt/x/"}, `ecrCredentialProviderBinDir "/opt/x/": want`},
		{Values{ECRCredentialProviderBinDir: "/opt/x"}, `ecrCredentialProviderBinDir "/opt/x": set only with ecrCredentialProvider`},
	} {
		c.v.Default()
		if err := c.v.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.v, err, c.want)
		}
	}
}
